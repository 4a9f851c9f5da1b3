/*
 * batch_guarded.h — a command that may reload the model at another batch
 * (`shard`, `pipeline`) runs through pb_cmd_batch_guarded: a failed or
 * cancelled run leaves the session's model at the batch it had
 * (session.h, pb_batch_guard).
 */
#ifndef PB_CMDS_BATCH_GUARDED_H
#define PB_CMDS_BATCH_GUARDED_H

#include "commands.h"

/* run(ctx, cmd, a, err) inside a pb_batch_guard of ctx->s; its result. */
int pb_cmd_batch_guarded(pb_cmd_fn run, pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a,
                         pb_error *err);

#endif
