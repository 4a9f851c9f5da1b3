/*
 * partition/chain/chain_problem.h — the many-core chain partition problem: costs and evaluation.
 *
 * The graph's nodes in topological order are the "layers" 0..m-1 (the linear
 * list of the method). A partition cuts them into contiguous segments, each
 * processed by a group of adjacent cores. The state of the method,
 * arranged_core[0..n-1], gives per core the number of layers it processes; a
 * run of zeros joins the group of the next non-zero core. Valid states: all
 * entries >= 0, sum = m, and the last core non-zero (when m > 0).
 *
 * Time model of a group of c cores processing layers [a, b):
 *   compute  = MACs(a, b) / (c * mac_rate)
 *   routing  = (in_bytes(a, b) + own_bytes(a, b)) / bandwidth, where
 *              in_bytes sums out_bytes(u) over nodes u < a with at least one
 *              successor in [a, b) (the producer's output enters once, skip
 *              connections included) and own_bytes sums out_bytes(u) over
 *              nodes u in [a, b) with a successor in [a, b): a group's cores
 *              share every layer, so each layer's output crosses the on-chip
 *              network to the cores that consume it. (Without own_bytes one
 *              group of all n cores would always be optimal: it reaches the
 *              perfect-balance bound MACs/(n*rate) and nothing enters it.)
 *   t        = compute + routing   (a group receives and exchanges its data
 *              over the network, then computes: no overlap is assumed; t is
 *              non-increasing in c, which the exact solver relies on)
 *   storage  = (param_bytes(a, b) + out_bytes(a, b) + in_bytes(a, b)) / c
 *              bytes per core: weights plus the group's working activations
 * Reward (layout): -a * max(t)[ms] + b, b = reward_b - penalty when the
 * largest storage exceeds the core memory; or, in "weighted" mode,
 * -(wc * max compute[ms] + ws * max storage[MiB] + wr * max routing[ms]) + b.
 *
 * Objective (what every method minimises, pb_part_eval.objective): max(t) in
 * seconds in "max_time" mode; in "weighted" mode the weighted sum
 * wc * max compute[ms] + ws * max storage[MiB] + wr * max routing[ms] (so
 * reward = -objective + b there). Lower is better in both.
 *
 * Rules (optional, chain_rules.h): cut positions that are forbidden or
 * forced, and layers pinned to a core (the layer's group must contain it).
 * A state that breaks them counts violations (pb_part_eval.violations);
 * pb_part_objective (baselines.h) puts violations before everything else.
 */
#ifndef PB_PARTITION_PROBLEM_H
#define PB_PARTITION_PROBLEM_H

#include "model/graph.h"
#include "plan.h"
#include "partition/chain/chain_layers.h"
#include "partition/chain/manycore.h"

/* Cut rules per boundary position (chain_rules.h). */
enum { PB_CUT_FREE = 0, PB_CUT_FORBID = 1, PB_CUT_FORCE = 2 };

typedef struct pb_part_problem {
	pb_manycore hw;
	int m; /* layers (graph nodes that are not folded constants) */
	int n; /* cores */
	/* Layers of the graph (chain_layers.h); for a synthetic problem every
	 * node is a layer and the maps are NULL (the identity). */
	int n_nodes, n_folded;
	int *layer_node; /* m entries, or NULL */
	int *node_layer; /* n_nodes entries, or NULL */
	double *pmacs;   /* prefix sums, m+1 entries */
	double *pstore;  /* prefix sums of param_bytes + out_bytes */
	double *ob;      /* out_bytes per layer */
	int *min_succ;   /* smallest successor id per layer, m if none */
	int *pred_off;   /* CSR of predecessors: pred[pred_off[v]..pred_off[v+1]) */
	int *pred;
	int *pred_next; /* successor of pred[k] that follows v, m if none */
	int *stamp;     /* scratch for in_bytes */
	int stamp_gen;
	double total_macs;
	double lower_bound; /* perfect balance: total MACs / (n * rate) */
	/* Optional direct-mapped cache of segment bytes (in_bytes + own_bytes of
	 * [a, b)), see pb_part_problem_cache; NULL when off. */
	struct pb_part_seg *seg;
	unsigned seg_mask;
	/* The label DP's limit (exact_labels.c): it stops after this many
	 * labels and says its plan is not proven; 0 = the default. */
	long max_labels;
	long seg_hits, seg_misses;
	/* Rules (chain_rules.h), all NULL when there are none. */
	unsigned char *cut; /* m+1 entries: PB_CUT_* for the boundary before layer p */
	int *pin;           /* m entries: core the layer's group must contain, -1 none */
	json_t *rules;      /* [{name, effect, nodes, count}] for the report */
} pb_part_problem;

/* Per-group and whole-partition figures. */
typedef struct pb_part_group {
	int first_core, cores, first_layer, layers;
	double macs, compute, routing, time, storage;
} pb_part_group;

typedef struct pb_part_eval {
	double max_time, max_compute, max_routing, max_storage;
	double sum_sq_time; /* sum of squared group times (a tie-breaker) */
	int bottleneck;     /* group index with the largest time */
	int over_memory;    /* max_storage > memory */
	double reward;
	double objective; /* the layout's objective (above); lower is better */
	int violations;   /* broken rules (cuts, pins); 0 without rules */
	int n_groups;
} pb_part_eval;

/* Builds the problem from a graph and a manycore layout (copied). */
int pb_part_problem_new(const pb_graph *g, const pb_manycore *hw, pb_part_problem **out,
                        pb_error *err);
/* Same, with measured kernel times (seconds per node, from a tuning log; see
 * tune/node_costs.h): a node with a finite time counts as time x mac_rate
 * MACs, so its compute time on one core is the measured time; other nodes
 * keep their MACs. node_time may be NULL. */
int pb_part_problem_new_timed(const pb_graph *g, const pb_manycore *hw, const double *node_time,
                              pb_part_problem **out, pb_error *err);
/* Synthetic problems for tests and benchmarks: per-layer MACs, bytes and
 * an edge list (pred[k] -> succ[k]); edges must go forward. */
int pb_part_problem_synthetic(int m, const double *macs, const double *param_bytes,
                              const double *out_bytes, int n_edges, const int *from, const int *to,
                              const pb_manycore *hw, pb_part_problem **out, pb_error *err);
void pb_part_problem_free(pb_part_problem *P);
/* Turns on a cache of 2^log2_entries segments for pb_part_eval_group (and so
 * pb_part_evaluate): a segment's routing bytes are a pure function of
 * (a, b), and search methods (the RL agent) revisit the same segments
 * millions of times. Results are bit-identical with and without it.
 * Returns PB_OK or PB_ENOMEM (the problem then stays uncached). */
int pb_part_problem_cache(pb_part_problem *P, int log2_entries, pb_error *err);

/* Bytes entering layers [a, b) from earlier layers. */
double pb_part_in_bytes(pb_part_problem *P, int a, int b);
/* Bytes produced inside [a, b) and consumed inside it. */
double pb_part_own_bytes(const pb_part_problem *P, int a, int b);
/* Evaluates one group; time is +inf when cores < 1. */
void pb_part_eval_group(pb_part_problem *P, int a, int b, int cores, pb_part_group *out);

/* Largest end e in (s, emax] such that layers [s, e) on `cores` cores take
 * at most time T and at most `memory` bytes of storage per core (both only
 * grow with the end, so this is a binary search); -1 when layer s alone
 * does not fit. Used by the pack baseline and the agent's window retiming. */
int pb_part_furthest_end(pb_part_problem *P, int s, int emax, int cores, double T, double memory);

/* State helpers. Returns the number of groups, filling groups[] (capacity
 * n) when non-NULL. */
int pb_part_groups(pb_part_problem *P, const int *ac, pb_part_group *groups);
/* 1 if ac is a valid state for P, else 0 with a reason in err. */
int pb_part_state_valid(const pb_part_problem *P, const int *ac, pb_error *err);
/* Evaluates a state; groups (capacity n) may be NULL. */
void pb_part_evaluate(pb_part_problem *P, const int *ac, pb_part_eval *ev, pb_part_group *groups);
/* Reward of an evaluation under the layout's reward settings. */
double pb_part_reward(const pb_part_problem *P, const pb_part_eval *ev);
/* Rules broken by one group: layers [a, b) on cores [core, core + cores). */
int pb_part_group_violations(const pb_part_problem *P, int a, int b, int core, int cores);
/* The layout's objective of an evaluation (max(t), or the weighted sum). */
double pb_part_objective_value(const pb_part_problem *P, const pb_part_eval *ev);
/* arranged_macs of a state: MACs of the layers of each entry. */
void pb_part_arranged_macs(const pb_part_problem *P, const int *ac, double *macs);
/* State from a list of groups (cores and layers per group, in order). */
void pb_part_state_from_groups(int n_groups, const int *cores, const int *layers, int *ac);
/* The inverse: the groups of state ac (n entries), returned count k; S[0..k] their
 * first layers (S[0] = 0, S[k] = the layers), C[0..k-1] their cores. */
int pb_part_groups_of_state(int n, const int *ac, int *S, int *C);

/* Graph node of layer l (l itself for a synthetic problem). */
int pb_part_layer_node(const pb_part_problem *P, int l);

/* Generic plan of a state (kind "partition"): every graph node in the group
 * of its layer (a folded node in its host's); a group's first_node and
 * last_node are the nodes of its first and last layer. optimum may be NAN. */
pb_plan *pb_part_to_plan(pb_part_problem *P, const int *ac, const char *method, double optimum);
/* Reads detail.arranged_core of a partition plan made for this problem. A
 * plan written before folded nodes stopped being layers (its entries sum to
 * the graph's node count, not the layer count) is converted
 * (pb_part_layers_convert). */
int pb_part_from_plan(const pb_part_problem *P, const pb_plan *plan, int *ac, pb_error *err);

#endif
