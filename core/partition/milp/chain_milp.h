/*
 * partition/milp/chain_milp.h — the partition problem as a mixed-integer program that GLPK proves
 * optimal, steppable: each unit of work is one probe, one slice of an LP solve or column
 * generation (about 50 ms at most), or one branch-and-bound node.
 *
 * Two stages, nothing read from another solver:
 *
 * 1. Probing (bisection on the bottleneck T with a feasibility problem). For a threshold θ,
 *    the fewest cores of a partition whose groups all take <= θ is a shortest path over
 *    layer positions 0..m: arc (a, b) costs the fewest cores that run layers [a, b) within
 *    θ and the memory. Monotonicity (a shorter segment never has more MACs, traffic or
 *    storage) leaves, for every end b and core count c, only the longest segment: at
 *    most n arcs per position. As a 0/1 program its matrix is a network matrix (the LP
 *    relaxation is integral), and it is solved as what it is: a shortest path in a DAG,
 *    one pass over the arcs by end position (GLPK's simplex needed ~170 ms just to set
 *    up the 244k-column LP of swin_t x 64 before its time limit counted, and seconds per
 *    probe; test_milp_probe checks the pass against GLPK's optimum of that 0/1 program
 *    on random chains). Both passes tick (util/job.h). θ is feasible iff the
 *    optimum is <= n: the path (spare cores to the slowest groups) is an incumbent and
 *    U = its max(t); otherwise L = θ is a proven lower bound. The first probe (θ = inf)
 *    decides whether any partition fits the memory (if none does, memory is ignored,
 *    as in the exact method); the others bisect [L, U] geometrically, starting from
 *    L0 = max(perfect balance, slowest single layer on all n cores).
 *
 * 2. The optimisation MILP (GLPK), once U <= L (1 + probe_gap) (default 0.2%; tighter while
 *    the model would have more than 250,000 columns):
 *      x[a,b,c] in {0,1}: layers [a, b) form one group of c cores, time t(a,b,c);
 *      flow:   a path over positions 0..m;
 *      cores:  sum c x <= n;
 *      start:  T >= L + sum over x leaving position a of (t - L)+ x, for every a;
 *      end:    T >= L + sum over x entering position b of (t - L)+ x, for every b;
 *      L <= T; minimise T, in units of the perfect-balance bound (LP files too).
 *    Only columns that an optimal solution may need are generated: t <= U; storage fits
 *    (when any partition fits); c-minimal (c = 1, or c - 1 cores take more than
 *    max(L, t)): more cores than needed only change which of equal optima is found
 *    (symmetry breaking on core counts); left-maximal (a = 0, or [a-1, b) on c cores
 *    takes more than L or does not fit): a group that could start one layer earlier
 *    within L can always be extended, shrinking the group before it. Repeating both
 *    moves on any optimal partition ends in one made of such columns, so the optimum
 *    is kept. The start/end rows are valid because at most one group leaves (enters) a
 *    position; they make the relaxation >= L and tie T to the fractional path.
 *    The root LP is solved in slices, then glp_intopt runs on a coroutine
 *    (core/util/coro.h, same thread): its callback hands GLPK the incumbent as a path
 *    over the model's columns (the fewest-core path among them, which exists because
 *    the incumbent reduces to one), counts nodes, records every new integer solution
 *    and the best bound, and suspends the search when the step's budget is spent. No
 *    frame is ever unwound.
 *
 * 2'. Chains of 1,000 layers or more (MILP_FINISH_LAYERS, unless an LP file is asked for)
 *    skip the MILP: every group time t(a, b, c) in [L, U] is listed and probes
 *    binary-search the smallest feasible one, which is the optimum (it is the time of
 *    one of the optimum's groups). Probes evaluate segments through chain_milp_seg.h in
 *    O(log m) with one start pointer per core count: O(n m log m) per probe.
 *
 * The bound is max(L, GLPK's best node bound); it is never unknown (L0 holds from the
 * start). A time limit stops the search with the incumbent, bound and gap.
 */
#ifndef PB_PARTITION_MILP_H
#define PB_PARTITION_MILP_H

#include "partition/chain/chain_problem.h"

typedef struct pb_milp pb_milp;

typedef struct pb_milp_opts {
	double time_limit; /* seconds of solver time over all steps (0 = none) */
	double probe_gap;  /* probe until U <= L (1 + probe_gap); <= 0: default 0.002 */
} pb_milp_opts;

typedef enum {
	PB_MILP_RUNNING,
	PB_MILP_OPTIMAL,    /* the incumbent is proven optimal */
	PB_MILP_TIME_LIMIT, /* stopped at opts.time_limit */
} pb_milp_state;

typedef struct pb_milp_stats {
	pb_milp_state state;
	double incumbent; /* objective of the best partition found (INFINITY if none): max(t)
	                   * in seconds, or the weighted objective (no unit) when weighted */
	double bound;     /* proven lower bound on the optimum, in the same unit */
	int weighted;     /* the layout's objective is the weighted sum (docs/partition.md) */
	double gap;       /* (incumbent - bound) / incumbent, NAN without an incumbent */
	double seconds;   /* solver time: pb_milp_new's first probe and every step */
	double probe_seconds, model_seconds, bb_seconds; /* of which: probing, columns and
	                                                  * root LP, branch and bound */
	long probes, nodes;
	int columns;           /* columns of the optimisation MILP (0 while probing) */
	int memory_used;       /* 0 when no partition fits the memory (it is then ignored) */
	const char *stage;     /* "probing", "columns", "root LP", "branch and bound", "done" */
	char lp_written[4096]; /* emit_lp once written, else "" (a copy: the stats outlive
	                        * the solver, e.g. in the command's report) */
	char note[200];        /* e.g. why the LP file could not be written; "" if none */
} pb_milp_stats;

/* Builds the solver with default options (no time limit) and runs its first probe.
 * emit_lp (may be NULL) receives the optimisation MILP in CPLEX LP format when it is
 * built (or when the search stops before that). `reference` is ignored (kept for
 * source compatibility): the MILP reads no other solver's answer. */
int pb_milp_new(pb_part_problem *P, double reference, const char *emit_lp, pb_milp **out,
                pb_error *err);
int pb_milp_new_opts(pb_part_problem *P, const pb_milp_opts *o, const char *emit_lp, pb_milp **out,
                     pb_error *err);
/* Advances by `units` units of work (see above). When a better partition was found
 * since the last step, *improved = 1 and ac (n entries) receives it. */
int pb_milp_step(pb_milp *M, int units, int *ac, int *improved, pb_error *err);
/* 1 once proven optimal or stopped at the time limit. */
int pb_milp_done(const pb_milp *M);
long pb_milp_nodes(const pb_milp *M);
/* Proven lower bound on max(t) in seconds (never NAN). */
double pb_milp_bound(const pb_milp *M);
/* Objective of the incumbent in seconds (INFINITY if none). */
double pb_milp_incumbent(const pb_milp *M);
/* arranged_core of the incumbent (n entries), NULL if none yet. */
const int *pb_milp_incumbent_state(const pb_milp *M);
/* Columns of the current model: the probe's arcs while probing, then the MILP's. */
int pb_milp_columns(const pb_milp *M);
void pb_milp_stats_get(const pb_milp *M, pb_milp_stats *st);
void pb_milp_free(pb_milp *M);

/* With rules (chain_rules.h) or the weighted objective the probing above does
 * not apply: pb_milp_new_opts then builds one MILP over every column the
 * rules allow and solves it at once (chain_milp_rules.c); incumbent and
 * bound are then values of the layout's objective (max(t) in seconds, or the
 * weighted sum). */
typedef struct pb_milp_rules_result {
	double objective, bound;
	int optimal, columns, memory_used, lp_written;
} pb_milp_rules_result;
int pb_milp_rules_solve(pb_part_problem *P, double time_limit, const char *emit_lp, int *ac,
                        pb_milp_rules_result *res, pb_error *err);

/* Runs to the end; optimum in seconds and its state. */
int pb_milp_solve(pb_part_problem *P, const char *emit_lp, double *optimum, int *ac, pb_error *err);

#endif
