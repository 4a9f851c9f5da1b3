-- no_fuse_pool.lua — a fusion-exclusion rule: pooling operators are never
-- fused horizontally with their sibling branches.
--
-- Horizontal fusion (`partbench fuse`) merges operators of parallel branches
-- into one kernel. A pooling kernel has a different memory access pattern from
-- the element-wise activations it is usually fused with, so a backend may
-- prefer to launch it alone. The rule marks every MaxPool/AveragePool as not
-- fusable (it overrides the built-in operator rules; see docs/lua-api.md).
--
-- Run:  partbench run scripts/no_fuse_pool.lua models/googlenet.onnx
pb.rule{ name = "no_fuse_pool", fusable = false, match = function(op)
  return op.op == "MaxPool" or op.op == "AveragePool"
end }

-- Demo: fuse with the rule and report how many nodes were fused and whether a
-- pooling node is in any fused kernel (compare with `partbench fuse MODEL --json`).
local out = pb.cmd("fuse --json")
local fused = tonumber(out:match('"nodes_fused": (%d+)'))
local pools = 0
for ops in out:gmatch('"ops": %[([^%]]*)%]') do
  for _ in ops:gmatch('"MaxPool"') do pools = pools + 1 end
  for _ in ops:gmatch('"AveragePool"') do pools = pools + 1 end
end
print(string.format("no_fuse_pool: %d nodes fused, %d pooling nodes inside fused kernels", fused, pools))
