-- manycore-64.lua — a 64-core AI chip (8x8 mesh walked row by row).
-- Units: MACs/s, bytes, bytes/s. docs/partition.md lists every field.
return {
	kind = "manycore",
	name = "chip64",
	cores = 64,
	mac_rate = 5.0e10,        -- multiply-accumulates per second, per core
	memory = 32 * 1024 * 1024, -- bytes per core
	bandwidth = 3.2e11,       -- on-chip routing bandwidth, bytes per second
	mesh = { rows = 8, cols = 8 },
	reward = {
		mode = "max_time",
		a = 1.0,              -- per millisecond of max(t)
		penalty = 100.0,
		weights = { compute = 1.0, storage = 0.1, routing = 1.0 },
	},
}
