/*
 * reach.h — transitive closure of a graph as bit sets, for O(1) "is there a
 * path from a to b" queries.
 *
 * Built once per graph in reverse topological order (node ids are already a
 * topological order): reach[v] = OR over succs s of (reach[s] | {s}). Memory
 * is n*n/8 bytes (5.5 MB for the 6623 nodes of swin_t), time O(E * n / 64).
 * Used by the parallel-branch search to prove that nodes of different
 * sub-branches are independent, and by tests.
 */
#ifndef PB_TRANSFORM_REACH_H
#define PB_TRANSFORM_REACH_H

#include <stdint.h>

#include "graph.h"

typedef struct pb_reach {
	int n;
	int words; /* 64-bit words per row */
	uint64_t *bits;
} pb_reach;

/* Returns NULL when out of memory. */
pb_reach *pb_reach_new(const pb_graph *g);
void pb_reach_free(pb_reach *r);
/* 1 if there is a path of length >= 1 from a to b. */
int pb_reach_path(const pb_reach *r, int a, int b);
/* 1 if neither node reaches the other (and a != b). */
int pb_reach_independent(const pb_reach *r, int a, int b);

#endif
