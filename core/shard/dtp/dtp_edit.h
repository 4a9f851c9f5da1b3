/*
 * shard/dtp/dtp_edit.h — hand edits of a data x tensor x pipeline plan, the
 * pipeline `shard --pipeline auto` keeps (dtp_edit.c): a chunk boundary or
 * an operator's pinned spec. A plan in, a new plan or a refusal with the
 * reason out.
 *
 * The edited split is costed as the search costs a configuration
 * (pb_dtp_search_unit_eval: every chunk's stage MILP, then p2p, schedule and
 * gradient all-reduces), with the plan's dp, tp, pp, micro-batches and
 * schedule and the options of the search that made it (recorded in its
 * detail as "search_options", pb_dtp_edit_options_json). Before the edit the
 * plan itself is costed again: when that does not give its step time (a
 * plan saved by an older version, or made under other options) the edit is
 * refused rather than compared with a figure of another model.
 * Refused too: a plan with uneven device groups, a move that would leave a
 * chunk empty or send an activation backwards, a move that breaks a Lua
 * `cut` or `stage` rule the plan obeys (o->pipe.rules), a spec that is not a
 * candidate of the operator.
 */
#ifndef PB_SHARD_DTP_EDIT_H
#define PB_SHARD_DTP_EDIT_H

#include <jansson.h>

#include "plan.h"
#include "shard/dtp/dtp_search.h"
#include "shard/pipeline/pipeline_diff.h"
#include "shard/search/spec_pin.h"

/* 1 when p is a dp x tp x pp plan (kind "pipeline" with metric "dp"). */
int pb_dtp_edit_is_dtp(const pb_plan *p);
/* The search options a dp x tp x pp plan records ("search_options"). */
json_t *pb_dtp_edit_options_json(const pb_dtp_opts *o);
/* o from plan p: defaults, then its batch, training flag and the recorded
 * search options. reload, rules and progress stay the caller's to set. */
void pb_dtp_edit_options(const pb_plan *p, pb_dtp_opts *o);

/* Moves the boundary between chunks k and k+1 of plan old by delta nodes
 * (pb_plan_move_boundary) and costs the new split. *gp: the model (at any
 * batch; reloaded through o->pipe.reload to the micro-batch, *gp the graph
 * left). */
int pb_dtp_edit_boundary(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                         const pb_plan *old, int k, int delta, pb_pipe_diff *res, pb_error *err);
/* Costs plan old's split again with the pins as candidate filters of the
 * chunk MILPs (the plan's earlier pins, detail "pinned", kept). */
int pb_dtp_edit_pin(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                    const pb_plan *old, pb_spec_pin *pins, int n_pins, pb_pipe_diff *res,
                    pb_error *err);

#endif
