/*
 * shard/strategy/dist_opt.h — the distributed optimizer (issue 38 item 3): the
 * optimizer state of mixed-precision Adam (an fp32 master copy of the
 * weights and two fp32 moments: 12 bytes per parameter, Rajbhandari et al.
 * 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
 * Models", SC20, section 3.1) divided over the data-parallel replicas of each
 * parameter shard, as Megatron-LM's --use-distributed-optimizer and ZeRO
 * stage 1 do. The gradients are then reduce-scattered (each replica gets the
 * sum of its 1/r of them, updates its part of the weights) and the updated
 * weights all-gathered: the two halves of a ring all-reduce (Patarasuk and
 * Yuan 2009), so the same volume and, in the cost model (the all-reduce's
 * one start-up latency split between the two:
 * pb_strategy_problem_grad_sync), the same time as the all-reduce it
 * replaces; the report lists the two collectives.
 *
 * In the strategy MILPs it is --zero 1 (pb_strategy_problem_train_param_factor). As a
 * search dimension (shard --dist-opt auto, the default in training) the
 * MILPs are solved with it, which never costs time; a plan that fits
 * without it is then reported without it (it needs none: the same plan,
 * the same step time, Megatron-LM's default), one that does not is
 * reported with it. That is exact: with the optimizer state sharded every
 * plan takes no more memory, so the MILP's optimum is at least as fast as
 * the unsharded one's, and when it fits unsharded it is that one's optimum
 * too.
 */
#ifndef PB_SHARD_DIST_OPT_H
#define PB_SHARD_DIST_OPT_H

#include "shard/strategy/strategy_problem.h"

enum { PB_DISTOPT_OFF = 0, PB_DISTOPT_ON = 1, PB_DISTOPT_AUTO = 2 };
extern const char *const pb_dist_opt_names[3]; /* "off", "on", "auto" */

/* "on", "off" or "auto" into *mode; PB_EUSAGE naming the option otherwise. */
int pb_dist_opt_parse(const char *s, int *mode, pb_error *err);

/* Bytes per device the plan (a choice per group of p) saves by dividing its
 * optimizer state over the replicas of each parameter shard: the state it
 * would hold unsharded less what it holds under p's options (0 when
 * p->opts.zero is 0 or the optimizer keeps no state). */
double pb_dist_opt_saved(const pb_shard_problem *p, const int *choice);

#endif
