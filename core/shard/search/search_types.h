/*
 * shard/search/search_types.h — the state of a strategy search over grouping
 * schemes that its files share: a row per scheme with its solved figures,
 * the incumbent events, and the search itself (the best row, the stepping
 * solver's coroutine, the incumbent plan). search_rows.h creates and solves
 * it; the label, report and workers read it through this header, so none of
 * them includes the rows that call them.
 */
#ifndef PB_SHARD_SEARCH_TYPES_H
#define PB_SHARD_SEARCH_TYPES_H

#include "plan.h"
#include "shard/memory_options.h"
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
	pb_mem_opts mopts;    /* the distributed optimizer and sequence parallelism
	                       * (memory_options.h): memory is as they are settled */
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
	int jobs;       /* worker processes for pb_search_finish (1 = serial) */
	int want_label; /* every row gets its restrictions and unrestricted bound
	                 * (search_label.h): the label of the plan */
	int cut_wave;   /* > 0 (shard --pipeline auto): the rows are solved in waves of
	                 * this many, in scheme order; a row of a later wave is cut when it
	                 * cannot beat the best plan that fits of the waves before
	                 * (pb_search_rows_wave_cutoff), so serial, forked and MPI runs
	                 * cut the same rows */
	/* The stepping solver runs the scheme being solved on a coroutine
	 * (core/util/coro.h) that yields at every new incumbent and after ~50 ms of
	 * branch and bound; see pb_search_solver_new. */
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

#endif
