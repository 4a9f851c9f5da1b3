/*
 * shard/search/parallel.h — the remaining grouping schemes of a search solved in
 * forked worker processes (parallel.c).
 *
 * Callers go through pb_search_run_parallel (search.h), which finishes
 * a scheme the stepping solver is in and solves serially when one worker (or
 * one scheme, or --emit-lp) is all there is.
 */
#ifndef PB_SHARD_PARALLEL_H
#define PB_SHARD_PARALLEL_H

#include "shard/search/search_rows.h"

/* Solves rows s->next .. n_rows-1 in up to `jobs` worker processes (one
 * scheme per worker) and merges them in scheme order: rows, incumbents, the
 * best row (its problem rebuilt here, so the plan equals the serial one).
 * The stepping solver must not be inside a scheme (s->co == NULL) and no LP
 * is written. progress (may be NULL) is called about every 50 ms with the
 * schemes finished; a non-zero return kills the workers (PB_ECANCEL). */
int pb_parallel_solve(pb_shard_search *s, int jobs, int (*progress)(void *ud, int done, int total),
                      void *ud, pb_error *err);

#endif
