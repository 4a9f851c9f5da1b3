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
#include "partition/mesh/rl_place.h"

/* Placement methods of pb_mesh_plan_place. */
#define PB_MESH_PLACE_NAMES "snake|local|exact|milp|rl"
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
	pb_rl_place_stats rl; /* rl: the agent's episodes */
	char agent[256];      /* rl: the checkpoint it started from ("" for a fresh network) */
} pb_mesh_place_report;

/* How pb_mesh_plan_place places (zero fields: defaults). */
typedef struct pb_mesh_place_opts {
	const char *how;    /* PB_MESH_PLACE_NAMES (NULL: local) */
	long max_evals;     /* local (and the local search milp starts from) */
	double seconds;     /* milp: time limit */
	const char *agent;  /* rl: placement checkpoint; NULL: the layout's shipped
	                       agents/STEM.place.ckpt when there is one; "none": fresh */
	long rl_episodes;   /* rl: episodes (0: PB_MESH_RL_EPISODES) */
	double rl_seconds;  /* rl: CPU-time budget (0: none) */
	unsigned long seed; /* rl (0: 1) */
	/* The searches' cancel question (pb_mesh_cost.stop; NULL: none): once it
	 * says stop, the placement found so far is kept (the snake when asked
	 * before the first move); rep->stopped and detail.mesh.place.stopped. */
	int (*stop)(void *ud);
	void *stop_ud;
} pb_mesh_place_opts;

/* Episodes of the agent's placement actions in `partition` (rl_place.h). */
#define PB_MESH_RL_EPISODES 300L

/* Places the groups of a partition plan by o->how and returns the placed
 * plan in *out (a new plan; the old one is not freed), with
 * detail.mesh.snake and the search figures. */
int pb_mesh_plan_place(pb_part_problem *P, const pb_plan *plan, const pb_mesh_place_opts *o,
                       pb_plan **out, pb_mesh_place_report *rep, pb_error *err);
/* Reads detail.mesh.placement of a plan (n entries); 0 when it has none. */
int pb_mesh_plan_owner(const pb_plan *plan, int n, int *owner);

#endif
