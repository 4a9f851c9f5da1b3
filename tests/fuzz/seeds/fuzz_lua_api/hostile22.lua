local t = {} t.t = t pb.rule{match = function() return true end, specs = t} print(pcall(pb.cmd, "shard --layout layouts/cluster-1x8.lua --scheme 8 --opt-level 1"))
