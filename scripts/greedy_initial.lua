-- greedy_initial.lua — a greedy initial partition that seeds the RL agent
-- (and the local-search and MILP solvers of `partition`).
--
-- Layers (nodes in topological order) are cut into one group per core: each
-- core takes layers until it holds its fair share of the remaining MACs, so
-- the heavy convolutions are spread evenly; every core gets at least one
-- layer while layers remain, and the last core takes the rest. The RL agent
-- starts every episode from this allocation instead of its built-in one.
--
-- Run:  partbench run scripts/greedy_initial.lua models/resnet18.onnx --layout layouts/manycore-16.lua
local start -- what the heuristic returned last (printed by the demo)
pb.heuristic{ name = "greedy_macs", kind = "initial_partition", fn = function(info)
  local n, m, macs = info.n_cores, info.n_layers, info.macs
  local left = 0
  for i = 1, m do left = left + macs[i] end
  local ac, layer = {}, 0
  for c = 1, n do
    local cores_left = n - c + 1
    if c == n then
      ac[c] = m - layer
    else
      local share, got, take = left / cores_left, 0, 0
      -- leave at least one layer for each later core
      while layer + take < m - (cores_left - 1) and (take == 0 or got + macs[layer + take + 1] / 2 <= share) do
        take = take + 1
        got = got + macs[layer + take]
      end
      ac[c] = take
      layer = layer + take
      left = left - got
    end
  end
  start = ac
  return ac
end }

-- Demo: a short training run; the agent starts from the greedy allocation.
pb.cmd("partition --method rl --episodes 5 --seed 1")
local p = pb.plan()
print("greedy_initial: start " .. table.concat(start, " "))
print(string.format("greedy_initial: agent max(t) %.4f ms", p.metrics.max_time * 1e3))
