/*
 * partition/mesh/mesh_cost.h — the cost of a placed partition on a routed mesh
 * (docs/mesh.md states the model, its assumptions and its sources).
 *
 * The 1-D state fixes the groups' layer segments; the placement (owner[],
 * mesh_place.h) gives each group its cores. For every pair of groups
 * (p, q), p < q, the traffic T(p, q) is the sum of out_bytes(u) over the
 * layers u of p with a successor in q (each output crosses once per
 * consumer group, as in the 1-D model). It is routed, XY or YX
 * (mesh_route.h), from the core of p to the core of q that are nearest
 * (fewest hops; ties: lowest producer core, then lowest consumer core): the
 * producer's output leaves from its border core facing the consumer, and
 * gathering it there is the group's own exchange. A link's load is the sum
 * of the traffic routed over it. Group q's time:
 *   t(q) = compute + own_bytes / bandwidth
 *          + max(in_bytes / bandwidth, L(q) / link_bw) + H(q) * hop_s
 * where L(q) is the largest load of a link on a route into q (shared links
 * slow every transfer over them) and H(q) the most hops of a route into q.
 * in_bytes / bandwidth is the 1-D model's term (the group's own port), so
 * t(q) >= the 1-D time of the same group: the 1-D exact optimum is a
 * lower bound of every placed plan (routing-free bound). In "weighted" mode
 * the routing term of the objective is the hop-bytes of the placement over
 * link_bw (ms), in place of the 1-D max routing.
 */
#ifndef PB_MESH_COST_H
#define PB_MESH_COST_H

#include "partition/chain/chain_problem.h"
#include "partition/mesh/mesh_route.h"

typedef struct pb_mesh_gtime {
	double compute, routing, time, storage, macs;
	double link_time; /* L(q) / link_bw */
	int hops;         /* H(q) */
	int cores;
} pb_mesh_gtime;

typedef struct pb_mesh_eval {
	/* max_routing: the largest group routing term (own + transfer + hops) */
	double max_time, max_compute, max_routing, max_storage, sum_sq_time;
	double objective, reward;
	double hop_bytes;  /* sum over transfers of bytes x hops */
	double link_share; /* of the bottleneck's time: max(in, L) / bw + hops part */
	int bottleneck, over_memory, violations, hot_link; /* hot_link: -1 when none */
	double hot_load;                                   /* bytes on the most loaded link */
} pb_mesh_eval;

/* Workspace for one 1-D state (segments and their traffic). */
typedef struct pb_mesh_cost {
	pb_part_problem *P;
	pb_mesh_grid grid;
	int n, n_groups;
	int *first, *layers, *order; /* per group; order: the snake (1-D core -> mesh core) */
	double *in_b, *own_b;        /* per group */
	double *T;                   /* n_groups^2 bytes, T[p * G + q] */
	double *load;                /* 4n links, filled by eval */
	pb_mesh_gtime *g;            /* per group, filled by eval */
	int *members, *moff, *route, *gsize;
	/* Asked by the placement searches (mesh_search.h) every
	 * PB_MESH_STOP_EVERY evaluations and by the MILP (mesh_milp.h) at each of
	 * GLPK's callbacks: non-zero stops them with the best placement so far
	 * and sets `stopped` (a cancelled run: the solver's cancel flag). NULL:
	 * never asked. Set by the caller after pb_mesh_cost_init; it must not
	 * yield (GLPK's frames may be on the stack). */
	int (*stop)(void *ud);
	void *stop_ud;
	int stopped;
} pb_mesh_cost;

/* Evaluations between two questions to pb_mesh_cost.stop. */
#define PB_MESH_STOP_EVERY 16

/* Asks C->stop (when set and not asked already); 1 when it said stop. */
int pb_mesh_cost_stop(pb_mesh_cost *C);

/* The layout's grid of P (P->hw.mesh_routed must be set). */
void pb_mesh_cost_grid(const pb_part_problem *P, pb_mesh_grid *g);
int pb_mesh_cost_init(pb_mesh_cost *C, pb_part_problem *P, const int *ac, pb_error *err);
void pb_mesh_cost_free(pb_mesh_cost *C);
/* Prices a placement (owner[] of n cores, groups as in the state). */
void pb_mesh_cost_eval(pb_mesh_cost *C, const int *owner, pb_mesh_eval *ev);
/* Search order: violations, then objective, then sum of squared times. */
int pb_mesh_cost_better(const pb_mesh_eval *a, const pb_mesh_eval *b);

#endif
