/*
 * part_costs.h — measured kernel times for the chain partition: the times a
 * tuning log (`partbench tune --log FILE`) holds for a graph's nodes, which
 * the problem (chain_problem.h: pb_part_problem_new_timed) uses in place of
 * MACs / rate. Used by partition, edit and train.
 */
#ifndef PB_PARTITION_PART_COSTS_H
#define PB_PARTITION_PART_COSTS_H

#include "model/graph.h"
#include "util/error.h"

/* Loads measured kernel times for the graph's nodes from a tuning log;
 * *times has n_nodes entries (NAN where none was measured; free()); an error
 * naming the log when it measured none of them. */
int pb_part_load_costs(const pb_graph *g, const char *log_path, double **times, int *n_found,
                       pb_error *err);

#endif
