/*
 * shard/layer_classes.h — repeated layers of a graph (layer_classes.c): runs
 * of identical consecutive blocks (the decoder layers of a GPT, the encoder
 * layers of BERT) found in the node order, so that the strategy search
 * solves one representative block per class with the glue between blocks
 * (Alpa's layer clustering is the anchor: Zheng et al. 2022, section 5).
 *
 * Identical means: the same operator sequence, attributes, input and output
 * shapes and types, parameter shapes, and the same wiring: inside a block
 * every input comes from the same offset of the same block, from the same
 * offset of the previous block (the glue; the first block takes it from
 * before the run), or from the same node or initializer outside the run.
 */
#ifndef PB_SHARD_LAYER_CLASSES_H
#define PB_SHARD_LAYER_CLASSES_H

#include "model/graph.h"

typedef struct pb_layer_run {
	int start;  /* first node of the first block */
	int period; /* nodes per block (constant nodes not counted) */
	int count;  /* blocks (>= 2) */
} pb_layer_run;

typedef struct pb_layer_classes {
	pb_layer_run *runs; /* disjoint, in node order */
	int n_runs;
	int *rep;   /* per node of a middle block (neither the first nor the last of its
	             * run): the node at the same offset of the run's second block; else
	             * the node itself. The first and the last block meet the nodes
	             * before and after the run and are classes of their own. */
	int *block; /* per node: its block's index in its run, -1 outside runs */
	unsigned char *block_end; /* per node: 1 for the last (non-constant) node of a block */
	int n_nodes;
	long periods, tried; /* the search's work: periods per search (half the non-constant
	                      * nodes), periods scanned over all its searches */
} pb_layer_classes;

/* Finds the runs (largest coverage first, then the rest of the graph again,
 * at most 16 runs). Returns PB_OK or PB_ENOMEM; no run is not an error. */
int pb_layer_classes_find(const pb_graph *g, pb_layer_classes *lc, pb_error *err);
void pb_layer_classes_free(pb_layer_classes *lc);

#endif
