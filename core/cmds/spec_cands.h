/*
 * spec_cands.h — the candidate specs of an operator of the session's shard
 * plan (shard/search/spec_pin.h: pb_spec_pin_candidates) under the session's Lua
 * candidate filters, which mark what they refuse. Used by `pin --list`, by
 * `pin` to refuse a spec a filter removes naming it, and by the workbench's
 * inspector (its rows are where a dragged operator is dropped).
 */
#ifndef PB_CMDS_SPEC_CANDS_H
#define PB_CMDS_SPEC_CANDS_H

#include "session.h"
#include "shard/search/spec_pin.h"

/* *out (malloc'd, *n rows) for node nid of s->plan, a 'shard' plan. */
int pb_spec_cands_of(pb_session *s, int nid, pb_spec_cand **out, int *n, pb_error *err);

#endif
