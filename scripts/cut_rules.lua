-- cut_rules.lua — cut rules for the many-core partition: group boundaries
-- only after residual additions (the end of a ResNet block).
--
-- A boundary between two core groups moves a layer's output over the on-chip
-- network. `cut = "forbid"` forbids a boundary right after every matching
-- node; here every node but Add, so each group holds whole residual blocks.
-- `cut = "force"` would force one. Every method obeys the same rules: exact
-- and milp as constraints, greedy, pack and local through their objective
-- (a broken rule counts before time), the RL agent through its action mask
-- (docs/lua-api.md). The report names the rules that constrained the plan.
--
-- Run:  partbench run scripts/cut_rules.lua models/resnet18.onnx --layout layouts/manycore-16.lua
local methods = {"exact", "milp", "greedy", "pack", "local", "rl"}

-- layer i (0-based, as arranged_core counts) is node layers[i + 1]: load-time
-- constants are no layers (docs/partition.md)
local layers = pb.layers()

local function cuts(plan)
  local s, layer = {}, 0
  for i, k in ipairs(plan.detail.arranged_core) do
    layer = layer + k
    if k > 0 and i < #plan.detail.arranged_core then s[#s + 1] = layer end
  end
  return table.concat(s, ",")
end

local before = {}
for _, m in ipairs(methods) do
  pb.cmd("partition --method " .. m .. " --episodes 40 --seed 1")
  before[m] = cuts(pb.plan())
end

pb.rule{ name = "blocks_whole", cut = "forbid", match = function(op) return op.op ~= "Add" end }

for _, m in ipairs(methods) do
  pb.cmd("partition --method " .. m .. " --episodes 40 --seed 1")
  local p = pb.plan()
  local after = cuts(p)
  -- every boundary now follows an Add
  local bad = 0
  for pos in after:gmatch("%d+") do
    if pb.node(layers[tonumber(pos)]).op ~= "Add" then bad = bad + 1 end
  end
  print(string.format("cut_rules: %s boundaries {%s} -> {%s}, changed %s, after a non-Add %d, max(t) %.4f ms",
                      m, before[m], after, tostring(before[m] ~= after), bad, p.metrics.max_time * 1e3))
end
print(pb.cmd("partition --method exact"))
