/* shape.c — placeholder until shape inference lands (issue 2). */
#include "shape.h"

#include <stdio.h>

int pb_shape_infer(pb_graph *g, pb_error *err)
{
	(void)err;
	g->n_unknown_shapes = 0;
	for (int i = 0; i < g->n_nodes; i++) {
		pb_node *n = &g->nodes[i];
		int known = 1;
		for (int j = 0; j < n->n_outputs; j++)
			if (n->outputs[j] >= 0 && pb_tensor_numel(&g->tensors[n->outputs[j]]) < 0)
				known = 0;
		n->shape_known = (unsigned)known;
		if (!known)
			g->n_unknown_shapes++;
	}
	return PB_OK;
}

int pb_shape_op_supported(const char *op)
{
	(void)op;
	return 0;
}

int pb_shape_unresolved_inputs(const pb_graph *g, char *buf, size_t len)
{
	(void)g;
	if (len)
		buf[0] = '\0';
	return 0;
}
