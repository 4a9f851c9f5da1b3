/*
 * shard/pipeline/boundary_climb.h — hill climbing over single-node boundary moves of
 * a split (stage or chunk per node, in node order), shared by the boundary
 * polish of `pipeline` (pipeline_polish.c) and of `shard --pipeline auto`
 * (dtp_polish.c). The caller costs and keeps moves; this file picks them.
 *
 * A move of boundary k by +1 gives the first node (node order) of part k+1
 * to part k; by -1 the last node of part k to part k+1 (the hand edit
 * `boundary K +-1`, pb_plan_move_boundary). A move that would empty a part
 * is not offered; a split already offered (a hash of the part array) is not
 * offered again, so a move back is never costed twice. Rounds over all
 * boundaries: a boundary keeps moving the way it improved (then the other
 * way is not tried: it is the way back); rounds end when a whole round keeps
 * nothing (converged: no single-node move improves) or max_tries moves were
 * costed.
 */
#ifndef PB_SHARD_BOUNDARY_CLIMB_H
#define PB_SHARD_BOUNDARY_CLIMB_H

#include "util/error.h"

/* Costs the candidate split cand (k, dir: the move that made it). *costed =
 * 1 when it was costed (counts against the budget; 0: not a valid split,
 * e.g. an edge going backwards or a rule broken), *kept = 1 when it is
 * better and became the caller's split (*stage then points to it). */
typedef int (*pb_climb_try_fn)(void *ud, const int *cand, int k, int dir, int *costed, int *kept,
                               pb_error *err);

typedef struct pb_climb_stats {
	int moves, tries, converged;
} pb_climb_stats;

/* stage: points to the caller's current split of n nodes into parts parts
 * (-1: a node outside the problem); it may change when a move is kept.
 * max_tries > 0. */
int pb_boundary_climb(int *const *stage, int n, int parts, int max_tries, pb_climb_try_fn try_move,
                      void *ud, pb_climb_stats *st, pb_error *err);

#endif
