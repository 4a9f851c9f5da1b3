/*
 * fuzz_graph.h — the walk the graph loaders' fuzz targets (ONNX, DOT, JSON)
 * give an accepted graph: every edge's bytes, the name lookup of every node
 * (it must find the node), attributes, shape strings and tensor sizes, so
 * that malformed-but-accepted graphs are exercised too.
 */
#ifndef PB_FUZZ_GRAPH_H
#define PB_FUZZ_GRAPH_H

#include <stdlib.h>

#include "model/graph.h"

static inline double fuzz_walk_graph(const pb_graph *g)
{
	double sum = 0;
	char buf[128];
	for (int i = 0; i < g->n_nodes; i++) {
		const pb_node *n = &g->nodes[i];
		for (int k = 0; k < n->n_succs; k++)
			sum += pb_graph_edge_bytes(g, i, n->succs[k]);
		if (pb_graph_find_node(g, n->name) < 0)
			abort();
		for (int k = 0; k < n->n_attrs; k++)
			sum += (double)pb_node_attr_int(n, n->attrs[k].name, 0);
		for (int j = 0; j < n->n_outputs; j++)
			if (n->outputs[j] >= 0)
				pb_tensor_shape_str(&g->tensors[n->outputs[j]], buf, sizeof buf);
	}
	for (int t = 0; t < g->n_tensors; t++)
		sum += pb_tensor_bytes(&g->tensors[t]);
	return sum;
}

#endif
