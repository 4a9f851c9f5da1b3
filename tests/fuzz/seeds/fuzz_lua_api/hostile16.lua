for i = 1, 100 do pb.heuristic{kind = "cost_term", fn = function() return i end} end pb.cmd("partition --method greedy") print(pb.plan().metrics.script_cost)
