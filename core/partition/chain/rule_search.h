/*
 * partition/chain/rule_search.h — a local search of the chain partition that
 * compares plans by the full objective (pb_part_objective: broken rules,
 * then memory overflow, then max(t) or the weighted sum) and moves only
 * where the Lua cut rules allow (chain_rules.h), for `local`, `greedy`,
 * `pack` and the RL agent's best plan when the problem has rules or the
 * weighted objective (the max(t) search of local_search.c compares groups
 * by their time alone, which neither rules nor the weighted sum are).
 *
 * It reads only the problem and the start: never the exact optimum.
 */
#ifndef PB_PARTITION_RULE_SEARCH_H
#define PB_PARTITION_RULE_SEARCH_H

#include "partition/chain/chain_problem.h"

typedef struct pb_part_rsearch_opts {
	unsigned long seed; /* the kicks' and random starts' generator (default 1) */
	int kicks;          /* perturbations of the best state, each then descended (default 48) */
	int starts;         /* random starts at allowed cuts, each descended (default 8) */
} pb_part_rsearch_opts;

void pb_part_rsearch_defaults(pb_part_rsearch_opts *o);
/* 1 when the problem needs this search: it has cut or pin rules, or the
 * layout's objective is the weighted one. */
int pb_part_rsearch_wanted(const pb_part_problem *P);
/* Improves ac (a valid state) by descents, kicks and random starts (opts
 * NULL: the defaults). Returns 1 when ac changed (its pb_part_objective
 * strictly fell, or stayed with a smaller sum of squared group times), 0
 * when nothing better was found (or ac is invalid: it is left alone).
 * Deterministic: a function of the problem, ac and opts. */
int pb_part_rsearch(pb_part_problem *P, int *ac, const pb_part_rsearch_opts *opts);

#endif
