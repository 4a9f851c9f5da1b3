/*
 * shard/dtp/dtp_types.h — the types every file of dtp/ shares: a
 * configuration (dp, tp, pp, m, schedule) with its costed figures, the
 * options of the search and its result (the rows, the best, the kept plan).
 * The search that fills them is dtp_search.h (its algorithm is described
 * there); the files that read them (plan, report, schedules, polish) include
 * this header only, so none of them includes the search they serve.
 */
#ifndef PB_SHARD_DTP_TYPES_H
#define PB_SHARD_DTP_TYPES_H

#include "plan.h"
#include "shard/cluster.h"
#include "shard/memory_options.h"
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
	/* the distributed optimizer and sequence parallelism (memory_options.h):
	 * what it runs with; memory is as they are settled */
	pb_mem_opts mopts;
	double bubble;
	double slowest, p2p; /* slowest group per micro-batch, slowest transfer (s) */
	double p2p_exposed;  /* transfer seconds in the step (pb_pipeline_p2p_step: all of them
	                      * when not overlapped, else the fill, drain and what the
	                      * passes cannot hide) */
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
	pb_mem_opts mopts; /* memory_options.h: memory is as they are settled */
	int fits, ok;
	int cut;         /* not solved: cannot beat a scheme before it (search_types.h cut_wave) */
	char error[160]; /* why, when cut */
} pb_dtp_oprow;

/* What the search has done when it starts a configuration (pb_dtp_opts.progress). */
typedef struct pb_dtp_progress {
	int unit, units;   /* the unit (pp, m) of this rank's among all units, from 0 */
	int dp, tp, pp, m; /* the configuration */
	char sched[24];    /* its schedule: "1f1b", "interleaved:V", ... */
	int rows;          /* configurations listed so far (pruned ones included) */
	long pruned;       /* of them pruned */
	double best;       /* step time (s) of the best fitting so far, 0: none */
} pb_dtp_progress;

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
	/* progress (may be NULL): the configuration about to be evaluated */
	void (*progress)(void *ud, const pb_dtp_progress *p);
	void *ud;
} pb_dtp_opts;

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
	const pb_cluster *cl; /* borrowed, set by pb_dtp_search_add_operator: the report's
	                       * memory limit and margin */
	/* what the best row's plan splits along each mesh axis (the
	 * operator-level plan of scheme op_scheme: pb_dtp_report_note_op_degrees; a
	 * pipeline's stages: pb_dtp_report_note_plan_degrees); deg_row: the row they
	 * are of, -1: not known */
	pb_shard_degrees op_deg;
	char op_scheme[48];
	int have_op_deg, deg_row;
} pb_dtp_result;

#endif
