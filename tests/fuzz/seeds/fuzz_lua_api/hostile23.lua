pb.heuristic{kind = "action_mask", fn = function(s) return setmetatable({}, {__index = function() while true do end end}) end} print(pcall(pb.cmd, "partition --method rl --episodes 2"))
