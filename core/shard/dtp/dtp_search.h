/*
 * shard/dtp/dtp_search.h — the data x tensor x pipeline search of `shard
 * --pipeline auto` and of the fixing options --dp --tp --pp --microbatches
 * --schedule: its options, rows and result (the types every dtp/ file
 * shares) and its even part (dtp_search.c; docs/shard.md). The entry points
 * are dtp.h; a row's plan dtp_plan.h, the report dtp_report.h, one chunk's
 * solve dtp_stage.h, the schedules dtp_interleave.h, the polish
 * dtp_polish.h, uneven groups dtp_uneven.h.
 *
 * A configuration is (dp, tp, pp, m, schedule): dp x tp x pp = N devices;
 * pp pipeline stages, each on a group of d = dp x tp consecutive devices
 * sharded by the grouping-scheme MILP on the scheme "dp x tp" (one axis "d"
 * when dp or tp is 1: the MILP then picks the specs on that axis, so dp = d,
 * tp = 1 and dp = 1, tp = d evaluate the same plan); m micro-batches of B/m;
 * schedule 1F1B or interleaved with V model chunks per device (Narayanan et
 * al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
 * Using Megatron-LM", section 2.2):
 *   1F1B:        step = (t + p2p) x (m + p - 1) + E,    bubble (p-1)/(m+p-1);
 *   interleaved: step = (t + V p2p) x (m + (p-1)/V) + E, bubble (p-1)/(V m+p-1),
 * t the slowest device group's time per micro-batch (forward + backward of
 * all its chunks, without the gradient all-reduces), p2p the slowest
 * boundary transfer, G the largest group's gradient all-reduces (training:
 * once per step, after the last micro-batch, as Megatron-LM does), E the
 * largest group's exposed part of them: bucketed behind the backward pass
 * of the group's last micro-batch (grad_overlap.h; E = G when the layout's
 * or --bucket-mb's bucket is 0). Activation memory of
 * device group s: 1F1B keeps min(p - s, m) micro-batches in flight;
 * interleaved keeps min(V m, (V-1) p + 2 (p - s - 1) + 1) chunk activations
 * (Megatron-LM's warm-up count + 1), each 1/V of the group's.
 * pp = 1 is the operator-level plan: its rows come from the shard search
 * the caller ran (pb_dtp_oprow).
 *
 * The model is split into pp x V chunks (chunk c on group c mod pp): at
 * layer boundaries when the model has repeated layers and enough of them
 * (pb_pipeline_layers_split: first/last chunks holding the embedding and head
 * get fewer layers), else by the key-operator MILP. Every chunk is solved
 * once per distinct content (the layer classes' representative of each
 * node), scheme and activation copies (dtp_stage.c's cache), so the middle
 * chunks of a decoder share one MILP.
 */
#ifndef PB_SHARD_DTP_SEARCH_H
#define PB_SHARD_DTP_SEARCH_H

#include <jansson.h>
#include <stdio.h>

#include "shard/dtp/dtp_stage.h"
#include "shard/dtp/dtp_types.h"
#include "shard/pipeline/pipeline_stages.h"

/* Fills o with the defaults (dtp_search.c). */
void pb_dtp_search_opts_default(pb_dtp_opts *o);

/* Parses "1f1b", "interleaved" or "interleaved:V" (V >= 2). */
int pb_dtp_search_parse_schedule(const char *s, int *sched, int *v, pb_error *err);

void pb_dtp_search_result_free(pb_dtp_result *r);
/* A new row at the end of r (zeroed, one chunk per device); NULL when out
 * of memory. */
pb_dtp_config *pb_dtp_search_result_add(pb_dtp_result *r);
/* Puts the operator-level rows (pp = 1, from o->op; every dp x tp = N
 * allowed by the fixed values) first and picks the best configuration.
 * PB_EUSAGE when no configuration is left. */
int pb_dtp_search_add_operator(pb_dtp_result *r, const pb_dtp_opts *o, const pb_cluster *cl,
                               pb_error *err);
/* 1 when a beats b: fits first, then the shorter step, then fewer pipeline
 * stages, then fewer micro-batches (deterministic). */
int pb_dtp_search_better(const pb_dtp_config *a, const pb_dtp_config *b);

/* The operator-level rows of a finished shard search (a dropped mirror
 * scheme gets the numbers of the one kept); *out malloc'd, count returned,
 * -1 when out of memory. */
struct pb_shard_search;
int pb_dtp_search_oprows(const struct pb_shard_search *s, pb_dtp_oprow **out);

/* The stage grouping of (dp, tp): "DxT", or one axis "D" when dp or tp is
 * 1; NULL for a single device. */
const char *pb_dtp_search_scheme_of(int dp, int tp, char *buf, size_t n);
/* --dp/--tp/--pp that can multiply to the cluster's devices (0 = free),
 * else PB_EUSAGE naming them: checked before any search runs. */
int pb_dtp_search_check_degrees(const pb_dtp_opts *o, const pb_cluster *cl, pb_error *err);
/* pb_dtp_search without the uneven device groups. */
int pb_dtp_search_even(const pb_graph *g, const pb_cluster *cl, const pb_dtp_opts *o,
                       pb_dtp_result *r, pb_error *err);
/* pb_dtp_plan of an even row (want->pp >= 2, want->ok). */
int pb_dtp_search_plan_even(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                            const pb_dtp_config *want, long B, pb_dtp_result *r, pb_plan **out,
                            pb_error *err);
/* *g at `batch` samples: unchanged when it is, else reloaded through
 * o->pipe.reload (an error without one). */
int pb_dtp_search_reload(const pb_dtp_opts *o, long batch, const pb_graph **g, pb_error *err);

/* ---- one unit (pp, m) of the search (dtp_search.c), shared with the
 * boundary polish: the model at the micro-batch B/m split into pp x V
 * chunks, its chunk solves cached ---- */

typedef struct pb_dtp_unit {
	const pb_graph *g;
	const pb_cluster *cl;
	const pb_dtp_opts *o;
	int pp, m, v, sched, n_chunks, d;
	pb_pipe_split split;
	int layers_split, min_layers, max_layers;
	unsigned char *active, *mask;
	double *p2p_bytes; /* n_chunks - 1 */
	pb_dtp_cache *cache;
	const double *cost; /* per node: FLOPs, -1 outside the problem */
	double *tcost;      /* per node: its roofline time x the device rate (FLOPs at
	                     * least: memory-bound operators more; run_unit's pruning) */
	json_t *chunks;     /* building a plan: per chunk its solve (dtp_plan.c), else NULL */
	long replayed;      /* cache answers of keep_plan (not counted) */
} pb_dtp_unit;

/* A device group's chunks summed (the even and the uneven costing): time
 * without and with the gradient all-reduces, memory parts; ok = 0 when a
 * chunk failed or was cut. */
typedef struct pb_dtp_group_sum {
	double time, grad, mp, ma;
	double grad_bytes, backward; /* gradient bytes per device, backward pass (s) */
	double saved;                /* bytes the distributed optimizer saves (dist_opt.h) */
	double sp_act, sp_once;      /* and sequence parallelism (dtp_stage.h pb_dtp_chunk) */
	double flops;                /* the uneven costing: the group's FLOPs */
	int ok, cut, proven;
} pb_dtp_group_sum;

/* Adds chunk ch, solved, to gs. */
void pb_dtp_search_group_add(pb_dtp_group_sum *gs, const pb_dtp_chunk *ch);
/* A device group's solved stage gs (mem bytes per device, the activations of
 * acts micro-batches held) into c: proven, slowest stage, gradient
 * all-reduce with its overlap behind the backward pass in cl's buckets
 * (grad_exposed, grad_hidden, grad_buckets: the group whose exposed part is
 * largest; grad_overlap.h), memory and the memory options. */
void pb_dtp_search_note_group(pb_dtp_config *c, const pb_cluster *cl, const pb_dtp_group_sum *gs,
                              double mem, double acts);

/* The unit (pp, m) on graph g (at the micro-batch): buffers, *cost (FLOPs
 * per node, -1 outside the problem; the caller frees it with
 * pb_dtp_search_unit_close), the chunk cache. */
int pb_dtp_search_unit_open(pb_dtp_unit *u, const pb_graph *g, const pb_cluster *cl,
                            const pb_dtp_opts *o, int pp, int m, double **cost, pb_error *err);
void pb_dtp_search_unit_close(pb_dtp_unit *u, double *cost);
/* u->chunks = an array of n_chunks nulls: the next pb_dtp_search_unit_eval records
 * every chunk's solve there (the caller decrefs it and sets it NULL). */
int pb_dtp_search_unit_record(pb_dtp_unit *u, pb_error *err);
/* u->p2p_bytes of u->split: bytes crossing each chunk boundary. */
void pb_dtp_search_unit_bytes(pb_dtp_unit *u);
/* Costs configuration (dp, tp) of the unit's split and schedule into c.
 * inc > 0: the step time of a plan that fits; a stage proven unable to beat
 * it makes c pruned (c->ok = 0). With u->chunks an array, every chunk's
 * solve is recorded there (the plan's chunks, dtp_plan.c). */
int pb_dtp_search_unit_eval(pb_dtp_unit *u, int dp, int tp, double inc, pb_dtp_config *c,
                            pb_error *err);

#endif
