print(pcall(pb.cmd, "repeat 100000 'info --top 1'"))
