/*
 * partition.h — the many-core partition methods as steppable solvers.
 *
 * pb_partition_solver_new() builds the problem from a graph and a manycore
 * layout and returns a pb_solver (solver.h) for one method of the registry
 * (method_registry.h; each method in its own method_NAME.c, which says what
 * one unit of its step is).
 * Every incumbent is a full "partition" plan (problem.h: pb_part_to_plan)
 * whose metrics include the exact optimum and the gap to it (not with
 * no_reference, which skips the exact solve; no method but exact reads it).
 */
#ifndef PB_PARTITION_H
#define PB_PARTITION_H

#include "model/graph.h"
#include "hw.h"
#include "solver.h"
#include "partition/milp/chain_milp.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/part_costs.h" /* the measured times of pb_part_opts.node_time */

typedef struct pb_part_opts {
	const char *method;  /* a name of the registry (method_registry.h); NULL = exact */
	long episodes;       /* rl: training episodes (0 = default) */
	unsigned long seed;  /* rl: random seed */
	const char *agent;   /* rl: checkpoint to start from; NULL = the shipped agent of
	                        the layout when there is one (pb_partition_default_agent),
	                        "none" = a fresh network */
	const char *emit_lp; /* milp: write the model to this file (CPLEX LP format) */
	const char *init;    /* rl: "balanced" (default), "local", "greedy", "equal", "pack" */
	int no_reference;    /* rl and the heuristics: skip the exact solve (no optimum, no gap) */
	double seconds;      /* rl: training time limit (0 = none) */
	double time_limit;   /* milp: stop after this many seconds of solving (0 = none) */
	long max_labels; /* the label DP (exact under rules or weighted): its limit, 0 = default */
	/* Optional hooks (set by the Lua layer, core/script/hooks.h): an extra
	 * action mask for rl, and an initial allocation (one entry per core,
	 * checked with pb_part_state_valid) that replaces the starting state of
	 * rl, local and milp. */
	int (*mask)(void *ud, const int *arranged_core, int n, unsigned char *mask);
	void *mask_ud;
	const int *init_state;
	/* Measured seconds per node (NAN = use MACs), e.g. from a tuning log via
	 * pb_part_load_costs(); NULL = MACs / rate everywhere. */
	const double *node_time;
	const char *costs_path; /* recorded in the plan's detail.costs */
	/* Cut and pin rules (chain_rules.h, from Lua `cut=` / `core=` rules):
	 * every method obeys them; NULL = none. */
	const struct pb_part_rules *rules;
} pb_part_opts;

int pb_partition_solver_new(const pb_graph *g, const pb_hw *hw, const pb_part_opts *o,
                            pb_solver **out, pb_error *err);
/* The problem a partition solver works on (owned by the solver). */
pb_part_problem *pb_partition_solver_problem(pb_solver *s);
/* Exact optimum computed at start (NAN for the exact method until done); it labels
 * the plans (optimum, gap); the milp method never sees it. */
double pb_partition_solver_optimum(pb_solver *s);
/* For the milp method: fills st (incumbent = the installed plan's max(t), proven
 * bound, gap, probes, nodes ...) and returns 1; returns 0 for other methods. */
int pb_partition_solver_milp_stats(pb_solver *s, pb_milp_stats *st);
/* For the rl method: what the agent added to its start (rl_reinforce.h), 1;
 * 0 for other methods. */
struct pb_rl_report;
int pb_partition_solver_rl_report(pb_solver *s, struct pb_rl_report *r);
/* The shipped agent of a layout: DIR/../agents/STEM.ckpt for the layout file
 * DIR/STEM.lua, when it exists and was trained for the layout's core count.
 * Writes its path to buf and returns 1, else 0. */
int pb_partition_default_agent(const char *layout_path, int cores, char *buf, int len);

#endif
