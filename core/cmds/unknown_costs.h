/*
 * unknown_costs.h — the warning of a planning command run on a model whose
 * costs are unknown (symbolic input dims without a value: every cost 0, the
 * plan 0 s): `shard`, `pipeline` and `map` say it as `partition` does.
 */
#ifndef PB_CMDS_UNKNOWN_COSTS_H
#define PB_CMDS_UNKNOWN_COSTS_H

#include "commands.h"

/* "warning: MODEL: costs unknown (input dims without a value: x=batch,3,H,W);
 * rerun with --input NAME=DIMS" on ctx->log when g has such inputs. */
void pb_cmd_warn_unknown_costs(pb_cmd_ctx *ctx, const pb_graph *g);

#endif
