/*
 * fuse_rules.c — which nodes may be fused (fuse.h).
 *
 * A small fixed table (no allocation inside), so that a copy is one
 * assignment: the `fuse` command copies the session's table and adds its
 * --nonfusable / --fusable rules and the Lua rule callback to the copy.
 * Lookup precedence: a rule naming the node, then the callback, then a rule
 * for the operator type, else fusable.
 *
 * The session's table: the session (workspace layer, below transform/) holds
 * it as an opaque pointer with a free hook; pb_fuse_rules_of creates it with
 * the defaults on first use and registers the hook, so the session never
 * calls up into transform/.
 */
#include "transform/fuse.h"

#include <stdlib.h>
#include <string.h>

#include "session.h"

static const char *const default_nonfusable[] = {"MatMul", "Gemm", "Conv"};

void pb_fuse_rules_default(pb_fuse_rules *r)
{
	memset(r, 0, sizeof *r);
	for (size_t i = 0; i < sizeof default_nonfusable / sizeof *default_nonfusable; i++)
		pb_fuse_rules_set_op(r, default_nonfusable[i], 0, NULL);
}

static int set_rule(pb_fuse_rules *r, const char *key, int by_name, int fusable, pb_error *err)
{
	if (!key || !*key)
		return pb_err(err, PB_EUSAGE, "fusion rule: empty %s",
		              by_name ? "node name" : "operator type");
	if (strlen(key) >= sizeof r->r[0].key)
		return pb_err(err, PB_EUSAGE,
		              "fusion rule: '%s' is too long (at most %zu characters)", key,
		              sizeof r->r[0].key - 1);
	for (int i = 0; i < r->n; i++)
		if (r->r[i].by_name == by_name && strcmp(r->r[i].key, key) == 0) {
			r->r[i].fusable = fusable ? 1 : 0;
			return PB_OK;
		}
	if (r->n == PB_FUSE_MAX_RULES)
		return pb_err(err, PB_EUSAGE, "fusion rule for '%s': at most %d rules", key,
		              PB_FUSE_MAX_RULES);
	pb_fuse_rule *e = &r->r[r->n++];
	strcpy(e->key, key);
	e->by_name = by_name;
	e->fusable = fusable ? 1 : 0;
	return PB_OK;
}

int pb_fuse_rules_set_op(pb_fuse_rules *r, const char *op, int fusable, pb_error *err)
{
	return set_rule(r, op, 0, fusable, err);
}

int pb_fuse_rules_set_node(pb_fuse_rules *r, const char *name, int fusable, pb_error *err)
{
	return set_rule(r, name, 1, fusable, err);
}

void pb_fuse_rules_callback(pb_fuse_rules *r, pb_fuse_rule_fn fn, void *ud)
{
	r->fn = fn;
	r->fn_ud = ud;
}

int pb_fuse_rules_fusable(const pb_fuse_rules *r, const pb_graph *g, int node)
{
	const pb_node *nd = &g->nodes[node];
	for (int i = 0; i < r->n; i++)
		if (r->r[i].by_name && strcmp(r->r[i].key, nd->name) == 0)
			return r->r[i].fusable;
	if (r->fn) {
		int v = r->fn(r->fn_ud, g, node);
		if (v == 0 || v == 1)
			return v;
	}
	for (int i = 0; i < r->n; i++)
		if (!r->r[i].by_name && strcmp(r->r[i].key, nd->op) == 0)
			return r->r[i].fusable;
	return 1;
}

static void rules_free(void *p)
{
	free(p);
}

pb_fuse_rules *pb_fuse_rules_of(pb_session *s)
{
	if (!s->fuse_rules) {
		pb_fuse_rules *r = malloc(sizeof *r);
		if (!r)
			return NULL;
		pb_fuse_rules_default(r);
		s->fuse_rules = r;
		s->fuse_rules_free = rules_free;
	}
	return s->fuse_rules;
}
