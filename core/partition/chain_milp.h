/*
 * partition/chain_milp.h — the partition problem as a mixed-integer program, solved with
 * GLPK's branch and bound, steppable (one unit = one B&B node).
 *
 * Model (a set-partitioning path over layer positions 0..m):
 *   x[a,b,c] in {0,1}: layers [a, b) form one group of c cores;
 *   flow:    sum of x ending at p - sum starting at p = -1 (p=0), +1 (p=m), 0;
 *   cores:   sum c * x <= n   (spare cores never slow a group down);
 *   time:    T >= sum of t(a,b,c) * x[a,b,c] over the columns covering layer k,
 *            for every layer k (one group covers k, so this is its time);
 *   minimise T, measured in units of the perfect-balance lower bound.
 * Columns are only generated when they can matter: storage fits the memory
 * (when any partition fits), t <= the local-search upper bound, and c is no
 * larger than needed to reach the lower bound nor gives the same t as c-1.
 *
 * GLPK runs glp_intopt on a coroutine (core/util/coro.h, same thread): the
 * branch-and-bound callback counts nodes, records every new incumbent
 * (GLP_IBINGO) and the best bound, and suspends the search when the step's
 * budget is spent; the next step resumes it. No frame is ever unwound.
 */
#ifndef PB_PARTITION_MILP_H
#define PB_PARTITION_MILP_H

#include "partition/chain_problem.h"

typedef struct pb_milp pb_milp;

/* Builds the model; emit_lp (may be NULL) receives it in CPLEX LP format.
 * reference (may be NAN) is only used in messages. */
int pb_milp_new(pb_part_problem *P, double reference, const char *emit_lp, pb_milp **out,
                pb_error *err);
/* Advances by up to `nodes` B&B nodes. When a better integer solution was
 * found, *improved = 1 and ac (n entries) receives it. */
int pb_milp_step(pb_milp *M, int nodes, int *ac, int *improved, pb_error *err);
int pb_milp_done(const pb_milp *M);
long pb_milp_nodes(const pb_milp *M);
/* Best bound on max(t) in seconds (NAN before the root LP). */
double pb_milp_bound(const pb_milp *M);
/* Objective of the incumbent in seconds (INFINITY if none). */
double pb_milp_incumbent(const pb_milp *M);
int pb_milp_columns(const pb_milp *M);
void pb_milp_free(pb_milp *M);

/* Runs to the end; optimum in seconds and its state. */
int pb_milp_solve(pb_part_problem *P, const char *emit_lp, double *optimum, int *ac, pb_error *err);

#endif
