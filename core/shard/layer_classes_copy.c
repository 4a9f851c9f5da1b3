/*
 * shard/layer_classes_copy.c — a copy of a graph's repeated layers
 * (layer_classes.h), so that a caller solving many problems on one graph
 * (the pipeline search's chunk MILPs, dtp_stage.c) finds them once and every
 * problem build gets its own copy to edit (strategy_problem.c narrows rep to
 * its mask).
 */
#include <stdlib.h>
#include <string.h>

#include "shard/layer_classes_copy.h"

int pb_layer_classes_copy(const pb_layer_classes *src, pb_layer_classes *dst, pb_error *err)
{
	size_t n = (size_t)src->n_nodes + 1;
	memset(dst, 0, sizeof *dst);
	dst->runs = calloc(16, sizeof *dst->runs);
	dst->rep = malloc(n * sizeof *dst->rep);
	dst->block = malloc(n * sizeof *dst->block);
	dst->block_end = calloc(n, 1);
	if (!dst->runs || !dst->rep || !dst->block || !dst->block_end || src->n_runs > 16) {
		pb_layer_classes_free(dst);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	memcpy(dst->runs, src->runs, (size_t)src->n_runs * sizeof *dst->runs);
	memcpy(dst->rep, src->rep, (size_t)src->n_nodes * sizeof *dst->rep);
	memcpy(dst->block, src->block, (size_t)src->n_nodes * sizeof *dst->block);
	memcpy(dst->block_end, src->block_end, (size_t)src->n_nodes);
	dst->n_runs = src->n_runs;
	dst->n_nodes = src->n_nodes;
	dst->periods = src->periods;
	dst->tried = src->tried;
	return PB_OK;
}
