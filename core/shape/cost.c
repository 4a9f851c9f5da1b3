/*
 * cost.c — per-node cost figures from inferred shapes (see cost.h).
 *
 * Conventions (repeated in docs/formats.md, "Cost conventions"):
 *  MACs (multiply-accumulates), only for the multiply-accumulate operators:
 *   - Conv / ConvInteger / QLinearConv: numel(Y) * (C_in/group) * prod(kernel)
 *     = numel(Y) * prod(W.dims[1:]);
 *   - ConvTranspose: numel(X) * prod(W.dims[1:])  (every input pixel scatters
 *     a (C_out/group) x kernel patch);
 *   - Gemm: M * N * K;  MatMul / MatMulInteger / QLinearMatMul: numel(Y) * K
 *     (batch dims broadcast, so attention matmuls count in full);
 *   - Einsum with two or more operands: product of the extents of all
 *     distinct labels (output and contracted);
 *   - RNN / GRU / LSTM: seq * batch * directions * gates * hidden *
 *     (input + hidden), gates = 1 / 3 / 4 (the input and recurrent matmuls
 *     of every step; the element-wise gate arithmetic is not counted).
 *  FLOPs: 2 * MACs for those (plus one add per output element when a bias is
 *   given); for the other operators, per element of the output unless noted:
 *   - element-wise arithmetic, comparisons, activations, Clip, Where: 1;
 *   - Softmax / LogSoftmax: 3 (exp, sum, divide); BatchNormalization
 *     (inference): 2 (scale, shift); LayerNormalization, InstanceNormalization,
 *     GroupNormalization, MeanVarianceNormalization, LpNormalization, LRN: 5;
 *   - MaxPool / AveragePool / LpPool: prod(kernel) per output element;
 *     GlobalAveragePool / GlobalMaxPool / Reduce*: numel of the input;
 *   - Resize / Upsample: 1 (nearest) or 4 (linear, cubic) per output element;
 *   - data movement (Reshape, Transpose, Concat, Split, Slice, Gather, Pad,
 *     Expand, Cast, Identity, Shape, Constant, ...): 0;
 *   - a node whose outputs were all evaluated at load time (shape arithmetic,
 *     constant folding) costs 0 FLOPs: any runtime folds it.
 *  params: elements of the node's weight inputs: initializers that are not
 *   model inputs, and floating Constant tensors of more than one element
 *   (Paddle exports hold every weight so; scalars, integer shape tensors and
 *   the roi/scales inputs of Resize/Upsample are not parameters), also when
 *   forwarded by an Identity node (torch's export of
 *   shared or deduplicated weights). Identity nodes themselves own none; a
 *   weight read by several nodes counts at each reader, as in the framework's
 *   per-module parameter count. param_bytes = dtype size x elements.
 *  out_bytes: dtype size x numel of all outputs that are not weights (an
 *   Identity forwarding a weight has none); in_bytes: the same over the
 *   inputs that are not weights. Unknown shapes contribute 0.
 */
#include "shape/cost.h"

#include <string.h>

#include "shape/shape.h"

static const pb_tensor *tin(const pb_graph *g, const pb_node *n, int i)
{
	return (i < n->n_inputs && n->inputs[i] >= 0) ? &g->tensors[n->inputs[i]] : NULL;
}

static const pb_tensor *tout(const pb_graph *g, const pb_node *n, int i)
{
	return (i < n->n_outputs && n->outputs[i] >= 0) ? &g->tensors[n->outputs[i]] : NULL;
}

static double numel(const pb_tensor *t)
{
	int64_t n = t ? pb_tensor_numel(t) : -1;
	return n < 0 ? 0 : (double)n;
}

/* prod(W.dims[1:]) or 0 when unknown. */
static double weight_fanin(const pb_tensor *w)
{
	if (!w || w->rank < 2)
		return 0;
	double p = 1;
	for (int i = 1; i < w->rank; i++) {
		if (w->dims[i] < 0)
			return 0;
		p *= (double)w->dims[i];
	}
	return p;
}

static double node_macs(const pb_graph *g, const pb_node *n)
{
	const char *op = n->op;
	if (n->domain[0])
		return 0;
	/* Every MAC operator starts with one of these letters: most nodes leave
	 * here without a single strcmp. */
	if (!op[0] || !strchr("CQGMRLE", op[0]))
		return 0;
	if (strcmp(op, "Conv") == 0 || strcmp(op, "ConvInteger") == 0)
		return numel(tout(g, n, 0)) * weight_fanin(tin(g, n, 1));
	if (strcmp(op, "QLinearConv") == 0)
		return numel(tout(g, n, 0)) * weight_fanin(tin(g, n, 3));
	if (strcmp(op, "ConvTranspose") == 0)
		return numel(tin(g, n, 0)) * weight_fanin(tin(g, n, 1));
	if (strcmp(op, "Gemm") == 0) {
		const pb_tensor *a = tin(g, n, 0);
		if (!a || a->rank != 2)
			return 0;
		int64_t k = a->dims[pb_node_attr_int(n, "transA", 0) ? 0 : 1];
		return k < 0 ? 0 : numel(tout(g, n, 0)) * (double)k;
	}
	if (strcmp(op, "MatMul") == 0 || strcmp(op, "MatMulInteger") == 0 ||
	    strcmp(op, "QLinearMatMul") == 0) {
		const pb_tensor *a = tin(g, n, 0);
		if (!a || a->rank < 1)
			return 0;
		int64_t k = a->dims[a->rank - 1];
		return k < 0 ? 0 : numel(tout(g, n, 0)) * (double)k;
	}
	if (strcmp(op, "RNN") == 0 || strcmp(op, "GRU") == 0 || strcmp(op, "LSTM") == 0) {
		const pb_tensor *x = tin(g, n, 0), *y = tout(g, n, 0);
		if (!x || x->rank != 3 || !y || y->rank != 4 || x->dims[2] < 0 || y->dims[3] <= 0)
			return 0;
		double gates = op[0] == 'R' ? 1 : (op[0] == 'G' ? 3 : 4);
		double in = (double)x->dims[2], h = (double)y->dims[3];
		double steps = numel(y) / h; /* seq * directions * batch */
		return steps * gates * h * (in + h);
	}
	if (strcmp(op, "Einsum") == 0 && n->n_inputs >= 2) {
		int64_t ext[128];
		char labels[PB_MAX_RANK];
		int r;
		if (!pb_einsum_extents(g, n, ext, labels, &r))
			return 0;
		double p = 1;
		for (int L = 0; L < 128; L++) {
			if (ext[L] == -2)
				continue;
			if (ext[L] < 0)
				return 0;
			p *= (double)ext[L];
		}
		return p;
	}
	return 0;
}

static int op_in(const char *op, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(op, list[i]) == 0)
			return 1;
	return 0;
}

static double node_flops(const pb_graph *g, const pb_node *n, double macs)
{
	static const char *const zero[] = {"Reshape",
	                                   "Transpose",
	                                   "Concat",
	                                   "Split",
	                                   "Slice",
	                                   "Gather",
	                                   "GatherElements",
	                                   "GatherND",
	                                   "Pad",
	                                   "Expand",
	                                   "Tile",
	                                   "Cast",
	                                   "CastLike",
	                                   "Identity",
	                                   "Shape",
	                                   "Size",
	                                   "Constant",
	                                   "ConstantOfShape",
	                                   "Flatten",
	                                   "Squeeze",
	                                   "Unsqueeze",
	                                   "Dropout",
	                                   "DepthToSpace",
	                                   "SpaceToDepth",
	                                   "Range",
	                                   "ScatterND",
	                                   "ScatterElements",
	                                   "Scatter",
	                                   "NonZero",
	                                   "OneHot",
	                                   "EyeLike",
	                                   "Compress",
	                                   "QuantizeLinear",
	                                   "DequantizeLinear",
	                                   NULL};
	static const char *const norm5[] = {"LayerNormalization",
	                                    "InstanceNormalization",
	                                    "GroupNormalization",
	                                    "MeanVarianceNormalization",
	                                    "LpNormalization",
	                                    "LRN",
	                                    NULL};
	const char *op = n->op;
	const pb_tensor *y = tout(g, n, 0);
	double out = numel(y);
	if (macs > 0) {
		int has_bias = (strcmp(op, "Gemm") == 0 || strcmp(op, "Conv") == 0 ||
		                strcmp(op, "ConvTranspose") == 0) &&
		               tin(g, n, 2);
		return 2 * macs + (has_bias ? out : 0);
	}
	/* Folded at load time: every output has a value. */
	int folded = n->n_outputs > 0;
	for (int i = 0; i < n->n_outputs; i++) {
		const pb_tensor *t = tout(g, n, i);
		if (t && !t->value)
			folded = 0;
	}
	if (folded || op_in(op, zero) || n->domain[0])
		return 0;
	if (strcmp(op, "Softmax") == 0 || strcmp(op, "LogSoftmax") == 0)
		return 3 * out;
	if (strcmp(op, "BatchNormalization") == 0)
		return 2 * out;
	if (op_in(op, norm5))
		return 5 * out;
	if (strcmp(op, "MaxPool") == 0 || strcmp(op, "AveragePool") == 0 ||
	    strcmp(op, "LpPool") == 0) {
		const pb_attr *k = pb_node_attr(n, "kernel_shape");
		double p = 1;
		for (int i = 0; k && k->ints && i < k->n; i++)
			p *= (double)k->ints[i];
		return out * p;
	}
	if (strncmp(op, "Global", 6) == 0 || strncmp(op, "Reduce", 6) == 0 ||
	    strncmp(op, "Arg", 3) == 0)
		return numel(tin(g, n, 0));
	if (strcmp(op, "Resize") == 0 || strcmp(op, "Upsample") == 0) {
		const char *mode = pb_node_attr_str(n, "mode", "nearest");
		return out * (strcmp(mode, "nearest") == 0 ? 1 : 4);
	}
	if (strcmp(op, "Einsum") == 0 || strcmp(op, "MatMul") == 0 || strcmp(op, "Gemm") == 0 ||
	    strcmp(op, "Conv") == 0 || strcmp(op, "ConvTranspose") == 0 || strcmp(op, "RNN") == 0 ||
	    strcmp(op, "GRU") == 0 || strcmp(op, "LSTM") == 0)
		return 0; /* MAC operator whose shapes are unknown */
	return out;
}

/* Floating-point element types: a weight is one of these, shape data never. */
static int is_float_dtype(int dt)
{
	return dt == PB_DT_FLOAT || dt == PB_DT_FLOAT16 || dt == PB_DT_DOUBLE ||
	       dt == PB_DT_BFLOAT16 || (dt >= 17 && dt <= 20); /* the float8 types */
}

/* A weight held in a Constant node of the default domain (PaddleOCR and
 * other Paddle exports store every conv kernel so): a floating tensor of
 * more than one element. Scalars (eps, scale factors) and integer shape
 * tensors are not parameters. */
static int is_constant_weight(const pb_graph *g, const pb_tensor *t)
{
	const pb_node *p = &g->nodes[t->producer];
	if (strcmp(p->op, "Constant") != 0 ||
	    (p->domain && *p->domain && strcmp(p->domain, "ai.onnx") != 0))
		return 0;
	return is_float_dtype(t->dtype) && pb_tensor_numel(t) > 1;
}

/* A weight: an initializer that is not a model input, a float Constant of
 * more than one element, or an Identity's output forwarding one. */
static int is_weight(const pb_graph *g, const pb_tensor *t, int depth)
{
	if (!t || depth > 8)
		return 0;
	if (t->is_initializer && !t->is_input && t->producer < 0)
		return 1;
	if (t->producer >= 0) {
		const pb_node *p = &g->nodes[t->producer];
		if (is_constant_weight(g, t))
			return 1;
		if (strcmp(p->op, "Identity") == 0 && p->n_inputs == 1 && p->inputs[0] >= 0)
			return is_weight(g, &g->tensors[p->inputs[0]], depth + 1);
	}
	return 0;
}

/* Input slots that take shape data even when it is a float tensor: the roi
 * and scales of Resize, the scales of Upsample. */
static int is_shape_slot(const pb_node *n, int j)
{
	return j >= 1 && (strcmp(n->op, "Resize") == 0 || strcmp(n->op, "Upsample") == 0);
}

void pb_cost_compute(pb_graph *g)
{
	for (int i = 0; i < g->n_nodes; i++) {
		pb_node *n = &g->nodes[i];
		pb_cost *c = &n->cost;
		memset(c, 0, sizeof *c);
		c->macs = node_macs(g, n);
		c->flops = node_flops(g, n, c->macs);
		int identity = strcmp(n->op, "Identity") == 0;
		for (int j = 0; j < n->n_inputs; j++) {
			const pb_tensor *t = tin(g, n, j);
			if (!t)
				continue;
			if (is_shape_slot(n, j) && t->producer >= 0 && is_weight(g, t, 0))
				continue; /* float shape data from a Constant: neither */
			if (is_weight(g, t, 0)) {
				if (!identity) {
					double e = numel(t);
					c->params += e;
					c->param_bytes +=
					    e *
					    (pb_dtype_size(t->dtype) ? pb_dtype_size(t->dtype) : 4);
				}
			} else {
				c->in_bytes += pb_tensor_bytes(t);
			}
		}
		for (int j = 0; j < n->n_outputs; j++) {
			const pb_tensor *t = tout(g, n, j);
			if (t && !is_weight(g, t, 0)) /* a forwarded weight is no activation */
				c->out_bytes += pb_tensor_bytes(t);
		}
	}
	pb_cost_totals(g);
}

void pb_cost_totals(pb_graph *g)
{
	memset(&g->total, 0, sizeof g->total);
	for (int i = 0; i < g->n_nodes; i++) {
		const pb_cost *c = &g->nodes[i].cost;
		g->total.macs += c->macs;
		g->total.flops += c->flops;
		g->total.params += c->params;
		g->total.param_bytes += c->param_bytes;
		g->total.out_bytes += c->out_bytes;
		g->total.in_bytes += c->in_bytes;
	}
}
