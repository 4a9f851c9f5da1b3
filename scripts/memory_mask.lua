-- memory_mask.lua — a memory-aware action mask for the REINFORCE partition agent.
--
-- Before every action the agent takes, this mask looks one step ahead
-- (pb.partition_apply) and forbids each action whose resulting partition would
-- give some core group more than `headroom` x the layout's per-core memory
-- (weights + activations of the group's layers, divided by its cores). The
-- agent therefore never walks through partitions that overflow core memory,
-- and its sampled actions differ from an unmasked run with the same seed.
--
-- Run:  partbench run scripts/memory_mask.lua models/resnet18.onnx --layout layouts/manycore-tight.lua
-- (or `:source scripts/memory_mask.lua` in the workbench, then `partition --method rl`).
local headroom = 0.8
local layout = assert(pb.layout(), "memory_mask.lua needs a many-core layout (--layout)")
local budget = headroom * layout.memory

-- prefix sums of per-layer storage (pb.layers(): the nodes that run, in
-- topological order; the load-time constants that go with them are left
-- out of this estimate: weight copies hold no bytes of their own)
local pre = { [0] = 0 }
for i, id in ipairs(pb.layers()) do
  local n = pb.node(id)
  pre[i] = pre[i - 1] + n.param_bytes + n.out_bytes
end

-- largest per-core storage of a state: zeros join the next non-zero core's group
local function max_storage(ac)
  local worst, layer, cores = 0, 0, 0
  for c = 1, #ac do
    cores = cores + 1
    if ac[c] > 0 then
      local s = (pre[layer + ac[c]] - pre[layer]) / cores
      if s > worst then worst = s end
      layer, cores = layer + ac[c], 0
    end
  end
  return worst
end

pb.heuristic{ name = "memory_mask", kind = "action_mask", fn = function(s)
  local forbid = {}
  for k = 0, s.n_actions - 1 do
    local next_state = pb.partition_apply(s.arranged_core, k)
    if next_state and max_storage(next_state) > budget then forbid[k] = false end
  end
  return forbid
end }

-- Demo: train the agent briefly and report the largest per-core storage.
pb.cmd("partition --method rl --episodes 60 --seed 7")
local p = pb.plan()
print(string.format("memory_mask: rl max(t) %.4f ms, max storage %.2f MiB of %.2f MiB (mask at %.0f%%)",
  p.metrics.max_time * 1e3, p.metrics.max_storage / 2^20, layout.memory / 2^20, headroom * 100))
