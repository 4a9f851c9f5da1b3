/*
 * session.c — the open workspace: graph, hardware, plan, undo/redo (session.h).
 *
 * Undo keeps whole plan copies: plans are small (one int per node plus a few
 * groups), so copying is simpler and safer than reversible edits.
 *
 * While a script callback runs inside a loop (s->locked), the functions that
 * replace the graph or the layout refuse with an error, whatever command
 * called them (commands.c refuses such commands earlier; this is the floor).
 */
#include "session.h"
#include "util/file_door.h"
#include "util/json_file.h"
#include "load.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pb_session *pb_session_new(void)
{
	pb_session *s = calloc(1, sizeof(pb_session));
	if (s)
		pb_view_init(&s->view);
	return s;
}

static void clear_history(pb_session *s)
{
	for (int i = 0; i < s->n_undo; i++)
		pb_plan_free(s->undo[i]);
	for (int i = 0; i < s->n_redo; i++)
		pb_plan_free(s->redo[i]);
	s->n_undo = s->n_redo = 0;
}

static void clear_overrides(pb_session *s)
{
	for (int i = 0; i < s->n_overrides; i++)
		pb_input_override_free(&s->overrides[i]);
	free(s->overrides);
	s->overrides = NULL;
	s->n_overrides = 0;
}

void pb_session_free(pb_session *s)
{
	if (!s)
		return;
	if (s->script && s->script_free)
		s->script_free(s->script);
	if (s->fuse_rules && s->fuse_rules_free)
		s->fuse_rules_free(s->fuse_rules);
	pb_solver_free(s->solver);
	free(s->solver_name);
	clear_history(s);
	pb_plan_free(s->plan);
	pb_graph_free(s->graph);
	pb_hw_free(s->hw);
	free(s->model_path);
	free(s->names_cache);
	free(s->session_path);
	clear_overrides(s);
	free(s);
}

void pb_session_set_graph(pb_session *s, pb_graph *g, const char *path)
{
	pb_session_set_solver(s, NULL, NULL);
	clear_history(s);
	pb_plan_free(s->plan);
	s->plan = NULL;
	pb_graph_free(s->graph);
	s->graph = g;
	s->graph_gen++;
	free(s->names_cache);
	s->names_cache = NULL;
	free(s->model_path);
	s->model_path = strdup(path ? path : (g && g->path ? g->path : ""));
	s->dirty = 1;
	pb_session_notify(s, PB_EVENT_GRAPH | PB_EVENT_PLAN);
}

static int refuse_locked(pb_session *s, const char *what, const char *path, pb_error *err)
{
	if (!s->locked)
		return PB_OK;
	return pb_err(err, PB_EUSAGE,
	              "%s %s: not allowed inside %s: callbacks may only read the session", what,
	              path ? path : "", s->locked_by[0] ? s->locked_by : "a script callback");
}

int pb_session_open_model(pb_session *s, const char *path, const pb_input_override *ov, int n_ov,
                          pb_error *err)
{
	int locked_rc = refuse_locked(s, "opening model", path, err);
	if (locked_rc)
		return locked_rc;
	pb_graph *g = NULL;
	pb_load_opts opts = {ov, n_ov, 0};
	int rc = pb_graph_load(path, &opts, &g, err);
	if (rc != PB_OK)
		return rc;
	/* Keep a copy of the overrides so that a saved session reloads the same. */
	pb_input_override *copy = calloc((size_t)(n_ov ? n_ov : 1), sizeof *copy);
	for (int i = 0; copy && i < n_ov; i++) {
		copy[i] = ov[i];
		copy[i].name = strdup(ov[i].name);
	}
	clear_overrides(s);
	s->overrides = copy;
	s->n_overrides = n_ov;
	int dirty = s->dirty; /* opening a model is not itself a change to save */
	pb_session_set_graph(s, g, path);
	s->dirty = dirty;
	return PB_OK;
}

int pb_session_open_layout(pb_session *s, const char *path, pb_error *err)
{
	int locked_rc = refuse_locked(s, "loading layout", path, err);
	if (locked_rc)
		return locked_rc;
	pb_hw *hw = NULL;
	int rc = pb_hw_load(path, &hw, err);
	if (rc != PB_OK)
		return rc;
	pb_hw_free(s->hw);
	s->hw = hw;
	s->dirty = 1;
	pb_session_notify(s, PB_EVENT_HW);
	return PB_OK;
}

int pb_session_set_batch(pb_session *s, long batch, pb_error *err)
{
	int locked_rc = refuse_locked(s, "changing the batch of", s->model_path, err);
	if (locked_rc)
		return locked_rc;
	const pb_graph *g = s->graph;
	if (!g || !s->model_path || !s->model_path[0])
		return pb_err(err, PB_EUSAGE, "--batch needs a model loaded from a file");
	pb_input_override *ov = calloc((size_t)g->n_inputs + 1, sizeof *ov);
	if (!ov)
		return pb_err(err, PB_ENOMEM, "out of memory");
	int n = 0;
	for (int i = 0; i < g->n_inputs; i++) {
		const pb_tensor *t = &g->tensors[g->inputs[i]];
		if (t->rank < 1)
			continue;
		ov[n].name = strdup(t->name);
		ov[n].rank = t->rank;
		for (int k = 0; k < t->rank; k++)
			ov[n].dims[k] = t->dims[k];
		for (int k = 0; k < s->n_overrides; k++)
			if (!strcmp(s->overrides[k].name, t->name) &&
			    s->overrides[k].rank == t->rank)
				memcpy(ov[n].dims, s->overrides[k].dims, sizeof ov[n].dims);
		ov[n].dims[0] = batch;
		n++;
	}
	char *path = strdup(s->model_path);
	int rc = pb_session_open_model(s, path, ov, n, err);
	free(path);
	for (int i = 0; i < n; i++)
		pb_input_override_free(&ov[i]);
	free(ov);
	return rc;
}

void pb_batch_guard_begin(pb_session *s, pb_batch_guard *bg)
{
	const pb_graph *g = s->graph;
	bg->gen = s->graph_gen;
	bg->batch = 0;
	if (g && g->n_inputs > 0 && g->tensors[g->inputs[0]].rank > 0)
		bg->batch = g->tensors[g->inputs[0]].dims[0];
	bg->plan = s->plan ? pb_plan_copy(s->plan) : NULL;
	bg->dirty = s->dirty;
}

void pb_batch_guard_end(pb_session *s, pb_batch_guard *bg, int rc)
{
	if (rc != PB_OK && s->graph_gen != bg->gen && bg->batch > 0) {
		pb_error e = {0};
		if (pb_session_set_batch(s, bg->batch, &e) == PB_OK) {
			pb_session_replace_plan(s, bg->plan);
			bg->plan = NULL;
			s->dirty = bg->dirty;
		}
	}
	pb_plan_free(bg->plan);
	bg->plan = NULL;
}

void pb_session_replace_plan(pb_session *s, pb_plan *plan)
{
	if (plan == s->plan)
		return;
	pb_plan_free(s->plan);
	s->plan = plan;
	s->dirty = 1;
	pb_session_notify(s, PB_EVENT_PLAN);
}

/* A plan the attached solver did not install detaches it (session.h). */
static void detach_foreign(pb_session *s)
{
	if (!s->solver || s->plan == s->solver_plan)
		return;
	const pb_plan *p = s->plan;
	snprintf(s->solver_detached, sizeof s->solver_detached,
	         "%.40s detached: its plan was replaced by %s%s%.40s%s", s->solver_name,
	         p ? p->kind : "no plan", p ? "/" : "", p ? p->method : "",
	         p && !strcmp(p->method, "manual") ? " (a hand edit)" : "");
	pb_session_set_solver(s, NULL, NULL);
	pb_session_notify(s, PB_EVENT_SOLVER_DETACH);
}

void pb_session_set_solver_plan(pb_session *s, pb_plan *plan)
{
	s->solver_plan = plan; /* not a foreign plan: the solver stays */
	pb_session_set_plan(s, plan);
}

void pb_session_set_plan(pb_session *s, pb_plan *plan)
{
	if (plan == s->plan)
		return;
	if (s->n_undo == PB_UNDO_MAX) {
		pb_plan_free(s->undo[0]);
		memmove(s->undo, s->undo + 1, (PB_UNDO_MAX - 1) * sizeof *s->undo);
		s->n_undo--;
	}
	s->undo[s->n_undo++] = s->plan;
	if (plan && !plan->model_batch) /* the batch its shapes are at (plan.h) */
		plan->model_batch = pb_plan_graph_batch(s->graph);
	for (int i = 0; i < s->n_redo; i++)
		pb_plan_free(s->redo[i]);
	s->n_redo = 0;
	s->plan = plan;
	s->dirty = 1;
	pb_session_notify(s, PB_EVENT_PLAN);
	detach_foreign(s);
}

int pb_session_undo(pb_session *s)
{
	if (s->n_undo == 0)
		return 0;
	s->redo[s->n_redo++] = s->plan;
	s->plan = s->undo[--s->n_undo];
	s->dirty = 1;
	pb_session_notify(s, PB_EVENT_PLAN);
	detach_foreign(s);
	return 1;
}

int pb_session_redo(pb_session *s)
{
	if (s->n_redo == 0)
		return 0;
	s->undo[s->n_undo++] = s->plan;
	s->plan = s->redo[--s->n_redo];
	s->dirty = 1;
	pb_session_notify(s, PB_EVENT_PLAN);
	detach_foreign(s);
	return 1;
}

void pb_session_set_solver(pb_session *s, pb_solver *solver, const char *name)
{
	pb_solver_free(s->solver);
	free(s->solver_name);
	s->solver = solver;
	s->solver_name = name ? strdup(name) : NULL;
	s->solver_plan = NULL;
	if (solver)
		s->solver_detached[0] = '\0';
}

void pb_session_listen(pb_session *s, pb_session_listener fn, void *ud)
{
	if (s->n_listeners < (int)(sizeof s->listeners / sizeof s->listeners[0])) {
		s->listeners[s->n_listeners].fn = fn;
		s->listeners[s->n_listeners].ud = ud;
		s->n_listeners++;
	}
}

void pb_session_unlisten(pb_session *s, pb_session_listener fn, void *ud)
{
	for (int i = 0; i < s->n_listeners; i++)
		if (s->listeners[i].fn == fn && s->listeners[i].ud == ud) {
			memmove(&s->listeners[i], &s->listeners[i + 1],
			        (size_t)(s->n_listeners - i - 1) * sizeof s->listeners[0]);
			s->n_listeners--;
			return;
		}
}

void pb_session_notify(pb_session *s, int what)
{
	for (int i = 0; i < s->n_listeners; i++)
		s->listeners[i].fn(s->listeners[i].ud, what);
}

const char *const *pb_session_node_names(pb_session *s)
{
	if (!s->graph)
		return NULL;
	if (!s->names_cache) {
		s->names_cache = malloc((size_t)(s->graph->n_nodes + 1) * sizeof *s->names_cache);
		for (int i = 0; s->names_cache && i < s->graph->n_nodes; i++)
			s->names_cache[i] = s->graph->nodes[i].name;
	}
	return s->names_cache;
}

/* The session now matches the file at path. */
static void mark_saved(pb_session *s, const char *path)
{
	char *p = strdup(path);
	if (p) {
		free(s->session_path);
		s->session_path = p;
	}
	s->dirty = 0;
}

json_t *pb_session_to_json(pb_session *s)
{
	json_t *j = json_object();
	json_object_set_new(j, "format", json_string("partbench-session"));
	json_object_set_new(j, "version", json_integer(1));
	/* absolute paths: the session loads from any directory */
	char *model_abs = s->model_path ? realpath(s->model_path, NULL) : NULL;
	char *layout_abs = s->hw && s->hw->path ? realpath(s->hw->path, NULL) : NULL;
	json_object_set_new(j, "model",
	                    s->model_path ? json_string(model_abs ? model_abs : s->model_path)
	                                  : json_null());
	free(model_abs);
	json_t *ov = json_array();
	for (int i = 0; i < s->n_overrides; i++) {
		json_t *o = json_object(), *dims = json_array();
		json_object_set_new(o, "name", json_string(s->overrides[i].name));
		for (int d = 0; d < s->overrides[i].rank; d++)
			json_array_append_new(dims, json_integer(s->overrides[i].dims[d]));
		json_object_set_new(o, "dims", dims);
		json_array_append_new(ov, o);
	}
	json_object_set_new(j, "inputs", ov);
	json_object_set_new(
	    j, "layout", s->hw ? json_string(layout_abs ? layout_abs : s->hw->path) : json_null());
	free(layout_abs);
	json_object_set_new(
	    j, "plan", s->plan ? pb_plan_to_json(s->plan, pb_session_node_names(s)) : json_null());
	char view[1024];
	pb_view_format(&s->view, view, sizeof view);
	json_object_set_new(j, "view", json_string(view));
	return j;
}

int pb_session_save(pb_session *s, const char *path, pb_error *err)
{
	json_t *j = pb_session_to_json(s);
	int rc = pb_json_save_atomic(j, path, err);
	json_decref(j);
	if (rc == PB_OK)
		mark_saved(s, path);
	return rc;
}

/* A path named in the session file at session_path: absolute as is;
 * relative, from the session file's folder when the file is there, else
 * from the working directory (sessions saved before paths were absolute). */
static char *beside(const char *session_path, const char *p)
{
	const char *slash = strrchr(session_path, '/');
	if (p[0] == '/' || !slash)
		return strdup(p);
	size_t n = (size_t)(slash - session_path) + 1 + strlen(p) + 1;
	char *joined = malloc(n);
	if (!joined)
		return NULL;
	snprintf(joined, n, "%.*s/%s", (int)(slash - session_path), session_path, p);
	if (access(joined, F_OK) == 0 || access(p, F_OK) != 0)
		return joined;
	free(joined);
	return strdup(p);
}

int pb_session_load(pb_session *s, const char *path, pb_error *err)
{
	int locked_rc = refuse_locked(s, "loading session", path, err);
	if (locked_rc)
		return locked_rc;
	json_t *j = pb_door_load_json(path, 0, PB_DOOR_JSON, "session", NULL, err);
	if (!j)
		return err ? err->code : PB_EINPUT;
	int rc = PB_OK;
	char *model = NULL;
	const char *fmt = json_string_value(json_object_get(j, "format"));
	if (!fmt || strcmp(fmt, "partbench-session") != 0) {
		rc = pb_err(err, PB_EINPUT, "%s: not a partbench session file", path);
		goto done;
	}
	const char *model_in = json_string_value(json_object_get(j, "model"));
	model = model_in ? beside(path, model_in) : NULL;
	if (!model) {
		rc = pb_err(err, PB_EINPUT, "%s: the session names no model", path);
		goto done;
	}
	/* The input overrides get the checks of --input (pb_parse_input_override):
	 * the loaders trust them. */
	const json_t *ov = json_object_get(j, "inputs");
	int n_ov = (int)json_array_size(ov);
	pb_input_override *ovs = calloc((size_t)(n_ov ? n_ov : 1), sizeof *ovs);
	if (!ovs) {
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory", path);
		goto done;
	}
	for (int i = 0; i < n_ov && rc == PB_OK; i++) {
		const json_t *o = json_array_get(ov, (size_t)i), *dims = json_object_get(o, "dims");
		ovs[i].name = (char *)json_string_value(json_object_get(o, "name"));
		ovs[i].rank = (int)json_array_size(dims);
		int ok = ovs[i].name && json_is_array(dims) && ovs[i].rank <= PB_MAX_RANK;
		for (int d = 0; ok && d < ovs[i].rank; d++) {
			const json_t *v = json_array_get(dims, (size_t)d);
			ovs[i].dims[d] = json_integer_value(v);
			ok = json_is_integer(v) && ovs[i].dims[d] >= 0 &&
			     ovs[i].dims[d] <= PB_INPUT_DIM_MAX;
		}
		if (!ok)
			rc = pb_err(err, PB_EINPUT,
			            "%s: inputs[%d]: expected {\"name\": NAME, \"dims\": [...]} "
			            "with at most %d dims, integers from 0 to 2^40",
			            path, i, PB_MAX_RANK);
	}
	if (rc != PB_OK) {
		free(ovs);
		goto done;
	}
	/* Load into a fresh session first so that a failure leaves s intact. */
	pb_session *tmp = pb_session_new();
	rc = pb_session_open_model(tmp, model, ovs, n_ov, err);
	free(ovs);
	const char *layout_in = json_string_value(json_object_get(j, "layout"));
	char *layout = layout_in ? beside(path, layout_in) : NULL;
	if (rc == PB_OK && layout)
		rc = pb_session_open_layout(tmp, layout, err);
	free(layout);
	pb_plan *plan = NULL;
	const json_t *pj = json_object_get(j, "plan");
	if (rc == PB_OK && json_is_object(pj))
		rc = pb_plan_from_json(pj, path, tmp->graph->n_nodes, &plan, err);
	if (rc != PB_OK) {
		pb_err_prefix(err, "%s", path);
		pb_session_free(tmp);
		goto done;
	}
	/* Commit: move everything from tmp into s. */
	pb_session_set_graph(s, tmp->graph, model);
	tmp->graph = NULL;
	clear_overrides(s);
	s->overrides = tmp->overrides;
	s->n_overrides = tmp->n_overrides;
	tmp->overrides = NULL;
	tmp->n_overrides = 0;
	pb_hw_free(s->hw);
	s->hw = tmp->hw;
	tmp->hw = NULL;
	pb_session_replace_plan(s, plan);
	const char *view = json_string_value(json_object_get(j, "view"));
	pb_view_parse(&s->view, view);
	pb_session_free(tmp);
	mark_saved(s, path);
	pb_session_notify(s, PB_EVENT_HW | PB_EVENT_PLAN);
done:
	free(model);
	json_decref(j);
	return rc;
}
