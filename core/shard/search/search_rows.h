/*
 * shard/search/search_rows.h — the state of a strategy search over grouping schemes:
 * the scheme table (one row per scheme with its solved figures), the
 * incumbent events, the best row so far, and solving one row.
 *
 * This is the part that the serial steps (search.c) and the forked workers
 * (parallel.c) share; it calls neither of them, nor the output
 * (search_report.c). The full interface of the search is shard/search/search.h.
 */
#ifndef PB_SHARD_SEARCH_ROWS_H
#define PB_SHARD_SEARCH_ROWS_H

#include "plan.h"
#include "shard/strategy/strategy_problem.h"

typedef struct pb_shard_row {
	pb_mesh mesh;
	int status; /* 0 not run, 1 solved, -1 error */
	double step_time, compute, comm, memory;
	int feasible, optimal;
	pb_milp_size size;
	int groups, edges, active;
	double seconds;
	long incumbents;
	int recompute;        /* PB_RECOMP_* the row was solved with */
	int cut;              /* opts.cutoff proved every plan at or above it (status -1) */
	unsigned restricted;  /* PB_RESTR_* applied to its problem (search_label.h) */
	double lb;            /* lower bound (s) on the scheme's unrestricted problem, NAN */
	double bound_seconds; /* spent on lb */
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
	int running;    /* row being solved (incumbent events name it) */
	int jobs;       /* worker processes for pb_shard_search_finish (1 = serial) */
	int want_label; /* every row gets its restrictions and unrestricted bound
	                 * (search_label.h): the label of the plan */
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
void pb_shard_search_free(pb_shard_search *s);

/* Pieces of a step, shared by the serial and the parallel search: solve row
 * i (a failed scheme becomes a row error; only PB_ENOMEM is returned; on the
 * stepping solver's coroutine the solve yields at every new incumbent and
 * after yield_after seconds of a slice), and whether a solved row beats the
 * best so far. */
int pb_shard_search_solve_row(pb_shard_search *s, int i, pb_shard_problem **pp, pb_shard_result *r,
                              pb_error *err);
int pb_shard_search_better(const pb_shard_search *s, int i);
/* Fills row i's restrictions and its unrestricted bound (search_label.h; p,
 * r: its problem and result, NULL when the row failed), only when
 * s->want_label (search_label.c). cb (may be NULL) gets the bound while it is
 * computed, as pb_strategy_bound_lower's (the stepping solver yields there). */
int pb_shard_row_label(pb_shard_search *s, int i, const pb_shard_problem *p,
                       const pb_shard_result *r, pb_shard_incumbent_fn cb, pb_error *err);
/* The options row i was solved with (its recomputation choice). */
void pb_shard_row_opts(const pb_shard_search *s, int i, pb_shard_opts *o);
/* A slice of the coroutine's work starts now: no new incumbent yet, and the
 * yield_after clock restarts. */
void pb_shard_search_slice_start(pb_shard_search *s);
/* Appends an incumbent event (scheme row, objective and bound in seconds,
 * time). */
void pb_shard_search_add_event(pb_shard_search *s, int row, double objective, double bound,
                               double at);

#endif
