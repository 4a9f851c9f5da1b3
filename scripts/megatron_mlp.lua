-- megatron_mlp.lua — Megatron-style tensor parallelism for transformer MLPs,
-- as two entries of the sharding planner's rule library.
--
-- In each MLP (linear1 -> activation -> linear2) the first MatMul is split by
-- columns (label "n": its weight is split along the output features, the
-- activation stays split) and the second by rows (label "k": the contraction
-- dimension is split, giving a partial sum that one all-reduce completes).
-- This is one all-reduce per MLP instead of re-gathering activations.
-- Rules act from optimisation level 1 (`shard --opt-level 1`).
--
-- Run:  partbench run scripts/megatron_mlp.lua models/bert_base_like.onnx --layout layouts/cluster-1x8.lua
local function mlp(part)
  return function(op)
    return (op.op == "MatMul" or op.op == "Gemm") and op.name:find("/" .. part .. "/", 1, true) ~= nil
  end
end

pb.rule{ name = "megatron_column", match = mlp("linear1"), specs = { { label = "n" } } }
pb.rule{ name = "megatron_row", match = mlp("linear2"), specs = { { label = "k" } } }

-- Demo: plan with the rules on the 8-way scheme and count the strategies the
-- MILP chose for the MLP MatMuls (compare with `shard --opt-level 1 --scheme 8 --json`).
local out = pb.cmd("shard --opt-level 1 --scheme 8 --json")
local count = {}
for strat in out:gmatch('"name": "[^"]*/linear[12]/MatMul",%s*"op": "[^"]*",%s*"strategy": "([^"]*)"') do
  count[strat] = (count[strat] or 0) + 1
end
local parts = {}
for s, c in pairs(count) do parts[#parts + 1] = s .. "=" .. c end
table.sort(parts)
print("megatron_mlp: MLP MatMul strategies " .. table.concat(parts, " "))
