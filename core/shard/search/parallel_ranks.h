/*
 * shard/search/parallel_ranks.h — the remaining grouping schemes of a search solved
 * across the ranks of an MPI job (`mpirun -np N partbench shard ...`;
 * util/ranks.h). parallel.c calls it instead of forking workers when the job
 * has several ranks.
 */
#ifndef PB_SHARD_PARALLEL_RANKS_H
#define PB_SHARD_PARALLEL_RANKS_H

#include "shard/search/search_rows.h"

/* Rows s->next .. n_rows-1: rank r solves those whose offset from s->next is
 * r modulo the job's size (pb_search_rows_solve_row, the serial code);
 * then every rank receives every row (MPI_Allgatherv) and stores, in scheme
 * order, the rows, their incumbent events and choices[row] (malloc'd choice
 * per group, for solved rows), so that the caller merges the best row exactly
 * as for forked workers and every rank ends with the serial result.
 * progress (may be NULL) is called with this rank's estimate of the schemes
 * done; a non-zero return cancels (all ranks must then stop: it aborts the
 * job's wait, so only rank 0 should be interactive). */
int pb_parallel_ranks_solve(pb_shard_search *s, int **choices,
                            int (*progress)(void *ud, int done, int total), void *ud,
                            pb_error *err);

#endif
