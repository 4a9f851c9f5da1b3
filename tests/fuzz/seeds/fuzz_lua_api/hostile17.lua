print(pcall(pb.cmd, string.rep("x ", 100000)))
