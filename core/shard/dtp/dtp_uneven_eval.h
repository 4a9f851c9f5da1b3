/*
 * shard/dtp/dtp_uneven_eval.h — the exact cost of a configuration with
 * uneven device groups and the local moves that improve it
 * (dtp_uneven_eval.c), and the context of one seed of the uneven search
 * they work in (opened by dtp_uneven.c, dtp_uneven.h).
 */
#ifndef PB_SHARD_DTP_UNEVEN_EVAL_H
#define PB_SHARD_DTP_UNEVEN_EVAL_H

#include <jansson.h>

#include "shard/dtp/dtp_stage.h"
#include "shard/dtp/dtp_types.h"

typedef struct pb_uneven_ctx {
	const pb_graph *g;
	const pb_cluster *cl;
	const pb_dtp_opts *o;
	int n, U;
	double *cost;  /* per node FLOPs, -1 outside the problem */
	double *ucost; /* per layer unit */
	int *ublocks;  /* per layer unit: the blocks ending in it */
	int *unit_of;  /* per node, -1 outside */
	int *chunk_of; /* per node for the configuration evaluated, -1 outside */
	unsigned char *active, *mask;
	pb_dtp_cache *cache;
	json_t *chunks;  /* building a plan: per chunk its solve */
	long evals;      /* configurations costed exactly */
	long replayed;   /* cache answers of keep_plan (not counted) */
	long moves_from; /* stage MILPs solved before pb_dtp_uneven_eval_improve's moves */
} pb_uneven_ctx;

/* Degree t allowed for a group of dp x t devices out of N = dp x K: t
 * divides K, or the group is whole nodes. */
int pb_dtp_uneven_eval_degree_ok(const pb_cluster *cl, int dp, int t);
/* 1 when every group of c lies inside one node or on whole nodes. */
int pb_dtp_uneven_eval_placeable(const pb_cluster *cl, const pb_dtp_config *c);

/* Costs c (dp, m, pp, sched, v, stage_tp, stage_end set) exactly: every
 * chunk's stage MILP on its group's sub-cluster and scheme "dp x tp_s" (the
 * cache answers contents solved before), activation copies, transfers, the
 * schedule's step; x->chunks gets each chunk's solve when building a plan. */
int pb_dtp_uneven_eval(pb_uneven_ctx *x, pb_dtp_config *c, pb_error *err);
/* Local moves on an evaluated c, each kept only when the exact step
 * improves: chunk boundaries one unit either way, and (degrees = 1) the
 * degrees of two groups traded (one to half, double or a neighbouring allowed degree, the
 * other taking the difference), alternated until neither improves. */
int pb_dtp_uneven_eval_improve(pb_uneven_ctx *x, pb_dtp_config *c, int degrees, pb_error *err);
/* Sets c's scheme text "tp a+b+...". */
void pb_dtp_uneven_eval_scheme_text(pb_dtp_config *c);

#endif
