/*
 * hooks.h — adapters that plug the session's Lua heuristics and rules
 * (script.h) into the solvers: the partition/RL agent (action mask, initial
 * allocation), cost terms, the sharding planner (candidate filters, `specs`
 * rules), fusion (`fusable` rules) and backend mapping (`backend` rules).
 *
 * The solvers' callbacks cannot return a Lua error, so a hook remembers the
 * first script error (with the script's file:line) and answers neutrally
 * from then on; the command asks pb_hooks_finish() afterwards, which turns a
 * remembered error into the command's error, so the solver aborts with the
 * script's message and the command leaves the session unchanged.
 */
#ifndef PB_SCRIPT_HOOKS_H
#define PB_SCRIPT_HOOKS_H

#include "partition/methods/partition.h"
#include "session.h"
#include "shard/strategy/strategy_problem.h"
#include "transform/fuse.h"
#include "transform/map.h"
#include "script/script.h"

typedef struct pb_hooks {
	pb_script *sc;
	const pb_graph *g;
	int failed; /* a script callback failed: err holds its message */
	pb_error err;
	int *init_state;    /* partition: the script's initial allocation */
	double *layer_macs; /* partition: MACs per layer (chain_layers.h) */
	int n_layers;
	pb_shard_rules *rules;            /* shard: library with the Lua `specs` rules */
	pb_shard_rules *filters;          /* shard: the Lua candidate filters */
	int *force;                       /* map: forced backend per node */
	const char **force_rule;          /* map: the rule forcing it, per node (or NULL) */
	struct pb_part_rules *part_rules; /* partition: `cut` and `core` rules */
	json_t *specs;                    /* shard: specs of the rule matching spec_node */
	char spec_rule[64];
	int spec_node;
} pb_hooks;

void pb_hooks_init(pb_hooks *h, pb_session *s);
/* Sets o->mask (action_mask heuristics), o->init_state (the latest
 * initial_partition heuristic, for the layout's core count) and o->rules
 * (the `cut` and `core` rules, resolved per node; chain_rules.h). */
int pb_hooks_partition(pb_hooks *h, const pb_hw *hw, pb_part_opts *o, pb_error *err);
/* Sets o->filters (candidate_filter heuristics) and, when there are `specs`
 * rules, o->rules: the built-in library with the Lua rules first. */
int pb_hooks_shard(pb_hooks *h, pb_shard_opts *o, pb_error *err);
/* Installs the `fusable` rules as the fusion rule callback. */
void pb_hooks_fuse(pb_hooks *h, pb_fuse_rules *rules);
/* Resolves `backend` rules into o->force; a backend the layout lacks or one
 * that does not support a matched op is an error naming the rule. */
int pb_hooks_map(pb_hooks *h, const pb_hetero *het, pb_map_opts *o, pb_error *err);
/* The `cut` rules and the `core` or `stage` pins (kind) per node of the
 * graph, as one rule set (NULL when there are none): the partition solvers
 * (kind "core") and the pipeline split (kind "stage") read the same. The
 * caller frees it with pb_part_rules_free. */
int pb_hooks_chain_rules(pb_hooks *h, const char *kind, struct pb_part_rules **out, pb_error *err);
/* After the solver: when a callback failed, copies its error into err and
 * returns its code; else returns rc. Frees what the hooks allocated. */
int pb_hooks_finish(pb_hooks *h, int rc, pb_error *err);

/* cost_term heuristics: sets the plan metric "script_cost" (their sum) when
 * the session has any; returns PB_OK or the script's error. */
int pb_hooks_cost_terms(pb_session *s, pb_plan *plan, pb_error *err);

#endif
