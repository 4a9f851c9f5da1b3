pb.heuristic{name = "m", kind = "action_mask", fn = function(s) return {0, 1, s.n_actions - 1} end}
pb.heuristic{name = "i", kind = "initial_partition", fn = function(i)
  local t = {} for c = 1, i.n_cores do t[c] = 0 end t[i.n_cores] = i.n_layers return t end}
pb.heuristic{name = "c", kind = "cost_term", fn = function(p) return #p.groups end}
pb.heuristic{name = "f", kind = "candidate_filter", fn = function(n, c) return c.share > 1 end}
pb.rule{name = "r", match = function(op) return op.op == "Relu" end, fusable = false}
pb.rule{name = "s", match = function(op) return true end, specs = {"rep", {label = "n"}}}
pb.rule{name = "b", match = function(op) return false end, backend = "cpu"}
pb.on("plan_change", function(e) local _ = pb.plan() end)
pb.on("solver_step", function(e) local _ = #pb.nodes() end)
pb.cmd("partition --method rl --episodes 3")
print(pcall(pb.cmd, "partition --method local --start"))
print(pcall(pb.cmd, "step -n 2"))
pb.cmd("fuse")
pb.cmd("shard --layout layouts/cluster-1x8.lua --scheme 8 --opt-level 1")
print(pb.cmd("scripts"))
