/*
 * fuzz_json.c — libFuzzer target for partbench's JSON graph loader.
 *
 * Feeds arbitrary bytes to pb_json_graph_load_buffer; accepted graphs are
 * walked through the graph queries (edges, lookups, attributes, shapes).
 * Seeds: tests/fuzz/seeds/fuzz_json/ (files written by `partbench convert`).
 */
#include <stddef.h>
#include <stdint.h>

#include "model/graph.h"
#include "load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts opts = {0};
	if (pb_json_graph_load_buffer((const char *)data, size, "fuzz.json", &opts, &g, &err) !=
	    PB_OK)
		return 0;
	double sum = 0;
	char buf[128];
	for (int i = 0; i < g->n_nodes; i++) {
		const pb_node *n = &g->nodes[i];
		for (int k = 0; k < n->n_succs; k++)
			sum += pb_graph_edge_bytes(g, i, n->succs[k]);
		for (int k = 0; k < n->n_attrs; k++)
			sum += (double)pb_node_attr_int(n, n->attrs[k].name, 0);
		for (int j = 0; j < n->n_outputs; j++)
			if (n->outputs[j] >= 0)
				pb_tensor_shape_str(&g->tensors[n->outputs[j]], buf, sizeof buf);
	}
	for (int t = 0; t < g->n_tensors; t++)
		sum += pb_tensor_bytes(&g->tensors[t]);
	(void)sum;
	pb_graph_free(g);
	return 0;
}
