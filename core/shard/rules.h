/*
 * shard/rules.h — the rule library (optimisation strategy (c) of the method).
 *
 * A rule matches an operator (a pattern on the graph around node nid) and
 * restricts its candidate strategies: keep() returns 1 for the strategies
 * that stay. Rules are applied from optimisation level 1 on; a rule never
 * removes every candidate of an operator (the filter keeps the full menu
 * then). The library starts with the built-in rules; front ends (the Lua
 * layer) add their own with pb_rules_add.
 */
#ifndef PB_SHARD_RULES_H
#define PB_SHARD_RULES_H

#include "model/graph.h"
#include "shard/cluster.h"
#include "shard/spec.h"

typedef struct pb_shard_rule {
	const char *name; /* copied */
	const char *help; /* copied, one line */
	int (*match)(const pb_graph *g, int nid, void *ud);
	int (*keep)(const pb_graph *g, int nid, const pb_strat *s, const pb_mesh *m, void *ud);
	void *ud;                  /* owned by the caller */
	void (*ud_free)(void *ud); /* called by pb_rules_free when non-NULL */
} pb_shard_rule;

typedef struct pb_shard_rules {
	pb_shard_rule *r;
	int n, cap;
	long *hits; /* operators each rule restricted in the last filter run */
} pb_shard_rules;

/* A new library, with the built-in rules when with_builtins is set. */
pb_shard_rules *pb_rules_new(int with_builtins);
void pb_rules_free(pb_shard_rules *lib);
/* Appends a rule (name and help copied). */
int pb_rules_add(pb_shard_rules *lib, const pb_shard_rule *rule, pb_error *err);
/* Filters strategies of node nid in place; returns the new count (>= 1 when
 * n >= 1). */
int pb_rules_filter(pb_shard_rules *lib, const pb_graph *g, int nid, pb_strat *s, int n,
                    const pb_mesh *m);

#endif
