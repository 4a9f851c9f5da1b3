/*
 * shard/dtp/dtp_stage.h — one chunk of a dp x tp x pp configuration
 * solved by the strategy search on its device group, cached per content
 * (dtp_stage.c).
 */
#ifndef PB_SHARD_DTP_STAGE_H
#define PB_SHARD_DTP_STAGE_H

#include <jansson.h>

#include "shard/dtp/dtp_types.h"
#include "shard/strategy/strategy_problem.h"

typedef struct pb_dtp_cache pb_dtp_cache;

typedef struct pb_dtp_chunk {
	double time, mem_param, mem_act; /* per micro-batch s, bytes per device */
	double grad;        /* s of time that are gradient all-reduces (once per step) */
	double grad_bytes;  /* gradient bytes per device they carry (pb_strategy_grad_bytes) */
	double optim_saved; /* bytes per device the distributed optimizer saves (dist_opt.h) */
	/* bytes per device sequence parallelism saves: per micro-batch in flight
	 * (with mem_act), once (with mem_param) */
	double sp_act, sp_once;
	int feasible, ok;
	int cut;       /* ok = 0: no plan beats so->cutoff (pb_shard_opts) */
	int proven;    /* optimal, or within so->mip_gap (not stopped by so->node_limit) */
	int recompute; /* PB_RECOMP_NONE / SELECTIVE / FULL of the plan */
	json_t *ops;   /* cache with keep_ops: the plan's operators (a new reference,
	                * the caller's), else NULL */
	char error[160];
} pb_dtp_chunk;

pb_dtp_cache *pb_dtp_stage_cache_new(const pb_graph *g);
void pb_dtp_stage_cache_free(pb_dtp_cache *c);
/* The best plan of the nodes with mask[v] on the d-device sub-cluster of cl
 * on `scheme`, with act_copies; answered from the cache when a chunk of the
 * same content (layer-class representatives), scheme, devices and copies was
 * solved. so->cutoff > 0: a chunk proven not to beat it is r->cut (reused for
 * no larger cutoffs and no fewer copies). Returns PB_OK (a failed solve is
 * r->ok = 0) or PB_ENOMEM. */
int pb_dtp_stage_chunk_solve(pb_dtp_cache *c, const pb_cluster *sub, const char *scheme,
                             const pb_shard_opts *so, const unsigned char *mask, double act_copies,
                             pb_dtp_chunk *r, pb_error *err);
void pb_dtp_stage_cache_stats(const pb_dtp_cache *c, long *milps, long *hits);
/* From now on the solves also give each chunk's operators (r->ops). */
void pb_dtp_stage_cache_keep_ops(pb_dtp_cache *c);
/* From now on a chunk's content is its nodes, not their layer classes: two
 * chunks share a solve only when they hold the same nodes (hand pins of one
 * node, dtp_edit.c). */
void pb_dtp_stage_cache_by_node(pb_dtp_cache *c);
/* The d-device cluster of one stage group: whole nodes when d >= the node
 * size, else d devices of one node. */
pb_cluster pb_dtp_stage_sub_cluster(const pb_cluster *cl, int d);

/* c's step time from its slowest group, transfer and exposed gradient
 * all-reduce (c->slowest, p2p, grad_exposed, pp, m, sched, v), with the
 * pipeline transfers overlapped as cl->p2p_overlap says (pb_pipeline_p2p_step):
 * sets c->step_time, p2p_exposed and bubble. */
void pb_dtp_stage_step_time(pb_dtp_config *c, const pb_cluster *cl, const pb_shard_opts *so);

#endif
