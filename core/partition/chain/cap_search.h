/*
 * partition/chain/cap_search.h — a whole-chain repair by caps, for the
 * rule-aware search (rule_search.h).
 *
 * A partition whose every group keeps under caps on its time, compute,
 * storage and routing, obeys the rules (forbidden and forced cuts, pins)
 * and fits the core memory is found, when one exists, by a DP over the
 * allowed cut positions that needs the fewest cores (cap_search.c). The
 * search lowers the caps of the objective actually posed: max(t) by
 * bisection on the time cap; the weighted sum of the three largest terms
 * by lowering one term's cap while another's is held or traded (raised or
 * lowered by a factor), round after round, keeping a plan when its weighted
 * sum falls. Its moves re-cut the whole chain at once: every group, any
 * number of groups, whole runs of layers.
 *
 * It reads only the problem and the start: never the exact optimum.
 */
#ifndef PB_PARTITION_CAP_SEARCH_H
#define PB_PARTITION_CAP_SEARCH_H

#include "partition/chain/chain_problem.h"

/* Improves ac (a valid state) by the cap search. Returns 1 when it wrote a
 * plan that breaks no rule and fits memory and is strictly better than ac
 * (fewer broken rules, less overflow, or a lower objective), else 0 with ac
 * unchanged. Deterministic. */
int pb_part_cap_search(pb_part_problem *P, int *ac);

#endif
