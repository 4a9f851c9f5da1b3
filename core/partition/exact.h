/*
 * exact.h — the exact optimum of the many-core partition: the minimum of
 * max(t) over all contiguous partitions and core allocations, subject to the
 * memory limit, and the perfect-balance lower bound.
 */
#ifndef PB_PARTITION_EXACT_H
#define PB_PARTITION_EXACT_H

#include "partition/chain_problem.h"

/* Relative precision of the search: the optimum is exact to this factor. */
#define PB_EXACT_RTOL 1e-9

typedef struct pb_part_exact {
	pb_part_problem *P;
	int use_memory; /* 0 when no partition fits the memory limit */
	int memory_feasible;
	double lo, hi; /* lo: infeasible bound, hi: achieved max(t) of best */
	int *best;     /* arranged_core of the incumbent (n entries) */
	int *dp, *from, *scratch;
	long checks; /* feasibility checks done */
	int done;
} pb_part_exact;

int pb_part_exact_init(pb_part_exact *E, pb_part_problem *P, pb_error *err);
/* Runs up to `checks` feasibility checks; returns 1 when the search is over. */
int pb_part_exact_step(pb_part_exact *E, int checks);
void pb_part_exact_free(pb_part_exact *E);

/* Runs to the end: optimum (max(t)), its state (ac, n entries) and whether
 * the memory limit could be met (when not, the optimum ignores it). */
int pb_part_exact_solve(pb_part_problem *P, double *optimum, int *ac, int *memory_feasible,
                        pb_error *err);

/* Feasibility DP: minimum total cores of a partition whose groups all have
 * t <= T (and fit memory when use_memory). Returns that number (> n or
 * INT_MAX when infeasible); fills ac with the partition, its spare cores
 * given to the slowest groups, when the result is <= n. */
int pb_part_exact_min_cores(pb_part_problem *P, double T, int use_memory, int *dp, int *from,
                            int *ac);

#endif
