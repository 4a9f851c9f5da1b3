/*
 * shard/strategy/strategy_problem.h — the strategy-selection problem of one grouping scheme,
 * its MILP (GLPK), an exhaustive reference solver, and the evaluation of a
 * chosen plan.
 *
 * Build: every operator that touches an activation (a tensor that depends on
 * a model input) gets its strategy menu (spec.h) combined over the mesh axes;
 * parameters and constants are not operators of the problem, their specs are
 * whatever the consuming strategy needs (each device loads its shard).
 * Shrinking: an operator that can follow its producer (element-wise,
 * reshape, transpose, softmax, normalisation, pooling, ...) shares its
 * producer's variables: for each strategy of the producer it takes its own
 * cheapest strategy given the producer's output spec (the conversion inside
 * the group is part of the group's cost). Costs per group strategy: compute
 * (FLOPs / sharing devices / rate, x3 in training), gradient all-reduces of
 * parameters replicated along an axis (training), the all-reduce of a partial
 * model output, and the conversions inside the group. Edge costs: the
 * resharding between a producer's output spec and the consumer's input spec
 * (x2 in training: the adjoint collective moves the same bytes backwards).
 *
 * MILP: x[g][s] binary, one-hot per group; for every edge and every pair
 * (a, b) of distinct producer/consumer specs a continuous y >= 0 whose row
 * and column sums equal the x's that pick a and b (with binary x this forces
 * y = product, so the objective is exact); memory per device <= limit.
 * Objective in microseconds.
 */
#ifndef PB_SHARD_PROBLEM_H
#define PB_SHARD_PROBLEM_H

#include <stdio.h>

#include "model/graph.h"
#include "shard/cluster.h"
#include "shard/rules.h"
#include "shard/spec.h"

typedef struct pb_shard_opts {
	int train;                 /* training step instead of inference */
	int opt_level;             /* 0..3 (docs/shard.md) */
	int no_shrink;             /* keep every operator as its own group */
	int tie_blocks;            /* tie groups with identical signatures */
	int layers;                /* repeated layers solved once (layer_classes.h): groups at
	                            * the same offset of identical blocks share their variables,
	                            * edges between the same shared groups one set of y's */
	int pad;                   /* split dims that do not divide (ceil(n/f), padded) */
	int bound;                 /* the dual bound before the MILP (strategy_milp.c): 0 auto
	                            * (its decoded plan used on MILPs of PB_BOUND_MIN_COLS
	                            * columns and more, the bound for cutoffs on all),
	                            * 1 its plan on every MILP, -1 never (GLPK only) */
	double force_fraction;     /* forced parameter sharding above this share of memory (0.7) */
	double time_limit;         /* seconds per MILP (0 = none) */
	pb_shard_rules *rules;     /* rule library used from level 1 (NULL = none) */
	pb_shard_rules *filters;   /* candidate filters applied at every level (Lua) */
	int chunk;                 /* level 3: groups per sub-MILP (0 = 48) */
	double act_copies;         /* training: activation bytes count this many times in the
	                            * memory per device (a pipeline stage under 1F1B keeps that
	                            * many micro-batches in flight); 0 = 1 */
	int optimizer;             /* training: PB_OPTIM_NONE (weights + gradients) or
	                            * PB_OPTIM_ADAM (+ two fp32 moments, + an fp32 master copy
	                            * of weights narrower than 4 bytes) */
	int zero;                  /* ZeRO stage 0..3: optimizer state (1), + gradients (2),
	                            * + weights (3) divided over the replicas of their shard */
	int recompute;             /* PB_RECOMP_NONE / SELECTIVE / FULL (docs/shard.md) */
	const unsigned char *mask; /* only nodes with mask[i] != 0 (a pipeline stage); NULL = all.
	                            * Activations from outside arrive in any layout (p2p is costed
	                            * by the pipeline). */
	int no_share;              /* opts.layers: build every block's own tables (the full build,
	                            * for tests) instead of sharing the representative's
	                            * (strategy_share.c) */
	/* The pipeline search's stage MILPs (strategy_milp.c): cutoff > 0 wants only
	 * plans below cutoff + cutoff_grad x the largest gradient all-reduce time any
	 * plan could have (a solve that proves none is cut); mip_gap > 0 stops GLPK at
	 * that relative gap, branching by pseudocosts; node_limit > 0 stops it once
	 * it has created that many nodes and holds a plan. 0 = off. */
	double cutoff, cutoff_grad, mip_gap;
	long node_limit;
	/* the graph's repeated layers found once by the caller (copied), NULL = found per build */
	const struct pb_layer_classes *classes;
} pb_shard_opts;

enum { PB_OPTIM_NONE = 0, PB_OPTIM_ADAM = 1 };
/* AUTO (search_rows.c): per scheme none, then selective, then full, the
 * first whose plan fits (cheapest compute first). */
enum { PB_RECOMP_NONE = 0, PB_RECOMP_SELECTIVE = 1, PB_RECOMP_FULL = 2, PB_RECOMP_AUTO = 3 };
extern const char *const pb_recompute_names[3]; /* "none", "selective", "full" */

void pb_strategy_problem_opts_default(pb_shard_opts *o);
/* Training bytes per parameter byte held by a device: weights, gradients and
 * the optimizer state of a parameter of dtype size `elem` whose shard has r
 * replicas (ZeRO divides by r from stage 1, 2, 3). */
double pb_strategy_problem_train_param_factor(const pb_shard_opts *o, int elem, double r);
/* FLOPs of one operator: its cost.flops, or an estimate from shapes. */
double pb_strategy_problem_node_flops(const pb_graph *g, const pb_node *n);
/* active[i] = 1 for operators that touch an activation (the problem's operators). */
void pb_strategy_problem_dynamic_nodes(const pb_graph *g, unsigned char *active);

enum { PB_TKIND_META = 0, PB_TKIND_ACT = 1, PB_TKIND_PARAM = 2 };

typedef struct pb_shard_node {
	int active; /* part of the problem */
	int group;
	int n_strat;
	pb_strat *strat;
	double *cost;       /* per strategy (s) */
	double *flops_part; /* compute part of cost */
	double *mem_param;  /* bytes per device held once (weights, gradients, optimizer
	                     * state; the working block of full recomputation) */
	double *mem_act;
	int *pick;                /* per group strategy: this node's strategy */
	unsigned char recomputed; /* activations not kept: recomputed in the backward pass */
	unsigned char kept_full;  /* full recomputation: output kept: 1 a block's boundary
	                           * (per micro-batch), 2 the one block whose activations
	                           * live during recompute (once: counted in mem_param) */
	unsigned dyn_in;
	int same_as; /* node whose tables these are (strat, cost, flops_part, mem_param,
	              * mem_act: a middle block's node shares its representative's), -1 own */
	unsigned char pick_shared; /* pick is the array of its group's same_as member */
} pb_shard_node;

typedef struct pb_shard_group {
	int leader;
	int *members; /* topological order, leader first */
	int n_members;
	int n_strat;
	double *cost;
	double *mem_param, *mem_act;
	int tie;     /* group whose variables this one repeats, -1 */
	int fixed;   /* chosen strategy when already decided (level 3), -1 */
	int same_as; /* group whose cost and memory arrays and member picks these are
	              * (a middle block's group shares its representative's), -1 own */
} pb_shard_group;

typedef struct pb_shard_edge {
	int from, to;     /* groups */
	int prod, cons;   /* nodes */
	int tensor, slot; /* consumer input slot */
	int na, nb;
	int *a_of;    /* per strategy of `from` */
	int *b_of;    /* per strategy of `to` */
	double *cost; /* na x nb, seconds */
	double bytes;
	int twin; /* an earlier edge between the same (tied) groups with the same spec maps:
	           * its y columns carry this edge's cost too (-1: none) */
	unsigned char cost_shared; /* cost is an earlier edge's matrix (same tensor shape and
	                            * specs: strategy_share.c) */
	signed char (*as)[PB_MESH_MAX_AXES]; /* while building: the specs a (na of them) */
	signed char (*bs)[PB_MESH_MAX_AXES]; /* while building: the specs b (nb) */
} pb_shard_edge;

typedef struct pb_shard_problem {
	const pb_graph *g;
	pb_mesh mesh;
	pb_cluster cl; /* copy; name not owned */
	pb_shard_opts opts;
	unsigned char *tkind; /* per tensor */
	pb_shard_node *nodes;
	pb_shard_group *groups;
	int n_groups;
	pb_shard_edge *edges;
	int n_edges, cap_edges;
	double param_bytes; /* total parameter bytes */
	int forced;         /* forced parameter sharding active */
	double comm_mult, compute_mult;
	double act_mult; /* training: copies of the activations in memory (opts.act_copies) */
	int n_active;
	long n_node_strats; /* sum of strategies over operators (before shrinking) */
	int *param_owner;   /* per tensor: the active consumer that holds a parameter
	                     * (its first one: shared parameters count once), or -1 */
	/* Early stops of pb_strategy_milp_solve (set by the caller; 0 = none); r->cut
	 * tells that the solve stopped by one of them (no plan then). */
	double cutoff;    /* seconds: stop once the bound shows no plan costs below it */
	int probe_mem;    /* stop after the root LP when its memory row binds */
	int n_layer_runs; /* opts.layers: runs of identical blocks found */
	int layer_blocks; /* their blocks (sum of counts) */
	int layer_tied;   /* groups tied to a group of a first block */
	int n_shared_nodes, n_shared_groups, n_shared_edges; /* tables built once and shared
	                                                      * (strategy_share.c) */
} pb_shard_problem;

int pb_strategy_problem_build(const pb_graph *g, const pb_cluster *c, const pb_mesh *m,
                              const pb_shard_opts *o, pb_shard_problem **out, pb_error *err);
void pb_strategy_problem_free(pb_shard_problem *p);

/* MILP size: columns, binary columns, rows, non-zeros. */
typedef struct pb_milp_size {
	long cols, bins, rows, nnz;
} pb_milp_size;
void pb_strategy_milp_size(const pb_shard_problem *p, pb_milp_size *sz);

/* Progress callback of the MILP solve, called from GLPK's branch and bound:
 * for every better integer solution (GLP_IBINGO: objective_us finite) and
 * for every node selected (GLP_ISELECT: objective_us NAN), with the best
 * bound of the open nodes (NAN when none) and the seconds since the solve
 * started. A non-zero return stops the solve (pb_strategy_milp_solve returns
 * PB_ECANCEL after GLPK has unwound normally). */
typedef int (*pb_shard_incumbent_fn)(void *ud, double objective_us, double bound_us,
                                     double seconds);

typedef struct pb_shard_result {
	int *choice;          /* per group */
	double objective;     /* seconds (step time) */
	double compute, comm; /* parts of objective */
	double memory;        /* bytes per device */
	int feasible;         /* memory fits */
	int optimal;          /* proven optimal by the solver */
	double solve_seconds;
	long n_incumbents;
	int cut;      /* stopped by p->cutoff or p->probe_mem: no plan (choice unset) */
	int mem_free; /* the memory limit does not bind: the root LP relaxation leaves
	               * the memory row slack and the plan attains that LP bound, so
	               * it is also optimal without the limit (one full MILP only) */
	int unc_opt;  /* the plan is optimal without the memory limit: mem_free, or
	               * no plan fits and the plan ignoring memory is proven optimal */
} pb_shard_result;

/* Solves the problem (all groups, or level-3 chunks joined greedily); the
 * dual bound first (opts.bound, pb_strategy_bound_lower).
 * lp_path: when non-NULL, the full MILP is written there (glp_write_lp). */
int pb_strategy_milp_solve(pb_shard_problem *p, const char *lp_path, pb_shard_incumbent_fn cb,
                           void *ud, pb_shard_result *r, pb_error *err);
/* Solves this process stopped at opts.node_limit so far (a count to compare). */
long pb_strategy_milp_node_limited(void);
/* Exhaustive search over the groups' strategies (tests); fails if the space
 * exceeds max_combos. */
int pb_strategy_milp_brute_force(pb_shard_problem *p, long max_combos, pb_shard_result *r,
                                 pb_error *err);
void pb_strategy_problem_result_free(pb_shard_result *r);

/* Least memory per device of any plan, as pb_strategy_problem_evaluate counts it: exact
 * in training (the memory is a sum over groups; tied groups take one
 * strategy), a lower bound in inference. */
double pb_strategy_problem_min_memory(const pb_shard_problem *p);
/* 1 when b is a with costs no lower: the same groups, strategies, picks,
 * ties and edges (spec maps and costs), and every group strategy costs at
 * least as much in b as in a (a recomputation choice only adds compute).
 * Then no plan of b is cheaper than a's optimum without the memory limit. */
int pb_strategy_problem_costlier(const pb_shard_problem *a, const pb_shard_problem *b);

/* A lower bound (seconds) on the step time of every plan of p, memory
 * ignored (strategy_bound.c: dual block coordinate ascent on the LP
 * relaxation of the problem without ties); it stops once the bound passes
 * target, improves by less than a relative 1e-9 per sweep, after
 * PB_BOUND_MAX_SWEEPS sweeps or before a sweep would take its work (cost
 * cells and strategies visited) past max_work. cb (may be NULL) gets the
 * bound every 8 sweeps (objective NAN); a non-zero return stops (*stop set).
 * choice (may be NULL; not filled when the bound passes target or on a stop):
 * a plan decoded from the dual, one strategy per group, ties kept; when its
 * cost attains the bound it is optimal without the memory limit.
 * slack (may be NULL; per group an array of its n_strat): every plan costs
 * at least the bound plus the sum of its strategies' slacks.
 * lambda > 0 (training): memory priced at lambda s/byte (Lagrangian); the
 * bound (minus lambda x the device memory) then holds for the plans that
 * fit, and so do the slacks. -INFINITY when out of memory. */
#define PB_BOUND_MAX_SWEEPS 400
double pb_strategy_bound_lower(const pb_shard_problem *p, double lambda, double target,
                               double max_work, pb_shard_incumbent_fn cb, void *ud, int *choice,
                               double *const *slack, int *stop);
/* The problem restricted to the strategies with keep[G][s] (at least one
 * per group; a tied group keeps its representative's): own groups and
 * edges, the rest shared with p (strategy_restrict.c). (*map)[G][k] is the
 * original index of strategy k of group G. Free with
 * pb_strategy_restrict_free. */
int pb_strategy_restrict(const pb_shard_problem *p, const unsigned char *const *keep,
                         pb_shard_problem **out, int ***map, pb_error *err);
void pb_strategy_restrict_free(pb_shard_problem *q, int **map);

/* Cost, memory and feasibility of a choice per group (fills r except choice). */
void pb_strategy_problem_evaluate(const pb_shard_problem *p, const int *choice, pb_shard_result *r);
/* Strategy of node nid under a group choice, or -1 for inactive nodes. */
int pb_strategy_problem_node_strategy(const pb_shard_problem *p, const int *choice, int nid);

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
/* The cost matrix of tensor t between the specs as (na) and bs (nb), in c. */
void pb_strategy_share_edge_matrix(const pb_shard_problem *p, int t,
                                   signed char (*as)[PB_MESH_MAX_AXES], int na,
                                   signed char (*bs)[PB_MESH_MAX_AXES], int nb, double *c);

/* Training: makes a plan (choice per group, ties kept) fit the device if it
 * does not, then lowers its step time by moving one class of tied groups at
 * a time while it fits (strategy_polish.c). Returns the moves made, 0 when
 * the plan is left as it was (inference; no move; or the result would not
 * fit, or not cost less, by pb_strategy_problem_evaluate): a plan returned changed
 * fits and costs less. */
int pb_strategy_polish(const pb_shard_problem *p, int *choice);

/* Exact dominance (strategy_prune.c): two strategies of a group that show
 * the same specs on every edge of the group are interchangeable for the rest
 * of the problem, so only those not beaten on cost and memory at once are
 * kept; specs no strategy uses are dropped from the edges' spec lists.
 * A group that shares its representative's tables keeps sharing them when
 * its pruning is the same, else it gets its own copies first. */
int pb_strategy_prune_dominated(pb_shard_problem *p, pb_error *err);

#endif
