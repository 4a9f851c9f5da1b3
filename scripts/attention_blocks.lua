-- attention_blocks.lua — keeps every attention block of a transformer inside
-- one core group of the many-core partition.
--
-- An attention block is the run of nodes whose name contains "/self_attn/"
-- within one encoder layer (e.g. /blocks/layers.3/self_attn/...). A group
-- boundary "inside" a block is a cut between two of its nodes. Two heuristics
-- enforce the rule for the RL agent:
--   * an initial_partition that fills cores greedily by MACs but only cuts
--     outside the blocks, so the agent starts from a legal partition;
--   * an action_mask that looks one step ahead (pb.partition_apply) and
--     forbids every action that would cut a block.
--
-- Run:  partbench run scripts/attention_blocks.lua models/bert_base_like.onnx --layout layouts/manycore-16.lua
-- The partition's layers are the nodes that run (pb.layers(): load-time
-- constants go with the layer that consumes them).
local layers = pb.layers()
local m = #layers

-- inside[b] = true when a cut before layer b (0-based, between b-1 and b) splits a block
local block_of = {}
for i, id in ipairs(layers) do
  block_of[i - 1] = pb.node(id).name:match("^(.-/self_attn)/")
end
local inside = {}
for b = 1, m - 1 do
  inside[b] = block_of[b] ~= nil and block_of[b] == block_of[b - 1]
end

local function cuts_in_block(ac)
  local bad, layer = 0, 0
  for c = 1, #ac do
    if ac[c] > 0 then
      layer = layer + ac[c]
      if layer < m and inside[layer] then bad = bad + 1 end
    end
  end
  return bad
end

pb.heuristic{ name = "attention_start", kind = "initial_partition", fn = function(info)
  local n, macs = info.n_cores, info.macs
  local total = 0
  for i = 1, m do total = total + macs[i] end
  local ac, layer, done = {}, 0, 0
  for c = 1, n do ac[c] = 0 end
  for c = 1, n - 1 do
    local target = total * c / n
    local cut = layer
    -- advance to the target share, then on to the next legal cut point
    while cut < m - 1 and done + macs[cut + 1] <= target do
      done = done + macs[cut + 1]; cut = cut + 1
    end
    while cut < m - 1 and inside[cut] do
      done = done + macs[cut + 1]; cut = cut + 1
    end
    ac[c] = cut - layer
    layer = cut
  end
  ac[n] = m - layer
  return ac
end }

-- The agent comes back to the same states (every episode starts from the best
-- one so far): on bert_base_like three calls in four repeat a state, so the
-- answer for a state is kept (a bounded table, emptied when full).
local memo, memo_n = {}, 0
pb.heuristic{ name = "attention_mask", kind = "action_mask", fn = function(s)
  local key = table.concat(s.arranged_core, ",")
  local forbid = memo[key]
  if forbid then return forbid end
  forbid = {}
  for k = 0, s.n_actions - 1 do
    local next_state = pb.partition_apply(s.arranged_core, k)
    if next_state and cuts_in_block(next_state) > 0 then forbid[k] = false end
  end
  if memo_n >= 4096 then memo, memo_n = {}, 0 end
  memo[key], memo_n = forbid, memo_n + 1
  return forbid
end }

-- Demo: the exact optimum ignores the rule; the agent with the rule obeys it.
pb.cmd("partition --method exact")
local exact_bad = cuts_in_block(pb.plan().detail.arranged_core)
pb.cmd("partition --method rl --episodes 20 --seed 1")
local p = pb.plan()
print(string.format("attention_blocks: exact cuts %d attention blocks; rl with the rule cuts %d "
  .. "(max(t) %.4f ms, %d groups)", exact_bad, cuts_in_block(p.detail.arranged_core),
  p.metrics.max_time * 1e3, #p.groups))
