/*
 * shard/search.h — the strategy search over grouping schemes, its steppable
 * solver, the generic Plan it produces, the JSON report and the per-device
 * task lists.
 *
 * For every grouping scheme (or the one asked for) the problem is built and
 * solved (problem.h); the table keeps each scheme's best plan, and the best
 * scheme overall becomes the plan. One step of the solver solves one scheme
 * (GLPK's branch and bound cannot be suspended without a longjmp across its
 * frames, which DESIGN.md forbids); the incumbent callback records every
 * better integer solution with its time, so the TUI can show them.
 */
#ifndef PB_SHARD_SEARCH_H
#define PB_SHARD_SEARCH_H

#include <jansson.h>

#include "plan.h"
#include "shard/strategy_problem.h"
#include "solver.h"

typedef struct pb_shard_row {
	pb_mesh mesh;
	int status; /* 0 not run, 1 solved, -1 error */
	double step_time, compute, comm, memory;
	int feasible, optimal;
	pb_milp_size size;
	int groups, edges, active;
	double seconds;
	long incumbents;
	char error[200];
} pb_shard_row;

typedef struct pb_shard_event {
	int scheme;       /* row index */
	double objective; /* seconds */
	double bound;     /* best bound of the open B&B nodes then (seconds, NAN if none) */
	double at;        /* seconds since the scheme's solve started */
} pb_shard_event;

typedef struct pb_shard_search {
	const pb_graph *g;
	pb_cluster cl;
	pb_shard_opts opts;
	int n_rows, next, best;
	int running; /* row being solved (incumbent events name it) */
	int jobs;    /* worker processes for pb_shard_search_finish (1 = serial) */
	/* The stepping solver runs the scheme being solved on a coroutine
	 * (core/util/coro.h) that yields at every new incumbent and after ~50 ms of
	 * branch and bound; see pb_shard_solver_new. */
	struct pb_coro *co;
	int in_co, aborting, co_new, co_rc;
	double yield_after; /* seconds of work before a step hands back (0.05) */
	double co_incumbent, co_bound, co_last; /* seconds; co_last: last yield (clock) */
	pb_shard_problem *co_p;
	pb_shard_result co_r;
	pb_error co_err;
	pb_shard_row *rows;
	char dropped[64][64];
	int n_dropped;
	pb_shard_problem *best_problem;
	pb_shard_result best_result;
	pb_plan *plan; /* incumbent plan (best scheme so far) */
	pb_shard_event *events;
	int n_events, cap_events;
	char *lp_path; /* --emit-lp: written for the single scheme asked, or the best */
	pb_shard_rules *own_rules;
} pb_shard_search;

/* scheme: "4x4" to solve one scheme, NULL for all with at most max_axes axes.
 * g must outlive the search (the cluster is copied, its name too). */
int pb_shard_search_new(const pb_graph *g, const pb_cluster *c, const pb_shard_opts *o,
                        const char *scheme, int max_axes, const char *lp_path,
                        pb_shard_search **out, pb_error *err);
/* Solves the next scheme (or finishes the one the stepping solver is in);
 * *done is set when all are solved. */
int pb_shard_search_step(pb_shard_search *s, int *done, pb_error *err);
/* Runs all remaining schemes (in s->jobs worker processes when > 1) and
 * writes the LP (when asked). */
int pb_shard_search_finish(pb_shard_search *s, pb_error *err);
void pb_shard_search_free(pb_shard_search *s);

/* Solves all remaining schemes in up to `jobs` forked worker processes (one
 * scheme per worker, GLPK on each worker's main thread; shard/parallel.c).
 * The table, the best plan and the incumbents are identical to the serial
 * steps: every worker runs the same deterministic code on the same problem,
 * and the results are merged in scheme order. progress (may be NULL) is
 * called about every 50 ms with the schemes finished so far; a non-zero
 * return cancels (the workers are killed, PB_ECANCEL). jobs <= 1 or a single
 * scheme: solved in this process. */
int pb_shard_search_run_parallel(pb_shard_search *s, int jobs,
                                 int (*progress)(void *ud, int done, int total), void *ud,
                                 pb_error *err);

/* Pieces of a step, shared by the serial and the parallel search: solve row
 * i (a failed scheme becomes a row error; only PB_ENOMEM is returned), whether
 * a solved row beats the best so far, and taking over a solved row's problem
 * and result (kept when better, freed otherwise). */
int pb_shard_search_solve_row(pb_shard_search *s, int i, pb_shard_problem **pp, pb_shard_result *r,
                              pb_error *err);
int pb_shard_search_better(const pb_shard_search *s, int i);
void pb_shard_search_accept(pb_shard_search *s, int i, pb_shard_problem *p, pb_shard_result *r);
/* Appends an incumbent event (scheme row, objective and bound in seconds,
 * time). */
void pb_shard_search_add_event(pb_shard_search *s, int row, double objective, double bound,
                               double at);

/* The plan of a solved problem (kind "shard"; see docs/shard.md). */
pb_plan *pb_shard_plan(const pb_shard_search *s);
/* The report: step_time, scheme, schemes, ops, collectives, memory ... */
json_t *pb_shard_report(const pb_shard_search *s);
/* One JSON file per device: its ordered operators with local shapes and the
 * collectives it joins. */
int pb_shard_emit_tasks(const pb_shard_search *s, const char *dir, pb_error *err);

/* The steppable solver around a search (owns it). A step resumes the scheme
 * being solved until GLPK reports a new incumbent (GLP_IBINGO), ~50 ms of
 * branch and bound have passed, or the scheme is finished; the progress
 * carries that scheme's latest incumbent and best bound, so every incumbent
 * reaches the TUI while the scheme is still running; the root LP hands back
 * between its chunks of simplex iterations (milp.c). Serial: one scheme at a
 * time. */
pb_solver *pb_shard_solver_new(pb_shard_search *s);

#endif
