/*
 * shard/strategy/strategy_bound.h — a dual lower bound on the step time of a
 * strategy problem (strategy_bound.c).
 */
#ifndef PB_SHARD_STRATEGY_BOUND_H
#define PB_SHARD_STRATEGY_BOUND_H

#include "shard/strategy/strategy_types.h"

/* A lower bound (seconds) on the step time of every plan of p, memory
 * ignored (strategy_bound.c: dual block coordinate ascent on the LP
 * relaxation of the problem without ties); it stops once the bound passes
 * target, improves by less than a relative 1e-9 per sweep, after
 * PB_BOUND_MAX_SWEEPS sweeps or before a sweep would take its work (cost
 * cells and strategies visited) past max_work. cb (may be NULL) gets the
 * bound every 8 sweeps (objective NAN); a non-zero return stops (*stop set).
 * choice (may be NULL; not filled when the bound passes target or on a stop):
 * a plan decoded from the dual, one strategy per group, ties kept; when its
 * cost attains the bound it is optimal without the memory limit.
 * slack (may be NULL; per group an array of its n_strat): every plan costs
 * at least the bound plus the sum of its strategies' slacks.
 * lambda > 0 (training): memory priced at lambda s/byte (Lagrangian); the
 * bound (minus lambda x the device memory) then holds for the plans that
 * fit, and so do the slacks. -INFINITY when out of memory. */
#define PB_BOUND_MAX_SWEEPS 400
double pb_strategy_bound_lower(const pb_shard_problem *p, double lambda, double target,
                               double max_work, pb_shard_incumbent_fn cb, void *ud, int *choice,
                               double *const *slack, int *stop);

#endif
