/*
 * partition/chain/chain_rules.h — rules that constrain a many-core chain partition
 * (chain_problem.h), the solver side of the Lua `pb.rule{cut=...}` and
 * `pb.rule{core=...}` entries (docs/lua-api.md, core/script/hooks.c):
 *
 *   cut[p], p = 1..m-1, is the boundary between layers p-1 and p:
 *     PB_CUT_FORBID  no group may end there (layers p-1 and p share a group),
 *     PB_CUT_FORCE   a group must end there;
 *   pin[v] = k: the group of layer v must contain core k.
 *
 * A rule set is built per command (pb_part_rules_new / _cut / _pin) and
 * copied into the problem (pb_part_problem_set_rules); every method then
 * obeys it: the exact DP and the MILP as constraints, the heuristics through
 * pb_part_objective (violations first) and the RL agent through its mask.
 * `rules` in the plan's detail names each rule, its effect and the layers it
 * matched, so the report says what constrained the plan.
 */
#ifndef PB_PARTITION_CHAIN_RULES_H
#define PB_PARTITION_CHAIN_RULES_H

#include <jansson.h>

#include "partition/chain/chain_problem.h"

typedef struct pb_part_rules {
	int m;
	unsigned char *cut; /* m+1 entries */
	int *pin;           /* m entries, -1 = none */
	json_t *info;       /* [{name, effect, nodes: [names], count}] */
	int n_cut, n_pin;   /* constrained positions and pinned layers */
	char pin_kind[8];   /* "core" (default) or "stage": the effect's name in info */
} pb_part_rules;

pb_part_rules *pb_part_rules_new(int m);
void pb_part_rules_free(pb_part_rules *r);
/* Records that rule `name` forbids (PB_CUT_FORBID) or forces (PB_CUT_FORCE)
 * the boundary after layer v (v = m-1, the end of the chain, is ignored).
 * A boundary that one rule forbids and another forces is an error naming
 * both. */
int pb_part_rules_cut(pb_part_rules *r, const char *name, int v, const char *node, int how,
                      pb_error *err);
/* Records that rule `name` pins layer v to core k (k >= 0). */
int pb_part_rules_pin(pb_part_rules *r, const char *name, int v, const char *node, int core,
                      pb_error *err);
/* Name of the (last) rule with that effect ("core=3", "stage=1", "cut=force"),
 * "?" when none. */
const char *pb_part_rules_name(const pb_part_rules *r, const char *effect);
/* Name of the rule with that effect whose info lists node (info: the
 * rules' info array, pb_part_rules.info or a problem's copy), else of the
 * last rule with that effect, "?" when none. */
const char *pb_part_rules_info_name(const json_t *info, const char *effect, const char *node);
/* 1 when the set constrains nothing. */
int pb_part_rules_empty(const pb_part_rules *r);

/* Copies r into P (r may be NULL or empty: then nothing). A pin to a core
 * the layout does not have is an error naming the rule and the layout. */
int pb_part_problem_set_rules(pb_part_problem *P, const pb_part_rules *r, pb_error *err);
/* 1 when P has rules. */
int pb_part_has_rules(const pb_part_problem *P);
/* Applies action `action` (env.h) to ac as the RL agent takes it under cut
 * rules: a (c) or (d) move carries the boundary past forbidden positions to
 * the next allowed cut (a whole run of layers moves; when there is none
 * inside the giving core's layers, it gives them all, as (c) on one layer
 * does). Without cut rules, and for (a) and (b), pb_env_apply. Returns 1 when
 * applied, 0 (ac unchanged, why set) when the action is invalid. */
int pb_part_rules_apply(const pb_part_problem *P, int *ac, int action, const char **why);

#endif
