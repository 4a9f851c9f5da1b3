-- manycore-64-mesh.lua — chip64 (manycore-64.lua) as a routed 8x8 mesh
-- (docs/mesh.md). Same cores, memory and group bandwidth as chip64.
-- Units: MACs/s, bytes, bytes/s; link_gbs in GB/s (1e9 bytes/s), hop_ns in ns.
return {
	kind = "manycore",
	name = "chip64-mesh",
	cores = 64,
	mac_rate = 5.0e10,
	memory = 32 * 1024 * 1024,
	bandwidth = 3.2e11,
	-- 64 B per cycle at 1 GHz per link, one cycle per hop (round figures)
	mesh = { rows = 8, cols = 8, link_gbs = 64, hop_ns = 1.0, routing = "xy",
	         io = { row = 0, col = 0 } },
	reward = {
		mode = "max_time",
		a = 1.0,
		penalty = 100.0,
		weights = { compute = 1.0, storage = 0.1, routing = 1.0 },
	},
}
