/*
 * cost.h — per-node cost figures derived from shapes.
 *
 * Conventions (docs/formats.md repeats them):
 *  - MACs: Conv/ConvTranspose = out_numel * (C_in/group) * prod(kernel);
 *    Gemm/MatMul = batch * M * N * K; Einsum = product of all index extents;
 *    RNN/GRU/LSTM = steps * directions * batch * gates * hidden * (in + hidden).
 *  - FLOPs: 2 * MACs for MAC operators (+ bias adds); element-wise ops count one
 *    FLOP per output element (see cost.c for the per-op table).
 *  - params: elements of the node's weight inputs (initializers, float
 *    Constant tensors of more than one element).
 *  - out_bytes: dtype size x numel of all outputs.
 */
#ifndef PB_COST_H
#define PB_COST_H

#include "model/graph.h"

/* Fills g->nodes[i].cost for every node and g->total. */
void pb_cost_compute(pb_graph *g);
/* Recomputes g->total from the per-node costs. */
void pb_cost_totals(pb_graph *g);

#endif
