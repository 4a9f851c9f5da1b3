/*
 * shard/strategy/strategy_milp.h — the strategy problem of one grouping
 * scheme solved by a GLPK MILP (strategy_milp.c; the formulation is in
 * strategy_problem.h), and the exhaustive reference solver of the tests.
 */
#ifndef PB_SHARD_STRATEGY_MILP_H
#define PB_SHARD_STRATEGY_MILP_H

#include "shard/strategy/strategy_types.h"

void pb_strategy_milp_size(const pb_shard_problem *p, pb_milp_size *sz);

/* Solves the problem (all groups, or level-3 chunks joined greedily); the
 * dual bound first (opts.bound, pb_strategy_bound_lower).
 * lp_path: when non-NULL, the full MILP is written there (glp_write_lp). */
int pb_strategy_milp_solve(pb_shard_problem *p, const char *lp_path, pb_shard_incumbent_fn cb,
                           void *ud, pb_shard_result *r, pb_error *err);

/* Solves this process stopped at opts.node_limit so far (a count to compare). */
long pb_strategy_milp_node_limited(void);

/* Exhaustive search over the groups' strategies (tests); fails if the space
 * exceeds max_combos. */
int pb_strategy_milp_brute_force(pb_shard_problem *p, long max_combos, pb_shard_result *r,
                                 pb_error *err);

#endif
