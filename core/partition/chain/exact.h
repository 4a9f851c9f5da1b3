/*
 * exact.h — the exact optimum of the many-core partition: the minimum of
 * max(t) over all contiguous partitions and core allocations, subject to the
 * memory limit, and the perfect-balance lower bound.
 *
 * The search bisects on the bottleneck time T; each check asks for the
 * fewest cores of a partition whose groups all take at most T (exact.c
 * explains the near-linear check and why it is exact). The previous check,
 * a DP over prefixes that is close to O(m^2) per T, stays available as
 * pb_part_exact_min_cores_ref / pb_part_exact_solve_ref: the property test
 * and the bench compare the two.
 */
#ifndef PB_PARTITION_EXACT_H
#define PB_PARTITION_EXACT_H

#include "partition/chain/chain_problem.h"

/* Relative precision of the search: the optimum is exact to this factor. */
#define PB_EXACT_RTOL 1e-9
/* The label DP's default limit (exact_labels.c; 40 bytes a label: 160 MB);
 * a problem's max_labels (--max-labels) replaces it. */
#define PB_LABELS_MAX 4000000

struct pb_exact_ctx; /* per-problem tables of the fast check (exact.c) */

typedef struct pb_part_exact {
	pb_part_problem *P;
	int use_memory; /* 0 when no partition fits the memory limit */
	int memory_feasible;
	double lo, hi; /* lo: infeasible bound, hi: achieved max(t) of best */
	int *best;     /* arranged_core of the incumbent (n entries) */
	int *dp, *from, *scratch;
	long checks; /* feasibility checks done */
	int done;
	int reference;            /* 1: checks run the reference DP (pb_part_exact_solve_ref) */
	struct pb_exact_ctx *ctx; /* NULL for the reference */
	int labels;               /* 1: solved by the label DP (rules or weighted objective) */
	int not_exact; /* 1: the label DP gave up (past its label limit); best is a heuristic */
} pb_part_exact;

/* With rules (chain_rules.h) or the weighted objective, init runs the label
 * DP (pb_part_exact_labels) to the end; lo and hi are then its objective. */
int pb_part_exact_init(pb_part_exact *E, pb_part_problem *P, pb_error *err);
/* Runs up to `checks` feasibility checks; returns 1 when the search is over. */
int pb_part_exact_step(pb_part_exact *E, int checks);
void pb_part_exact_free(pb_part_exact *E);

/* Runs to the end: the optimal state (ac, n entries, may be NULL), its max(t)
 * in *optimum (with the weighted objective: the max(t) of the plan optimal
 * for it) and whether the memory limit could be met (when not, the optimum
 * ignores it). With rules or the weighted objective this is the label DP. */
int pb_part_exact_solve(pb_part_problem *P, double *optimum, int *ac, int *memory_feasible,
                        pb_error *err);

/* The label DP (exact_labels.c): the exact optimum of the layout's objective
 * under P's rules, for both reward modes. *exact = 0 when it gave up (more
 * labels than it keeps; weighted mode only): ac is then a heuristic plan.
 * An error when no partition obeys the rules. */
int pb_part_exact_labels(pb_part_problem *P, int *ac, double *objective, int *memory_feasible,
                         int *exact, pb_error *err);
/* 1 when P needs the label DP (rules, or the weighted objective). */
int pb_part_exact_needs_labels(const pb_part_problem *P);

/* Feasibility check: minimum total cores of a partition whose groups all
 * have t <= T (and fit memory when use_memory). Returns that number, or
 * INT_MAX when no partition needs at most n cores; fills ac with the
 * partition, its spare cores given to the slowest groups, when the result
 * is <= n. dp and from (m+1 entries each) are no longer needed and may be
 * NULL; T may be INFINITY (memory alone). O(m + E) plus O(n^2) constant-time
 * tests and a few segment searches per core count (exact.c). */
int pb_part_exact_min_cores(pb_part_problem *P, double T, int use_memory, int *dp, int *from,
                            int *ac);

/* The previous check and search, kept as the reference of the property test
 * (tests/unit/test_exact_fast.c) and bench/bench_partition_exact.c: the DP
 * over prefixes with a backward scan per end (close to O(m^2) per check).
 * Same contract as pb_part_exact_min_cores, except that an infeasible
 * result may be any number > n; dp and from are required. */
int pb_part_exact_min_cores_ref(pb_part_problem *P, double T, int use_memory, int *dp, int *from,
                                int *ac);
/* pb_part_exact_solve as it was: the reference check, started from the
 * greedy split. */
int pb_part_exact_solve_ref(pb_part_problem *P, double *optimum, int *ac, int *memory_feasible,
                            pb_error *err);

#endif
