/*
 * shard/strategy/strategy_types.h — the types the files of strategy/ share:
 * the options of a strategy search, the problem of one grouping scheme
 * (operators, groups, edges and their cost tables; strategy_problem.h says
 * how it is built), the MILP size and the result of a solve. Bound, MILP,
 * polish, prune, restrict and share include this header, not the problem
 * builder that calls some of them.
 */
#ifndef PB_SHARD_STRATEGY_TYPES_H
#define PB_SHARD_STRATEGY_TYPES_H

#include <stdio.h>

#include "model/graph.h"
#include "shard/tensor_kind.h"
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
	int seq_parallel;          /* training: sequence parallelism (act_saved.h
	                            * PB_SEQPAR_*: on and auto solve with it) */
	int dist_opt;              /* the distributed optimizer as asked (dist_opt.h
	                            * PB_DISTOPT_*: on and auto solve with zero >= 1);
	                            * reports only */
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
	unsigned saved_out;   /* training: bit j, output j is stored for the backward pass
	                       * (act_saved.h) */
	unsigned char seqpar; /* sequence parallelism holds its replicated outputs split */
	int same_as;          /* node whose tables these are (strat, cost, flops_part, mem_param,
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
	double mult; /* passes the conversion runs: 1 inference, 2 training (forward and
	              * backward), 3 when the consumer is recomputed (its forward again:
	              * pb_strategy_problem_comm_mult) */
	int twin;    /* an earlier edge between the same (tied) groups with the same spec maps:
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

/* MILP size: columns, binary columns, rows, non-zeros. */
typedef struct pb_milp_size {
	long cols, bins, rows, nnz;
} pb_milp_size;

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

#endif
