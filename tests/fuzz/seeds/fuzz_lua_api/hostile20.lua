print(pcall(pb.heuristic, {kind = "cost_term", fn = print, name = string.rep("n", 1e6)})) print(#pb.cmd("scripts"))
