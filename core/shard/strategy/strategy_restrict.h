/*
 * shard/strategy/strategy_restrict.h — a strategy problem restricted to some
 * strategies per group (reduced-cost fixing; strategy_restrict.c).
 */
#ifndef PB_SHARD_STRATEGY_RESTRICT_H
#define PB_SHARD_STRATEGY_RESTRICT_H

#include "shard/strategy/strategy_types.h"

/* The problem restricted to the strategies with keep[G][s] (at least one
 * per group; a tied group keeps its representative's): own groups and
 * edges, the rest shared with p (strategy_restrict.c). (*map)[G][k] is the
 * original index of strategy k of group G. Free with
 * pb_strategy_restrict_free. */
int pb_strategy_restrict(const pb_shard_problem *p, const unsigned char *const *keep,
                         pb_shard_problem **out, int ***map, pb_error *err);

void pb_strategy_restrict_free(pb_shard_problem *q, int **map);

#endif
