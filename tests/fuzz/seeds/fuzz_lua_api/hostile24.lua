pb.heuristic{kind = "initial_partition", fn = function(s) local t = {} for i = 1, s.n_cores do t[i] = math.huge end return t end} print(pcall(pb.cmd, "partition --method rl --episodes 2"))
