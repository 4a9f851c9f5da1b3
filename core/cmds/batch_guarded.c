/*
 * batch_guarded.c — a command run inside a pb_batch_guard (batch_guarded.h).
 */
#include "cmds/batch_guarded.h"

int pb_cmd_batch_guarded(pb_cmd_fn run, pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a,
                         pb_error *err)
{
	pb_batch_guard bg;
	pb_batch_guard_begin(ctx->s, &bg);
	int rc = run(ctx, cmd, a, err);
	pb_batch_guard_end(ctx->s, &bg, rc);
	return rc;
}
