-- pin_cores.lua — core pins for the many-core partition: the classifier
-- (the Gemm at the end of the network) runs in a group that holds core 7,
-- and the stem convolution in one that holds core 0.
--
-- `core = K` pins every matching node: its core group must contain core K
-- (cores are numbered from 0 in the order the chain runs over them). exact
-- and milp treat pins as constraints, the other methods as rules that count
-- before time (docs/lua-api.md). A pin that contradicts other rules is an
-- error naming the model and the layout. With both pins one group of all
-- cores is optimal on resnet18 (1.2775 ms, every method); with the
-- classifier pin alone exact finds 1.2002 ms, and the heuristics, whose
-- search moves cores between any two groups, reach it too
-- (tests/e2e/partition_rules.sh).
--
-- Run:  partbench run scripts/pin_cores.lua models/resnet18.onnx --layout layouts/manycore-16.lua
local function group_of(plan, id)
  for _, g in ipairs(plan.groups) do
    if id >= g.first_node and id <= g.last_node then return g end
  end
end

local gemm = pb.find{op = "Gemm"}[1]
pb.cmd("partition --method exact")
local free = pb.plan()
local g0 = group_of(free, gemm.id)

pb.rule{ name = "classifier_mid", core = 7, match = function(op) return op.op == "Gemm" end }
pb.rule{ name = "stem_first", core = 0, match = function(op) return op.id == 0 end }
for _, m in ipairs{"exact", "milp", "greedy", "pack", "local", "rl"} do
  pb.cmd("partition --method " .. m .. " --episodes 40 --seed 1")
  local p = pb.plan()
  local g = group_of(p, gemm.id)
  print(string.format("pin_cores: %s Gemm on cores %d-%d (without the pin %d-%d), broken %d, max(t) %.4f ms (without %.4f ms)",
                      m, g.first_unit, g.first_unit + g.n_units - 1, g0.first_unit,
                      g0.first_unit + g0.n_units - 1, p.metrics.rule_violations,
                      p.metrics.max_time * 1e3, free.metrics.max_time * 1e3))
end
