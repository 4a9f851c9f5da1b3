-- manycore-16-mesh.lua — chip16 (manycore-16.lua) as a routed 4x4 mesh:
-- groups are placed on the grid and the traffic between them is routed hop
-- by hop (docs/mesh.md). Same cores, memory and group bandwidth as chip16,
-- so its 1-D exact optimum is the routing-free lower bound of these plans.
-- Units: MACs/s, bytes, bytes/s; link_gbs in GB/s (1e9 bytes/s), hop_ns in ns.
return {
	kind = "manycore",
	name = "chip16-mesh",
	cores = 16,
	mac_rate = 1.0e11,
	memory = 128 * 1024 * 1024,
	bandwidth = 1.6e11,       -- a group's own port (the 1-D model's routing term)
	-- one directed link per neighbour pair: 64 B per cycle at 1 GHz, one
	-- cycle per router hop (round figures of a mesh NoC, not a product's)
	mesh = { rows = 4, cols = 4, link_gbs = 64, hop_ns = 1.0, routing = "xy",
	         io = { row = 0, col = 0 } },
	reward = {
		mode = "max_time",
		a = 1.0,
		penalty = 100.0,
		weights = { compute = 1.0, storage = 0.1, routing = 1.0 },
	},
}
