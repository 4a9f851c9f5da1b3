/*
 * method.h — one many-core partition method, and the solver state all of
 * them share (the steppable solver of partition.h runs any of them).
 *
 * A method is a constant pb_part_method in its own file (method_NAME.c),
 * listed once in method_registry.c. The solver (solvers.c) builds the
 * problem, computes the exact reference optimum unless the method has its
 * own (PB_PART_M_SELF_REFERENCE) or declines it (.wants_reference), checks a
 * Lua initial partition, then calls .start, which leaves the method's first
 * plan in run->ac; .step advances it; the solver installs a plan as the
 * incumbent only when its objective strictly improves (pb_part_run_offer).
 *
 * Invariants: run->ac is always a valid state and run->plan its plan; a
 * method's own state lives in run->state and is released by .free (which
 * must accept a state its .start left half built).
 */
#ifndef PB_PARTITION_METHOD_H
#define PB_PARTITION_METHOD_H

#include <stddef.h>
#include <stdio.h>

#include "hw.h"
#include "solver.h"
#include "partition/methods/partition.h"

typedef struct pb_part_method pb_part_method;

/* The solver state every method shares (solvers.c owns and frees it). */
typedef struct pb_part_run {
	pb_solver base;
	const pb_part_method *method;
	pb_part_problem *P;
	double optimum; /* exact reference for the gap (NAN until known) */
	int memory_feasible;
	int *ac; /* incumbent state (P->n entries) */
	int *scratch;
	double inc_obj;
	pb_plan *plan;
	long iters; /* what .unit counts */
	int done;
	int not_exact;    /* exact: the label DP gave up (the plan is a heuristic's) */
	char *costs_path; /* tuning log the costs came from, or NULL */
	void *state;      /* the method's own */
} pb_part_run;

enum {
	/* The method computes the optimum itself (exact): no reference solve runs
	 * before it, --no-reference does not apply, and a plan it ran to its end
	 * is proven optimal (unless the plan says the label DP gave up). */
	PB_PART_M_SELF_REFERENCE = 1,
	/* The method reads the Lua action mask (rl). */
	PB_PART_M_MASK = 2,
	/* Its TUI key attaches it to the session (--start) to be stepped. */
	PB_PART_M_STEPPED = 4
};

struct pb_part_method {
	const char *name;    /* the value of --method */
	const char *summary; /* one line for partition --help */
	/* The partition options it reads besides the ones every method takes,
	 * without dashes, separated by spaces ("" for none). */
	const char *options;
	const char *unit; /* what one unit of a step is, plural: "moves" */
	int key;          /* the TUI key that runs it; 0 for none */
	unsigned flags;   /* PB_PART_M_* */
	/* 0 when the reference solve would not help (NULL: it always does). */
	int (*wants_reference)(const pb_part_run *r);
	/* Builds its state and leaves its first plan in r->ac. */
	int (*start)(pb_part_run *r, const pb_hw *hw, const pb_part_opts *o, pb_error *err);
	/* At most budget units; sets r->iters, r->done, p->improved, and *bound
	 * (NAN: none) and *fraction (-1: unknown). NULL: the start finished it. */
	int (*step)(pb_part_run *r, int budget, pb_solver_progress *p, double *bound,
	            double *fraction, pb_error *err);
	/* Optional: writes the whole progress line (ev: the incumbent's). */
	void (*message)(pb_part_run *r, const pb_part_eval *ev, pb_solver_progress *p);
	/* Optional: text after the gap in the common progress line. */
	void (*note)(pb_part_run *r, char *buf, size_t len);
	/* Optional: lines after the common statistics. */
	void (*stats)(pb_part_run *r, FILE *out);
	/* Optional: releases r->state. */
	void (*free)(pb_part_run *r);
};

/* The partition run behind s, through any wrapper; NULL for another solver. */
pb_part_run *pb_part_run_of(pb_solver *s);
/* Installs ac (a valid state) as the incumbent, whatever its objective. */
void pb_part_run_install(pb_part_run *r, const int *ac);
/* Installs ac when it beats the incumbent; returns 1 if it did. */
int pb_part_run_offer(pb_part_run *r, const int *ac);

#endif
