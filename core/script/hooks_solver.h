/*
 * hooks_solver.h — an attached solver that steps with the session's Lua
 * heuristics and rules in force (the agent's action_mask, the initial
 * partition it started from, the `cut`/`core` rules the problem holds).
 */
#ifndef PB_SCRIPT_HOOKS_SOLVER_H
#define PB_SCRIPT_HOOKS_SOLVER_H

#include "script/hooks.h"
#include "solver.h"

/* Wraps inner so that the hooks (heap-allocated, filled by
 * pb_hooks_partition) live as long as it does; takes ownership of both,
 * also on failure (NULL: out of memory). A script error raised in a step
 * fails that step with the script's message. */
pb_solver *pb_hooks_solver_new(pb_solver *inner, pb_hooks *h);

#endif
