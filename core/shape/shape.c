/*
 * shape.c — shape inference driver (see shape.h): finds each node's rule
 * (shape_ops.c, shape_nn.c, shape_extra.c), runs it and constant propagation
 * (shape_eval.c). The helpers the rules share are in shape_sx.c.
 *
 * Algorithm: nodes are visited once in topological order. For each node the
 * shapes the file declared for its outputs (value_info, graph outputs,
 * Constant attributes) are set aside, the operator's rule computes the output
 * shapes from the inputs, and then the two are merged: the rule wins where it
 * knows a dim, value_info fills the dims (or whole shapes) the rule could not
 * determine. After the rule, constant propagation (shape_eval.c) computes the
 * values of small outputs whose inputs are known, so that Shape → Gather →
 * Concat → Reshape chains give concrete shapes downstream; a known value's
 * dims are authoritative for its tensor.
 *
 * Invariants: a tensor with a value has the value's rank and dims; a node's
 * shape_known is 1 iff every output has a rank and only known dims.
 */
#include "shape/shape.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape_rules.h"

/* ---------------------------------------------------------------- dispatch */

/* Operator name -> rule: an open-addressing table over the three rule tables,
 * built once (pthread_once; loaders may run on several threads). A model of
 * 6.6k nodes looked its rules up with ~60k strcmp calls in a linear scan. */
#define RULE_SLOTS 1024 /* power of two, > 2x the number of rules */
static struct {
	const char *op;
	pb_shape_rule rule;
} rule_index[RULE_SLOTS];
static pthread_once_t rule_index_once = PTHREAD_ONCE_INIT;

static uint32_t op_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void rule_index_build(void)
{
	const pb_shape_rule_entry *tables[] = {pb_shape_rules_tensor, pb_shape_rules_nn,
	                                       pb_shape_rules_extra};
	int used = 0;
	for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
		for (const pb_shape_rule_entry *e = tables[t]; e->op && used < RULE_SLOTS / 2;
		     e++) {
			uint32_t i = op_hash(e->op) & (RULE_SLOTS - 1);
			while (rule_index[i].op && strcmp(rule_index[i].op, e->op) != 0)
				i = (i + 1) & (RULE_SLOTS - 1);
			if (!rule_index[i].op) { /* the first table naming an op wins */
				rule_index[i].op = e->op;
				rule_index[i].rule = e->rule;
				used++;
			}
		}
}

static pb_shape_rule find_rule(const char *op)
{
	pthread_once(&rule_index_once, rule_index_build);
	uint32_t i = op_hash(op) & (RULE_SLOTS - 1);
	while (rule_index[i].op) {
		if (strcmp(rule_index[i].op, op) == 0)
			return rule_index[i].rule;
		i = (i + 1) & (RULE_SLOTS - 1);
	}
	return NULL;
}

int pb_shape_op_supported(const char *op)
{
	return op && find_rule(op) != NULL;
}

typedef struct {
	int dtype, rank;
	int64_t dims[PB_MAX_RANK];
} declared;

/* Infers node id's outputs; a rule's conflict is copied to conflict. */
static void infer_node(pb_graph *g, int id, int64_t opset, pb_batch_trace *bt, char *conflict,
                       size_t len)
{
	pb_node *n = &g->nodes[id];
	pb_sx c = {g, n, opset, ""};
	declared decl[8];
	int nd = n->n_outputs < 8 ? n->n_outputs : 8;
	/* The default domain, and the training operators' preview domain whose
	 * rules live in the same tables (Adagrad, Adam, Momentum). */
	int is_default = n->domain[0] == '\0' || strcmp(n->domain, "ai.onnx.preview.training") == 0;
	pb_shape_rule rule = is_default ? find_rule(n->op) : NULL;

	for (int k = 0; k < nd; k++) {
		pb_tensor *t = pb_sx_out(&c, k);
		if (!t)
			continue;
		decl[k].dtype = t->dtype;
		decl[k].rank = t->rank;
		memcpy(decl[k].dims, t->dims, sizeof t->dims);
		if (rule) {
			t->rank = -1;
			t->dtype = 0;
		}
	}
	if (bt && is_default)
		pb_shape_batch_before(bt, &c);
	if (rule && !c.conflict[0])
		rule(&c);
	for (int k = 0; k < nd; k++) {
		pb_tensor *t = pb_sx_out(&c, k);
		if (!t)
			continue;
		const declared *d = &decl[k];
		if (!t->dtype)
			t->dtype = d->dtype;
		if (t->rank < 0) {
			t->rank = d->rank;
			memcpy(t->dims, d->dims, sizeof t->dims);
		} else if (t->rank == d->rank) {
			for (int i = 0; i < t->rank; i++)
				if (t->dims[i] < 0)
					t->dims[i] = d->dims[i];
		}
		for (int i = 0; i < PB_MAX_RANK; i++)
			if (t->dim_params[i] &&
			    (i >= t->rank || t->dims[i] >= 0 || t->rank != d->rank)) {
				free(t->dim_params[i]);
				t->dim_params[i] = NULL;
			}
	}
	if (is_default) {
		pb_shape_eval(&c);
		for (int k = 0; k < n->n_outputs; k++) {
			pb_tensor *t = pb_sx_out(&c, k);
			if (t && t->value) {
				t->rank = t->value->rank;
				for (int i = 0; i < PB_MAX_RANK; i++)
					t->dims[i] =
					    i < t->rank ? t->value->dims[i] : PB_DIM_UNKNOWN;
				if (!t->dtype)
					t->dtype = t->value->dtype;
			}
		}
	}
	int known = 1;
	for (int k = 0; k < n->n_outputs; k++) {
		pb_tensor *t = pb_sx_out(&c, k);
		/* Shapes that cannot exist (a dim beyond 2^40, more than 2^48
		 * elements, from a rule or from the file's value_info) are refused:
		 * they once loaded as activations of 18,446,744 TB. */
		pb_sx_check_numel(&c, t);
		if (t && pb_tensor_numel(t) < 0)
			known = 0;
	}
	n->shape_known = (unsigned)known;
	if (bt && is_default && !c.conflict[0])
		pb_shape_batch_after(bt, &c);
	if (c.conflict[0] && len)
		snprintf(conflict, len, "%s", c.conflict);
}

int pb_shape_infer(pb_graph *g, pb_error *err)
{
	int64_t opset = pb_graph_opset(g, "");
	g->n_unknown_shapes = 0;
	pb_batch_trace *bt = pb_shape_batch_new(g);
	if (g->batch_exported > 0 && !bt)
		return pb_err(err, PB_ENOMEM, "%s: out of memory tracing the batch",
		              g->path ? g->path : "graph");
	/* A conflict after an ambiguous Reshape reading tries the next reading
	 * (shape_batch.c); the conflict reported is the one found furthest on. */
	char worst[512] = "";
	int worst_node = -1;
	for (int from = 0; from < g->n_nodes;) {
		char conflict[512] = "";
		int i = from;
		for (; i < g->n_nodes; i++) {
			infer_node(g, i, opset, bt, conflict, sizeof conflict);
			if (conflict[0])
				break;
		}
		if (i == g->n_nodes)
			break;
		if (i > worst_node) {
			worst_node = i;
			snprintf(worst, sizeof worst, "%s", conflict);
		}
		from = bt ? pb_shape_batch_retry(bt, i) : -1;
		if (from >= 0)
			continue;
		pb_shape_batch_free(bt);
		/* A batch changed by --input: say what partbench did about it. */
		char hint[200] = "";
		if (g->batch_exported > 0)
			snprintf(hint, sizeof hint,
			         " (--input changed the batch from the exported %lld to %lld; "
			         "only constants traced to the batch axis are rewritten: "
			         "docs/onnx.md)",
			         (long long)g->batch_exported, (long long)g->batch_new);
		return pb_err(err, PB_EINPUT, "%s: node '%s' (%s): %s%s",
		              g->path ? g->path : "graph", g->nodes[worst_node].name,
		              g->nodes[worst_node].op, worst, hint);
	}
	for (int i = 0; i < g->n_nodes; i++)
		if (!g->nodes[i].shape_known)
			g->n_unknown_shapes++;
	pb_shape_batch_free(bt);
	return PB_OK;
}

int pb_shape_unresolved_inputs(const pb_graph *g, char *buf, size_t len)
{
	size_t off = 0;
	int count = 0;
	if (len)
		buf[0] = '\0';
	for (int k = 0; k < g->n_inputs; k++) {
		const pb_tensor *t = &g->tensors[g->inputs[k]];
		int unresolved = t->rank < 0;
		for (int i = 0; i < t->rank; i++)
			if (t->dims[i] < 0)
				unresolved = 1;
		if (!unresolved)
			continue;
		char dims[160] = "";
		size_t doff = 0;
		if (t->rank < 0)
			snprintf(dims, sizeof dims, "D1,D2,..."); /* rank unknown too */
		for (int i = 0; i < t->rank && doff < sizeof dims; i++) {
			int w;
			if (t->dims[i] >= 0)
				w = snprintf(dims + doff, sizeof dims - doff, "%s%lld",
				             i ? "," : "", (long long)t->dims[i]);
			else
				w = snprintf(dims + doff, sizeof dims - doff, "%s%s", i ? "," : "",
				             t->dim_params[i] ? t->dim_params[i] : "?");
			if (w < 0)
				break;
			doff += (size_t)w;
		}
		if (len > off) {
			int w = snprintf(buf + off, len - off, "%s%s=%s", count ? " " : "", t->name,
			                 dims);
			if (w > 0)
				off += (size_t)w < len - off ? (size_t)w : len - off - 1;
		}
		count++;
	}
	return count;
}
