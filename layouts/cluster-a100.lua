-- cluster-a100.lua: DGX A100 nodes of 8 A100 80GB GPUs, the cluster of
-- Narayanan et al. 2021 (SC21, "Efficient Large-Scale Language Model
-- Training on GPU Clusters Using Megatron-LM", §5: Selene, 8 A100 80GB
-- per node over NVLink/NVSwitch, eight 200 Gb/s HDR InfiniBand HCAs per
-- node; 312 TFLOP/s fp16 peak per GPU). docs/megatron.md.
--
-- Layout generator: the node count is the one parameter. The line
--   local nodes = 4
-- below is what bench/bench_megatron.sh (and tests/e2e/megatron.sh)
-- rewrite to produce cluster-a100-N.lua for each row of Table 1
-- (4 nodes = 32 GPUs ... 384 nodes = 3072 GPUs).
local nodes = 4

return {
  kind = "cluster",
  name = "cluster-a100-" .. nodes,
  nodes = nodes,
  devices_per_node = 8,
  device_memory_gb = 80,      -- A100 80GB
  device_tflops = 312,        -- fp16 tensor-core peak, TFLOP/s
  -- Achieved fraction of the peak, calibrated ONCE on the first row of
  -- Table 1 (1.7 B parameters, 32 GPUs, dp 32: 137 TFLOP/s measured);
  -- docs/megatron.md "Calibration" shows the arithmetic.
  device_efficiency = 0.6742,
  -- HBM2e bandwidth of the A100 80GB SXM (NVIDIA A100 datasheet: 2,039
  -- GB/s): memory-bound operators (element-wise, softmax, layer norm) cost
  -- their bytes at this rate (the roofline model; docs/megatron.md).
  device_memory_bw_gbs = 2039,
  -- NVLink 3 / NVSwitch: 600 GB/s per GPU both ways = 300 each way on the
  -- wire; NCCL's collectives reach about 82% of the NVLink line rate (its
  -- maintainer, NVIDIA/nccl-tests issue 212: "450GB/s is the line rate. With
  -- the protocol overhead (~20%) NCCL can get an effective NVLink bandwidth
  -- of 370GB/s"): 300 x 370/450 = 246 GB/s (docs/megatron.md)
  intra_bw_gbs = 246,
  intra_latency_us = 5,       -- assumed start-up latency of an NVLink collective
  inter_bw_gbs = 25,          -- one 200 Gb/s HDR HCA per GPU = 25 GB/s
  inter_latency_us = 10,      -- assumed start-up latency of an InfiniBand collective
}
