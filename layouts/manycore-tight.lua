-- manycore-tight.lua — 32 small cores whose memory limit binds: for the
-- bundled models the fastest partition without the limit does not fit, so
-- the exact optimum with the limit is slower (docs/partition.md).
return {
	kind = "manycore",
	name = "tight32",
	cores = 32,
	mac_rate = 5.0e10,
	memory = 4 * 1024 * 1024, -- bytes per core: this is what binds
	bandwidth = 1.6e11,
	reward = {
		mode = "max_time",
		a = 1.0,
		penalty = 100.0,
	},
}
