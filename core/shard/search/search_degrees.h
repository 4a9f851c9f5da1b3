/*
 * shard/search/search_degrees.h — what each mesh axis of an operator-level plan
 * splits, in Megatron-LM's terms (issue 38; docs/shard.md "Degrees").
 *
 * Over the operators that hold parameters (weights of two or more values),
 * weighted by their FLOPs, an axis a
 *   splits the parameters of an operator whose weight is sharded along a
 *     (tensor parallelism: each device holds a slice of the weight);
 *   splits the batch of an operator whose weight is replicated along a
 *     while its output is split along a (data parallelism: every device
 *     holds the whole weight and computes on its part of the batch or of
 *     the sequence).
 * The axis is "batch" when at least 90% of those FLOPs split the batch on
 * it, "parameters" when at least 90% split the parameters, else "both".
 * dp is the product of the batch axes, tp of the parameter axes, and the
 * plan is "mixed" when some axis is "both" (no dp/tp in Megatron's sense).
 */
#ifndef PB_SHARD_SEARCH_DEGREES_H
#define PB_SHARD_SEARCH_DEGREES_H

#include <jansson.h>
#include <stdio.h>

#include "shard/strategy/strategy_problem.h"

enum { PB_AXIS_BATCH = 0, PB_AXIS_PARAMS = 1, PB_AXIS_BOTH = 2 };

typedef struct pb_shard_degrees {
	int n_axes;
	int size[PB_MESH_MAX_AXES];
	int kind[PB_MESH_MAX_AXES];           /* PB_AXIS_* */
	double batch_share[PB_MESH_MAX_AXES]; /* of the parameter operators' FLOPs */
	double param_share[PB_MESH_MAX_AXES];
	int dp, tp;   /* products of the batch and of the parameter axes */
	int mixed;    /* some axis is "both" */
	double total; /* FLOPs of the operators with weights */
} pb_shard_degrees;

void pb_search_degrees_of(const pb_shard_problem *p, const int *choice, pb_shard_degrees *d);
/* The same over the stages of a dp x tp x pp plan (its detail's "stages":
 * each a "scheme" and "ops" with "id", "in", "out" specs, dtp_plan.c),
 * every stage's axis a counted together; -1 when the stages are on
 * different groupings (uneven groups) or there is none. */
int pb_search_degrees_of_stages(const pb_graph *g, const json_t *stages, pb_shard_degrees *d);
/* "batch", "parameters", "both" */
const char *pb_search_degrees_axis_kind_name(int kind);
/* Sets "degrees" ("megatron" or "mixed") and "axes" (per axis: size,
 * splits, batch_share, param_share) in obj. */
void pb_search_degrees_json(json_t *obj, const pb_shard_degrees *d);

/* "degrees: dp 32 x tp 1 (axis 4: batch, axis 8: batch)" or "degrees:
 * mixed (...)", with each axis's shares when mixed. */
void pb_search_degrees_text(FILE *f, const pb_shard_degrees *d);

#endif
