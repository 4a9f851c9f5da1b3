/*
 * shard/memory_options.h — what a plan runs with of the two memory options
 * that cost no time in the model: the distributed optimizer (dist_opt.h)
 * and sequence parallelism (act_saved.h). The MILPs are solved with each
 * one asked for (on or auto); under auto a plan that fits without it runs
 * without it. Exact for the same reason for both: with the option no plan
 * takes more memory nor more time, so the MILP's optimum is at least as
 * fast, and when it fits without the option it is that problem's optimum
 * too. Sequence parallelism is decided first (given the distributed
 * optimizer where asked), then the distributed optimizer given that.
 */
#ifndef PB_SHARD_MEMORY_OPTIONS_H
#define PB_SHARD_MEMORY_OPTIONS_H

#include <jansson.h>
#include <stdio.h>

typedef struct pb_mem_opts {
	/* memory per device (bytes, the max over devices) of the plan as
	 * solved: [0] with both options as solved, bit 0 of the index: without
	 * sequence parallelism, bit 1: without the distributed optimizer */
	double m[4];
	int dist, seq; /* settled: runs with it (1) or not */
} pb_mem_opts;

/* Sets o->dist and o->seq for the modes asked (PB_DISTOPT_* and
 * PB_SEQPAR_*, the same values) and the device limit (bytes); returns the
 * memory the plan then takes. */
double pb_memory_options_settle(pb_mem_opts *o, int dist_mode, int seq_mode, double limit);
/* o->m[k] = max(o->m[k], the figures of one device group: memory as solved,
 * D more without the distributed optimizer, S more without sequence
 * parallelism). */
void pb_memory_options_add(pb_mem_opts *o, double memory, double D, double S);
/* "dist_opt", "memory_dist_opt_on", "memory_dist_opt_off", "seq_parallel",
 * "memory_seq_parallel_on", "memory_seq_parallel_off" (bytes per device,
 * the same plan, the other option as settled) in j. */
void pb_memory_options_json(json_t *j, const pb_mem_opts *o);
/* "distributed optimizer: on (needed to fit): 16.2 MB per device with it,
 * 35.8 MB without" and the same for sequence parallelism (a line only for
 * an option that saves memory in the plan). */
void pb_memory_options_text(FILE *f, const pb_mem_opts *o);

#endif
