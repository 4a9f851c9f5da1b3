/*
 * shard/act_saved.c — the activations the backward pass needs, and the
 * operators sequence parallelism splits (act_saved.h).
 */
#include "shard/act_saved.h"

#include <string.h>

#include "shard/tensor_kind.h"

const char *const pb_seq_parallel_names[3] = {"off", "on", "auto"};

int pb_act_saved_seq_parallel_parse(const char *s, int *mode, pb_error *err)
{
	for (int k = 0; k < 3; k++)
		if (s && !strcmp(s, pb_seq_parallel_names[k])) {
			*mode = k;
			return PB_OK;
		}
	return pb_err(err, PB_EUSAGE, "shard: --seq-parallel must be on, off or auto, got '%s'",
	              s ? s : "");
}

static int in_list(const char *op, const char *const *l)
{
	for (; *l; l++)
		if (!strcmp(op, *l))
			return 1;
	return 0;
}

/* products: an activation input is needed when another input is an
 * activation or a trained weight (a parameter of 2 values or more) */
static const char *const products[] = {"MatMul", "Gemm", "Conv", "ConvTranspose",
                                       "Einsum", "Mul",  "Div",  NULL};
/* the gradient needs the output, not the input */
static const char *const by_output[] = {"Softmax", "LogSoftmax", "Sigmoid", "Tanh",
                                        "Exp",     "Relu",       NULL};
/* nothing stored: linear in their activation inputs, or index/shape work */
static const char *const keep_none[] = {
    "Add",         "Sub",        "Neg",      "Reshape",         "Transpose", "Flatten",
    "Squeeze",     "Unsqueeze",  "Identity", "Concat",          "Split",     "Slice",
    "Gather",      "Expand",     "Cast",     "Shape",           "Dropout",   "Pad",
    "ReduceSum",   "ReduceMean", "Constant", "ConstantOfShape", "Range",     "GlobalAveragePool",
    "AveragePool", "Tile",       NULL};

static int trained(const pb_graph *g, const unsigned char *tkind, int t)
{
	return t >= 0 && tkind[t] == PB_TKIND_PARAM && pb_tensor_numel(&g->tensors[t]) >= 2;
}

/* 1 when node c's backward pass needs its input slot i (an activation) */
static int needs_input(const pb_graph *g, const unsigned char *tkind, int c, int i)
{
	const pb_node *n = &g->nodes[c];
	if (in_list(n->op, keep_none) || in_list(n->op, by_output))
		return 0;
	if (!in_list(n->op, products))
		return 1; /* norms, GeLU and other non-linearities, unknown operators */
	for (int k = 0; k < n->n_inputs; k++) {
		int t = n->inputs[k];
		if (k != i && t >= 0 && (tkind[t] == PB_TKIND_ACT || trained(g, tkind, t)))
			return 1;
	}
	return 0;
}

unsigned pb_act_saved_outputs(const pb_graph *g, const unsigned char *tkind, int v)
{
	const pb_node *n = &g->nodes[v];
	unsigned bits = 0;
	for (int j = 0; j < n->n_outputs && j < 32; j++) {
		int t = n->outputs[j];
		if (t < 0)
			continue;
		const pb_tensor *tt = &g->tensors[t];
		int keep = tt->is_output || in_list(n->op, by_output);
		for (int c = 0; c < tt->n_consumers && !keep; c++) {
			const pb_node *cn = &g->nodes[tt->consumers[c]];
			for (int i = 0; i < cn->n_inputs && !keep; i++)
				if (cn->inputs[i] == t)
					keep = needs_input(g, tkind, tt->consumers[c], i);
		}
		if (keep)
			bits |= 1u << j;
	}
	return bits;
}

int pb_act_saved_seq_parallel_op(const pb_graph *g, const unsigned char *tkind, int v)
{
	const pb_node *n = &g->nodes[v];
	if (!strcmp(n->op, "Softmax") || !strcmp(n->op, "LogSoftmax"))
		return 0;
	for (int i = 0; i < n->n_inputs; i++) /* a product with a weight: tensor-parallel */
		if (trained(g, tkind, n->inputs[i]) && g->tensors[n->inputs[i]].rank >= 2)
			return 0;
	/* a product of two activations (attention) is split by heads already */
	if (in_list(n->op, products)) {
		int acts = 0;
		for (int i = 0; i < n->n_inputs; i++)
			acts += n->inputs[i] >= 0 && tkind[n->inputs[i]] == PB_TKIND_ACT;
		if (acts >= 2)
			return 0;
	}
	return 1;
}
