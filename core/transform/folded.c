/*
 * folded.c — load-time constant nodes (folded.h). One pass in topological
 * order: a node's inputs are decided before the node.
 */
#include "transform/folded.h"

int pb_transform_folded(const pb_graph *g, unsigned char *mask)
{
	int count = 0;
	for (int v = 0; v < g->n_nodes; v++) {
		const pb_node *nd = &g->nodes[v];
		/* A node without inputs is a constant only when its outputs have known
		 * values (ONNX Constant): a source of a DOT or JSON graph stands for
		 * the model input (op Input) and runs at every inference. */
		int all_values = nd->n_outputs > 0, const_inputs = nd->n_inputs > 0;
		for (int j = 0; j < nd->n_outputs; j++) {
			int t = nd->outputs[j];
			if (t >= 0 && (!g->tensors[t].value || g->tensors[t].is_output))
				all_values = 0;
		}
		for (int j = 0; j < nd->n_inputs; j++) {
			int t = nd->inputs[j];
			if (t < 0)
				continue;
			const pb_tensor *tt = &g->tensors[t];
			if (tt->is_initializer)
				continue;
			if (tt->producer >= 0 && mask[tt->producer])
				continue;
			const_inputs = 0;
		}
		int out_is_model_output = 0;
		for (int j = 0; j < nd->n_outputs; j++)
			if (nd->outputs[j] >= 0 && g->tensors[nd->outputs[j]].is_output)
				out_is_model_output = 1;
		mask[v] = (unsigned char)((all_values || const_inputs) && !out_is_model_output);
		count += mask[v];
	}
	return count;
}
