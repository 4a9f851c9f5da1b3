print(pcall(pb.cmd, "layout /proc/self/environ")) print(pcall(pb.cmd, "source /proc/self/cmdline.lua"))
