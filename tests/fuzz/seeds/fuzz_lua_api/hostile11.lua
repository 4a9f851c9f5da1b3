print(pcall(pb.cmd, "run scripts/greedy_initial.lua --max-seconds 100 --max-instructions 999999999999"))
