-- cluster-128x8.lua: 128 node(s) x 8 accelerators (A100-like figures).
-- Fields (docs/shard.md): nodes, devices_per_node, device memory and
-- FLOP rate, intra-node (NVLink-like) and inter-node (InfiniBand-like)
-- bandwidth and latency. Units are in the field names.
return {
  kind = "cluster",
  name = "cluster-128x8",
  nodes = 128,
  devices_per_node = 8,
  device_memory_gb = 40,      -- per device, GB (1e9 bytes)
  device_tflops = 100,        -- sustained FLOP rate per device, TFLOP/s
  intra_bw_gbs = 150,         -- per-device link bandwidth inside a node, GB/s
  intra_latency_us = 5,       -- collective start-up latency inside a node
  inter_bw_gbs = 25,          -- per-device bandwidth between nodes, GB/s
  inter_latency_us = 20,
}
