/*
 * shard/pipeline/pipeline_edit.h — a hand edit of a `pipeline` plan (pipeline_edit.c):
 * a stage boundary moved. A plan in, a new plan or a refusal with the reason
 * out. The edited split is planned again by pb_pipeline_plan with the split given
 * (every stage sharded again under the plan's batch, micro-batches and
 * training flag). The edits of a dp x tp x pp plan are in dtp_edit.h.
 */
#ifndef PB_SHARD_PIPELINE_EDIT_H
#define PB_SHARD_PIPELINE_EDIT_H

#include "shard/pipeline/pipeline_diff.h"
#include "shard/pipeline/pipeline_plan.h"

/* Moves the boundary between stages k and k+1 of `pipeline` plan old by
 * delta nodes and plans again (base: reload and rules; the rest from the
 * plan). A move that breaks a Lua rule the plan obeys is refused naming it. */
int pb_pipeline_edit_boundary(const pb_graph *g, const pb_cluster *cl, const pb_pipe_opts *base,
                              const pb_plan *old, int k, int delta, pb_pipe_diff *res,
                              pb_error *err);

#endif
