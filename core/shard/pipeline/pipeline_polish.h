/*
 * shard/pipeline/pipeline_polish.h — the boundary polish of a planned split
 * (pipeline_polish.c).
 */
#ifndef PB_SHARD_PIPELINE_POLISH_H
#define PB_SHARD_PIPELINE_POLISH_H

#include "shard/pipeline/pipeline_types.h"

struct pb_part_rules;
struct pb_shard_opts;
/* The boundary polish (pipeline_polish.c): the stage split minimises the
 * slowest stage in FLOPs, but a stage's time also has the collectives of its
 * sharding and the slot has the p2p transfer, which only the costing sees.
 * Hill climbing over the hand edit `boundary K +-1` (pb_plan_move_boundary:
 * the first node of stage K+1 joins K, or the last node of K joins K+1),
 * each move costed as that edit costs it (the two stages again, all
 * transfers): a move is kept when the plan fits no worse and its step time
 * drops; a boundary keeps moving the way it improved; rounds over all
 * boundaries until none improves (converged) or o->polish_tries moves were
 * costed. Moves that break a Lua rule are not tried. */
int pb_pipeline_polish(pb_pipe_result *r, const double *cost, const struct pb_part_rules *rules,
                       int max_tries, struct pb_shard_opts *so, unsigned char *mask, pb_error *err);

#endif
