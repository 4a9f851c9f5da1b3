/*
 * quotient.h — acyclicity of a graph whose nodes are contracted into classes
 * (fused nodes, backend aggregates), checked with igraph.
 *
 * cls[v] is the class of node v (any ints in 0..n_nodes-1). The contracted
 * graph has an edge cls[u] -> cls[v] for every edge u -> v. An edge inside a
 * class is a self-loop (a cycle) unless `internal_ok`: fused nodes must not
 * contain edges, backend aggregates do. igraph runs on the main thread only.
 */
#ifndef PB_TRANSFORM_QUOTIENT_H
#define PB_TRANSFORM_QUOTIENT_H

#include "model/graph.h"

/* Sets *is_dag; returns PB_OK or an error (out of memory). */
int pb_quotient_is_dag(const pb_graph *g, const int *cls, int internal_ok, int *is_dag,
                       pb_error *err);

#endif
