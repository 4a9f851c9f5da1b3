/*
 * partition/mesh/mesh_plan.h — a partition plan placed on a routed mesh.
 *
 * On a layout with a routed mesh (manycore.h) every partition plan is a
 * placed plan: the methods (solvers.c) place its groups on the snake
 * (mesh_place.h) and price them with routes (mesh_cost.h) through
 * pb_mesh_plan_apply; detail.mesh then carries the grid, the placement
 * (owner per core, row by row), each group's cores as [row, col] pairs, the
 * loaded links and the reference figures. The 1-D exact optimum is the
 * routing-free lower bound there, not the optimum: the plan's `optimum` and
 * `gap` metrics are dropped (NAN) and `mesh_lower_bound` / `mesh_gap` say
 * what they are. Layouts without a routed mesh are left alone.
 */
#ifndef PB_MESH_PLAN_H
#define PB_MESH_PLAN_H

#include "plan.h"
#include "partition/chain/chain_problem.h"
#include "partition/mesh/mesh_milp.h"
#include "partition/mesh/mesh_search.h"

/* Placement methods of pb_mesh_plan_place. */
#define PB_MESH_PLACE_NAMES "snake|local|exact|milp"
/* Evaluations the partition command gives the local search. */
#define PB_MESH_LOCAL_EVALS 50000L
/* Seconds the partition command gives the placement MILP by default. */
#define PB_MESH_MILP_SECONDS 10.0

/* Reprices plan (made by pb_part_to_plan from state ac) with placement
 * owner (NULL: the snake) and fills detail.mesh. bound: the routing-free
 * lower bound (NAN: unknown). Returns PB_OK or PB_ENOMEM. */
int pb_mesh_plan_apply(pb_part_problem *P, const int *ac, const int *owner, pb_plan *plan,
                       double bound, pb_error *err);

typedef struct pb_mesh_place_report {
	double bound;   /* 1-D exact optimum (max_time mode), NAN otherwise */
	double snake;   /* max(t) of the snake placement of the 1-D optimum */
	double start;   /* objective of the method's plan on the snake */
	double placed;  /* objective after the placement method */
	double seconds; /* wall time of the placement method */
	pb_mesh_search_stats st;
	int exact; /* 1: enumeration or the MILP proved the placement optimal (for the segmentation)
	            */
	int stopped;        /* 1: stop said so (a cancelled run): the best placement until then */
	double place_bound; /* milp: its lower bound of the placement's max(t) (NAN otherwise) */
	pb_mesh_milp_stats milp;
} pb_mesh_place_report;

/* Places the groups of a partition plan by `how` (snake, local, exact, milp)
 * and returns the placed plan in *out (a new plan; the old one is not freed),
 * with detail.mesh.snake and the search figures; max_evals bounds local (and
 * the local search milp starts from), seconds the MILP. stop (NULL: none)
 * is the searches' cancel question (pb_mesh_cost.stop): once it says stop,
 * the placement found so far is kept (the snake when asked before the
 * first move), rep->stopped and detail.mesh.place.stopped say so. */
int pb_mesh_plan_place(pb_part_problem *P, const pb_plan *plan, const char *how, long max_evals,
                       double seconds, int (*stop)(void *ud), void *stop_ud, pb_plan **out,
                       pb_mesh_place_report *rep, pb_error *err);
/* Reads detail.mesh.placement of a plan (n entries); 0 when it has none. */
int pb_mesh_plan_owner(const pb_plan *plan, int n, int *owner);

#endif
