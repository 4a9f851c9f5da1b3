pb.heuristic{kind = "candidate_filter", fn = function(n, c) return setmetatable({}, {__gc = true}) end} print(pcall(pb.cmd, "shard --layout layouts/cluster-1x8.lua --scheme 8"))
