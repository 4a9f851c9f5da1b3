/*
 * shard/strategy/strategy_polish.h — a training plan made to fit and
 * improved by moving classes of tied groups (strategy_polish.c).
 */
#ifndef PB_SHARD_STRATEGY_POLISH_H
#define PB_SHARD_STRATEGY_POLISH_H

#include "shard/strategy/strategy_types.h"

/* Training: makes a plan (choice per group, ties kept) fit the device if it
 * does not, then lowers its step time by moving one class of tied groups at
 * a time while it fits (strategy_polish.c). Returns the moves made, 0 when
 * the plan is left as it was (inference; no move; or the result would not
 * fit, or not cost less, by pb_strategy_problem_evaluate): a plan returned changed
 * fits and costs less. */
int pb_strategy_polish(const pb_shard_problem *p, int *choice);

#endif
