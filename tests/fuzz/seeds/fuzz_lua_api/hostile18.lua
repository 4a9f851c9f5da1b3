print(pcall(pb.cmd, "view set " .. string.rep("k=v;", 10000)))
