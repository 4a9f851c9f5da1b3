/*
 * shard/pipeline_edit.h — hand edits of pipeline plans: a stage boundary of
 * a `pipeline` plan (pipeline_edit.c); a chunk boundary or an operator's
 * pinned spec of a data x tensor x pipeline plan, the pipeline `shard
 * --pipeline auto` keeps (dtp_edit.c). A plan in, a new plan or a refusal
 * with the reason out.
 *
 * A `pipeline` plan's edited split is planned again by pb_pipe_plan with the
 * split given (every stage sharded again under the plan's batch,
 * micro-batches and training flag).
 *
 * A dp x tp x pp plan:
 *
 * The edited split is costed as the search costs a configuration
 * (pb_dtp_unit_eval: every chunk's stage MILP, then p2p, schedule and
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
#ifndef PB_SHARD_PIPELINE_EDIT_H
#define PB_SHARD_PIPELINE_EDIT_H

#include <jansson.h>

#include "plan.h"
#include "shard/dtp_search.h"
#include "shard/spec_pin.h"

/* 1 when p is a dp x tp x pp plan (kind "pipeline" with metric "dp"). */
int pb_dtp_edit_is_dtp(const pb_plan *p);
/* The search options a dp x tp x pp plan records ("search_options"). */
json_t *pb_dtp_edit_options_json(const pb_dtp_opts *o);
/* o from plan p: defaults, then its batch, training flag and the recorded
 * search options. reload, rules and progress stay the caller's to set. */
void pb_dtp_edit_options(const pb_plan *p, pb_dtp_opts *o);

typedef struct pb_dtp_edit_result {
	pb_plan *plan;   /* the new plan (method "manual"), the caller's */
	double before;   /* step time of the plan before, costed again (s) */
	double after;    /* of the new plan (s) */
	char what[1024]; /* the chunks that changed, before -> after, from the two plans */
} pb_dtp_edit_result;

/* Moves the boundary between chunks k and k+1 of plan old by delta nodes
 * (pb_plan_move_boundary) and costs the new split. *gp: the model (at any
 * batch; reloaded through o->pipe.reload to the micro-batch, *gp the graph
 * left). */
int pb_dtp_edit_boundary(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                         const pb_plan *old, int k, int delta, pb_dtp_edit_result *res,
                         pb_error *err);
/* Costs plan old's split again with the pins as candidate filters of the
 * chunk MILPs (the plan's earlier pins, detail "pinned", kept). */
int pb_dtp_edit_pin(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                    const pb_plan *old, pb_spec_pin *pins, int n_pins, pb_dtp_edit_result *res,
                    pb_error *err);

/* Moves the boundary between stages k and k+1 of `pipeline` plan old by
 * delta nodes and plans again (base: reload and rules; the rest from the
 * plan). A move that breaks a Lua rule the plan obeys is refused naming it. */
int pb_pipe_edit_boundary(const pb_graph *g, const pb_cluster *cl, const pb_pipe_opts *base,
                          const pb_plan *old, int k, int delta, pb_dtp_edit_result *res,
                          pb_error *err);

/* "chunk 1 (stage 1) [nodes 86-120, 35 nodes, 1.2 ms] -> ...; step time 4 ms
 * -> 4.1 ms" from two pipeline plans of the same model: the groups whose
 * nodes or time changed. */
void pb_pipe_edit_describe(const pb_plan *before, const pb_plan *after, char *buf, size_t len);

#endif
