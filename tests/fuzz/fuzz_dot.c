/*
 * fuzz_dot.c — libFuzzer target for the Graphviz DOT loader.
 *
 * Feeds arbitrary bytes to pb_dot_load_buffer; on success, walks the graph
 * through the queries the rest of partbench uses (edge bytes, lookups, shape
 * strings) so that malformed-but-accepted graphs are exercised too.
 * Seeds: tests/fuzz/seeds/fuzz_dot/.
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
	if (pb_dot_load_buffer((const char *)data, size, "fuzz.dot", &opts, &g, &err) != PB_OK)
		return 0;
	double sum = 0;
	char buf[128];
	for (int i = 0; i < g->n_nodes; i++) {
		const pb_node *n = &g->nodes[i];
		for (int k = 0; k < n->n_succs; k++)
			sum += pb_graph_edge_bytes(g, i, n->succs[k]);
		if (pb_graph_find_node(g, n->name) < 0)
			__builtin_trap();
		for (int j = 0; j < n->n_outputs; j++)
			if (n->outputs[j] >= 0)
				pb_tensor_shape_str(&g->tensors[n->outputs[j]], buf, sizeof buf);
	}
	(void)sum;
	pb_graph_free(g);
	return 0;
}
