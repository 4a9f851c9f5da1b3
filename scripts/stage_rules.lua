-- stage_rules.lua — rules for the pipeline split: a stage pin and a
-- forbidden stage boundary, with the same `pb.rule` vocabulary as the
-- many-core partition.
--
-- `stage = K` puts every matching node in pipeline stage K (from 0);
-- `cut = "forbid"` keeps a matching node's consumers in its stage, `cut =
-- "force"` moves them to later stages (docs/lua-api.md). The stage split (an
-- exact DP on chains, a MILP otherwise) obeys them, or fails with exit 2 when
-- no split can; `pipeline` names the rules under its report.
--
-- Run:  partbench run scripts/stage_rules.lua models/bert_base_like.onnx --layout layouts/cluster-1x8.lua
local function stages()
  pb.cmd("pipeline --stages 4")
  return pb.plan().assignment
end
local before = stages()
-- the last MatMul (in the last stage without rules)
local mm = pb.find{op = "MatMul"}
local target = mm[#mm]
local s0 = before[target.id + 1]
pb.rule{ name = "block2_early", stage = 0, match = function(op) return op.id == target.id end }
local after = stages()
-- every node before the target is now in stage 0 too
local early = 0
for i = 1, target.id do if after[i] > 0 then early = early + 1 end end
print(string.format("stage_rules: %s in stage %d -> %d; %d earlier nodes past stage 0",
                    target.name, s0, after[target.id + 1], early))
pb.clear()
-- forbid the first stage boundary of the plan without rules: an edge u -> b
-- between two nodes of the split whose stages differ
local u, b
for _, n in ipairs(pb.nodes()) do
  for _, s in ipairs(n.succs) do
    if not u and before[n.id + 1] >= 0 and before[s + 1] > before[n.id + 1] then u, b = n.id, s end
  end
end
pb.rule{ name = "no_boundary_here", cut = "forbid", match = function(op) return op.id == u end }
local a2 = stages()
print(string.format("stage_rules: boundary before node %d forbidden: stages of nodes %d, %d: %d, %d -> %d, %d",
                    b, u, b, before[u + 1], before[b + 1], a2[u + 1], a2[b + 1]))
