/*
 * partition/mesh/mesh_edit.h — hand edits of a placed partition plan (a plan on
 * a routed mesh, mesh_plan.h): a plan in, a new plan or a refusal out, both
 * priced by the routed model.
 *
 *   move         the core at (row, col) leaves its group for a group that
 *                touches it (4-neighbour); the donor keeps at least one core
 *                and stays one connected region (the receiver stays
 *                connected: the core touches it); a core holding a Lua pin
 *                of a layer of the donor is refused naming the rule. The
 *                groups' layers stay; their core counts follow the regions.
 *   place        a 1-D edit's new state (part_edit.h) placed: the plan's
 *                placement is kept when every group keeps its core count
 *                (boundary moves layers only), else the new state goes on
 *                the snake; then the routed model prices it (the 1-D model
 *                only bounds a placed plan).
 */
#ifndef PB_MESH_EDIT_H
#define PB_MESH_EDIT_H

#include <stddef.h>

#include "model/graph.h"
#include "plan.h"
#include "partition/chain/chain_problem.h"

/* *out: the new plan (method "manual"); msg: what changed, from the two
 * plans ("core (1,2): group 0 (5 cores) -> group 1 (4 cores); placed max(t)
 * 1.2 ms -> 1.1 ms"). PB_EUSAGE with the reason when refused. */
int pb_mesh_edit_move(pb_part_problem *P, const pb_graph *g, const pb_plan *plan, int row, int col,
                      int to, pb_plan **out, char *msg, size_t len, pb_error *err);
/* The placed plan of state `after` (a 1-D edit of `before`); *out is new. */
int pb_mesh_edit_place(pb_part_problem *P, const pb_plan *before, const int *after,
                       const char *method, double optimum, pb_plan **out, pb_error *err);

#endif
