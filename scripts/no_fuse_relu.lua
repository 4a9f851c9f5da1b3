-- no_fuse_relu.lua — a fusion veto that both fusions obey: Relu is never
-- fused horizontally, neither by partbench's fusion nor by the XLA-style
-- baseline it is compared with.
--
-- `fusable = false` takes the matching operators out of every fusion
-- candidate set (docs/lua-api.md). The baseline (producers with one shared
-- consumer, core/transform/fuse_xla.c) reads the same rules, so the
-- comparison in the `fuse` report stays fair.
--
-- Run:  partbench run scripts/no_fuse_relu.lua models/googlenet.onnx
local function counts(out)
  local ours = tonumber(out:match('"nodes_fused": (%d+)'))
  local xla = tonumber(out:match('"xla_baseline": {[^}]-"nodes_fused": (%d+)'))
  return ours, xla
end
local o0, x0 = counts(pb.cmd("fuse --json"))
pb.rule{ name = "no_relu", fusable = false, match = function(op) return op.op == "Relu" end }
local o1, x1 = counts(pb.cmd("fuse --json"))
print(string.format("no_fuse_relu: partbench fuses %d -> %d nodes, XLA-style baseline %d -> %d nodes",
                    o0, o1, x0, x1))
