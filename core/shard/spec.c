/*
 * shard/spec.c — the per-operator menu of sharding strategies and the
 * resharding (collective) cost model (spec.h).
 *
 * Menu per operator family, for one mesh axis of d devices:
 *  - every operator: replicate (all R, work not divided);
 *  - MatMul [..,M,K]x[..,K,N]: each batch dim of the output (operands split
 *    where they have that dim, broadcast operands replicated), M (rows: left
 *    split, right replicated), N (columns: right split, left replicated), K
 *    (contraction: both split, output partial);
 *  - Gemm: M, N, K the same way honouring transA/transB, bias aligned;
 *  - Conv: batch, output channels (weight dim 0), input channels (weight
 *    dim 1, output partial; group == 1 only), channels of grouped/depthwise
 *    convs (the group count must divide too); spatial splits need halo
 *    exchange and are not offered;
 *  - element-wise: for every output dim, the inputs that have that dim split
 *    along it (right-aligned broadcasting), the others replicated; linear
 *    operators also pass partial specs (Identity/Neg/Cast/Dropout, Mul or Div
 *    by a replicated operand, Add/Sub of partial activations only);
 *  - reductions: a kept dim maps to the output dim; a reduced dim gives a
 *    partial output for ReduceSum/ReduceMean; Softmax/LayerNormalization/
 *    pooling/BatchNormalization split only the dims they do not normalise;
 *  - Reshape/Flatten/Squeeze/Unsqueeze: the dims are grouped by equal
 *    products; the leading (non-1) dim of an input group maps to the leading
 *    dim of the output group (splitting a major dim in d blocks is the same
 *    memory layout before and after); Transpose maps through perm;
 *  - Concat, Slice, Split, Pad, Expand, Gather: dims they do not touch;
 *    Gather on a parameter table split along the gathered axis (vocabulary
 *    parallel embedding) gives a partial output.
 * Divisibility is checked in pb_spec_combine for the total factor of every
 * split dim; non-divisible dims are simply not split (padding would be the
 * alternative; docs/shard.md).
 */
#include "shard/spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct menu {
	pb_strat1 *s;
	int n, cap;
} menu;

static pb_strat1 *add(menu *m, const char *label)
{
	if (m->n >= m->cap)
		return NULL;
	pb_strat1 *s = &m->s[m->n++];
	memset(s, 0, sizeof *s);
	memset(s->in, PB_SPEC_R, sizeof s->in);
	memset(s->out, PB_SPEC_R, sizeof s->out);
	s->divides = 1;
	snprintf(s->label, sizeof s->label, "%s", label);
	return s;
}

static const pb_tensor *tin(const pb_graph *g, const pb_node *n, int i)
{
	if (i >= n->n_inputs || n->inputs[i] < 0)
		return NULL;
	const pb_tensor *t = &g->tensors[n->inputs[i]];
	return t->rank >= 0 ? t : NULL;
}

static const pb_tensor *tout(const pb_graph *g, const pb_node *n, int i)
{
	if (i >= n->n_outputs || n->outputs[i] < 0)
		return NULL;
	const pb_tensor *t = &g->tensors[n->outputs[i]];
	return t->rank >= 0 ? t : NULL;
}

static int is_op(const char *op, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(op, list[i]) == 0)
			return 1;
	return 0;
}

static const char *const elementwise_ops[] = {"Add",
                                              "Sub",
                                              "Mul",
                                              "Div",
                                              "Pow",
                                              "Sqrt",
                                              "Relu",
                                              "Gelu",
                                              "Erf",
                                              "Sigmoid",
                                              "Tanh",
                                              "Exp",
                                              "Log",
                                              "Neg",
                                              "Abs",
                                              "Clip",
                                              "LeakyRelu",
                                              "HardSigmoid",
                                              "HardSwish",
                                              "Mish",
                                              "Softplus",
                                              "Softsign",
                                              "Elu",
                                              "Selu",
                                              "Celu",
                                              "Where",
                                              "Equal",
                                              "Less",
                                              "Greater",
                                              "LessOrEqual",
                                              "GreaterOrEqual",
                                              "Not",
                                              "And",
                                              "Or",
                                              "Xor",
                                              "Cast",
                                              "Identity",
                                              "Dropout",
                                              "Reciprocal",
                                              "Floor",
                                              "Ceil",
                                              "Round",
                                              "Sign",
                                              "Min",
                                              "Max",
                                              "Sum",
                                              "Mean",
                                              "PRelu",
                                              "Mod",
                                              "IsNaN",
                                              "IsInf",
                                              "ThresholdedRelu",
                                              "BiasGelu",
                                              "FastGelu",
                                              "QuickGelu",
                                              "Sin",
                                              "Cos",
                                              "CastLike",
                                              "Expand",
                                              NULL};
static const char *const linear_unary_ops[] = {"Identity", "Neg",      "Cast",
                                               "Dropout",  "CastLike", NULL};

int pb_spec_is_elementwise(const char *op)
{
	return is_op(op, elementwise_ops);
}

static int dyn(unsigned mask, int i)
{
	return (mask >> i) & 1u;
}

static void menu_elementwise(const pb_graph *g, const pb_node *n, unsigned dmask, menu *m)
{
	const pb_tensor *o = tout(g, n, 0);
	if (!o)
		return;
	int nin = n->n_inputs < PB_SHARD_MAX_IN ? n->n_inputs : PB_SHARD_MAX_IN;
	for (int k = 0; k < o->rank; k++) {
		if (o->dims[k] <= 1)
			continue;
		char lab[12];
		snprintf(lab, sizeof lab, "d%d", k);
		pb_strat1 *s = add(m, lab);
		if (!s)
			return;
		s->out[0] = (signed char)k;
		for (int i = 0; i < nin; i++) {
			const pb_tensor *t = tin(g, n, i);
			if (!t)
				continue;
			int ki = k - (o->rank - t->rank);
			if (ki >= 0 && t->dims[ki] == o->dims[k])
				s->in[i] = (signed char)ki;
		}
	}
	/* Partial specs through linear operators. */
	const char *op = n->op;
	int n_dyn = 0;
	for (int i = 0; i < nin; i++)
		n_dyn += dyn(dmask, i) && n->inputs[i] >= 0;
	pb_strat1 *s = NULL;
	if (is_op(op, linear_unary_ops) && dyn(dmask, 0)) {
		s = add(m, "p");
		if (s)
			s->in[0] = PB_SPEC_P;
	} else if ((strcmp(op, "Mul") == 0 || strcmp(op, "Div") == 0) && nin == 2) {
		for (int i = 0; i < 2; i++) {
			if (!dyn(dmask, i) || (strcmp(op, "Div") == 0 && i == 1))
				continue;
			s = add(m, "p");
			if (s)
				s->in[i] = PB_SPEC_P;
		}
	} else if ((strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0) && nin == 2 && n_dyn == 2) {
		s = add(m, "p");
		if (s)
			s->in[0] = s->in[1] = PB_SPEC_P;
	}
	if (s) {
		for (int k = m->n - 1; k >= 0 && strcmp(m->s[k].label, "p") == 0; k--)
			m->s[k].out[0] = PB_SPEC_P;
	}
}

static void menu_matmul(const pb_graph *g, const pb_node *n, menu *m)
{
	const pb_tensor *a = tin(g, n, 0), *b = tin(g, n, 1), *o = tout(g, n, 0);
	if (!a || !b || !o || a->rank < 2 || b->rank < 2 || o->rank < 2)
		return;
	int ra = a->rank, rb = b->rank, ro = o->rank;
	for (int k = 0; k < ro - 2; k++) {
		if (o->dims[k] <= 1)
			continue;
		char lab[12];
		snprintf(lab, sizeof lab, "b%d", k);
		pb_strat1 *s = add(m, lab);
		if (!s)
			return;
		s->out[0] = (signed char)k;
		int ka = k - (ro - ra), kb = k - (ro - rb);
		if (ka >= 0 && ka < ra - 2 && a->dims[ka] == o->dims[k])
			s->in[0] = (signed char)ka;
		if (kb >= 0 && kb < rb - 2 && b->dims[kb] == o->dims[k])
			s->in[1] = (signed char)kb;
	}
	pb_strat1 *s;
	if ((s = add(m, "m"))) {
		s->in[0] = (signed char)(ra - 2);
		s->out[0] = (signed char)(ro - 2);
	}
	if ((s = add(m, "n"))) {
		s->in[1] = (signed char)(rb - 1);
		s->out[0] = (signed char)(ro - 1);
	}
	if ((s = add(m, "k"))) {
		s->in[0] = (signed char)(ra - 1);
		s->in[1] = (signed char)(rb - 2);
		s->out[0] = PB_SPEC_P;
	}
}

static void menu_gemm(const pb_graph *g, const pb_node *n, menu *m)
{
	const pb_tensor *a = tin(g, n, 0), *b = tin(g, n, 1), *c = tin(g, n, 2), *o = tout(g, n, 0);
	if (!a || !b || !o || a->rank != 2 || b->rank != 2 || o->rank != 2)
		return;
	int ta = (int)pb_node_attr_int(n, "transA", 0), tb = (int)pb_node_attr_int(n, "transB", 0);
	pb_strat1 *s;
	if ((s = add(m, "m"))) {
		s->in[0] = (signed char)(ta ? 1 : 0);
		if (c && c->rank == 2 && c->dims[0] == o->dims[0])
			s->in[2] = 0;
		s->out[0] = 0;
	}
	if ((s = add(m, "n"))) {
		s->in[1] = (signed char)(tb ? 0 : 1);
		if (c && c->rank >= 1 && c->dims[c->rank - 1] == o->dims[1])
			s->in[2] = (signed char)(c->rank - 1);
		s->out[0] = 1;
	}
	if ((s = add(m, "k"))) {
		s->in[0] = (signed char)(ta ? 0 : 1);
		s->in[1] = (signed char)(tb ? 1 : 0);
		s->out[0] = PB_SPEC_P;
	}
}

static void menu_conv(const pb_graph *g, const pb_node *n, menu *m)
{
	const pb_tensor *x = tin(g, n, 0), *w = tin(g, n, 1), *o = tout(g, n, 0);
	if (!x || !w || !o || x->rank < 3 || w->rank != x->rank || o->rank != x->rank)
		return;
	int64_t grp = pb_node_attr_int(n, "group", 1);
	int has_b = tin(g, n, 2) != NULL;
	pb_strat1 *s;
	if ((s = add(m, "b0"))) {
		s->in[0] = 0;
		s->out[0] = 0;
	}
	if (grp == 1) {
		if ((s = add(m, "oc"))) {
			s->in[1] = 0;
			if (has_b)
				s->in[2] = 0;
			s->out[0] = 1;
		}
		if ((s = add(m, "ic"))) {
			s->in[0] = 1;
			s->in[1] = 1;
			s->out[0] = PB_SPEC_P;
		}
	} else if ((s = add(m, "gc"))) {
		s->in[0] = 1;
		s->in[1] = 0;
		if (has_b)
			s->in[2] = 0;
		s->out[0] = 1;
		s->group_div = (int)grp;
	}
}

/* Splits of the dims in [0, rank) for which keep(k) holds, aligned on input 0
 * and output 0 (other inputs replicated unless `same_dims` says they follow). */
static void menu_aligned(const pb_graph *g, const pb_node *n, menu *m, const int *ok, int all_in)
{
	const pb_tensor *x = tin(g, n, 0), *o = tout(g, n, 0);
	if (!x || !o || x->rank != o->rank)
		return;
	for (int k = 0; k < x->rank; k++) {
		if (!ok[k] || x->dims[k] <= 1 || x->dims[k] != o->dims[k])
			continue;
		char lab[12];
		snprintf(lab, sizeof lab, "d%d", k);
		pb_strat1 *s = add(m, lab);
		if (!s)
			return;
		s->in[0] = (signed char)k;
		s->out[0] = (signed char)k;
		for (int i = 1; all_in && i < n->n_inputs && i < PB_SHARD_MAX_IN; i++) {
			const pb_tensor *t = tin(g, n, i);
			if (t && t->rank == x->rank && t->dims[k] == x->dims[k])
				s->in[i] = (signed char)k;
		}
		for (int j = 1; j < n->n_outputs && j < PB_SHARD_MAX_OUT; j++) {
			const pb_tensor *t = tout(g, n, j);
			if (t && t->rank == x->rank && t->dims[k] == x->dims[k])
				s->out[j] = (signed char)k;
		}
	}
}

static int norm_axis(int64_t a, int rank)
{
	if (a < 0)
		a += rank;
	return (a >= 0 && a < rank) ? (int)a : -1;
}

static void menu_reduce(const pb_graph *g, const pb_node *n, unsigned dmask, menu *m)
{
	const pb_tensor *x = tin(g, n, 0), *o = tout(g, n, 0);
	if (!x || !o)
		return;
	int red[PB_MAX_RANK] = {0}, any = 0;
	const pb_attr *ax = pb_node_attr(n, "axes");
	if (ax && ax->type == PB_ATTR_INTS) {
		for (int i = 0; i < ax->n; i++) {
			int k = norm_axis(ax->ints[i], x->rank);
			if (k >= 0)
				red[k] = any = 1;
		}
	} else if (n->n_inputs > 1 && n->inputs[1] >= 0) {
		const pb_value *v = g->tensors[n->inputs[1]].value;
		if (!v)
			return; /* axes unknown: replicate only */
		for (int i = 0; i < v->numel; i++) {
			int k = norm_axis(v->i[i], x->rank);
			if (k >= 0)
				red[k] = any = 1;
		}
	} else if (strncmp(n->op, "Arg", 3) == 0) {
		int k = norm_axis(pb_node_attr_int(n, "axis", 0), x->rank);
		if (k >= 0)
			red[k] = any = 1;
	}
	if (!any && !pb_node_attr_int(n, "noop_with_empty_axes", 0))
		for (int k = 0; k < x->rank; k++)
			red[k] = 1;
	int keep = (int)pb_node_attr_int(n, "keepdims", 1);
	int partial_ok = strcmp(n->op, "ReduceSum") == 0 || strcmp(n->op, "ReduceMean") == 0;
	int ko = 0;
	for (int k = 0; k < x->rank; k++) {
		int outk = -1;
		if (!red[k] || keep)
			outk = ko++;
		if (x->dims[k] <= 1)
			continue;
		char lab[12];
		snprintf(lab, sizeof lab, "d%d", k);
		if (!red[k]) {
			if (outk >= o->rank)
				continue;
			pb_strat1 *s = add(m, lab);
			if (!s)
				return;
			s->in[0] = (signed char)k;
			s->out[0] = (signed char)outk;
		} else if (partial_ok && dyn(dmask, 0)) {
			pb_strat1 *s = add(m, lab);
			if (!s)
				return;
			s->in[0] = (signed char)k;
			s->out[0] = PB_SPEC_P;
		}
	}
}

/* Maps input dim k of a reshape to the output dim with the same block layout,
 * or -1. Dims are grouped by equal running products (size-1 dims skipped). */
static int reshape_map(const int64_t *a, int ra, const int64_t *b, int rb, int k)
{
	int i = 0, j = 0;
	while (i < ra && j < rb) {
		while (i < ra && a[i] == 1)
			i++;
		while (j < rb && b[j] == 1)
			j++;
		if (i >= ra || j >= rb)
			break;
		int i0 = i, j0 = j;
		int64_t pa = a[i], pb = b[j];
		if (pa <= 0 || pb <= 0)
			return -1;
		while (pa != pb) {
			if (pa < pb) {
				if (++i >= ra || a[i] <= 0)
					return -1;
				pa *= a[i];
			} else {
				if (++j >= rb || b[j] <= 0)
					return -1;
				pb *= b[j];
			}
		}
		if (k == i0)
			return j0;
		if (k > i0 && k <= i)
			return -1;
		i++;
		j++;
	}
	return -1;
}

static void menu_reshape(const pb_graph *g, const pb_node *n, unsigned dmask, menu *m)
{
	const pb_tensor *x = tin(g, n, 0), *o = tout(g, n, 0);
	if (!x || !o)
		return;
	for (int k = 0; k < x->rank; k++) {
		if (x->dims[k] <= 1)
			continue;
		int j = reshape_map(x->dims, x->rank, o->dims, o->rank, k);
		if (j < 0)
			continue;
		char lab[12];
		snprintf(lab, sizeof lab, "d%d", k);
		pb_strat1 *s = add(m, lab);
		if (!s)
			return;
		s->in[0] = (signed char)k;
		s->out[0] = (signed char)j;
	}
	pb_strat1 *s;
	if (dyn(dmask, 0) && (s = add(m, "p"))) {
		s->in[0] = PB_SPEC_P;
		s->out[0] = PB_SPEC_P;
	}
}

static void menu_transpose(const pb_graph *g, const pb_node *n, unsigned dmask, menu *m)
{
	const pb_tensor *x = tin(g, n, 0), *o = tout(g, n, 0);
	if (!x || !o || x->rank != o->rank)
		return;
	int perm[PB_MAX_RANK];
	const pb_attr *p = pb_node_attr(n, "perm");
	for (int k = 0; k < o->rank; k++)
		perm[k] = p && p->type == PB_ATTR_INTS && p->n == o->rank ? (int)p->ints[k]
		                                                          : o->rank - 1 - k;
	for (int k = 0; k < o->rank; k++) {
		if (perm[k] < 0 || perm[k] >= x->rank || o->dims[k] <= 1)
			continue;
		char lab[12];
		snprintf(lab, sizeof lab, "d%d", perm[k]);
		pb_strat1 *s = add(m, lab);
		if (!s)
			return;
		s->in[0] = (signed char)perm[k];
		s->out[0] = (signed char)k;
	}
	pb_strat1 *s;
	if (dyn(dmask, 0) && (s = add(m, "p"))) {
		s->in[0] = PB_SPEC_P;
		s->out[0] = PB_SPEC_P;
	}
}

static void menu_gather(const pb_graph *g, const pb_node *n, unsigned dmask, menu *m)
{
	const pb_tensor *d = tin(g, n, 0), *ix = tin(g, n, 1), *o = tout(g, n, 0);
	if (!d || !ix || !o || o->rank != d->rank - 1 + ix->rank)
		return;
	int ax = norm_axis(pb_node_attr_int(n, "axis", 0), d->rank);
	if (ax < 0)
		return;
	char lab[12];
	for (int j = 0; j < d->rank; j++) {
		if (j == ax || d->dims[j] <= 1)
			continue;
		snprintf(lab, sizeof lab, "d%d", j);
		pb_strat1 *s = add(m, lab);
		if (!s)
			return;
		s->in[0] = (signed char)j;
		s->out[0] = (signed char)(j < ax ? j : j - 1 + ix->rank);
	}
	for (int i = 0; i < ix->rank; i++) {
		if (ix->dims[i] <= 1)
			continue;
		snprintf(lab, sizeof lab, "i%d", i);
		pb_strat1 *s = add(m, lab);
		if (!s)
			return;
		s->in[1] = (signed char)i;
		s->out[0] = (signed char)(ax + i);
	}
	if (!dyn(dmask, 0)) {
		pb_strat1 *s = add(m, "vocab");
		if (s) {
			s->in[0] = (signed char)ax;
			s->out[0] = PB_SPEC_P;
		}
	}
}

static void menu_concat(const pb_graph *g, const pb_node *n, menu *m)
{
	const pb_tensor *o = tout(g, n, 0);
	if (!o)
		return;
	int ax = norm_axis(pb_node_attr_int(n, "axis", 0), o->rank);
	for (int k = 0; k < o->rank; k++) {
		if (k == ax || o->dims[k] <= 1)
			continue;
		char lab[12];
		snprintf(lab, sizeof lab, "d%d", k);
		pb_strat1 *s = add(m, lab);
		if (!s)
			return;
		s->out[0] = (signed char)k;
		for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++) {
			const pb_tensor *t = tin(g, n, i);
			if (t && t->rank == o->rank && t->dims[k] == o->dims[k])
				s->in[i] = (signed char)k;
		}
	}
}

int pb_spec_menu(const pb_graph *g, int nid, unsigned dyn_in, pb_strat1 *out, int cap)
{
	const pb_node *n = &g->nodes[nid];
	menu m = {out, 0, cap};
	add(&m, "rep")->divides = 0;
	if (n->n_inputs > PB_SHARD_MAX_IN || n->n_outputs > PB_SHARD_MAX_OUT || !n->n_outputs)
		return m.n;
	const pb_tensor *o = tout(g, n, 0);
	if (!o)
		return m.n;
	for (int i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] >= 0 && !tin(g, n, i))
			return m.n; /* unknown input shape: replicate only */
	const char *op = n->op;
	int okall[PB_MAX_RANK];
	for (int k = 0; k < PB_MAX_RANK; k++)
		okall[k] = 1;
	if (strcmp(op, "MatMul") == 0) {
		menu_matmul(g, n, &m);
	} else if (strcmp(op, "Gemm") == 0) {
		menu_gemm(g, n, &m);
	} else if (strcmp(op, "Conv") == 0) {
		menu_conv(g, n, &m);
	} else if (is_op(op, elementwise_ops)) {
		menu_elementwise(g, n, dyn_in, &m);
	} else if (strncmp(op, "Reduce", 6) == 0 || strcmp(op, "ArgMax") == 0 ||
	           strcmp(op, "ArgMin") == 0) {
		menu_reduce(g, n, dyn_in, &m);
	} else if (strcmp(op, "Softmax") == 0 || strcmp(op, "LogSoftmax") == 0 ||
	           strcmp(op, "LayerNormalization") == 0) {
		int64_t dflt = strcmp(op, "LayerNormalization") == 0 ||
		                       pb_graph_opset(g, "") >= 13 || pb_graph_opset(g, "") == 0
		                   ? -1
		                   : 1;
		int ax = norm_axis(pb_node_attr_int(n, "axis", dflt), o->rank);
		int flatten = strcmp(op, "LayerNormalization") == 0 ||
		              (pb_graph_opset(g, "") > 0 && pb_graph_opset(g, "") < 13);
		for (int k = 0; k < o->rank; k++)
			okall[k] = flatten ? k < ax : k != ax;
		menu_aligned(g, n, &m, okall, 0);
	} else if (strcmp(op, "BatchNormalization") == 0 ||
	           strcmp(op, "InstanceNormalization") == 0) {
		for (int k = 2; k < o->rank; k++)
			okall[k] = strcmp(op, "BatchNormalization") == 0;
		int before = m.n;
		menu_aligned(g, n, &m, okall, 0);
		for (int s = before; s < m.n; s++)
			if (m.s[s].in[0] == 1)
				for (int i = 1; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++)
					m.s[s].in[i] = 0;
	} else if (strcmp(op, "MaxPool") == 0 || strcmp(op, "AveragePool") == 0 ||
	           strcmp(op, "GlobalAveragePool") == 0 || strcmp(op, "GlobalMaxPool") == 0 ||
	           strcmp(op, "LpPool") == 0 || strcmp(op, "Resize") == 0 ||
	           strcmp(op, "Upsample") == 0 || strcmp(op, "LRN") == 0) {
		for (int k = 0; k < o->rank; k++)
			okall[k] = k < 2 && strcmp(op, "LRN") != 0 ? 1 : k == 0;
		menu_aligned(g, n, &m, okall, 0);
	} else if (strcmp(op, "Reshape") == 0 || strcmp(op, "Flatten") == 0 ||
	           strcmp(op, "Squeeze") == 0 || strcmp(op, "Unsqueeze") == 0) {
		menu_reshape(g, n, dyn_in, &m);
	} else if (strcmp(op, "Transpose") == 0) {
		menu_transpose(g, n, dyn_in, &m);
	} else if (strcmp(op, "Gather") == 0) {
		menu_gather(g, n, dyn_in, &m);
	} else if (strcmp(op, "Concat") == 0) {
		menu_concat(g, n, &m);
	} else if (strcmp(op, "Slice") == 0 || strcmp(op, "Split") == 0 || strcmp(op, "Pad") == 0) {
		menu_aligned(g, n, &m, okall, 0);
	}
	return m.n;
}

static int split_ok(const pb_tensor *t, const signed char *spec, const pb_mesh *mesh, int pad)
{
	if (!t)
		return 1;
	for (int k = 0; k < t->rank; k++) {
		long f = 1;
		for (int a = 0; a < mesh->n_axes; a++)
			if (spec[a] == k)
				f *= mesh->size[a];
		if (f > 1 && (t->dims[k] <= 0 || (t->dims[k] % f && (!pad || t->dims[k] < f))))
			return 0;
	}
	for (int a = 0; a < mesh->n_axes; a++)
		if (spec[a] >= 0 && spec[a] >= t->rank)
			return 0;
	return 1;
}

typedef struct comb {
	const pb_graph *g;
	const pb_node *n;
	const pb_mesh *m;
	const pb_strat1 *menu;
	int n_menu;
	pb_strat *out;
	int cap, count;
	int pad;
	int pick[PB_MESH_MAX_AXES];
} comb;

static void comb_emit(comb *c)
{
	if (c->count >= c->cap)
		return;
	pb_strat s;
	memset(&s, 0, sizeof s);
	s.share = 1;
	long gdiv = 1;
	int gneeded = 0;
	size_t off = 0;
	for (int a = 0; a < c->m->n_axes; a++) {
		const pb_strat1 *p = &c->menu[c->pick[a]];
		for (int i = 0; i < PB_SHARD_MAX_IN; i++)
			s.in[i][a] = p->in[i];
		for (int j = 0; j < PB_SHARD_MAX_OUT; j++)
			s.out[j][a] = p->out[j];
		if (p->divides)
			s.share *= c->m->size[a];
		if (p->group_div) {
			gdiv *= c->m->size[a];
			gneeded = p->group_div;
		}
		off += (size_t)snprintf(s.label + off, sizeof s.label - off, "%s%s", a ? "," : "",
		                        p->label);
		if (off >= sizeof s.label)
			off = sizeof s.label - 1;
	}
	if (gneeded && gneeded % gdiv)
		return;
	const pb_node *n = c->n;
	/* a reshape maps blocks of one dimension to blocks of another: only
	 * exact splits keep them aligned */
	int pad = c->pad && strcmp(n->op, "Reshape") != 0 && strcmp(n->op, "Flatten") != 0 &&
	          strcmp(n->op, "Squeeze") != 0 && strcmp(n->op, "Unsqueeze") != 0;
	s.pad = 1;
	for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++) {
		if (n->inputs[i] < 0)
			continue;
		const pb_tensor *t = &c->g->tensors[n->inputs[i]];
		if (!split_ok(t, s.in[i], c->m, pad))
			return;
		double f = pb_spec_pad_factor(t, s.in[i], c->m);
		if (f > s.pad)
			s.pad = f;
	}
	for (int j = 0; j < n->n_outputs && j < PB_SHARD_MAX_OUT; j++) {
		if (n->outputs[j] < 0)
			continue;
		const pb_tensor *t = &c->g->tensors[n->outputs[j]];
		if (!split_ok(t, s.out[j], c->m, pad))
			return;
		double f = pb_spec_pad_factor(t, s.out[j], c->m);
		if (f > s.pad)
			s.pad = f;
	}
	c->out[c->count++] = s;
}

static void comb_rec(comb *c, int a)
{
	if (a == c->m->n_axes) {
		comb_emit(c);
		return;
	}
	for (int i = 0; i < c->n_menu; i++) {
		c->pick[a] = i;
		comb_rec(c, a + 1);
	}
}

int pb_spec_combine(const pb_graph *g, int nid, const pb_mesh *m, const pb_strat1 *menu, int n_menu,
                    int pad, pb_strat *out, int cap)
{
	comb c = {g, &g->nodes[nid], m, menu, n_menu, out, cap, 0, pad, {0}};
	comb_rec(&c, 0);
	return c.count;
}

void pb_spec_local_dims(const pb_tensor *t, const signed char *spec, const pb_mesh *m,
                        int64_t *dims)
{
	for (int k = 0; k < t->rank; k++) {
		long f = 1;
		for (int a = 0; a < m->n_axes; a++)
			if (spec[a] == k)
				f *= m->size[a];
		dims[k] = t->dims[k] > 0 ? (t->dims[k] + f - 1) / f : t->dims[k];
	}
}

double pb_spec_pad_factor(const pb_tensor *t, const signed char *spec, const pb_mesh *m)
{
	double r = 1;
	for (int k = 0; k < t->rank; k++) {
		long f = 1;
		for (int a = 0; a < m->n_axes; a++)
			if (spec[a] == k)
				f *= m->size[a];
		int64_t n = t->dims[k];
		if (f > 1 && n > 0 && n % f)
			r *= (double)((n + f - 1) / f * f) / (double)n;
	}
	return r;
}

double pb_spec_shrink(const signed char *spec, const pb_mesh *m)
{
	double f = 1;
	for (int a = 0; a < m->n_axes; a++)
		if (spec[a] >= 0)
			f *= m->size[a];
	return f;
}

char *pb_spec_str(const signed char *spec, int n_axes, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int a = 0; a < n_axes && off < len; a++) {
		const char *sep = a ? "," : "";
		if (spec[a] == PB_SPEC_R)
			off += (size_t)snprintf(buf + off, len - off, "%sR", sep);
		else if (spec[a] == PB_SPEC_P)
			off += (size_t)snprintf(buf + off, len - off, "%sP", sep);
		else
			off += (size_t)snprintf(buf + off, len - off, "%sS%d", sep, spec[a]);
	}
	return buf;
}

const char *pb_spec_coll_name(int kind)
{
	switch (kind) {
	case PB_COLL_ALLGATHER:
		return "all-gather";
	case PB_COLL_ALLREDUCE:
		return "all-reduce";
	case PB_COLL_REDUCESCATTER:
		return "reduce-scatter";
	case PB_COLL_ALLTOALL:
		return "all-to-all";
	default:
		return "none";
	}
}

double pb_spec_coll_time(int kind, double bytes, int d, const pb_link *l)
{
	if (d <= 1 || kind == PB_COLL_NONE)
		return 0;
	double f;
	switch (kind) {
	case PB_COLL_ALLGATHER:
	case PB_COLL_REDUCESCATTER:
		f = (double)(d - 1) / d;
		break;
	case PB_COLL_ALLREDUCE:
		f = 2.0 * (d - 1) / d;
		break;
	default: /* all-to-all */
		f = (double)(d - 1) / ((double)d * d);
		break;
	}
	return l->latency + f * bytes / l->bw;
}

double pb_spec_reshard_cost(const pb_mesh *m, double bytes, const signed char *from,
                            const signed char *to, pb_coll *colls, int *n_colls)
{
	signed char cur[PB_MESH_MAX_AXES];
	memcpy(cur, from, sizeof cur);
	double t = 0;
	int nc = 0;
	for (int i = 0; i < m->n_axes; i++) {
		int a = cur[i], b = to[i];
		if (a == b)
			continue;
		int kind = PB_COLL_NONE;
		if (a >= 0)
			kind = b == PB_SPEC_R ? PB_COLL_ALLGATHER
			       : b >= 0       ? PB_COLL_ALLTOALL
			                      : PB_COLL_NONE;
		else if (a == PB_SPEC_P)
			kind = b == PB_SPEC_R ? PB_COLL_ALLREDUCE : PB_COLL_REDUCESCATTER;
		if (kind != PB_COLL_NONE) {
			double buf = bytes;
			for (int j = 0; j < m->n_axes; j++)
				if (j != i && cur[j] >= 0)
					buf /= m->size[j];
			double ct = pb_spec_coll_time(kind, buf, m->size[i], &m->link[i]);
			t += ct;
			if (colls) {
				colls[nc].kind = kind;
				colls[nc].axis = i;
				colls[nc].bytes = buf;
				colls[nc].time = ct;
				nc++;
			}
		}
		cur[i] = (signed char)b;
	}
	if (n_colls)
		*n_colls = nc;
	return t;
}

double pb_spec_reshard_cost_tensor(const pb_mesh *m, const pb_tensor *t, const signed char *from,
                                   const signed char *to, pb_coll *colls, int *n_colls)
{
	double fa = pb_spec_pad_factor(t, from, m), fb = pb_spec_pad_factor(t, to, m);
	return pb_spec_reshard_cost(m, pb_tensor_bytes(t) * (fa > fb ? fa : fb), from, to, colls,
	                            n_colls);
}
