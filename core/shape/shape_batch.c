/*
 * shape_batch.c — rewriting the batch an export baked into constant shape
 * operands, when --input (or --batch) changes it (docs/onnx.md, "Batch
 * rewrite").
 *
 * An exporter that ran at batch B0 often writes B0 into constants: Reshape
 * targets ([1, 768, 196]), Expand shapes, Slice ends. At another batch B1
 * those constants describe another tensor: a runtime refuses the model, and
 * shape inference would price batch B0 under a batch-B1 title.
 *
 * The rule ("sound"): the batch axis is traced from every input whose dim 0
 * --input changed from B0 to B1 (graph.c marks them batch_changed), in
 * topological order, through the operators whose layout says where it goes
 * (pb_shape_batch_after). A constant entry is rewritten from B0 to B1 only
 * where the trace says it is the batch:
 *  - Reshape of data whose batch is axis a: entry k of the target is the
 *    batch when the entries before it multiply to the dims before a, the
 *    entries after it to the dims after a (0 copies, one -1 resolved from
 *    the element count), and it is B0, B1, 0 or -1. Exactly one entry may
 *    qualify (two is ambiguous: refused). None: the batch was merged into or
 *    split across axes and the trace ends.
 *  - Expand of data whose batch is axis a: the shape entry aligned with a.
 *  - Slice of data whose batch is axis a: an end of B0 on axis a with start
 *    0 and step 1 (the whole batch).
 * The constant must be an initializer or a Constant node's output, and every
 * node that reads it as a shape operand must want the same rewrite (a shared
 * constant read by an untraced node too is refused). Everything else (a
 * ConstantOfShape or Tile of a constant, a constant tensor with B0 rows that
 * meets the batch in a Concat) has no sound rewrite: the operator's
 * constraint check refuses it, naming the node and the shapes.
 *
 * Each rewritten entry is recorded in g->rewrites (the report lists them;
 * export re-encodes the constants); the constant's value is changed in place,
 * so the rules see the rewritten target.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape_rules.h"

/* The state of a node's output before inference, to run again from a node
 * (pb_shape_batch_retry). */
typedef struct {
	int dtype, rank, had_value;
	int64_t dims[PB_MAX_RANK];
	char *dim_params[PB_MAX_RANK];
} snapshot;

/* An ambiguous Reshape: the reading tried now among n. */
typedef struct {
	int node, n, choice;
} decision;

/* Where the batch is in a tensor: axis `axis` (-1 none) is outer x B x
 * inner (a batch merged into an axis by a Reshape keeps its factors). */
typedef struct {
	int axis;
	int64_t outer, inner;
} place;

struct pb_batch_trace {
	pb_graph *g;
	int64_t b0, b1;
	place *at;       /* per tensor */
	int *plain;      /* per tensor: a node that read it unchanged, -1 none */
	pb_value **orig; /* per tensor: the value before its rewrite, NULL if none */
	int *rewriter;   /* per tensor: the node that rewrote it */
	snapshot *snap;  /* per tensor produced by a node */
	int *touched;    /* tensors whose plain or orig is set (each once) */
	int n_touched;
	decision *dec; /* the ambiguous Reshapes met, in node order */
	int n_dec, cap_dec, seen, retries;
	place pending; /* what the node's decision found for its output */
};

pb_batch_trace *pb_shape_batch_new(pb_graph *g)
{
	if (g->batch_exported <= 0 || g->batch_new < 0)
		return NULL;
	pb_batch_trace *bt = calloc(1, sizeof *bt);
	if (!bt)
		return NULL;
	size_t n = (size_t)g->n_tensors + 1;
	bt->g = g;
	bt->b0 = g->batch_exported;
	bt->b1 = g->batch_new;
	bt->at = malloc(n * sizeof *bt->at);
	bt->plain = malloc(n * sizeof *bt->plain);
	bt->orig = calloc(n, sizeof *bt->orig);
	bt->rewriter = malloc(n * sizeof *bt->rewriter);
	bt->snap = calloc(n, sizeof *bt->snap);
	bt->touched = malloc(n * sizeof *bt->touched);
	if (!bt->at || !bt->plain || !bt->orig || !bt->rewriter || !bt->snap || !bt->touched) {
		pb_shape_batch_free(bt);
		return NULL;
	}
	for (int t = 0; t < g->n_tensors; t++) {
		const pb_tensor *tt = &g->tensors[t];
		bt->at[t] = (place){tt->batch_changed ? 0 : -1, 1, 1};
		bt->plain[t] = -1;
		bt->rewriter[t] = -1;
		if (tt->producer < 0)
			continue;
		snapshot *sn = &bt->snap[t];
		sn->dtype = tt->dtype;
		sn->rank = tt->rank;
		sn->had_value = tt->value != NULL;
		memcpy(sn->dims, tt->dims, sizeof sn->dims);
		for (int i = 0; i < PB_MAX_RANK; i++)
			if (tt->dim_params[i] && !(sn->dim_params[i] = strdup(tt->dim_params[i]))) {
				pb_shape_batch_free(bt);
				return NULL;
			}
	}
	return bt;
}

void pb_shape_batch_free(pb_batch_trace *bt)
{
	if (!bt)
		return;
	for (int t = 0; t < bt->g->n_tensors; t++) {
		if (bt->orig)
			pb_value_free(bt->orig[t]);
		for (int i = 0; bt->snap && i < PB_MAX_RANK; i++)
			free(bt->snap[t].dim_params[i]);
	}
	free(bt->at);
	free(bt->plain);
	free(bt->orig);
	free(bt->rewriter);
	free(bt->snap);
	free(bt->touched);
	free(bt->dec);
	free(bt);
}

/* Undoes what nodes from..last did (the nodes after `last` did nothing
 * yet): their outputs as before inference, the rewrites and readings they
 * recorded. */
static void undo_from(pb_batch_trace *bt, int from, int last)
{
	pb_graph *g = bt->g;
	for (int j = from; j <= last && j < g->n_nodes; j++)
		for (int k = 0; k < g->nodes[j].n_outputs; k++) {
			int tid = g->nodes[j].outputs[k];
			if (tid < 0)
				continue;
			pb_tensor *t = &g->tensors[tid];
			const snapshot *sn = &bt->snap[tid];
			t->dtype = sn->dtype;
			t->rank = sn->rank;
			memcpy(t->dims, sn->dims, sizeof t->dims);
			for (int i = 0; i < PB_MAX_RANK; i++) {
				free(t->dim_params[i]);
				t->dim_params[i] =
				    sn->dim_params[i] ? strdup(sn->dim_params[i]) : NULL;
			}
			if (!sn->had_value) {
				pb_value_free(t->value);
				t->value = NULL;
			}
			bt->at[tid] = (place){-1, 1, 1};
		}
	int kept = 0;
	for (int i = 0; i < bt->n_touched; i++) {
		int t = bt->touched[i];
		if (bt->plain[t] >= from)
			bt->plain[t] = -1;
		if (bt->orig[t] && bt->rewriter[t] >= from) {
			pb_value_free(g->tensors[t].value);
			g->tensors[t].value = bt->orig[t];
			bt->orig[t] = NULL;
			bt->rewriter[t] = -1;
		}
		if (bt->plain[t] >= 0 || bt->orig[t])
			bt->touched[kept++] = t;
	}
	bt->n_touched = kept;
	while (g->n_rewrites > 0 && g->rewrites[g->n_rewrites - 1].node >= from)
		g->n_rewrites--;
}

int pb_shape_batch_retry(pb_batch_trace *bt, int failed)
{
	/* the latest ambiguous reading that has another one left */
	while (bt->n_dec > 0 && bt->dec[bt->n_dec - 1].choice + 1 >= bt->dec[bt->n_dec - 1].n)
		bt->n_dec--;
	/* a few readings per ambiguous Reshape; beyond, a search that would
	 * not end (a real conflict behind many of them) */
	if (bt->n_dec == 0 || ++bt->retries > 64 + 8 * bt->seen)
		return -1;
	decision *d = &bt->dec[bt->n_dec - 1];
	d->choice++;
	undo_from(bt, d->node, failed);
	return d->node;
}

static place in_place(const pb_batch_trace *bt, const pb_sx *c, int i)
{
	if (i >= c->n->n_inputs || c->n->inputs[i] < 0)
		return (place){-1, 1, 1};
	return bt->at[c->n->inputs[i]];
}

/* A constant the rewrite may change: an initializer or a Constant's output. */
static int rewritable(const pb_graph *g, int tid)
{
	const pb_tensor *t = &g->tensors[tid];
	if (!t->value)
		return 0;
	return t->is_initializer ||
	       (t->producer >= 0 && strcmp(g->nodes[t->producer].op, "Constant") == 0);
}

/* The value as exported (before any rewrite). */
static const pb_value *exported(const pb_batch_trace *bt, int tid)
{
	return bt->orig[tid] ? bt->orig[tid] : bt->g->tensors[tid].value;
}

/* The chain of values that hold entry `entry` of shape value `tid`, down to
 * the constant it comes from (chain[n-1]): tid itself when it is a
 * constant; else through a Concat (axis 0) of 1-D values, an Unsqueeze,
 * Squeeze, Cast or Identity of one element, and a Mul of two single numbers
 * one of which is a constant equal to the exported batch (swin_t:
 * Concat(Unsqueeze(Mul(1, nH x nW)), [49], [96]) for B x windows). Every
 * value past tid must be read by its next node alone. Returns the chain's
 * length, 0 when there is none. */
typedef struct {
	int tid, entry;
} link;
#define CHAIN_MAX 8

static int chain_of(const pb_batch_trace *bt, int tid, int entry, link *chain)
{
	const pb_graph *g = bt->g;
	int n = 0;
	for (;;) {
		if (n == CHAIN_MAX)
			return 0;
		chain[n++] = (link){tid, entry};
		if (rewritable(g, tid))
			return n;
		int p = g->tensors[tid].producer;
		if (p < 0)
			return 0;
		const pb_node *nd = &g->nodes[p];
		int next = -1, next_entry = 0;
		if (!strcmp(nd->op, "Concat") && pb_node_attr_int(nd, "axis", 0) == 0) {
			for (int i = 0, off = 0; i < nd->n_inputs && next < 0; i++) {
				const pb_tensor *pc =
				    nd->inputs[i] >= 0 ? &g->tensors[nd->inputs[i]] : NULL;
				if (!pc || !pc->value || pc->value->rank > 1)
					return 0;
				if (entry < off + pc->value->numel) {
					next = nd->inputs[i];
					next_entry = entry - off;
				}
				off += (int)pc->value->numel;
			}
		} else if (!strcmp(nd->op, "Unsqueeze") || !strcmp(nd->op, "Squeeze") ||
		           !strcmp(nd->op, "Cast") || !strcmp(nd->op, "Identity")) {
			next = nd->n_inputs > 0 ? nd->inputs[0] : -1;
		} else if (!strcmp(nd->op, "Mul") && nd->n_inputs == 2) {
			for (int i = 0; i < 2; i++) {
				int o = nd->inputs[i], q = nd->inputs[1 - i];
				if (o >= 0 && q >= 0 && rewritable(g, o) &&
				    g->tensors[o].value->numel == 1 &&
				    g->tensors[o].value->i[0] == bt->b0 && !rewritable(g, q))
					next = o;
			}
		}
		if (next < 0 || !g->tensors[next].value || g->tensors[next].n_consumers != 1)
			return 0;
		if (strcmp(nd->op, "Concat") != 0 && g->tensors[next].value->numel != 1)
			return 0;
		tid = next;
		entry = next_entry;
	}
}

/* Sets entry k of tensor tid's value to `to`, keeping the value before. */
static int change(pb_batch_trace *bt, int tid, int k, int64_t to, int node)
{
	pb_tensor *t = &bt->g->tensors[tid];
	if (!bt->orig[tid]) {
		if (!(bt->orig[tid] = pb_value_copy(t->value)))
			return 0;
		bt->rewriter[tid] = node;
		if (bt->plain[tid] < 0)
			bt->touched[bt->n_touched++] = tid;
	}
	t->value->i[k] = to;
	t->value->f[k] = (double)to;
	return 1;
}

/* Node c->n reads shape operand `slot` and wants entry `entry` (-1: none)
 * changed to `to`. Reconciles with the other readers of the value and
 * applies the rewrite to its constant. Returns 0 after a conflict. */
static int settle(pb_batch_trace *bt, pb_sx *c, int slot, int entry, int64_t to)
{
	pb_graph *g = bt->g;
	int tid = c->n->inputs[slot], self = (int)(c->n - g->nodes);
	pb_tensor *t = &g->tensors[tid];
	if (!t->value)
		return 1;
	if (entry < 0) {
		if (bt->orig[tid])
			return pb_sx_conflict(
			    c,
			    "'%s' is also read by '%s', which needed its batch entry "
			    "rewritten to %lld; here it is not the batch: no sound "
			    "rewrite",
			    t->name, g->nodes[bt->rewriter[tid]].name, (long long)bt->b1);
		if (bt->plain[tid] < 0) {
			bt->plain[tid] = self; /* orig is not set: not in touched yet */
			bt->touched[bt->n_touched++] = tid;
		}
		return 1;
	}
	if (bt->plain[tid] >= 0)
		return pb_sx_conflict(c,
		                      "'%s' is also read by '%s', where it is not the batch: "
		                      "rewriting its entry %d to %lld for this node would change "
		                      "that one: no sound rewrite",
		                      t->name, g->nodes[bt->plain[tid]].name, entry, (long long)to);
	link chain[CHAIN_MAX];
	int nc = chain_of(bt, tid, entry, chain);
	if (nc == 0)
		return pb_sx_conflict(
		    c,
		    "entry %d of '%s' is the exported batch on the batch axis, but "
		    "'%s' is computed, not a constant (docs/onnx.md lists the "
		    "computations followed): no sound rewrite",
		    entry, t->name, t->name);
	int src = chain[nc - 1].tid, se = chain[nc - 1].entry;
	if (bt->orig[tid]) { /* already rewritten by another reader: the same entry? */
		for (int64_t k = 0; k < t->value->numel; k++)
			if ((t->value->i[k] != bt->orig[tid]->i[k]) != (k == entry) ||
			    (k == entry && t->value->i[k] != to))
				return pb_sx_conflict(
				    c,
				    "'%s' is read by '%s' too, which rewrote another "
				    "entry: no sound rewrite",
				    t->name, g->nodes[bt->rewriter[tid]].name);
	} else {
		/* the constant scales by to / old: the entry itself, or the batch
		 * factor of a Mul */
		int64_t old = t->value->i[entry], cv = g->tensors[src].value->i[se];
		int64_t nv = old != 0 && (to * cv) % old == 0 ? to * cv / old : -1;
		if (nv < 0)
			return pb_sx_conflict(c, "entry %d of '%s' does not scale with the batch",
			                      entry, t->name);
		for (int i = 0; i < nc; i++)
			if (!change(bt, chain[i].tid, chain[i].entry, i == nc - 1 ? nv : to, self))
				return pb_sx_conflict(c, "out of memory");
	}
	pb_batch_rewrite *r = realloc(g->rewrites, ((size_t)g->n_rewrites + 1) * sizeof *r);
	if (!r)
		return pb_sx_conflict(c, "out of memory");
	g->rewrites = r;
	r[g->n_rewrites++] =
	    (pb_batch_rewrite){self, src, se, bt->orig[src]->i[se], g->tensors[src].value->i[se]};
	return 1;
}

/* The reading tried for an ambiguous Reshape of node `node` with n readings
 * (a new one starts at the first), or -1 out of memory. */
static int reading(pb_batch_trace *bt, int node, int n)
{
	for (int i = 0; i < bt->n_dec; i++)
		if (bt->dec[i].node == node)
			return bt->dec[i].choice;
	if (bt->n_dec == bt->cap_dec) {
		int cap = bt->cap_dec ? 2 * bt->cap_dec : 16;
		decision *d = realloc(bt->dec, (size_t)cap * sizeof *d);
		if (!d)
			return -1;
		bt->dec = d;
		bt->cap_dec = cap;
	}
	bt->dec[bt->n_dec++] = (decision){node, n, 0};
	if (bt->n_dec > bt->seen)
		bt->seen = bt->n_dec;
	return 0;
}

/* Reshape: which target entry carries the batch of input 0 (see the top). */
static void reshape_decide(pb_batch_trace *bt, pb_sx *c, place in)
{
	pb_tensor *x = pb_sx_in(c, 0), *s = pb_sx_in(c, 1);
	int a = in.axis;
	if (!x || !s || !s->value || s->value->numel > PB_MAX_RANK || x->rank <= a)
		return;
	const pb_value *v = exported(bt, c->n->inputs[1]);
	int n = (int)v->numel, allowzero = (int)pb_node_attr_int(c->n, "allowzero", 0);
	/* the elements before the batch and after it, in row-major order */
	int64_t pre = pb_sx_mul(pb_sx_prod(x->dims, 0, a), in.outer);
	int64_t post = pb_sx_mul(pb_sx_prod(x->dims, a + 1, x->rank), in.inner);
	if (pre <= 0 || post <= 0)
		return;
	int64_t t[PB_MAX_RANK];
	for (int i = 0; i < n; i++) {
		t[i] = v->i[i];
		if (t[i] == 0 && !allowzero) /* a copy: the batch axis copies B0 */
			t[i] =
			    i == a ? in.outer * bt->b0 * in.inner : (i < x->rank ? x->dims[i] : -2);
		if (t[i] < -1 || t[i] == 0)
			return;
	}
	/* Readings: entry k holds outer' x B x inner', with the entries before it
	 * and outer' making up `pre`, inner' and the entries after it `post`; B
	 * is B0 (rewritten) or B1 (a shape computed at the new batch). Exact
	 * readings (outer' = inner' = 1) first. */
	struct {
		int k, rewrite;
		place p;
	} r[2 * PB_MAX_RANK];
	int nr = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < n; k++)
			for (int which = 0; which < 2; which++) {
				int64_t b = which ? bt->b1 : bt->b0;
				if (which && bt->b1 == bt->b0)
					continue;
				int neg = -1;
				int64_t known = 1;
				for (int i = 0; i < n; i++)
					if (i != k && t[i] == -1)
						neg = i;
					else if (i != k)
						known = pb_sx_mul(known, t[i]);
				int64_t total = pb_sx_mul(pb_sx_mul(pre, b), post);
				int64_t tk = t[k] == -1 ? -1 : t[k];
				if (known <= 0 || total <= 0)
					continue;
				int64_t fill = 1;
				if (neg >= 0) {
					int64_t rest = tk == -1 ? -1 : pb_sx_mul(known, tk);
					if (rest <= 0 || total % rest != 0)
						continue;
					fill = total / rest;
				}
				int64_t p = 1, q = 1;
				for (int i = 0; i < n; i++)
					if (i < k)
						p = pb_sx_mul(p, i == neg ? fill : t[i]);
					else if (i > k)
						q = pb_sx_mul(q, i == neg ? fill : t[i]);
				if (p <= 0 || q <= 0 || pre % p != 0 || post % q != 0)
					continue;
				int64_t ou = pre / p, in2 = post / q;
				if (tk != -1 && tk != pb_sx_mul(pb_sx_mul(ou, b), in2))
					continue;
				if ((ou == 1 && in2 == 1) != (pass == 0))
					continue;
				int dup = 0;
				for (int j = 0; j < nr; j++)
					dup |= r[j].k == k;
				if (dup)
					continue;
				r[nr].k = k;
				r[nr].rewrite =
				    !which && v->i[k] != 0 && v->i[k] != -1 && bt->b0 != bt->b1;
				r[nr].p = (place){k, ou, in2};
				nr++;
			}
	if (nr == 0) { /* the batch is split across entries: the trace ends */
		settle(bt, c, 1, -1, 0);
		return;
	}
	int pick = nr > 1 ? reading(bt, (int)(c->n - bt->g->nodes), nr) : 0;
	if (pick < 0) {
		pb_sx_conflict(c, "out of memory");
		return;
	}
	if (settle(bt, c, 1, r[pick].rewrite ? r[pick].k : -1,
	           r[pick].rewrite ? pb_sx_mul(pb_sx_mul(r[pick].p.outer, bt->b1), r[pick].p.inner)
	                           : 0))
		bt->pending = r[pick].p;
}

/* Expand: the shape entry aligned with the batch axis of input 0. */
static void expand_decide(pb_batch_trace *bt, pb_sx *c, place in)
{
	pb_tensor *x = pb_sx_in(c, 0), *s = pb_sx_in(c, 1);
	if (!x || !s || !s->value || s->value->numel > PB_MAX_RANK || x->rank < 0)
		return;
	const pb_value *v = exported(bt, c->n->inputs[1]);
	int n = (int)v->numel, r = n > x->rank ? n : x->rank;
	int out = in.axis + r - x->rank, j = out - (r - n);
	int64_t was = in.outer * bt->b0 * in.inner;
	int want = j >= 0 && v->i[j] == was && was != 1 && bt->b0 != bt->b1 ? j : -1;
	if (settle(bt, c, 1, want, in.outer * bt->b1 * in.inner))
		bt->pending = (place){out, in.outer, in.inner};
}

/* Slice: an end of B0 on the batch axis, from 0 by step 1, is the whole batch. */
static void slice_decide(pb_batch_trace *bt, pb_sx *c, place in)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!x || c->n->n_inputs < 3 || c->n->inputs[2] < 0 || !pb_sx_in(c, 2)->value)
		return;
	const pb_value *st = pb_sx_val(c, 1), *en = exported(bt, c->n->inputs[2]);
	const pb_value *ax = c->n->n_inputs > 3 ? pb_sx_val(c, 3) : NULL;
	const pb_value *sp = c->n->n_inputs > 4 ? pb_sx_val(c, 4) : NULL;
	if (!st || st->numel != en->numel || (c->n->n_inputs > 3 && c->n->inputs[3] >= 0 && !ax) ||
	    (c->n->n_inputs > 4 && c->n->inputs[4] >= 0 && !sp))
		return;
	int want = -1;
	int64_t was = in.outer * bt->b0 * in.inner, now = in.outer * bt->b1 * in.inner;
	for (int k = 0; k < en->numel; k++) {
		int axis = ax && k < ax->numel ? pb_sx_axis(ax->i[k], x->rank) : k;
		int64_t step = sp && k < sp->numel ? sp->i[k] : 1;
		if (axis == in.axis && st->i[k] == 0 && step == 1 && en->i[k] == was && now > was)
			want = k;
	}
	settle(bt, c, 2, want, now);
}

void pb_shape_batch_before(pb_batch_trace *bt, pb_sx *c)
{
	bt->pending = (place){-1, 1, 1};
	const char *op = c->n->op;
	place in = in_place(bt, c, 0);
	int is_reshape = !strcmp(op, "Reshape"), is_expand = !strcmp(op, "Expand");
	int is_slice = !strcmp(op, "Slice");
	if (!is_reshape && !is_expand && !is_slice)
		return;
	int slot = is_slice ? 2 : 1;
	if (slot >= c->n->n_inputs || c->n->inputs[slot] < 0)
		return;
	if (in.axis < 0) { /* not the batch: the constant must stay as exported */
		settle(bt, c, slot, -1, 0);
		return;
	}
	if (is_reshape)
		reshape_decide(bt, c, in);
	else if (is_expand)
		expand_decide(bt, c, in);
	else
		slice_decide(bt, c, in);
}

/* ---------------------------------------------------------- propagation */

/* Operators whose outputs keep the layout of their inputs, right-aligned
 * (elementwise, broadcasting, Conv-like, normalisations, reductions over
 * other axes): the batch axis stays where it is, checked by its dim. */
static const char *const layout_ops[] = {"Abs",
                                         "Acos",
                                         "Acosh",
                                         "Add",
                                         "And",
                                         "ArgMax",
                                         "ArgMin",
                                         "Asin",
                                         "Asinh",
                                         "Atan",
                                         "Atanh",
                                         "AveragePool",
                                         "BatchNormalization",
                                         "BitShift",
                                         "Cast",
                                         "CastLike",
                                         "Ceil",
                                         "Celu",
                                         "Clip",
                                         "Concat",
                                         "Conv",
                                         "ConvInteger",
                                         "ConvTranspose",
                                         "Cos",
                                         "Cosh",
                                         "CumSum",
                                         "DepthToSpace",
                                         "DequantizeLinear",
                                         "Div",
                                         "Dropout",
                                         "Elu",
                                         "Equal",
                                         "Erf",
                                         "Exp",
                                         "Floor",
                                         "Gelu",
                                         "Gemm",
                                         "GlobalAveragePool",
                                         "GlobalLpPool",
                                         "GlobalMaxPool",
                                         "Greater",
                                         "GreaterOrEqual",
                                         "GroupNormalization",
                                         "HardSigmoid",
                                         "HardSwish",
                                         "Hardmax",
                                         "Identity",
                                         "InstanceNormalization",
                                         "IsInf",
                                         "IsNaN",
                                         "LRN",
                                         "LayerNormalization",
                                         "LeakyRelu",
                                         "Less",
                                         "LessOrEqual",
                                         "Log",
                                         "LogSoftmax",
                                         "LpNormalization",
                                         "LpPool",
                                         "MatMul",
                                         "MatMulInteger",
                                         "Max",
                                         "MaxPool",
                                         "Mean",
                                         "MeanVarianceNormalization",
                                         "Min",
                                         "Mish",
                                         "Mod",
                                         "Mul",
                                         "Neg",
                                         "Not",
                                         "Or",
                                         "PRelu",
                                         "Pad",
                                         "Pow",
                                         "QuantizeLinear",
                                         "Reciprocal",
                                         "ReduceL1",
                                         "ReduceL2",
                                         "ReduceLogSum",
                                         "ReduceLogSumExp",
                                         "ReduceMax",
                                         "ReduceMean",
                                         "ReduceMin",
                                         "ReduceProd",
                                         "ReduceSum",
                                         "ReduceSumSquare",
                                         "Relu",
                                         "Resize",
                                         "Round",
                                         "Selu",
                                         "Shrink",
                                         "Sigmoid",
                                         "Sign",
                                         "Sin",
                                         "Sinh",
                                         "Slice",
                                         "Softmax",
                                         "Softplus",
                                         "Softsign",
                                         "SpaceToDepth",
                                         "Split",
                                         "Sqrt",
                                         "Sub",
                                         "Sum",
                                         "Tan",
                                         "Tanh",
                                         "ThresholdedRelu",
                                         "Tile",
                                         "TopK",
                                         "Trilu",
                                         "Upsample",
                                         "Where",
                                         "Xor",
                                         NULL};

static int is_layout_op(const char *op)
{
	for (int i = 0; layout_ops[i]; i++)
		if (!strcmp(layout_ops[i], op))
			return 1;
	return 0;
}

/* Output k carries the batch at p when its dim there is the input's. */
static void set_out(pb_batch_trace *bt, pb_sx *c, int k, place p, int64_t dim)
{
	pb_tensor *o = pb_sx_out(c, k);
	if (o && p.axis >= 0 && p.axis < o->rank && o->dims[p.axis] >= 0 && o->dims[p.axis] == dim)
		bt->at[c->n->outputs[k]] = p;
}

static place moved(place p, int axis)
{
	p.axis = axis;
	return p;
}

/* Two inputs of a layout operator that carry the batch must carry it at the
 * same output axis: else one sample's values meet another's. After an
 * ambiguous Reshape that is a conflict (the reading was wrong:
 * pb_shape_batch_retry tries the next one); without one, the traced axis was
 * not a batch of independent samples (dim 0 of a sequence-first input) and
 * the trace just ends. Returns 0 when they do not align. */
static int check_aligned(pb_batch_trace *bt, pb_sx *c, int r_out)
{
	int first = -1, at = -1;
	int mm = !strcmp(c->n->op, "MatMul") || !strcmp(c->n->op, "MatMulInteger");
	for (int i = 0; i < c->n->n_inputs; i++) {
		place p = in_place(bt, c, i);
		pb_tensor *x = pb_sx_in(c, i);
		if (p.axis < 0 || !x || x->rank < 0)
			continue;
		int out = p.axis + r_out - x->rank;
		if (mm && i == 1 && x->rank >= 2 && p.axis == x->rank - 2)
			out = -2; /* contracted: the samples are summed together */
		if (mm && i == 1 && x->rank >= 2 && p.axis == x->rank - 1)
			out = r_out - 1;
		if (mm && i == 0 && x->rank >= 2 && p.axis == x->rank - 1)
			out = -2;
		if (first < 0) {
			first = i;
			at = out;
		} else if (out != at) {
			if (bt->n_dec > 0)
				pb_sx_conflict(
				    c,
				    "'%s' carries the batch on axis %d and '%s' on axis %d: "
				    "the samples would mix",
				    pb_sx_in(c, first)->name, in_place(bt, c, first).axis, x->name,
				    p.axis);
			return 0;
		}
	}
	return 1;
}

void pb_shape_batch_after(pb_batch_trace *bt, pb_sx *c)
{
	const char *op = c->n->op;
	int xi = -1;
	place in = {-1, 1, 1};
	for (int i = 0; i < c->n->n_inputs && in.axis < 0; i++)
		if ((in = in_place(bt, c, i)).axis >= 0)
			xi = i;
	if (in.axis < 0)
		return;
	const pb_tensor *x = pb_sx_in(c, xi);
	int a = in.axis;
	int64_t dim = x->dims[a];
	if (!strcmp(op, "Reshape") || !strcmp(op, "Expand")) {
		if (xi == 0 && bt->pending.axis >= 0) {
			int64_t d =
			    pb_sx_mul(pb_sx_mul(bt->pending.outer, bt->b1), bt->pending.inner);
			set_out(bt, c, 0, bt->pending, !strcmp(op, "Expand") ? dim : d);
		}
		return;
	}
	if (!strcmp(op, "Transpose")) {
		int64_t perm[PB_MAX_RANK];
		int n = 0;
		if (pb_sx_ints(c, 99, "perm", perm, PB_MAX_RANK, &n) != 1 || n == 0) {
			n = x->rank;
			for (int i = 0; i < n; i++)
				perm[i] = n - 1 - i;
		}
		for (int i = 0; i < n; i++)
			if (pb_sx_axis(perm[i], x->rank) == a)
				set_out(bt, c, 0, moved(in, i), dim);
		return;
	}
	if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
		pb_tensor *o = pb_sx_out(c, 0);
		int64_t axes[PB_MAX_RANK];
		int n = 0, sq = op[0] == 'S';
		if (xi != 0 || !o || o->rank < 0 ||
		    pb_sx_ints(c, 1, "axes", axes, PB_MAX_RANK, &n) != 1)
			return;
		int mark[PB_MAX_RANK] = {0};
		for (int k = 0; k < n; k++) {
			int ax = pb_sx_axis(axes[k], sq ? x->rank : o->rank);
			if (ax >= 0)
				mark[ax] = 1;
		}
		if (sq) { /* dropped axes before a shift it left */
			int out = a;
			for (int i = 0; i < a; i++)
				out -= mark[i];
			if (!mark[a])
				set_out(bt, c, 0, moved(in, out), dim);
		} else { /* the a-th axis that is not inserted */
			for (int i = 0, j = 0; i < o->rank; i++)
				if (!mark[i] && j++ == a)
					set_out(bt, c, 0, moved(in, i), dim);
		}
		return;
	}
	if (!strcmp(op, "Flatten")) {
		int ax = pb_sx_axis(pb_node_attr_int(c->n, "axis", 1), x->rank + 1);
		if (ax == a + 1 && pb_sx_prod(x->dims, 0, a) == 1)
			set_out(bt, c, 0, moved(in, 0), dim);
		else if (ax == a && pb_sx_prod(x->dims, a + 1, x->rank) == 1)
			set_out(bt, c, 0, moved(in, 1), dim);
		return;
	}
	if (!strcmp(op, "Gather")) {
		pb_tensor *idx = pb_sx_in(c, 1), *data = pb_sx_in(c, 0);
		int g = data ? pb_sx_axis(pb_node_attr_int(c->n, "axis", 0), data->rank) : -1;
		if (xi == 1 && g >= 0) /* the indices carry the batch (an embedding lookup) */
			set_out(bt, c, 0, moved(in, g + a), dim);
		else if (xi == 0 && idx && g > a)
			set_out(bt, c, 0, in, dim);
		else if (xi == 0 && idx && g >= 0 && g < a && idx->rank >= 0)
			set_out(bt, c, 0, moved(in, a - 1 + idx->rank), dim);
		return;
	}
	if (!is_layout_op(op))
		return;
	pb_tensor *o0 = pb_sx_out(c, 0);
	if (o0 && o0->rank >= 0 && !check_aligned(bt, c, o0->rank))
		return;
	int mm = !strcmp(op, "MatMul") || !strcmp(op, "MatMulInteger");
	if (mm && xi == 1 && x->rank >= 2 && a == x->rank - 2)
		return; /* the second operand's rows are contracted away */
	if (mm && xi == 0 && x->rank >= 2 && a == x->rank - 1)
		return; /* the first operand's columns too */
	for (int k = 0; k < c->n->n_outputs; k++) {
		pb_tensor *o = pb_sx_out(c, k);
		if (o && o->rank >= 0)
			set_out(bt, c, k, moved(in, a + o->rank - x->rank), dim);
	}
}
