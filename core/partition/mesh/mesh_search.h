/*
 * partition/mesh/mesh_search.h — placement searches for a fixed 1-D segmentation
 * (the groups' layers stay; their cores and so their sizes may change).
 *
 * Local search, from any valid placement (the snake): moves a border core
 * of a group to an adjacent group when the donor keeps at least one core and
 * stays connected (the receiver stays connected: the core touches it),
 * exchanges two border cores of neighbouring groups (sizes kept, both
 * regions connected), and swaps the regions of two groups; it takes the first move that improves
 * (violations, objective, sum of squared group times) (mesh_cost_better)
 * and stops at a local optimum or after max_evals evaluations.
 * Enumeration tries every assignment of the cores to the groups (G^n of
 * them) and keeps the best valid one: the exact placement optimum of the
 * segmentation, for tiny meshes only.
 */
#ifndef PB_MESH_SEARCH_H
#define PB_MESH_SEARCH_H

#include "partition/mesh/mesh_cost.h"

typedef struct pb_mesh_search_stats {
	long evals, moves, exchanges, swaps; /* evaluations; kept moves, exchanges, swaps */
	int local_optimum;                   /* 1: no move improves (else the budget ended) */
} pb_mesh_search_stats;

/* Improves owner (n cores) in place; ev receives its evaluation. */
int pb_mesh_search_local(pb_mesh_cost *C, int *owner, long max_evals, pb_mesh_eval *ev,
                         pb_mesh_search_stats *st, pb_error *err);
/* The most assignments pb_mesh_search_enumerate accepts. */
#define PB_MESH_ENUM_MAX 20000000.0
/* Exact placement by enumeration when n_groups^n <= PB_MESH_ENUM_MAX;
 * owner and ev receive the best valid placement. PB_EUSAGE beyond. */
int pb_mesh_search_enumerate(pb_mesh_cost *C, int *owner, pb_mesh_eval *ev, long *evals,
                             pb_error *err);

#endif
