/*
 * shard/strategy/strategy_prune.h — dominated strategies dropped from a
 * strategy problem (strategy_prune.c).
 */
#ifndef PB_SHARD_STRATEGY_PRUNE_H
#define PB_SHARD_STRATEGY_PRUNE_H

#include "shard/strategy/strategy_types.h"

/* Exact dominance (strategy_prune.c): two strategies of a group that show
 * the same specs on every edge of the group are interchangeable for the rest
 * of the problem, so only those not beaten on cost and memory at once are
 * kept; specs no strategy uses are dropped from the edges' spec lists.
 * A group that shares its representative's tables keeps sharing them when
 * its pruning is the same, else it gets its own copies first. */
int pb_strategy_prune_dominated(pb_shard_problem *p, pb_error *err);

#endif
