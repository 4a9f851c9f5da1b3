/*
 * script.h — user scripting: the `pb` Lua API bound to a session, plus the
 * registries of heuristics and rules that solvers consult.
 *
 * One pb_script per session (session->script), created on first use. Scripts
 * run in the sandbox (util/lua_sandbox.h): each file in its own _ENV, with an
 * instruction budget and a memory cap. A script that fails leaves the session
 * as it was: the plan and its undo history are rolled back.
 *
 * Solvers ask the registries through the functions below; each returns 0
 * when no script entry applies, 1 when one did, or a negative PB_E* status
 * (with err filled) when a script failed.
 */
#ifndef PB_SCRIPT_H
#define PB_SCRIPT_H

#include <jansson.h>
#include <stdio.h>

#include "commands.h"
#include "util/error.h"
#include "session.h"
#include "util/lua_sandbox.h"

typedef struct pb_script pb_script;

/* The session's scripting state, created on first use (NULL on failure). */
pb_script *pb_script_get(pb_session *s, pb_error *err);
/* The session's scripting state if it exists, else NULL (no creation). */
pb_script *pb_script_of(pb_session *s);
void pb_script_set_limits(pb_script *sc, const pb_lua_limits *lim);

/* Runs a file (in its own _ENV) / a console line (all console lines share one
 * _ENV, so a session's `:lua` lines see each other's globals); output of print() and pb.cmd goes to
 * ctx->out. On failure the message has file:line and a traceback, and the session's plan and undo
 * history are restored. */
int pb_script_run_file(pb_script *sc, pb_cmd_ctx *ctx, const char *path, pb_error *err);
int pb_script_run_string(pb_script *sc, pb_cmd_ctx *ctx, const char *code, const char *name,
                         pb_error *err);

/* ---- heuristics (pb.heuristic{kind=...}) ---- */
int pb_script_count(pb_script *sc, const char *kind); /* heuristics of a kind */
/* action_mask: mask[k] = 0 forbids action k (n_actions = 4(n_cores-1)); several
 * masks are combined with AND. */
int pb_script_action_mask(pb_script *sc, const int *arranged_core, const double *arranged_macs,
                          int n_cores, int n_actions, unsigned char *mask, pb_error *err);
/* initial_partition: fills arranged_core[n_cores] (layers per core, sum =
 * n_layers); checked for validity. */
int pb_script_initial_partition(pb_script *sc, int n_cores, int n_layers, const double *layer_macs,
                                int *arranged_core, pb_error *err);
/* candidate_filter: *keep = 0 when a filter rejects the candidate strategy
 * (described as JSON) for node `node`; which >= 0: only the which-th
 * candidate_filter heuristic (in registration order), -1: all of them. */
int pb_script_candidate_filter(pb_script *sc, int which, int node, const json_t *candidate,
                               int *keep, pb_error *err);
/* The name of the k-th heuristic of a kind (NULL when there is none). */
const char *pb_script_heuristic_name(pb_script *sc, const char *kind, int k);
/* cost_term: *extra = sum of the cost terms for the plan. */
int pb_script_cost_terms(pb_script *sc, const pb_plan *plan, double *extra, pb_error *err);

/* ---- rules (pb.rule{match=..., specs=|fusable=|backend=|cut=|core=|stage=}) ---- */
int pb_script_rule_fusable(pb_script *sc, int node, int *fusable, pb_error *err);
/* *backend points into the script state; valid until the next script call. */
int pb_script_rule_backend(pb_script *sc, int node, const char **backend, pb_error *err);
/* *specs is a new JSON reference (the rule's `specs` table) the caller frees. */
int pb_script_rule_specs(pb_script *sc, int node, json_t **specs, char *rule_name, size_t name_len,
                         pb_error *err);

/* `cut` rules: *how = 1 forbid, 2 force (the boundary after the node). */
int pb_script_rule_cut(pb_script *sc, int node, int *how, pb_error *err);
/* `core` or `stage` rules (kind): *pin = the core or stage the node is pinned to. */
int pb_script_rule_pin(pb_script *sc, const char *kind, int node, int *pin, pb_error *err);
/* Name of the rule the last pb_script_rule_* call matched ("" if none). */
const char *pb_script_matched_rule(pb_script *sc);
/* Number of rules with an effect: "specs", "fusable", "backend", "cut", "core"
 * or "stage". */
int pb_script_rule_count(pb_script *sc, const char *kind);

/* Names and kinds of registered heuristics and rules, as JSON (for listing). */
json_t *pb_script_registry_json(pb_script *sc);
/* The last error raised inside an event callback (cleared on read), or NULL. */
const char *pb_script_take_event_error(pb_script *sc);

#endif
