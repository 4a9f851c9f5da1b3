/*
 * shard/rules.c — rule library and the built-in rules (rules.h).
 *
 * Built-in rules (docs/shard.md):
 *  - batched-matmul-batch: a MatMul of two activations of rank >= 3
 *    (attention scores, attention x values) is split only along its batch
 *    dims (the method's example: split the left operand along dim 0);
 *  - reduce-no-partial: reductions over the last dim (normalisation
 *    statistics) do not produce partial outputs, their consumers need the
 *    full value right away;
 *  - conv-stem-no-ic: a Conv with fewer than 16 input channels is not split
 *    along its input channels (the partial sums would cost more than the
 *    work they share).
 */
#include "shard/rules.h"

#include <stdlib.h>
#include <string.h>

static int has_param_input(const pb_graph *g, int nid)
{
	const pb_node *n = &g->nodes[nid];
	for (int i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] >= 0 && g->tensors[n->inputs[i]].is_initializer)
			return 1;
	return 0;
}

static int m_batched_matmul(const pb_graph *g, int nid, void *ud)
{
	const pb_node *n = &g->nodes[nid];
	if (strcmp(n->op, "MatMul") || n->n_inputs != 2 || has_param_input(g, nid))
		return 0;
	for (int i = 0; i < 2; i++) {
		const pb_tensor *t = n->inputs[i] >= 0 ? &g->tensors[n->inputs[i]] : NULL;
		if (!t || t->rank < 3 || t->producer < 0)
			return 0;
	}
	return 1;
}

static int k_batched_matmul(const pb_graph *g, int nid, const pb_strat *s, const pb_mesh *m,
                            void *ud)
{
	const pb_tensor *o = &g->tensors[g->nodes[nid].outputs[0]];
	for (int a = 0; a < m->n_axes; a++) {
		int k = s->out[0][a];
		if (k == PB_SPEC_P || (k >= 0 && k >= o->rank - 2))
			return 0;
	}
	return 1;
}

static int m_reduce_last(const pb_graph *g, int nid, void *ud)
{
	const pb_node *n = &g->nodes[nid];
	if (strcmp(n->op, "ReduceMean") && strcmp(n->op, "ReduceSum"))
		return 0;
	const pb_attr *ax = pb_node_attr(n, "axes");
	const pb_tensor *x = n->inputs[0] >= 0 ? &g->tensors[n->inputs[0]] : NULL;
	if (!x || x->rank < 1)
		return 0;
	if (ax && ax->type == PB_ATTR_INTS && ax->n == 1)
		return ax->ints[0] == -1 || ax->ints[0] == x->rank - 1;
	if (n->n_inputs > 1 && n->inputs[1] >= 0 && g->tensors[n->inputs[1]].value) {
		const pb_value *v = g->tensors[n->inputs[1]].value;
		return v->numel == 1 && (v->i[0] == -1 || v->i[0] == x->rank - 1);
	}
	return 0;
}

static int k_no_partial(const pb_graph *g, int nid, const pb_strat *s, const pb_mesh *m, void *ud)
{
	for (int a = 0; a < m->n_axes; a++)
		if (s->out[0][a] == PB_SPEC_P)
			return 0;
	return 1;
}

static int m_conv_stem(const pb_graph *g, int nid, void *ud)
{
	const pb_node *n = &g->nodes[nid];
	if (strcmp(n->op, "Conv") || n->n_inputs < 2 || n->inputs[0] < 0)
		return 0;
	const pb_tensor *x = &g->tensors[n->inputs[0]];
	return x->rank >= 3 && x->dims[1] > 0 && x->dims[1] < 16;
}

static const pb_shard_rule builtins[] = {
    {"batched-matmul-batch", "MatMul of two activations of rank >= 3: split only along batch dims",
     m_batched_matmul, k_batched_matmul, NULL, NULL},
    {"reduce-no-partial", "ReduceMean/ReduceSum over the last dim: no partial outputs",
     m_reduce_last, k_no_partial, NULL, NULL},
    {"conv-stem-no-ic", "Conv with < 16 input channels: no input-channel split", m_conv_stem,
     k_no_partial, NULL, NULL},
};

pb_shard_rules *pb_rules_new(int with_builtins)
{
	pb_shard_rules *lib = calloc(1, sizeof *lib);
	if (!lib)
		return NULL;
	if (with_builtins)
		for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
			if (pb_rules_add(lib, &builtins[i], NULL)) {
				pb_rules_free(lib);
				return NULL;
			}
	return lib;
}

void pb_rules_free(pb_shard_rules *lib)
{
	if (!lib)
		return;
	for (int i = 0; i < lib->n; i++) {
		free((char *)lib->r[i].name);
		free((char *)lib->r[i].help);
		if (lib->r[i].ud_free)
			lib->r[i].ud_free(lib->r[i].ud);
	}
	free(lib->r);
	free(lib->hits);
	free(lib);
}

int pb_rules_add(pb_shard_rules *lib, const pb_shard_rule *rule, pb_error *err)
{
	if (!rule->name || !rule->keep)
		return pb_err(err, PB_EUSAGE,
		              "shard rule: a rule needs a name and a keep function");
	if (lib->n == lib->cap) {
		int nc = lib->cap ? lib->cap * 2 : 8;
		pb_shard_rule *r = realloc(lib->r, (size_t)nc * sizeof *r);
		if (!r)
			return pb_err(err, PB_ENOMEM, "shard rule: out of memory");
		lib->r = r;
		long *h = realloc(lib->hits, (size_t)nc * sizeof *h);
		if (!h)
			return pb_err(err, PB_ENOMEM, "shard rule: out of memory");
		lib->hits = h;
		lib->cap = nc;
	}
	pb_shard_rule *r = &lib->r[lib->n];
	*r = *rule;
	r->name = strdup(rule->name);
	r->help = strdup(rule->help ? rule->help : "");
	lib->hits[lib->n] = 0;
	lib->n++;
	return PB_OK;
}

int pb_rules_filter(pb_shard_rules *lib, const pb_graph *g, int nid, pb_strat *s, int n,
                    const pb_mesh *m)
{
	for (int r = 0; lib && r < lib->n; r++) {
		const pb_shard_rule *rule = &lib->r[r];
		if (rule->match && !rule->match(g, nid, rule->ud))
			continue;
		int w = 0;
		for (int i = 0; i < n; i++)
			if (rule->keep(g, nid, &s[i], m, rule->ud))
				w++;
		if (w == 0 || w == n)
			continue;
		w = 0;
		for (int i = 0; i < n; i++)
			if (rule->keep(g, nid, &s[i], m, rule->ud))
				s[w++] = s[i];
		n = w;
		lib->hits[r]++;
	}
	return n;
}
