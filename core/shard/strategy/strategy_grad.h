/*
 * shard/strategy/strategy_grad.h — the gradient all-reduces of a training
 * plan's strategy choice: parameters replicated along a mesh axis are
 * all-reduced over that axis once per step (as listed with "(gradient)" in
 * the report). The strategy MILP prices them per operator, the report lists
 * them, and a pipeline pays them once per step, not per micro-batch.
 */
#ifndef PB_SHARD_STRATEGY_GRAD_H
#define PB_SHARD_STRATEGY_GRAD_H

#include <jansson.h>

#include "shard/strategy/strategy_types.h"

/* Gradient all-reduces of node c's parameters under strategy st (whether
 * the plan trains is the caller's test: p->opts.train is not read here),
 * appended to arr when given (tensor, from, to "(gradient)", kind, axis,
 * bytes, time); their seconds. owner_only: only the parameters c holds (a
 * shared parameter is reduced once, by its first consumer, as the cost model
 * counts it). */
double pb_strategy_grad_collectives(const pb_shard_problem *p, const pb_strat *st, int c,
                                    json_t *arr, int owner_only);
/* Seconds of a training plan's gradient all-reduces (0 when not training). */
double pb_strategy_grad_time(const pb_shard_problem *p, const int *choice);
/* Bytes of gradients per device that those all-reduces carry: every
 * parameter shard the device holds that is replicated along some axis,
 * counted once (the gradient buffer that data-parallel buckets split). */
double pb_strategy_grad_bytes(const pb_shard_problem *p, const int *choice);
/* Node v's part of pb_strategy_grad_time under its strategy k. */
double pb_strategy_grad_node(const pb_shard_problem *p, int v, int k);
/* The largest pb_strategy_grad_time any plan of p could have: per operator
 * its costliest strategy. */
double pb_strategy_grad_max(const pb_shard_problem *p);

#endif
