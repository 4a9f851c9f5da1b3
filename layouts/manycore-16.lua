-- manycore-16.lua — a 16-core AI chip (4x4 mesh walked row by row).
-- The default layout of `make run`. Units: MACs/s, bytes, bytes/s.
-- Read by core/partition/chain/manycore.c; docs/partition.md lists every field.
return {
	kind = "manycore",
	name = "chip16",
	cores = 16,
	mac_rate = 1.0e11,        -- multiply-accumulates per second, per core
	memory = 128 * 1024 * 1024, -- bytes of on-core memory, per core
	bandwidth = 1.6e11,       -- on-chip routing bandwidth, bytes per second
	mesh = { rows = 4, cols = 4 },
	reward = {
		mode = "max_time",    -- or "weighted"
		a = 1.0,              -- reward = -a * max(t) [ms] + b
		penalty = 100.0,      -- b = -penalty when max storage > memory
		weights = { compute = 1.0, storage = 0.1, routing = 1.0 },
	},
}
