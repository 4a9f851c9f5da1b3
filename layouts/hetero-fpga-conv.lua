-- hetero-fpga-conv.lua — layouts/hetero.lua with an FPGA that is the fastest
-- convolution engine: its Conv runs at 5x its base FLOP/s (2e13 FLOP/s, 1.4x
-- the GPU's 1.4e13), everything else as in hetero.lua (the transfers too).
-- The case of issue 36: `map --objective latency` keeps every held-out model
-- on the GPU alone, `--objective throughput` splits them (docs/transform.md,
-- bench/RESULTS.md).
--
-- ops: operator -> priority (1 = best) or { priority = P, speed = S }, where
-- S scales the backend's FLOP/s for that operator; "*" matches every other
-- operator. As in the mapping method, the FPGA supports few operators (the
-- convolutional ones) but runs them best; the GPU supports everything; the
-- CPU too, and it is preferred for table lookups (embeddings) and for the
-- integer shape arithmetic that remains when it is not folded at load time
-- (partbench map --keep-constants).
local cpu_first = { "Gather", "Shape", "ConstantOfShape", "Range", "Equal", "Where", "Not",
  "Mod", "Cast", "Constant", "Identity", "Unsqueeze", "Squeeze" }

local cpu_ops = { ["*"] = 3 }
for _, op in ipairs(cpu_first) do cpu_ops[op] = 1 end

local gpu_ops = { ["*"] = 2, Conv = 2, MatMul = 1, Gemm = 1, Softmax = 1, Erf = 1,
  ReduceMean = 1, Transpose = 1, Reshape = 1, Flatten = 1, GlobalAveragePool = 1,
  BatchNormalization = 2 }

local fpga_ops = {
  Conv = { priority = 1, speed = 5.0 },
  Relu = 1, Clip = 1, Add = { priority = 1, speed = 0.5 }, MaxPool = 1, AveragePool = 1,
  BatchNormalization = 1, Concat = 1, Pad = 2,
}

return {
  kind = "hetero",
  name = "cpu-gpu-fpga-conv",
  backends = {
    { name = "cpu",  launch = 1e-6,  flops = 4e11,  bandwidth = 5e10,  ops = cpu_ops },
    { name = "gpu",  launch = 8e-6,  flops = 1.4e13, bandwidth = 9e11, ops = gpu_ops },
    { name = "fpga", launch = 20e-6, flops = 4e12,  bandwidth = 2e11,  ops = fpga_ops },
  },
  -- bytes/s between backends (the reverse direction is used when only one is given)
  transfer = {
    { from = "cpu", to = "gpu",  bandwidth = 1.2e10, latency = 1e-5 },
    { from = "cpu", to = "fpga", bandwidth = 8e9,    latency = 1.5e-5 },
    { from = "gpu", to = "fpga", bandwidth = 6e9,    latency = 2e-5 },
  },
  -- device parameters of the horizontal-fusion cost model (partbench fuse --layout)
  fusion = { launch = 5e-6, lanes = 163840, lane_flops = 8.5e7, bandwidth = 9e11,
             min_gain = 0, max_members = 16 },
}
