/* cost.c — placeholder until cost inference lands (issue 2). */
#include "cost.h"

#include <string.h>

void pb_cost_compute(pb_graph *g)
{
	for (int i = 0; i < g->n_nodes; i++) {
		pb_node *n = &g->nodes[i];
		memset(&n->cost, 0, sizeof n->cost);
		for (int j = 0; j < n->n_outputs; j++)
			if (n->outputs[j] >= 0)
				n->cost.out_bytes += pb_tensor_bytes(&g->tensors[n->outputs[j]]);
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
