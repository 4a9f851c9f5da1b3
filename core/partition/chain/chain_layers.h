/*
 * partition/chain/chain_layers.h — which graph nodes are the layers of the
 * many-core chain partition (chain_problem.h), and where the others go.
 *
 * The layers are the nodes that run at inference, in topological order.
 * Load-time constants — weight copies (an Identity of an initializer, as
 * torchvision exports hold), Constant nodes and nodes whose inputs are all
 * constants (shape arithmetic that shape inference evaluated) — are the
 * folded nodes of transform/folded.h, the same ones fuse and map leave
 * out. They are no layers: each folded node goes with its host, the first
 * layer that consumes it (through other folded nodes if need be), or, when
 * no layer consumes it, the next layer in node order (the last layer when
 * none follows). A plan puts every node in a group: a folded node in its
 * host's.
 *
 * A plan written before this rule has arranged_core over all graph nodes.
 * It is recognised by its layer count (the entries sum to the node count,
 * not the layer count) and converted: each core keeps the layers among the
 * nodes it had (pb_part_layers_convert).
 */
#ifndef PB_PARTITION_CHAIN_LAYERS_H
#define PB_PARTITION_CHAIN_LAYERS_H

#include "model/graph.h"

typedef struct pb_part_layers {
	int n_nodes;     /* graph nodes */
	int m;           /* layers: nodes that are not folded */
	int n_folded;    /* n_nodes - m */
	int *layer_node; /* m entries: the node of each layer, increasing */
	int *node_layer; /* n_nodes entries: a node's layer, its host's for a folded node */
} pb_part_layers;

/* Fills L from g; PB_ENOMEM on failure (L then holds nothing to free).
 * m may be 0 (a graph of constants only). */
int pb_part_layers_new(const pb_graph *g, pb_part_layers *L, pb_error *err);
void pb_part_layers_free(pb_part_layers *L);

/* Converts a state over nodes (node_ac[0..n) sums to L->n_nodes: a plan
 * written before folding) into a state over layers: core i keeps the layers
 * among the nodes of its old range. An entry that keeps no layer joins the
 * next group (its cores go with it); when the last entries keep none, the
 * last core that keeps layers hands them to the last core. */
void pb_part_layers_convert(const pb_part_layers *L, int n, const int *node_ac, int *ac);

#endif
