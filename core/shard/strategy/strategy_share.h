/*
 * shard/strategy/strategy_share.h — cost tables shared between repeated
 * layers while a strategy problem is built (strategy_share.c).
 */
#ifndef PB_SHARD_STRATEGY_SHARE_H
#define PB_SHARD_STRATEGY_SHARE_H

#include "shard/strategy/strategy_types.h"

/*
 * Building steps in files of their own (used by pb_strategy_problem_build).
 * Sharing (opts.layers, repeated layers; strategy_share.c): a node of a
 * middle block whose representative (layer_classes.h) is built the same way
 * (operator, shapes, tensor kinds, parameter ownership, recomputation,
 * output flags) takes its representative's strategy and cost tables instead
 * of computing them; a group all of whose members do so, in the same order
 * and wiring, takes its representative group's costs and picks; an edge
 * whose tensor shape and spec lists equal an earlier edge's takes its cost
 * matrix. Every shared table is the one the full build would compute (the
 * tables are pure functions of what is compared), so the problem is
 * identical; only its memory and build time shrink.
 */
/* 1 when node v would get exactly the tables of node r (built, not shared). */
int pb_strategy_share_node_alike(const pb_shard_problem *p, int v, int r);

/* Group H whose costs and picks group G would repeat exactly (its leader's
 * representative's group, itself own), or -1. rep: per node (layer_classes.h). */
int pb_strategy_share_group_twin(const pb_shard_problem *p, int G, const int *rep);

/* Fills every edge's cost matrix from its specs (as, bs), then frees the
 * spec lists; share: edges of equal tensor shape and specs share one matrix. */
int pb_strategy_share_edge_costs(pb_shard_problem *p, int share, pb_error *err);

/* The cost matrix of tensor t between the specs as (na) and bs (nb), in c,
 * each conversion run mult times (pb_strategy_problem_comm_mult). */
void pb_strategy_share_edge_matrix(const pb_shard_problem *p, int t, double mult,
                                   signed char (*as)[PB_MESH_MAX_AXES], int na,
                                   signed char (*bs)[PB_MESH_MAX_AXES], int nb, double *c);

#endif
