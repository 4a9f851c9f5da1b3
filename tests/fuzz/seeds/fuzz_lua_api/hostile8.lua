print(pcall(load, string.rep("(", 1000) .. "1" .. string.rep(")", 1000)))
