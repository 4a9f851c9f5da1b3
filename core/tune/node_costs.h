/*
 * tune/node_costs.h — measured per-node kernel times for the partitioners
 * (`--costs tune.jsonl` replaces MACs / rate).
 *
 * For every Conv / Gemm / MatMul node whose shape is tunable, the node's time
 * is batch x FLOPs / (best valid GFLOP/s measured in the log for the same
 * shape key), i.e. the best kernel the tuner found on this machine. Other
 * nodes get NAN: the caller keeps its own model (MACs / rate) for them.
 *
 * The file may also be an ONNX Runtime profile (tune/ort_profile.h, sniffed
 * by its first byte): then every node the profile timed gets its measured
 * mean time per run.
 */
#ifndef PB_TUNE_NODE_COSTS_H
#define PB_TUNE_NODE_COSTS_H

#include "util/error.h"
#include "model/graph.h"

/* times[g->n_nodes] in seconds (NAN where the log has nothing for the node);
 * *n_found (may be NULL) = nodes that got a measured time. A missing or
 * malformed log is an error naming the file. */
int pb_tune_node_times(const pb_graph *g, const char *log_path, double *times, int *n_found,
                       pb_error *err);

#endif
