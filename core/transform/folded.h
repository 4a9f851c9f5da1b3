/*
 * folded.h — nodes that are constant at load time and so never launch a
 * kernel: every output is an initializer-derived constant (weights behind
 * Identity, Constant, and — when shape inference evaluated them — the shape
 * arithmetic of exported graphs: Shape/Gather/Unsqueeze/Concat chains).
 *
 * A node is folded when all its outputs carry a known value (pb_tensor.value)
 * or when all of its inputs are initializers or outputs of folded nodes.
 * Fusion and mapping leave folded nodes out of branches, aggregates and
 * launch counts, as a compiler that constant-folds first would.
 */
#ifndef PB_TRANSFORM_FOLDED_H
#define PB_TRANSFORM_FOLDED_H

#include "model/graph.h"

/* Fills mask[0..n_nodes) with 1 for folded nodes; returns their count. */
int pb_transform_folded(const pb_graph *g, unsigned char *mask);

#endif
