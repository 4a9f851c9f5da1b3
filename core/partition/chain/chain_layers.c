/*
 * partition/chain/chain_layers.c — the layers of the chain partition and the hosts
 * of folded nodes (chain_layers.h). Two passes: forward numbers the layers
 * (node order is topological, so layer order is too); backward gives each
 * folded node the smallest layer among its consumers, whose hosts are
 * decided first because successors have larger ids.
 */
#include "partition/chain/chain_layers.h"

#include <stdlib.h>

#include "transform/folded.h"

int pb_part_layers_new(const pb_graph *g, pb_part_layers *L, pb_error *err)
{
	int n = g->n_nodes;
	unsigned char *folded = calloc((size_t)n + 1, 1);
	L->n_nodes = n;
	L->layer_node = malloc(((size_t)n + 1) * sizeof *L->layer_node);
	L->node_layer = malloc(((size_t)n + 1) * sizeof *L->node_layer);
	if (!folded || !L->layer_node || !L->node_layer) {
		free(folded);
		pb_part_layers_free(L);
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	}
	L->n_folded = pb_transform_folded(g, folded);
	L->m = 0;
	for (int v = 0; v < n; v++) {
		L->node_layer[v] = -1;
		if (!folded[v]) {
			L->node_layer[v] = L->m;
			L->layer_node[L->m++] = v;
		}
	}
	/* hosts: the first consuming layer; else the next layer in node order */
	int next = L->m > 0 ? L->m - 1 : -1;
	for (int v = n - 1; v >= 0; v--) {
		if (!folded[v]) {
			next = L->node_layer[v];
			continue;
		}
		const pb_node *nd = &g->nodes[v];
		int host = -1;
		for (int k = 0; k < nd->n_succs; k++) {
			int h = L->node_layer[nd->succs[k]];
			if (h >= 0 && (host < 0 || h < host))
				host = h;
		}
		L->node_layer[v] = host >= 0 ? host : next;
	}
	free(folded);
	return PB_OK;
}

void pb_part_layers_free(pb_part_layers *L)
{
	free(L->layer_node);
	free(L->node_layer);
	L->layer_node = L->node_layer = NULL;
}

void pb_part_layers_convert(const pb_part_layers *L, int n, const int *node_ac, int *ac)
{
	int v = 0, last = -1;
	for (int i = 0; i < n; i++) {
		int end = v + node_ac[i], keep = 0;
		for (; v < end && v < L->n_nodes; v++)
			keep += L->layer_node[L->node_layer[v]] == v;
		ac[i] = keep;
		if (keep > 0)
			last = i;
	}
	if (last >= 0 && last < n - 1) {
		ac[n - 1] = ac[last];
		ac[last] = 0;
	}
}
