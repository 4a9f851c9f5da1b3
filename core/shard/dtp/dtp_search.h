/*
 * shard/dtp/dtp_search.h — the data x tensor x pipeline search of `shard
 * --pipeline auto` and of the fixing options --dp --tp --pp --microbatches
 * --schedule (dtp_search.c, dtp_stage.c, dtp_report.c; docs/shard.md).
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
 * (pb_pipe_split_layers: first/last chunks holding the embedding and head
 * get fewer layers), else by the key-operator MILP. Every chunk is solved
 * once per distinct content (the layer classes' representative of each
 * node), scheme and activation copies (dtp_stage.c's cache), so the middle
 * chunks of a decoder share one MILP.
 */
#ifndef PB_SHARD_DTP_SEARCH_H
#define PB_SHARD_DTP_SEARCH_H

#include <jansson.h>
#include <stdio.h>

#include "shard/pipeline/pipeline_plan.h"
#include "shard/search/search_degrees.h"
#include "shard/strategy/strategy_problem.h"

enum { PB_SCHED_1F1B = 0, PB_SCHED_INTERLEAVED = 1 };
enum { PB_DTP_UNEVEN_MAX = 16 }; /* stages of a configuration with uneven groups */

typedef struct pb_dtp_config {
	int dp, tp, pp, m;
	int sched, v;     /* PB_SCHED_*, model chunks per device (1 for 1F1B) */
	char scheme[48];  /* the stage grouping ("4x2", "8") or the operator-level scheme */
	double step_time; /* seconds */
	double memory;    /* bytes per device, the max over devices */
	double bubble;
	double slowest, p2p; /* slowest group per micro-batch, slowest transfer (s) */
	double grad;         /* the slowest group's gradient all-reduces, once per step (s) */
	/* of them, the part the backward pass does not hide (grad_overlap.h: the
	 * group's buckets behind its last micro-batch's backward pass; the max
	 * over groups), in the step time (s) */
	double grad_exposed;
	double grad_hidden; /* that group's all-reduce seconds the backward pass hides */
	long grad_buckets;  /* and its buckets */
	int fits, ok;
	int pruned;       /* not solved: bound >= the incumbent (ok = 0) */
	int proven;       /* every stage MILP proven optimal (within pb_dtp_opts.gap) */
	double bound;     /* lower bound of step_time: the slowest group's FLOPs on its devices
	                   * at the device rate, times the schedule's slots (s) */
	int layers_split; /* chunks cut at layer boundaries */
	int min_layers, max_layers; /* blocks per chunk (layers_split) */
	/* uneven device groups (dtp_uneven.h): stage s on dp x stage_tp[s]
	 * consecutive devices; chunk k (pp x v of them, k on group k mod pp)
	 * holds the layer units [stage_end[k-1], stage_end[k]); tp is the
	 * largest stage_tp. 0: every stage on dp x tp. */
	int uneven;
	short stage_tp[PB_DTP_UNEVEN_MAX], stage_end[PB_DTP_UNEVEN_MAX];
	char error[160];
} pb_dtp_config;

/* A row of the operator-level search (pp = 1), given by the caller. */
typedef struct pb_dtp_oprow {
	char scheme[48];
	double step_time, memory;
	int fits, ok;
} pb_dtp_oprow;

typedef struct pb_dtp_opts {
	pb_pipe_opts pipe;      /* batch, train, pad, opt_level, reload, max_bubble */
	pb_shard_opts shard;    /* optimizer, zero, recompute, layers of the stage MILPs */
	int dp, tp, pp, m;      /* fixed values, 0 = free */
	int sched;              /* -1 free, else PB_SCHED_* */
	int v;                  /* interleaved: chunks per device (0 = 2) */
	const pb_dtp_oprow *op; /* operator-level rows (NULL: pp = 1 not evaluated) */
	int n_op;
	/* step time (s) of a plan that fits, known before the search (the best
	 * operator-level one; 0 = none): a configuration whose bound is not below
	 * it, nor below the best fitting one of its stage count so far, is not
	 * solved (a row with pruned = 1) */
	double incumbent;
	/* 1: no configuration is pruned (no incumbent, not even the best of a stage
	 * count so far): every row solved, the reference the tests compare with */
	int exhaustive;
	/* relative MIP gap of the stage MILPs (0 = proven optimal): a plan of a
	 * chunk within it of the chunk's optimum; node_limit > 0: GLPK stops a
	 * stage MILP holding a plan after that many branch-and-bound nodes (the
	 * plan is then not proven within the gap) */
	double gap;
	long node_limit;
	/* progress (may be NULL): the unit (pp, m) about to be evaluated */
	void (*progress)(void *ud, int done, int total, int pp, int m);
	void *ud;
} pb_dtp_opts;

void pb_dtp_opts_default(pb_dtp_opts *o);

typedef struct pb_dtp_result {
	pb_dtp_config *cfg;
	int n, cap;
	int best; /* index of the best configuration, -1 when none */
	long batch;
	long milps, cache_hits; /* stage MILPs solved, chunk solves answered by the cache */
	long pruned;            /* configurations not solved (their bound, or a stage's) */
	double gap;             /* the stage MILPs' relative gap (pb_dtp_opts) */
	long node_limit;        /* and node limit */
	const pb_graph *g;      /* the graph the reloads left (borrowed) */
	/* the plan of the best pipeline configuration this process evaluated
	 * (pb_dtp_plan takes it instead of solving its chunks again), its row */
	pb_plan *kept;
	pb_dtp_config kept_cfg;
	const pb_cluster *cl; /* borrowed, set by pb_dtp_add_operator: the report's
	                       * memory limit and margin */
	/* what the best row's plan splits along each mesh axis (the
	 * operator-level plan of scheme op_scheme: pb_dtp_note_op_degrees; a
	 * pipeline's stages: pb_dtp_note_plan_degrees); deg_row: the row they
	 * are of, -1: not known */
	pb_shard_degrees op_deg;
	char op_scheme[48];
	int have_op_deg, deg_row;
} pb_dtp_result;

struct pb_shard_search;
/* Notes the degrees of s's best plan in r: when the best configuration is
 * that operator-level plan, "best" reports dp and tp as Megatron-LM means
 * them (or "mixed") and its grouping apart (dtp_report.c). */
void pb_dtp_note_op_degrees(pb_dtp_result *r, const struct pb_shard_search *s);
/* The same for a pipeline (or accumulation) best row: from its kept plan's
 * detail (pb_dtp_plan_build's "stages"), g the graph the plan's ids refer to. */
void pb_dtp_note_plan_degrees(pb_dtp_result *r, const pb_graph *g, const json_t *detail);
/* Sets the best row's degrees in best (its JSON): dp, tp (Megatron's, null
 * when mixed), grouping (the scheme), degrees, axes; nothing when unknown. */
void pb_dtp_degrees_json(json_t *best, const pb_dtp_result *r);

/* A device group's gradient all-reduces (grad s over bytes per device)
 * behind its backward pass (s per micro-batch) in cl's buckets: raises c's
 * grad_exposed (with grad_hidden, grad_buckets) to the group's exposed
 * part when larger (grad_overlap.h). */
void pb_dtp_note_overlap(pb_dtp_config *c, const pb_cluster *cl, double grad, double bytes,
                         double backward);

/* The line "gradient all-reduce: E ms exposed ..., H ms overlapped ..." of
 * a pipeline or accumulation row (dtp_report.c). */
void pb_dtp_overlap_text(FILE *f, const pb_cluster *cl, const pb_dtp_config *c);

/* Parses "1f1b", "interleaved" or "interleaved:V" (V >= 2). */
int pb_dtp_parse_schedule(const char *s, int *sched, int *v, pb_error *err);

/* Evaluates every pipeline configuration (pp > 1) allowed by the fixed
 * values (the operator-level ones: pb_dtp_add_operator); g is the model
 * at its batch as loaded (o->pipe.batch 0: its batch). Under mpirun -np N
 * the (pp, m) units are spread over the ranks and gathered on every rank
 * (the same result as one rank). A configuration that fails is a row with
 * ok = 0 and its error; the call fails when out of memory, cancelled, or
 * the fixed values do not fit the device count or the batch. */
int pb_dtp_search(const pb_graph *g, const pb_cluster *cl, const pb_dtp_opts *o, pb_dtp_result *out,
                  pb_error *err);
void pb_dtp_result_free(pb_dtp_result *r);
/* A new row at the end of r (zeroed, one chunk per device); NULL when out
 * of memory. */
pb_dtp_config *pb_dtp_result_add(pb_dtp_result *r);
/* The plan of pipeline configuration `want` (a row of pb_dtp_search with the
 * same options and batch B): the one r kept when it is want's (r may be
 * NULL; r->kept is then taken), else the model reloaded at B/m (*gp: the
 * graph left), split and solved again with every chunk's operator specs
 * kept; an error when its step time is not the row's. */
int pb_dtp_plan(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                const pb_dtp_config *want, long B, pb_dtp_result *r, pb_plan **out, pb_error *err);
/* The plan of a configuration from its chunks' solves (dtp_plan.c): kind
 * "pipeline", one group per chunk (chunk k on device group k mod pp), group
 * per node = its chunk; detail: dp, tp, pp, micro-batches, schedule, batch,
 * and per chunk its devices, scheme, recomputation and operator specs. */
int pb_dtp_plan_build(const pb_graph *g, const pb_cluster *cl, const pb_dtp_config *c, long B,
                      int train, const int *chunk_of, const json_t *chunks, pb_plan **out,
                      pb_error *err);
/* "best_overall" of the shard report: {kind, scheme, step_time} of r's best. */
json_t *pb_dtp_best_overall_json(const pb_dtp_result *r);
/* Puts the operator-level rows (pp = 1, from o->op; every dp x tp = N
 * allowed by the fixed values) first and picks the best configuration.
 * PB_EUSAGE when no configuration is left. */
int pb_dtp_add_operator(pb_dtp_result *r, const pb_dtp_opts *o, const pb_cluster *cl,
                        pb_error *err);
/* 1 when a beats b: fits first, then the shorter step, then fewer pipeline
 * stages, then fewer micro-batches (deterministic). */
int pb_dtp_better(const pb_dtp_config *a, const pb_dtp_config *b);

/* The operator-level rows of a finished shard search (a dropped mirror
 * scheme gets the numbers of the one kept); *out malloc'd, count returned,
 * -1 when out of memory. */
struct pb_shard_search;
int pb_dtp_oprows(const struct pb_shard_search *s, pb_dtp_oprow **out);

/* ---- the report (dtp_report.c) ---- */

/* {"dp","tp","pp","microbatches","schedule","step_time","memory","fits","kind",...} */
json_t *pb_dtp_config_json(const pb_dtp_config *c);
/* Sets "best" and "configurations" (and "dtp_search" counters) in rep. */
void pb_dtp_report_json(json_t *rep, const pb_dtp_result *r);
/* The table of alternatives, the best marked '*'. */
void pb_dtp_report_text(FILE *f, const pb_dtp_result *r);
/* The label of r's best configuration (search_label.h): best found unless
 * its step time attains the compute bound of g (the model at the global
 * batch) on cl, which holds for every dp x tp x pp configuration; restricted
 * by the chunk split, the stage searches' restrictions (o) and those of the
 * operator-level search (op, may be NULL). */
void pb_dtp_label(const pb_dtp_result *r, const pb_dtp_opts *o, const pb_graph *g,
                  const pb_cluster *cl, const pb_label *op, pb_label *L);
/* "label (dp x tp x pp): optimal | best found, bound .., gap ..; restricted by .." */
void pb_dtp_label_text(FILE *f, const pb_label *L);

/* ---- one chunk's solve, cached (dtp_stage.c) ---- */

typedef struct pb_dtp_cache pb_dtp_cache;

typedef struct pb_dtp_chunk {
	double time, mem_param, mem_act; /* per micro-batch s, bytes per device */
	double grad;       /* s of time that are gradient all-reduces (once per step) */
	double grad_bytes; /* gradient bytes per device they carry (pb_strategy_grad_bytes) */
	int feasible, ok;
	int cut;       /* ok = 0: no plan beats so->cutoff (pb_shard_opts) */
	int proven;    /* optimal, or within so->mip_gap (not stopped by so->node_limit) */
	int recompute; /* PB_RECOMP_NONE / SELECTIVE / FULL of the plan */
	json_t *ops;   /* cache with keep_ops: the plan's operators (a new reference,
	                * the caller's), else NULL */
	char error[160];
} pb_dtp_chunk;

pb_dtp_cache *pb_dtp_cache_new(const pb_graph *g);
void pb_dtp_cache_free(pb_dtp_cache *c);
/* The best plan of the nodes with mask[v] on the d-device sub-cluster of cl
 * on `scheme`, with act_copies; answered from the cache when a chunk of the
 * same content (layer-class representatives), scheme, devices and copies was
 * solved. so->cutoff > 0: a chunk proven not to beat it is r->cut (reused for
 * no larger cutoffs and no fewer copies). Returns PB_OK (a failed solve is
 * r->ok = 0) or PB_ENOMEM. */
int pb_dtp_chunk_solve(pb_dtp_cache *c, const pb_cluster *sub, const char *scheme,
                       const pb_shard_opts *so, const unsigned char *mask, double act_copies,
                       pb_dtp_chunk *r, pb_error *err);
void pb_dtp_cache_stats(const pb_dtp_cache *c, long *milps, long *hits);
/* A chunk's solve as the plan's chunks list holds it (dtp_plan.c): chunk,
 * group, scheme (NULL: "1"), recompute, time (without the gradient
 * all-reduces), grad_sync, param_bytes, act_bytes, act_copies, ops (it takes
 * ch->ops, or []). */
json_t *pb_dtp_chunk_json(int chunk, int group, const char *scheme, const pb_dtp_chunk *ch,
                          double act_copies);
/* From now on the solves also give each chunk's operators (r->ops). */
void pb_dtp_cache_keep_ops(pb_dtp_cache *c);
/* From now on a chunk's content is its nodes, not their layer classes: two
 * chunks share a solve only when they hold the same nodes (hand pins of one
 * node, dtp_edit.c). */
void pb_dtp_cache_by_node(pb_dtp_cache *c);
/* The d-device cluster of one stage group: whole nodes when d >= the node
 * size, else d devices of one node. */
pb_cluster pb_dtp_sub_cluster(const pb_cluster *cl, int d);

/* ---- the schedules of one unit (pp, m) (dtp_interleave.c) ---- */

/* 1F1B, then interleaved with V = 2, 3, ... while pp x V chunks fit the
 * repeated layers and V can pay (dtp_interleave.c says how V is cut). */
typedef struct pb_dtp_vloop pb_dtp_vloop;
/* inc: the incumbent of the unit's rows (0: none); NULL when out of memory */
pb_dtp_vloop *pb_dtp_vloop_new(const pb_dtp_opts *o, const pb_graph *g, int pp, int m,
                               const pb_cluster *cl, double inc);
void pb_dtp_vloop_free(pb_dtp_vloop *l);
/* The next schedule (*sc PB_SCHED_*, *v chunks per device); 0 when done. */
int pb_dtp_vloop_next(pb_dtp_vloop *l, int *sc, int *v);
/* 1 when the current schedule evaluates data-parallel degree dp (bound:
 * the bound of the schedule's split). */
int pb_dtp_vloop_want(const pb_dtp_vloop *l, int dp, double bound);
/* The incumbent the current schedule's rows are pruned against (0: none). */
double pb_dtp_vloop_inc(const pb_dtp_vloop *l);
/* The rows r->cfg[from..] the current schedule added. */
void pb_dtp_vloop_note(pb_dtp_vloop *l, const pb_dtp_result *r, int from);
/* The repeated layers (blocks of all runs) of g; 0 without, -1 out of memory. */
int pb_dtp_count_blocks(const pb_graph *g);

/* ---- the even search's parts (dtp_search.c), which pb_dtp_search (dtp.c)
 * follows with the uneven groups ---- */

/* The stage grouping of (dp, tp): "DxT", or one axis "D" when dp or tp is
 * 1; NULL for a single device. */
const char *pb_dtp_scheme_of(int dp, int tp, char *buf, size_t n);
/* c's schedule: "none" (pp 1, one micro-batch), "accumulate" (pp 1, m
 * micro-batches: gradient accumulation), "1f1b" or "interleaved:V" (in buf). */
const char *pb_dtp_sched_name(const pb_dtp_config *c, char *buf, size_t n);
/* 1 when row c was costed by the unit search (a pipeline, or pp 1 with m > 1
 * micro-batches: gradient accumulation, one chunk), 0 for an operator-level
 * row (pp 1, the whole batch at once). */
int pb_dtp_unit_row(const pb_dtp_config *c);
/* pb_dtp_search without the uneven device groups. */
int pb_dtp_search_even(const pb_graph *g, const pb_cluster *cl, const pb_dtp_opts *o,
                       pb_dtp_result *r, pb_error *err);
/* pb_dtp_plan of an even row (want->pp >= 2, want->ok). */
int pb_dtp_plan_even(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                     const pb_dtp_config *want, long B, pb_dtp_result *r, pb_plan **out,
                     pb_error *err);
/* *g at `batch` samples: unchanged when it is, else reloaded through
 * o->pipe.reload (an error without one). */
int pb_dtp_reload(const pb_dtp_opts *o, long batch, const pb_graph **g, pb_error *err);
/* Device group s of c (even or uneven): its first device and device count
 * (dtp_plan.c). */
void pb_dtp_group_devices(const pb_dtp_config *c, int s, int *first, int *n);
/* Adds "uneven", "stage_tp" and "stage_devices" to o when c is uneven
 * (dtp_plan.c). */
void pb_dtp_uneven_json(json_t *o, const pb_dtp_config *c);

/* ---- uneven device groups (dtp_uneven.c) ---- */

/* After the even search (r): configurations whose stages have different
 * tensor degrees, grown from r's best fitting pipelines and tried only
 * where their bound beats the best fitting step; added to r as rows with
 * uneven = 1 (or pruned rows). g: the graph the reloads left. */
int pb_dtp_uneven_search(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o, long B,
                         pb_dtp_result *r, pb_error *err);
/* pb_dtp_plan of an uneven row: r->kept when it is want's (the search
 * keeps the best uneven row's plan when it beats the kept one). */
int pb_dtp_uneven_plan(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                       const pb_dtp_config *want, long B, pb_dtp_result *r, pb_plan **out,
                       pb_error *err);

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
	json_t *chunks;     /* building a plan: per chunk its solve (dtp_plan.c), else NULL */
	long replayed;      /* cache answers of keep_plan (not counted) */
} pb_dtp_unit;

/* The unit (pp, m) on graph g (at the micro-batch): buffers, *cost (FLOPs
 * per node, -1 outside the problem; the caller frees it with
 * pb_dtp_unit_close), the chunk cache. */
int pb_dtp_unit_open(pb_dtp_unit *u, const pb_graph *g, const pb_cluster *cl, const pb_dtp_opts *o,
                     int pp, int m, double **cost, pb_error *err);
void pb_dtp_unit_close(pb_dtp_unit *u, double *cost);
/* u->chunks = an array of n_chunks nulls: the next pb_dtp_unit_eval records
 * every chunk's solve there (the caller decrefs it and sets it NULL). */
int pb_dtp_unit_record(pb_dtp_unit *u, pb_error *err);
/* u->p2p_bytes of u->split: bytes crossing each chunk boundary. */
void pb_dtp_unit_bytes(pb_dtp_unit *u);
/* Costs configuration (dp, tp) of the unit's split and schedule into c.
 * inc > 0: the step time of a plan that fits; a stage proven unable to beat
 * it makes c pruned (c->ok = 0). With u->chunks an array, every chunk's
 * solve is recorded there (the plan's chunks, dtp_plan.c). */
int pb_dtp_unit_eval(pb_dtp_unit *u, int dp, int tp, double inc, pb_dtp_config *c, pb_error *err);

/* ---- the boundary polish of the kept pipeline (dtp_polish.c) ---- */

typedef struct pb_dtp_polish_info {
	int polished;                /* the polish ran (even rows with pp > 1, budget >= 0) */
	int moves, tries, converged; /* as pb_pipe_result's polish_* */
	double before, after;        /* step time (s) */
	int dp, tp;
} pb_dtp_polish_info;

/* Polishes *plan, the plan of even pipeline row want (pb_dtp_plan, same
 * options and batch B), by single-node chunk-boundary moves costed as the
 * search costs a configuration (dp, tp, pp, m and the schedule kept), at
 * most o->pipe.polish_tries costed (0: 8 x chunks + 8; < 0: off). *plan is
 * replaced when a move is kept and gets "polish" in its detail; *gp is the
 * graph left (at B/m). Uneven rows are not polished (info->polished = 0). */
int pb_dtp_polish(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                  const pb_dtp_config *want, long B, pb_plan **plan, pb_dtp_polish_info *info,
                  pb_error *err);
/* {moves, tries, converged, step_time_before, step_time} */
json_t *pb_dtp_polish_json(const pb_dtp_polish_info *info);
/* "polish: M chunk-boundary moves kept of T costed, BEFORE -> AFTER (...)"
 * when it ran. */
void pb_dtp_polish_text(FILE *f, const pb_dtp_polish_info *info);

#endif
