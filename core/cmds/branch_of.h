/*
 * branch_of.h — the session's parallel-branch groups as a "branch" plan
 * (transform/fuse.h: pb_branch_plan), with what `fuse` would fuse under the
 * session's rules (Lua `fusable` rules included) and the layout's fusion
 * model. Used by `export --color-by branch` and the TUI's branch colour mode.
 */
#ifndef PB_CMDS_BRANCH_OF_H
#define PB_CMDS_BRANCH_OF_H

#include "session.h"

/* *out = the branch plan of s->graph (the caller frees it). */
int pb_branch_plan_of(pb_session *s, pb_plan **out, pb_error *err);

#endif
