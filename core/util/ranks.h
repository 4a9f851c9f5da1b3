/*
 * util/ranks.h — this process's place in an Open MPI job (mpirun -np N).
 *
 * The only file that includes mpi.h is ranks.c; it is compiled against MPI
 * when CMake finds it (PB_HAVE_MPI), and otherwise every function here
 * behaves as a job of one rank. MPI is started lazily, by the first command
 * that works across ranks (pb_ranks_start), and only when the process was
 * launched by mpirun (OMPI_COMM_WORLD_SIZE in the environment): a plain
 * `partbench ...` never initialises MPI.
 *
 * In a job of several ranks, the standard output of every rank but 0 goes to
 * /dev/null (rank 0 prints the command's report once); standard error stays.
 * Errors are returned, never fatal (MPI_ERRORS_RETURN): a rank that dies is
 * noticed by its silence (pb_ranks_poll with a timeout), not by an MPI error,
 * because Open MPI without ULFM has no reliable failure notification. By
 * default mpirun aborts the whole job when a rank dies; `mpirun
 * --enable-recovery` lets the other ranks finish (docs/scale-out.md).
 * Messages are byte strings; ranks are assumed to share one architecture
 * (structs of plain numbers travel as bytes).
 */
#ifndef PB_UTIL_RANKS_H
#define PB_UTIL_RANKS_H

#include <stddef.h>

#include "util/error.h"

/* Seconds a collective (pb_ranks_sum, _agree, _allgather) waits for the last
 * rank to arrive before it fails and the job is abandoned: a rank that died
 * never arrives (default 600; PB_RANK_TIMEOUT in the environment, or a
 * command's --rank-timeout, sets it). */
void pb_ranks_set_timeout(double seconds);

/* 1 when partbench was built with MPI. */
int pb_ranks_built_with_mpi(void);
/* Ranks mpirun asked for (from the environment; 1 when not launched by it). */
int pb_ranks_launched(void);
/* Starts MPI when launched by mpirun with more than one rank (idempotent;
 * MPI_Finalize runs at exit). what names the feature for the error given
 * when partbench was built without MPI but runs under mpirun -np N > 1. */
int pb_ranks_start(const char *what, pb_error *err);
/* A rank of the job died: MPI_Finalize is not called at exit (it would
 * wait for the dead rank for ever); the process exits without it. */
void pb_ranks_abandon(void);
/* After pb_ranks_start: this rank and the job's size (0 and 1 without MPI). */
int pb_ranks_rank(void);
int pb_ranks_size(void);
/* This rank's host name. */
const char *pb_ranks_host(void);

/* Sends len bytes to rank `to` with a tag >= 0 (MPI_Send: small messages
 * return at once, large ones once the receiver has started taking them). */
int pb_ranks_send(int to, int tag, const void *buf, size_t len, pb_error *err);
/* Waits up to timeout seconds (< 0: forever) for a message from `from`
 * (-1: any rank) with `tag` (-1: any). Returns 1 and fills *src, *tag_out,
 * *buf (malloc'd, NUL-terminated, caller frees) and *len; 0 on timeout; a
 * negative pb code with err on failure. */
int pb_ranks_poll(int from, int tag, double timeout, int *src, int *tag_out, char **buf,
                  size_t *len, pb_error *err);
/* Every rank contributes len bytes; every rank receives all contributions
 * concatenated in rank order (*all malloc'd) with each rank's length in
 * lens[pb_ranks_size()]. */
int pb_ranks_allgather(const void *mine, size_t len, char **all, size_t *lens, pb_error *err);
/* Element-wise sum of v[n] over all ranks, result on every rank. */
int pb_ranks_sum(double *v, size_t n, pb_error *err);
/* Every rank passes its value; *all_same is 1 when they are equal (a check
 * that all ranks run the same input). */
int pb_ranks_agree(unsigned long long value, int *all_same, pb_error *err);

#endif
