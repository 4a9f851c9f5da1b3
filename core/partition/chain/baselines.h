/*
 * baselines.h — the reference heuristics an agent is compared with:
 *   equal:  the same number of layers per core (single-core groups);
 *   greedy: for every group count k, cut the layers where the running MACs
 *           cross j*M/k (a model without MACs: the running sum of each
 *           layer's time alone on one core), give each group the cores its storage needs, then
 *           each remaining core to the currently slowest group; keep the
 *           best k (so big layers get several cores);
 *   polish: block-partition local search with the method's (c)/(d) moves:
 *           take the best boundary-layer move while it lowers the objective
 *           (memory overflow first, then max(t)); cheap, the RL agent's
 *           inner polish (pb_part_local_*);
 *   pack:   bisection on the bottleneck time T; for each T the layers are
 *           packed left to right, each group taking the core count (up to a
 *           cap) that covers the most MACs per core within T and the core
 *           memory; feasible when n cores suffice; best over a range of caps
 *           (pack.c). Greedy by construction: not the exact optimum.
 *   ils:    the iterated local search behind `--method local`
 *           (local_search.c): from a given start, moves that re-form a
 *           window of up to 3 groups around the bottleneck (cuts across
 *           blocks, joint core counts, a core from elsewhere, splits and
 *           merges), moves that re-cut the whole chain after one edit of
 *           the core counts, and seeded random kicks of the local optimum.
 */
#ifndef PB_PARTITION_BASELINES_H
#define PB_PARTITION_BASELINES_H

#include "partition/chain/chain_problem.h"

void pb_part_equal(const pb_part_problem *P, int *ac);
void pb_part_greedy(const pb_part_problem *P, int *ac);
/* The pack baseline; greedy's partition when nothing packs. */
void pb_part_pack(const pb_part_problem *P, int *ac);
/* min(n, m) single-core groups cut where the running MACs cross j*M/k. */
void pb_part_balanced(const pb_part_problem *P, int *ac);

/* Keeps the groups' layers and re-assigns their cores as greedy does;
 * applies it only if that lowers the objective. Returns 1 if ac changed. */
int pb_part_rebalance_cores(pb_part_problem *P, int *ac);

/* Objective the local search and the solvers compare: memory overflow
 * dominates, then max(t). Lower is better. */
double pb_part_objective(const pb_part_eval *ev);

/* One local-search pass: tries every (c)/(d) move from ac and applies the
 * best improving one. Returns 1 if ac improved, 0 at a local optimum. */
int pb_part_local_step(pb_part_problem *P, int *ac, int *scratch);
/* Runs passes until a local optimum (or max_passes); returns passes done. */
int pb_part_local_search(pb_part_problem *P, int *ac, int max_passes);

/* Options of the iterated local search (local_search.c). */
typedef struct pb_part_ils_opts {
	unsigned long seed; /* the kicks' random generator (default 1) */
	int restarts;       /* kicks per step before it gives up (default 32) */
	int window;         /* most groups a descent move re-forms (default 3) */
	int global;         /* also moves of the whole chain (default 1) */
} pb_part_ils_opts;
void pb_part_ils_defaults(pb_part_ils_opts *o);
/* One improvement of ac (a valid state): a descent, then up to o->restarts
 * kicks of the local optimum each followed by a descent. Returns 1 when ac
 * changed (its pb_part_objective strictly fell), 0 when the step found
 * nothing better (or ac is not a valid state; it is then left alone).
 * opts NULL means the defaults. Deterministic: the result depends only on
 * the problem, ac and the options. */
int pb_part_ils_step(pb_part_problem *P, int *ac, const pb_part_ils_opts *opts);
/* Steps until a step fails; returns the steps that improved ac. */
int pb_part_ils(pb_part_problem *P, int *ac, const pb_part_ils_opts *opts);

#endif
