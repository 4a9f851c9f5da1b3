/*
 * partition/milp/chain_milp_root.h — the partition MILP's root LP solved in a forked
 * child, for workbench jobs (chain_milp.c).
 *
 * A running glp_simplex call cannot be stopped (its time limit is read once, at its
 * start), and calls shorter than about 1 s stall on the dual degenerate root LP of
 * large models, so a cancel inside the root LP used to wait for up to a second. In a
 * job the root LP runs instead in a child process, which solves it with the same
 * calls as the in-process solve and writes back the basis it ends with; the parent
 * polls the pipe between the job's slices and loads the basis into its own problem,
 * from which the in-process glp_simplex only refactorizes and confirms. A cancel kills
 * the child at once. The child resets the workbench's signal handlers, dies with its
 * parent (Linux), and never returns from its function.
 */
#ifndef PB_CHAIN_MILP_ROOT_H
#define PB_CHAIN_MILP_ROOT_H

#include <glpk.h>

#include "util/child_pipe.h"
#include "util/error.h"

typedef struct pb_milp_root {
	int pid; /* 0: no child */
	int fd;
	pb_pipe_buf in;
} pb_milp_root;

/* Seconds per glp_simplex call of the root LP (see chain_milp.c). */
#define PB_MILP_ROOT_CHUNK 1.0

/* The root LP's glp_simplex parameters, but the time limit (both ways alike). */
void pb_milp_root_params(glp_smcp *sp);

/* Forks the child solving lp until it is optimal, fails, or the monotonic clock
 * passes deadline (seconds, INFINITY: none). */
int pb_milp_root_start(pb_milp_root *r, glp_prob *lp, double deadline, pb_error *err);

/* Reads what the child wrote. Returns 0 while it runs; 1 when it has ended: its last
 * glp_simplex code is in *rc and, when it is 0, its basis is loaded into lp; -1 when
 * the child failed (nothing loaded: solve in process). */
int pb_milp_root_poll(pb_milp_root *r, glp_prob *lp, int *rc);

/* Kills the child, if any, and reaps it. */
void pb_milp_root_stop(pb_milp_root *r);

#endif
