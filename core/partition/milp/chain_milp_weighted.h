/*
 * partition/milp/chain_milp_weighted.h — the milp method under the weighted objective
 * (wc x max compute[ms] + ws x max storage[MiB] + wr x max routing[ms], chain_problem.h),
 * without rules: a branch and bound over prefixes that proves the optimum, run in slices.
 *
 * The three maxima are linked resources: compute and storage of a group shrink as 1/c
 * with its c cores, routing does not depend on c. chain_milp_weighted.c explains the
 * search, its bounds and its pruning. A pb_milp under the weighted objective (and no
 * rules, no LP file asked for) holds one of these and steps it (chain_milp.c).
 */
#ifndef PB_PARTITION_MILP_WEIGHTED_H
#define PB_PARTITION_MILP_WEIGHTED_H

#include "partition/chain/chain_problem.h"

typedef struct pb_milp_w pb_milp_w;

/* Builds the search: memory feasibility, the term bounds and the incumbent of a few
 * threshold probes (each a fewest-core partition within a bottleneck time). */
int pb_milp_w_new(pb_part_problem *P, pb_milp_w **out, pb_error *err);
/* Works until the monotonic clock (seconds, util-free: CLOCK_MONOTONIC) passes
 * `until`, the search ends, or the job is cancelled. Returns PB_OK or PB_ENOMEM. */
int pb_milp_w_run(pb_milp_w *W, double until, pb_error *err);
/* 1 once the search is over: proven (pb_milp_w_proven) or out of labels. */
int pb_milp_w_done(const pb_milp_w *W);
int pb_milp_w_proven(const pb_milp_w *W);
/* Weighted objective of the incumbent (never INFINITY once built). */
double pb_milp_w_incumbent(const pb_milp_w *W);
/* Proven lower bound on the optimum (the incumbent once proven). */
double pb_milp_w_bound(const pb_milp_w *W);
/* arranged_core of the incumbent (n entries). */
const int *pb_milp_w_state(const pb_milp_w *W);
/* 1 when a partition fits the memory (else memory is ignored, as by exact). */
int pb_milp_w_memory_used(const pb_milp_w *W);
/* Labels kept so far, and positions processed (of m). */
long pb_milp_w_labels(const pb_milp_w *W);
int pb_milp_w_position(const pb_milp_w *W);
/* Why the search stopped unproven ("" if it did not). */
const char *pb_milp_w_note(const pb_milp_w *W);
void pb_milp_w_free(pb_milp_w *W);

#endif
