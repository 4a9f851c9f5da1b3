/*
 * shard/search/search.h — the strategy search over grouping schemes: its state and
 * rows (search_rows.h), its plan, report and task lists (search_report.h),
 * stepping it, finishing it (serially or in worker processes) and its
 * steppable solver.
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

#include "shard/search/search_report.h"
#include "shard/search/search_rows.h"
#include "solver.h"

/* Solves the next scheme (or finishes the one the stepping solver is in);
 * *done is set when all are solved. */
int pb_search_step(pb_shard_search *s, int *done, pb_error *err);
/* Runs all remaining schemes (in s->jobs worker processes when > 1) and
 * writes the LP (when asked). */
int pb_search_finish(pb_shard_search *s, pb_error *err);

/* Solves all remaining schemes in up to `jobs` forked worker processes (one
 * scheme per worker, GLPK on each worker's main thread; shard/search/parallel.c).
 * The table, the best plan and the incumbents are identical to the serial
 * steps: every worker runs the same deterministic code on the same problem,
 * and the results are merged in scheme order. progress (may be NULL) is
 * called about every 50 ms with the schemes finished so far; a non-zero
 * return cancels (the workers are killed, PB_ECANCEL). jobs <= 1 or a single
 * scheme: solved in this process. */
int pb_search_run_parallel(pb_shard_search *s, int jobs,
                           int (*progress)(void *ud, int done, int total), void *ud, pb_error *err);

/* The steppable solver around a search (owns it). A step resumes the scheme
 * being solved until GLPK reports a new incumbent (GLP_IBINGO), ~50 ms of
 * branch and bound have passed, or the scheme is finished; the progress
 * carries that scheme's latest incumbent and best bound, so every incumbent
 * reaches the TUI while the scheme is still running; the root LP hands back
 * between its chunks of simplex iterations (milp.c). Serial: one scheme at a
 * time. */
pb_solver *pb_search_solver_new(pb_shard_search *s);

#endif
