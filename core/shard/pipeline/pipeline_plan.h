/*
 * shard/pipeline/pipeline_plan.h — the pipeline planner (`pipeline`, `shard --pipeline
 * auto`) and its report.
 *
 * pb_pipe_plan splits a model into P stages on P consecutive device groups of
 * a cluster and costs the result:
 *   1. micro-batches m: the smallest divisor of the batch B with bubble
 *      (P-1)/(m+P-1) <= max_bubble (pipeline_stages.h), unless given;
 *   2. the operator-level plan of the whole batch on all devices (the shard
 *      search, same cost model), unless skipped;
 *   3. the model at batch B/m; stage split by the exact DP on chains, else
 *      key-operator intervals + MILP (pipeline_stages.h), FLOPs as costs;
 *   4. every non-empty stage sharded on its N/P devices by the shard search,
 *      its memory = parameters + activations of the micro-batches in flight
 *      under 1F1B (min(P - s, m), training) or 2 x its largest activation;
 *   5. point-to-point bytes per boundary (a tensor that skips stages counts
 *      at every boundary it crosses), sent by every device of the stage over
 *      the intra- or inter-node link: alpha + bytes / (N/P) / beta, twice as
 *      much when training (forward and backward);
 *   6. step time = (slowest stage + slowest transfer) x (m + P - 1); the
 *      pipeline wins against the operator-level plan by pb_pipe_prefer;
 *   7. a split of its own (not given) is polished by single-node boundary
 *      moves costed as 4-6 (pipeline_polish.c, pb_pipe_polish below).
 * The batch changes go through a reload callback (the caller owns the
 * graphs: the session reloads the model), so the planner never holds a graph
 * across a reload. The result keeps the last graph, which the stages and the
 * plan refer to.
 *
 * pb_pipe_compare (`shard --pipeline auto`) runs the planner for every P > 1
 * dividing the device count and picks the pipeline that beats the
 * operator-level plan, if any.
 */
#ifndef PB_SHARD_PIPELINE_PLAN_H
#define PB_SHARD_PIPELINE_PLAN_H

#include <jansson.h>
#include <stdio.h>

#include "model/graph.h"
#include "plan.h"
#include "shard/cluster.h"
#include "shard/pipeline/pipeline_stages.h"
#include "util/proof_label.h"

/* Reloads the model with dim 0 of every input = batch; *g = the new graph
 * (the previous one may be freed). */
typedef int (*pb_pipe_reload_fn)(void *ud, long batch, const pb_graph **g, pb_error *err);

typedef struct pb_pipe_opts {
	int stages;               /* P >= 1, must divide the device count */
	long batch;               /* global batch B; 0 = pb_pipe_model_batch of the graph given */
	int microbatches;         /* m; 0 = the smallest divisor of B with bubble <= max_bubble */
	double max_bubble;        /* (0.2) */
	int train;                /* training step: backward = 2 x forward on the same stage */
	int opt_level;            /* of the per-stage (and operator-level) shard search (2) */
	int slack;                /* widen every key operator's stage range by this (0) */
	int pad;                  /* the shard searches may split dimensions that do not divide */
	int skip_oplevel;         /* do not solve the operator-level plan */
	int compare_level;        /* -O of the operator-level plan compared with: 0, the level
	                           * `shard` defaults to, so the comparison is the plan a user
	                           * of `shard` gets (repeated layers solved once, as shard) */
	const int *stage_of;      /* a given split, stage per node (hand edits); NULL = solve */
	pb_pipe_reload_fn reload; /* NULL: the batch cannot change (error when it must) */
	void *reload_ud;
	/* Lua `cut` and `stage` rules (partition/chain/chain_rules.h), NULL = none */
	const struct pb_part_rules *rules;
	/* boundary polish of a split the planner made (pipeline_polish.c): at
	 * most this many moves costed; 0 = the default budget, < 0 = off */
	int polish_tries;
} pb_pipe_opts;

void pb_pipe_opts_default(pb_pipe_opts *o);
/* Dim 0 of the graph's first input, 1 when it has none. */
long pb_pipe_model_batch(const pb_graph *g);

/* One stage (or the operator-level plan: one "stage" on all devices). */
typedef struct pb_pipe_stage {
	double time, compute, comm;      /* per micro-batch, seconds */
	double mem_param, mem_act, peak; /* bytes per device */
	double memory;                   /* what the stage holds per device */
	int ops, first_dev, n_dev, feasible;
	char scheme[48]; /* the grouping of its devices, "-" when empty */
} pb_pipe_stage;

typedef struct pb_pipe_result {
	const pb_graph *g;        /* the graph at batch B/m (borrowed, from the reload) */
	const pb_cluster *cl;     /* borrowed */
	int p, d, m;              /* stages, devices per stage, micro-batches */
	long batch;               /* B */
	int train, chain;         /* chain: the split is the exact DP */
	pb_pipe_split split;      /* stage per node */
	unsigned char *active;    /* per node: part of the problem */
	pb_pipe_stage *stage;     /* p */
	double *p2p_bytes;        /* p - 1 boundaries: bytes per micro-batch */
	double *p2p_time;         /* seconds per transfer */
	unsigned char *p2p_inter; /* 1: the boundary crosses nodes */
	double slowest, p2p_max;  /* slowest stage, slowest transfer */
	double slot;              /* slowest + p2p_max */
	double step_time;         /* slot x (m + p - 1) */
	double bubble, bubble_over_m;
	int fits;              /* every stage fits the device memory */
	pb_pipe_stage oplevel; /* time INFINITY, "(not solved)" when skipped */
	int oplevel_solved;
	int pipeline_wins; /* pb_pipe_prefer(pipeline, operator-level) */
	int best_fits;     /* the winner of the two fits the device memory */
	char name[64];     /* "P stages x S", S the scheme of the first non-empty stage */
	/* the boundary polish: moves kept, moves costed, step time before it,
	 * converged = no single-node move of any boundary lowers the step time;
	 * polish_decided: costed moves rejected by the lower bound before one or
	 * both of their stage searches (pipeline_polish.c) */
	int polish_moves, polish_tries, polish_converged, polished, polish_decided;
	double polish_before;
	pb_plan *plan; /* kind "pipeline", group = stage, detail = the JSON report */
	/* the pipeline's step time: best found (the split balances FLOPs, the
	 * micro-batches follow --max-bubble, the stages are sharded by a
	 * restricted search) with the compute bound (search_label.h) */
	pb_label label;
} pb_pipe_result;

/* g: the model as loaded now (its batch is the default B). Free the result
 * with pb_pipe_result_free after success or failure; out->g is then the
 * graph the reloads left. Messages start with "pipeline:" or come from the
 * failing piece (split MILP, shard search). */
int pb_pipe_plan(const pb_graph *g, const pb_cluster *cl, const pb_pipe_opts *o,
                 pb_pipe_result *out, pb_error *err);
void pb_pipe_result_free(pb_pipe_result *r);

/* ---- planner pieces shared with the boundary polish (pipeline_cost.c) ---- */

struct pb_shard_opts;
/* The best scheme of the shard search (only scheme when not NULL, e.g.
 * "32") on the nodes of o->mask (all when NULL) of g on cl: its time,
 * compute, comm, scheme name, and memory per device, into r. */
int pb_pipe_solve_on(const pb_graph *g, const pb_cluster *cl, const struct pb_shard_opts *o,
                     const char *scheme, pb_pipe_stage *r, pb_error *err);
/* Costs stage s of r->split on its device group (shard search; memory of
 * the micro-batches in flight under 1F1B) into r->stage[s]. */
int pb_pipe_cost_stage(pb_pipe_result *r, struct pb_shard_opts *so, unsigned char *mask, int s,
                       pb_error *err);
/* The p2p bytes and times of every boundary of r->split. */
void pb_pipe_transfers(pb_pipe_result *r);
/* fits, slowest, slot and step time from the stages and transfers. */
void pb_pipe_totals(pb_pipe_result *r);
/* The boundary polish (pipeline_polish.c): the stage split minimises the
 * slowest stage in FLOPs, but a stage's time also has the collectives of its
 * sharding and the slot has the p2p transfer, which only the costing sees.
 * Hill climbing over the hand edit `boundary K +-1` (pb_plan_move_boundary:
 * the first node of stage K+1 joins K, or the last node of K joins K+1),
 * each move costed as that edit costs it (the two stages again, all
 * transfers): a move is kept when the plan fits no worse and its step time
 * drops; a boundary keeps moving the way it improved; rounds over all
 * boundaries until none improves (converged) or o->polish_tries moves were
 * costed. Moves that break a Lua rule are not tried. */
int pb_pipe_polish(pb_pipe_result *r, const double *cost, const struct pb_part_rules *rules,
                   int max_tries, struct pb_shard_opts *so, unsigned char *mask, pb_error *err);

/* ---- shard --pipeline auto ---- */

#define PB_PIPE_MAX_ROWS 16

typedef struct pb_pipe_row {
	int stages;
	char scheme[64];
	double step_time;
	int feasible, microbatches, ok;
	char error[200]; /* when !ok */
} pb_pipe_row;

typedef struct pb_pipe_compare {
	pb_pipe_row rows[PB_PIPE_MAX_ROWS];
	int n_rows;
	long batch; /* the global batch every row was planned for */
} pb_pipe_compare;

/* Plans a pipeline (operator-level plan skipped) for every P > 1 dividing
 * the device count, as `pipeline --stages P --skip-oplevel --opt-level
 * max(N, 2)` with base's batch, training, padding and reload; a failing P
 * becomes a row error (with its message). base->batch 0: the model's batch
 * as given (every P plans that global batch, although the graph the previous
 * P left is at its micro-batch). progress (may be NULL) is told each P
 * before it is planned. */
void pb_pipe_compare_run(const pb_graph *g, const pb_cluster *cl, const pb_pipe_opts *base,
                         void (*progress)(void *ud, int stages, int n_devices), void *ud,
                         pb_pipe_compare *out);
/* Index of the fastest row that fits memory and beats the operator-level
 * plan (op_time, op_fits; pb_pipe_prefer, the operator-level plan staying on
 * a tie), or -1. */
int pb_pipe_compare_best(const pb_pipe_compare *c, double op_time, int op_fits);
/* Plans row `winner` again with the options of the rows, so that its plan
 * can become the session's (the rows keep numbers only): the same batch,
 * padding and options as its row, so the kept plan is the row's plan. */
int pb_pipe_compare_plan(const pb_pipe_compare *c, int winner, const pb_graph *g,
                         const pb_cluster *cl, const pb_pipe_opts *base, pb_pipe_result *out,
                         pb_error *err);

/* ---- the report (pipeline_report.c) ---- */

/* The `pipeline --json` report; also the plan's detail. */
json_t *pb_pipe_result_json(const pb_pipe_result *r);
/* The text report: stages, bubble, the scheme table, the schedules. */
void pb_pipe_result_text(FILE *f, const pb_pipe_result *r);
/* "rules: NAME (EFFECT, N nodes), ...; all obeyed": the Lua rules (their
 * info, partition/chain/chain_rules.h) that constrained a pipeline split; nothing
 * when there are none. */
void pb_pipe_rules_text(FILE *out, const json_t *rules);
/* "polish: M <what> moves kept of T costed, BEFORE -> AFTER (...)", the
 * boundary polish's line (of `pipeline` and `shard --pipeline auto`). */
void pb_pipe_polish_line(FILE *f, const char *what, int moves, int tries, double before,
                         double after, int converged);
/* The plan of a result (kind "pipeline", group per node = stage). */
pb_plan *pb_pipe_result_plan(const pb_pipe_result *r);
/* `shard --pipeline auto` additions to the shard report rep (its
 * step_time, scheme and schemes): "pipelines" and "best_overall". */
json_t *pb_pipe_compare_json(const pb_pipe_compare *c, const json_t *rep, int winner);
/* The combined table of operator-level schemes (from rep) and pipelines. */
void pb_pipe_compare_text(FILE *f, const pb_pipe_compare *c, const json_t *rep, int winner);

#endif
