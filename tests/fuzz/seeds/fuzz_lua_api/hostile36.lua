local s = string.rep("a", 300) .. "b" for i = 1, 20000 do s:find("a-b") end print("ok")
