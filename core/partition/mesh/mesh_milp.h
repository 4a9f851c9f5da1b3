/*
 * partition/mesh/mesh_milp.h — the placement MILP: the exact placement of a fixed
 * 1-D segmentation (the groups' layers) on a routed mesh, solved by GLPK.
 *
 * Variables: x[c][q] = 1 when core c belongs to group q; y[q][s] = 1 when
 * group q has s cores (its compute time is the 1-D model's for s cores);
 * connectivity by a single-commodity flow inside each group from one root
 * (the group's lowest core) that sends one unit to each other core over
 * links whose both ends are in the group. The route of each transfer
 * (p, q), T(p, q) > 0, is the one mesh_cost.c takes: the first of the core
 * pairs (s, d), sorted by (hops, s, d), with s in p and d in q. v[k] = x[s_k][p]
 * AND x[d_k][q]; a[k] = OR of v[0..k] (monotone, a[K-1] = 1), so
 * a[k] - a[k-1] is 1 exactly for the chosen pair; link loads, the hops
 * H(q) and, by big-M rows on the links of the chosen route, the most loaded
 * link L(q) follow linearly. z >= compute(q, s) + own(q) + max(in(q),
 * L(q)) + H(q) hop for every q; minimise z. For integer x every other
 * variable is forced to the cost model's value, so the optimum of the MILP
 * is the optimum of mesh_cost_eval's max(t) over connected placements.
 * The start placement's value is a cutoff row (z <= start): an infeasible
 * model proves the start optimal. "max_time" mode only (the weighted
 * objective is not modelled); pins are fixed cores (the start must keep
 * them). O(G^2 n^2) rows: small meshes; a time limit and the best bound
 * of the open nodes beyond.
 */
#ifndef PB_MESH_MILP_H
#define PB_MESH_MILP_H

#include "partition/mesh/mesh_cost.h"

typedef struct pb_mesh_milp_stats {
	int proved;     /* 1: owner is an optimal placement of the segmentation */
	int improved;   /* 1: the MILP found a placement better than the start */
	double bound;   /* lower bound of max(t) over placements (s); = max(t) when proved */
	double seconds; /* wall time of the solve */
	long nodes;     /* branch-and-bound nodes */
	int rows, cols; /* size of the model */
	long nonzeros;
} pb_mesh_milp_stats;

/* The largest model built (matrix entries): a 6x6 mesh with a few groups. */
#define PB_MESH_MILP_MAX_NZ 3000000L

/* Improves owner (n cores, a valid start, e.g. the local search's) to the
 * MILP's best placement within time_limit seconds; ev receives its
 * evaluation. PB_EUSAGE: weighted mode, a start that breaks a pin, a model
 * above PB_MESH_MILP_MAX_NZ. */
int pb_mesh_milp_place(pb_mesh_cost *C, int *owner, double time_limit, pb_mesh_eval *ev,
                       pb_mesh_milp_stats *st, pb_error *err);

#endif
