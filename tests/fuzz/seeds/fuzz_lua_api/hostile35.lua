print(pcall(pb.cmd, "quit")) print(pcall(pb.cmd, "help quit"))
