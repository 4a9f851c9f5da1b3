print(pcall(pb.cmd, "lua while true do end"))
