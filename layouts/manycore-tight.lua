-- manycore-tight.lua — 32 small cores whose memory limit binds: for the
-- bundled CNNs (resnet18, googlenet, mobilenet_v2, squeezenet1_1) the fastest
-- partition without the limit does not fit, so the exact optimum with the
-- limit is slower; densenet121, swin_t and bert_base_like do not fit at all
-- (bench_partition_memory, bench/RESULTS.md, docs/partition.md).
return {
	kind = "manycore",
	name = "tight32",
	cores = 32,
	mac_rate = 5.0e10,
	memory = 2.5 * 1024 * 1024, -- bytes per core: this is what binds
	bandwidth = 1.6e11,
	reward = {
		mode = "max_time",
		a = 1.0,
		penalty = 100.0,
	},
}
