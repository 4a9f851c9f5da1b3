/*
 * reach.h — "is there a path from a to b" queries on a graph.
 *
 * Up to PB_REACH_MAX_BITSET nodes the transitive closure is built once as bit
 * sets, in reverse topological order (node ids are a topological order):
 * reach[v] = OR over succs s of (reach[s] | {s}); memory n*n/8 bytes (5.5 MB
 * for the 6623 nodes of swin_t), time O(E * n / 64), queries O(1).
 * Larger graphs would need gigabytes, so they answer each query by a search
 * instead, pruned by the topological order (a path a -> b only visits ids in
 * (a, b]). Used by the parallel-branch search to prove that nodes of
 * different sub-branches are independent, and by tests.
 */
#ifndef PB_TRANSFORM_REACH_H
#define PB_TRANSFORM_REACH_H

#include <stdint.h>

#include "model/graph.h"

#define PB_REACH_MAX_BITSET 32768

typedef struct pb_reach {
	const pb_graph *g;
	int n;
	int words;          /* 64-bit words per row (bit-set mode) */
	uint64_t *bits;     /* NULL in search mode */
	int *stamp, *queue; /* search mode scratch */
	int mark;
} pb_reach;

/* Returns NULL when out of memory. max_bitset: node count up to which the
 * closure is precomputed (PB_REACH_MAX_BITSET; 0 forces search mode). */
pb_reach *pb_reach_new(const pb_graph *g, int max_bitset);
void pb_reach_free(pb_reach *r);
/* 1 if there is a path of length >= 1 from a to b. */
int pb_reach_path(pb_reach *r, int a, int b);
/* 1 if neither node reaches the other (and a != b). */
int pb_reach_independent(pb_reach *r, int a, int b);

#endif
