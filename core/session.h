/*
 * session.h — what one user has open: graph + hardware + plan + undo history.
 *
 * The session owns its objects. Changes to the plan go through
 * pb_session_set_plan(), which records undo history and fires the plan-change
 * listeners (Lua events, TUI). Front ends read the session through these
 * functions and change it only by running commands (commands.h).
 */
#ifndef PB_SESSION_H
#define PB_SESSION_H

#include <stdio.h>

#include "util/error.h"
#include "model/graph.h"
#include "hw.h"
#include "plan.h"
#include "solver.h"
#include "view.h"

#define PB_UNDO_MAX 256

typedef void (*pb_session_listener)(void *ud, int what);
enum {
	PB_EVENT_PLAN = 1,
	PB_EVENT_GRAPH = 2,
	PB_EVENT_HW = 4,
	PB_EVENT_SOLVER_STEP = 8,
	PB_EVENT_SOLVER_DETACH = 16 /* solver_detached says which and why */
};

typedef struct pb_session {
	pb_graph *graph;
	char *model_path;
	pb_input_override *overrides;
	int n_overrides;
	pb_hw *hw;
	pb_plan *plan;              /* current plan or NULL */
	pb_plan *undo[PB_UNDO_MAX]; /* previous plans (NULL = "no plan") */
	int n_undo;
	pb_plan *redo[PB_UNDO_MAX];
	int n_redo;
	pb_solver *solver; /* active steppable solver or NULL */
	char *solver_name;
	/* The plan the solver installed last (identity only, never read): a plan
	 * installed, undone or redone by anything else (a hand edit, another
	 * method, a loaded plan) detaches the solver, which then no longer owns
	 * the plan it would step; solver_detached says which solver left and
	 * which plan replaced its own ("" when none did). */
	const pb_plan *solver_plan;
	char solver_detached[160];
	struct {
		pb_session_listener fn;
		void *ud;
	} listeners[8];
	int n_listeners;
	/* The session's Lua scripting state and its hooks, registered by script/
	 * when it attaches the state (the workspace never calls up into script/):
	 * script_free frees it with the session; script_report, run after every
	 * command (commands.c), writes to log an error that an event callback
	 * raised during a command run outside any script (inside a script, the
	 * script fails with it instead). */
	void *script;
	void (*script_free)(void *script);
	void (*script_report)(void *script, FILE *log);
	/* The session's fusion rules (transform/fuse.h: pb_fuse_rules_of), created
	 * with the defaults on first use and freed with the session by the hook
	 * transform/ registers; opaque here (the type belongs to a higher layer). */
	void *fuse_rules;
	void (*fuse_rules_free)(void *fuse_rules);
	pb_view view;             /* zoom, pan, selection, colouring ... (TUI/SVG; view.h) */
	const char **names_cache; /* node names for plan JSON */
	unsigned graph_gen;       /* bumped whenever the graph changes (Lua handles) */
	/* > 0 while a script callback (heuristic, rule, event) runs inside a C
	 * loop that holds the graph, layout, plan, solver or script registries:
	 * commands that would replace or free them fail (commands.c), so the
	 * loop never sees freed memory. locked_by names the callback. */
	int locked;
	char locked_by[96];
	/* 1 when the plan, graph or layout changed since the session was last
	 * saved or loaded (front ends ask before quitting). */
	int dirty;
	/* The session file last saved or loaded, NULL if none. */
	char *session_path;
} pb_session;

pb_session *pb_session_new(void);
void pb_session_free(pb_session *s);

/* Loads a model (replacing the current one; plan and undo are cleared). */
int pb_session_open_model(pb_session *s, const char *path, const pb_input_override *ov, int n_ov,
                          pb_error *err);
/* Takes ownership of g (for transformed graphs). */
void pb_session_set_graph(pb_session *s, pb_graph *g, const char *path);
int pb_session_open_layout(pb_session *s, const char *path, pb_error *err);
/* Reloads the model with dim 0 of every input set to batch, keeping the other
 * dims (and any --input overrides). Plan and undo are cleared, as on open. */
int pb_session_set_batch(pb_session *s, long batch, pb_error *err);
/* A command that may change the batch (shard/pipeline --batch) brackets its
 * run with these: when it fails or is cancelled after the reload, the model
 * goes back to its batch and the plan it had (the undo history, cleared by
 * the reload, is not restored). */
typedef struct pb_batch_guard {
	unsigned gen;
	long batch;
	pb_plan *plan;
	int dirty;
} pb_batch_guard;
void pb_batch_guard_begin(pb_session *s, pb_batch_guard *bg);
void pb_batch_guard_end(pb_session *s, pb_batch_guard *bg, int rc);
/* Takes ownership of plan (may be NULL); the old plan goes to the undo stack. */
void pb_session_set_plan(pb_session *s, pb_plan *plan);
/* As pb_session_set_plan, for the attached solver's incumbent: the solver
 * stays attached. */
void pb_session_set_solver_plan(pb_session *s, pb_plan *plan);
/* Replaces the plan without recording undo (solver incumbents while stepping). */
void pb_session_replace_plan(pb_session *s, pb_plan *plan);
int pb_session_undo(pb_session *s);
int pb_session_redo(pb_session *s);
/* Takes ownership of solver (replacing and freeing any previous one). */
void pb_session_set_solver(pb_session *s, pb_solver *solver, const char *name);
void pb_session_listen(pb_session *s, pb_session_listener fn, void *ud);
void pb_session_unlisten(pb_session *s, pb_session_listener fn, void *ud);
void pb_session_notify(pb_session *s, int what);
/* Node names array for plan JSON (valid while the graph lives), or NULL. */
const char *const *pb_session_node_names(pb_session *s);

/* Saves/loads a session file (JSON: model path, overrides, layout path, plan,
 * view), atomically. */
int pb_session_save(pb_session *s, const char *path, pb_error *err);
/* The JSON that pb_session_save writes (the caller owns it). */
json_t *pb_session_to_json(pb_session *s);
int pb_session_load(pb_session *s, const char *path, pb_error *err);

#endif
