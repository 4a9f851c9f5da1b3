/*
 * cmds/plan_edit.h — what the plan edit commands (cmd_edit.c, cmd_pin.c,
 * cmd_backend.c, cmd_fuse_edit.c) share: --plan and --node, the session's
 * Lua rules, the side session the planners reload other batches in, and the
 * edited plan installed, saved and printed.
 */
#ifndef PB_CMDS_PLAN_EDIT_H
#define PB_CMDS_PLAN_EDIT_H

#include <jansson.h>

#include "commands.h"
#include "partition/chain/chain_rules.h"
#include "shard/dtp/dtp_search.h"
#include "shard/pipeline/pipeline_diff.h"

/* --plan FILE: the saved plan becomes the session's (undoable) first; a
 * plan made at another batch reopens the model at it. No --plan: PB_OK. */
int pb_plan_edit_load(pb_cmd_ctx *ctx, const pb_args *a, pb_error *err);
/* --OPT NAME (required): the node's id in *out. */
int pb_plan_edit_node(const pb_graph *g, const pb_args *a, const char *cmd, const char *opt,
                      int *out, pb_error *err);
/* The session's Lua `cut` rules and `core` / `stage` pins (NULL: none). */
int pb_plan_edit_rules(pb_session *s, const char *kind, pb_part_rules **out, pb_error *err);
/* Installs the edited plan p (the session owns it), saves it with -o and
 * prints what changed and the figures before -> after (text or --json). */
int pb_plan_edit_finish(pb_cmd_ctx *ctx, const pb_args *a, pb_plan *p, const char *what,
                        json_t *before, json_t *after);
/* A side session holding the session's model, so that the planners'
 * reloads at other batches (pb_plan_edit_side_reload, ud = the side) leave
 * the session's graph, plan and history as they are. */
int pb_plan_edit_side_open(pb_session *s, const char *name, pb_session **side, pb_error *err);
int pb_plan_edit_side_reload(void *ud, long batch, const pb_graph **g, pb_error *err);
/* A pipeline edit's result (rc its status) installed and printed: step
 * time and memory per device before -> after; r->plan is freed on error. */
int pb_plan_edit_pipe_finish(pb_cmd_ctx *ctx, const pb_args *a, pb_pipe_diff *r, const char *name,
                             int rc, pb_error *err);
/* The options of a dp x tp x pp edit of old, reloading in side, under the
 * session's Lua cut and stage rules (*rules: free with pb_part_rules_free). */
int pb_plan_edit_dtp_opts(pb_session *s, pb_session *side, const pb_plan *old, pb_dtp_opts *o,
                          pb_part_rules **rules, pb_error *err);

#endif
