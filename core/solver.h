/*
 * solver.h — one steppable interface for every optimizer.
 *
 * A solver is created by its module (e.g. pb_partition_solver_new), then the
 * TUI, the CLI and Lua drive it the same way: step() does a bounded amount of
 * work (about 50 ms at most per call, so the UI never freezes), reports
 * progress and whether the incumbent improved; incumbent() returns the best
 * plan so far (owned by the solver); free() releases everything.
 */
#ifndef PB_SOLVER_H
#define PB_SOLVER_H

#include <stdio.h>

#include "util/error.h"
#include "plan.h"

typedef struct pb_solver_progress {
	double fraction;   /* 0..1 of the planned work, or -1 if unknown */
	int improved;      /* this step found a better incumbent */
	int done;          /* nothing left to do */
	double incumbent;  /* objective of the incumbent (lower is better) */
	double bound;      /* best known lower bound, NAN if none */
	long iterations;   /* episodes, B&B nodes, moves ... so far */
	char message[160]; /* one line for a status bar */
} pb_solver_progress;

typedef struct pb_solver pb_solver;

typedef struct pb_solver_ops {
	const char *name;
	/* Does at most `budget` units of work (actions, episodes, nodes). */
	int (*step)(pb_solver *s, int budget, pb_solver_progress *p, pb_error *err);
	const pb_plan *(*incumbent)(pb_solver *s);
	/* Writes a few lines of statistics. */
	void (*stats)(pb_solver *s, FILE *out);
	void (*free)(pb_solver *s);
	/* A wrapper's solver (script/hooks_solver.c); NULL for a solver that
	 * wraps none. */
	pb_solver *(*inner)(pb_solver *s);
} pb_solver_ops;

struct pb_solver {
	const pb_solver_ops *ops;
	void *state;
	/* Objective history (one value per step call), for sparklines and plots. */
	double *history;
	int n_history, cap_history;
	/* The last step's bound (NAN if none); meaningful once n_history > 0. */
	double bound;
};

int pb_solver_step(pb_solver *s, int budget, pb_solver_progress *p, pb_error *err);
const pb_plan *pb_solver_incumbent(pb_solver *s);
void pb_solver_free(pb_solver *s);
/* The solver at the bottom of s's wrappers (s itself if it wraps none): a
 * module's accessors for its own solver type look through wrappers. */
pb_solver *pb_solver_innermost(pb_solver *s);

#endif
