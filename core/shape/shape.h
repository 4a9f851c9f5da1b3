/*
 * shape.h — shape inference and evaluation of shape subgraphs.
 *
 * pb_shape_infer() gives every tensor of a graph under construction its dtype,
 * rank and dims: value_info from the file first, then per-operator rules in
 * topological order. Small integer tensors (Shape → Gather → Concat → Reshape,
 * Range, Slice of shapes, ...) are evaluated by constant propagation so that
 * downstream shapes become concrete.
 */
#ifndef PB_SHAPE_H
#define PB_SHAPE_H

#include "model/graph.h"

/* Infers shapes in place. Unknown shapes are not an error: they are counted in
 * g->n_unknown_shapes and node->shape_known stays 0. Returns an error only for
 * contradictions that make the model unusable (message names node and file). */
int pb_shape_infer(pb_graph *g, pb_error *err);

/* 1 if shape inference has a rule for this operator (default domain). */
int pb_shape_op_supported(const char *op);

/* The model inputs whose dims are not all concrete, for the "use --input"
 * hint, as space-separated --input templates ("x=batch,3,h,w"; a dim without
 * a name is "?", an input without a shape "x=D1,D2,..."). Writes at most
 * len bytes; returns the number of such inputs. */
int pb_shape_unresolved_inputs(const pb_graph *g, char *buf, size_t len);

/* Einsum helper shared with cost.c: extent of every subscript label of node
 * n (ext[label]; -1 unknown, -2 label unused) and the output labels.
 * Returns 0 when the equation or the operand ranks are unusable. */
int pb_einsum_extents(const pb_graph *g, const pb_node *n, int64_t ext[128], char *out_labels,
                      int *out_rank);

#endif
