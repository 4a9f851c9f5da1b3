print(pcall(pb.cmd, "lua " .. string.rep("x", 5000)))
