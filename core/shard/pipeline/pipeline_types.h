/*
 * shard/pipeline/pipeline_types.h — the types the files of pipeline/ share:
 * the planner's options, a costed stage, the result of a split, and the
 * rows of `shard --pipeline auto`. The planner that fills them is
 * pipeline_plan.h; cost, polish and report include this header only, so none
 * of them includes the planner that calls them.
 */
#ifndef PB_SHARD_PIPELINE_TYPES_H
#define PB_SHARD_PIPELINE_TYPES_H

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
	int stages;        /* P >= 1, must divide the device count */
	long batch;        /* global batch B; 0 = pb_pipeline_plan_model_batch of the graph given */
	int microbatches;  /* m; 0 = the smallest divisor of B with bubble <= max_bubble */
	double max_bubble; /* (0.2) */
	int train;         /* training step: backward = 2 x forward on the same stage */
	int opt_level;     /* of the per-stage (and operator-level) shard search (2) */
	int slack;         /* widen every key operator's stage range by this (0) */
	int pad;           /* the shard searches may split dimensions that do not divide */
	int skip_oplevel;  /* do not solve the operator-level plan */
	int compare_level; /* -O of the operator-level plan compared with: 0, the level
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
	int pipeline_wins; /* pb_pipeline_stages_prefer(pipeline, operator-level) */
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

#endif
