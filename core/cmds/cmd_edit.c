/*
 * cmds/cmd_edit.c — manual edits of the current plan: action, boundary,
 * merge, split, evaluate on partition plans; backend on map plans; fuse-in
 * and fuse-out on fuse plans (used by the TUI's keys and by scripts; from
 * the CLI on a saved plan with --plan FILE -o FILE).
 *
 * Each command parses its arguments, runs the edit of the plan kind's
 * module (partition/chain/part_edit.h, transform/map.h and fuse.h, shard/) and
 * installs the new plan (method "manual") with pb_session_set_plan, so every
 * edit can be undone; a refused edit leaves the plan as it was and says why.
 * The printed message is made from the two plans (the groups that differ,
 * before -> after, and the figures of both), never from the request. On a
 * partition plan the exact optimum of the old plan is carried over when it
 * was computed for the same layout; `evaluate` recomputes it. The session's
 * Lua `cut` rules and pins (`core` on partition plans, `stage` on pipeline
 * plans) are in force: an edit that would break one the plan obeys is
 * refused naming the rule.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmds/spec_cands.h"
#include "commands.h"
#include "partition/chain/env.h"
#include "partition/chain/exact.h"
#include "partition/mesh/mesh_edit.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/chain_rules.h"
#include "partition/chain/part_edit.h"
#include "partition/chain/report.h"
#include "script/hooks.h"
#include "shard/dtp/dtp_edit.h"
#include "shard/pipeline/pipeline_edit.h"
#include "shard/pipeline/pipeline_plan.h"
#include "shard/search/spec_pin.h"
#include "shard/strategy/strategy_problem.h"
#include "transform/fuse.h"
#include "transform/map.h"
#include "util/fmt.h"

static const pb_opt edit_opts[] = {
    PB_OPTS_JSON,
    PB_OPTS_END,
};

typedef struct edit {
	pb_part_problem *P;
	int *ac;
	int *ac0; /* the plan's state before the edit */
} edit;

static void edit_free(edit *e)
{
	pb_part_problem_free(e->P);
	free(e->ac);
	free(e->ac0);
}

/* The session's Lua `cut` rules and `core` / `stage` pins (NULL: none). */
static int session_rules(pb_session *s, const char *kind, pb_part_rules **out, pb_error *err)
{
	pb_hooks hk;
	*out = NULL;
	pb_hooks_init(&hk, s);
	int rc = pb_hooks_chain_rules(&hk, kind, out, err);
	rc = pb_hooks_finish(&hk, rc, err);
	if (rc) {
		pb_part_rules_free(*out);
		*out = NULL;
	}
	return rc;
}

static int edit_begin(pb_cmd_ctx *ctx, const char *name, edit *e, pb_error *err)
{
	memset(e, 0, sizeof *e);
	pb_session *s = ctx->s;
	if (!s->graph)
		return pb_err(err, PB_EUSAGE, "%s: no model is open", name);
	if (!s->plan)
		return pb_err(err, PB_EUSAGE, "%s: no plan yet (run 'partition' first)", name);
	if (strcmp(s->plan->kind, "partition") != 0) {
		/* the edit that kind of plan has */
		const char *k = s->plan->kind,
		           *hint = !strcmp(k, "map") ? "; a map plan's is 'backend'"
		                   : !strcmp(k, "fuse")
		                       ? "; a fuse plan's are 'fuse-in' and 'fuse-out'"
		                   : !strcmp(k, "shard") ? "; a shard plan's is 'pin'"
		                                         : "";
		return pb_err(err, PB_EUSAGE,
		              "%s: the current plan is a '%s' plan; %s edits 'partition'%s plans "
		              "(run 'partition'%s first)%s",
		              name, k, name, strcmp(name, "boundary") ? "" : " and 'pipeline'",
		              strcmp(name, "boundary") ? "" : " or 'pipeline'", hint);
	}
	if (!s->hw)
		return pb_err(err, PB_EUSAGE, "%s: no layout loaded (use 'layout FILE')", name);
	pb_manycore mc;
	int rc = pb_manycore_parse(s->hw, &mc, err);
	/* A plan made with measured kernel times (partition --costs) is edited
	 * under the same costs. */
	const char *costs = json_string_value(json_object_get(s->plan->detail, "costs"));
	double *times = NULL;
	int found;
	if (!rc && costs)
		rc = pb_part_load_costs(s->graph, costs, &times, &found, err);
	if (!rc)
		rc = pb_part_problem_new_timed(s->graph, &mc, times, &e->P, err);
	free(times);
	/* the Lua rules: an edit may not break one the plan obeys */
	pb_part_rules *rules = NULL;
	if (!rc && !(rc = session_rules(s, "core", &rules, err)))
		rc = pb_part_problem_set_rules(e->P, rules, err);
	pb_part_rules_free(rules);
	if (rc) {
		edit_free(e);
		return pb_err_prefix(err, "%s", name);
	}
	e->ac = malloc((size_t)e->P->n * sizeof *e->ac);
	e->ac0 = malloc((size_t)e->P->n * sizeof *e->ac0);
	if (!e->ac || !e->ac0) {
		edit_free(e);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", name);
	}
	if ((rc = pb_part_from_plan(e->P, s->plan, e->ac, err))) {
		edit_free(e);
		return pb_err_prefix(err, "%s", name);
	}
	memcpy(e->ac0, e->ac, (size_t)e->P->n * sizeof *e->ac);
	return PB_OK;
}

/* The old plan's optimum if it was made for the same layout, else NAN. */
static double carried_optimum(const pb_session *s, const pb_part_problem *P)
{
	const char *lay = json_string_value(json_object_get(s->plan->detail, "layout"));
	if (!lay || strcmp(lay, P->hw.name) != 0)
		return NAN;
	return pb_plan_metric(s->plan, "optimum", NAN);
}

static int edit_commit(pb_cmd_ctx *ctx, edit *e, const pb_args *a, double optimum, const char *name,
                       pb_error *err)
{
	pb_session *s = ctx->s;
	char what[1024];
	pb_plan *p = NULL;
	if (e->P->hw.mesh_routed) {
		/* a placed plan: placed again and priced by the routed model */
		int rc = pb_mesh_edit_place(e->P, s->plan, e->ac, "manual", optimum, &p, err);
		if (rc)
			return pb_err_prefix(err, "%s", name);
		optimum = NAN;
		pb_part_edit_describe_times(e->P, e->ac0, e->ac, "placed max(t)",
		                            pb_plan_metric(s->plan, "max_time", NAN),
		                            pb_plan_metric(p, "max_time", NAN), what, sizeof what);
	} else {
		pb_part_edit_describe(e->P, e->ac0, e->ac, what, sizeof what);
		p = pb_part_to_plan(e->P, e->ac, "manual", optimum);
	}
	if (!p)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", name);
	pb_session_set_plan(s, p);
	ctx->redraw |= PB_REDRAW_ALL;
	if (pb_args_has(a, "json")) {
		json_t *j = pb_part_report_json(p, "manual", e->P->hw.name);
		json_object_set_new(j, "edit", json_string(what));
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
		json_decref(j);
		return PB_OK;
	}
	fprintf(ctx->out, "%s\nreward %.6f", what, pb_plan_metric(p, "reward", NAN));
	if (isfinite(optimum))
		fprintf(ctx->out, ", gap %.3f%% to the optimum %.6f ms",
		        100 * pb_plan_metric(p, "gap", NAN), optimum * 1e3);
	if (pb_plan_metric(p, "max_storage", 0) > pb_plan_metric(p, "memory", INFINITY))
		fprintf(ctx->out, ", OVER MEMORY");
	fputc('\n', ctx->out);
	return PB_OK;
}

static int parse_int(const char *cmd, const char *what, const char *s, long *out, pb_error *err)
{
	char *end;
	if (!s)
		return pb_err(err, PB_EUSAGE, "%s: missing %s", cmd, what);
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end)
		return pb_err(err, PB_EUSAGE, "%s: %s must be an integer, got '%s'", cmd, what, s);
	if (v < -1000000000L || v > 1000000000L)
		return pb_err(err, PB_EUSAGE, "%s: %s %ld is out of range", cmd, what, v);
	*out = v;
	return PB_OK;
}

/* The partition edits: parse, run the edit of partition/chain/part_edit.h, print. */
enum { ED_ACTION, ED_BOUNDARY, ED_MERGE, ED_SPLIT };

static int part_edit(pb_cmd_ctx *ctx, const pb_args *a, const char *name, int kind, long x, long y,
                     pb_error *err)
{
	edit e;
	int rc = edit_begin(ctx, name, &e, err);
	if (rc)
		return rc;
	const pb_graph *g = ctx->s->graph;
	switch (kind) {
	case ED_ACTION:
		rc = pb_part_edit_action(e.P, g, e.ac0, (int)x, e.ac, err);
		break;
	case ED_BOUNDARY:
		rc = pb_part_edit_boundary(e.P, g, e.ac0, (int)x, (int)y, e.ac, err);
		break;
	case ED_MERGE:
		rc = pb_part_edit_merge(e.P, g, e.ac0, (int)x, e.ac, err);
		break;
	default:
		rc = pb_part_edit_split(e.P, g, e.ac0, (int)x, e.ac, err);
		break;
	}
	if (rc == PB_EUSAGE) {
		size_t l = strlen(err->msg);
		snprintf(err->msg + l, sizeof err->msg - l, "; plan unchanged");
	}
	if (rc)
		pb_err_prefix(err, "%s", name);
	else
		rc = edit_commit(ctx, &e, a, carried_optimum(ctx->s, e.P), name, err);
	edit_free(&e);
	return rc;
}

static int cmd_action(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long k;
	int rc = parse_int("action", "K (action number)", pb_args_pos(a, 0), &k, err);
	return rc ? rc : part_edit(ctx, a, "action", ED_ACTION, k, 0, err);
}

static int pipeline_boundary(pb_cmd_ctx *ctx, const pb_args *a, int k, int delta, pb_error *err);

static int cmd_boundary(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long g, d;
	int rc = parse_int("boundary", "G (group)", pb_args_pos(a, 0), &g, err);
	if (!rc)
		rc = parse_int("boundary", "DELTA (layers)", pb_args_pos(a, 1), &d, err);
	if (rc)
		return rc;
	if (ctx->s->graph && ctx->s->plan && strcmp(ctx->s->plan->kind, "pipeline") == 0)
		return pipeline_boundary(ctx, a, (int)g, (int)d, err);
	return part_edit(ctx, a, "boundary", ED_BOUNDARY, g, d, err);
}

static int cmd_merge(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long g;
	int rc = parse_int("merge", "G (group)", pb_args_pos(a, 0), &g, err);
	return rc ? rc : part_edit(ctx, a, "merge", ED_MERGE, g, 0, err);
}

static int cmd_split(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long g;
	int rc = parse_int("split", "G (group)", pb_args_pos(a, 0), &g, err);
	return rc ? rc : part_edit(ctx, a, "split", ED_SPLIT, g, 0, err);
}

/* move-core ROW COL G: a core of a placed plan to a neighbouring group
 * (partition/mesh/mesh_edit.h). */
static int cmd_move_core(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long r, c, g;
	int rc = parse_int("move-core", "ROW", pb_args_pos(a, 0), &r, err);
	if (!rc)
		rc = parse_int("move-core", "COL", pb_args_pos(a, 1), &c, err);
	if (!rc)
		rc = parse_int("move-core", "G (group)", pb_args_pos(a, 2), &g, err);
	edit e;
	if (rc || (rc = edit_begin(ctx, "move-core", &e, err)))
		return rc;
	char what[512];
	pb_plan *p = NULL;
	rc = pb_mesh_edit_move(e.P, ctx->s->graph, ctx->s->plan, (int)r, (int)c, (int)g, &p, what,
	                       sizeof what, err);
	if (rc == PB_EUSAGE) {
		size_t l = strlen(err->msg);
		snprintf(err->msg + l, sizeof err->msg - l, "; plan unchanged");
	}
	if (rc) {
		edit_free(&e);
		return pb_err_prefix(err, "move-core");
	}
	pb_session_set_plan(ctx->s, p);
	ctx->redraw |= PB_REDRAW_ALL;
	if (pb_args_has(a, "json")) {
		json_t *j = pb_part_report_json(p, "manual", e.P->hw.name);
		json_object_set_new(j, "edit", json_string(what));
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
		json_decref(j);
	} else {
		fprintf(ctx->out, "%s\n", what);
	}
	edit_free(&e);
	return PB_OK;
}

static int cmd_evaluate(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	edit e;
	int rc = edit_begin(ctx, "evaluate", &e, err);
	if (rc)
		return rc;
	double opt;
	if ((rc = pb_part_exact_solve(e.P, &opt, NULL, NULL, err))) {
		edit_free(&e);
		return rc;
	}
	pb_plan *p = NULL;
	if (e.P->hw.mesh_routed) {
		/* a placed plan keeps its placement, priced by the routed model */
		rc =
		    pb_mesh_edit_place(e.P, ctx->s->plan, e.ac, ctx->s->plan->method, opt, &p, err);
		if (rc) {
			edit_free(&e);
			return rc;
		}
	} else {
		p = pb_part_to_plan(e.P, e.ac, ctx->s->plan->method, opt);
	}
	edit_free(&e);
	if (!p)
		return pb_err(err, PB_ENOMEM, "evaluate: out of memory");
	if ((rc = pb_hooks_cost_terms(ctx->s, p, err))) {
		pb_plan_free(p);
		return rc;
	}
	pb_session_set_plan(ctx->s, p);
	ctx->redraw |= PB_REDRAW_ALL;
	if (pb_args_has(a, "json")) {
		json_t *j = pb_part_report_json(p, p->method, ctx->s->hw->name);
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
		json_decref(j);
	} else {
		pb_part_report_table(ctx->out, p);
	}
	return PB_OK;
}

/* ---------------------------------------------- map and fuse plan edits */

/* --plan FILE: the saved plan becomes the session's (undoable) first. */
static int plan_option(pb_cmd_ctx *ctx, const pb_args *a, pb_error *err)
{
	const char *path = pb_args_str(a, "plan", NULL);
	if (!path)
		return PB_OK;
	pb_plan *p = NULL;
	int rc = pb_plan_load(path, ctx->s->graph->n_nodes, &p, err);
	if (rc)
		return rc;
	/* a plan made at another batch (shard/pipeline --batch) is edited on the
	 * model reopened at it, as the command that made it left its session */
	long gb = pb_plan_graph_batch(ctx->s->graph);
	if (p->model_batch > 0 && gb > 0 && p->model_batch != gb &&
	    (rc = pb_session_set_batch(ctx->s, p->model_batch, err)) == PB_OK &&
	    ctx->s->graph->n_nodes != p->n_nodes)
		rc = pb_err(err, PB_EINPUT, "%s: the model at batch %ld has %d nodes, the plan %d",
		            path, p->model_batch, ctx->s->graph->n_nodes, p->n_nodes);
	if (rc) {
		pb_plan_free(p);
		return rc;
	}
	pb_session_set_plan(ctx->s, p);
	return PB_OK;
}

static int node_option(const pb_graph *g, const pb_args *a, const char *cmd, const char *opt,
                       int *out, pb_error *err)
{
	const char *name = pb_args_str(a, opt, NULL);
	if (!name)
		return pb_err(err, PB_EUSAGE, "%s: --%s NAME is required", cmd, opt);
	*out = pb_graph_find_node(g, name);
	if (*out < 0)
		return pb_err(err, PB_EUSAGE, "%s: no node named '%s' in %s", cmd, name, g->path);
	return PB_OK;
}

/* Installs the edited plan, saves it with -o, prints before/after. */
static int edit_finish(pb_cmd_ctx *ctx, const pb_args *a, pb_plan *p, const char *what,
                       json_t *before, json_t *after)
{
	pb_session *s = ctx->s;
	int rc = PB_OK;
	pb_error err0 = {0};
	const char *outp = pb_args_str(a, "output", NULL);
	pb_session_set_plan(s, p);
	ctx->redraw |= PB_REDRAW_ALL;
	if (outp)
		rc = pb_plan_save(p, pb_session_node_names(s), outp, &err0);
	if (pb_args_has(a, "json")) {
		json_t *j = json_object();
		json_object_set_new(j, "edit", json_string(what));
		json_object_set_new(j, "kind", json_string(p->kind));
		json_object_set(j, "before", before);
		json_object_set(j, "after", after);
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
		json_decref(j);
	} else {
		fprintf(ctx->out, "%s\n", what);
		const char *k;
		json_t *v;
		json_object_foreach(before, k, v)
		{
			char b1[32], b2[32];
			double x = json_number_value(v),
			       y = json_number_value(json_object_get(after, k));
			if (strstr(k, "time")) {
				pb_fmt_time_fixed(x, b1, sizeof b1);
				pb_fmt_time_fixed(y, b2, sizeof b2);
			} else if (strstr(k, "memory") || strstr(k, "bytes")) {
				pb_fmt_bytes(x, b1, sizeof b1);
				pb_fmt_bytes(y, b2, sizeof b2);
			} else {
				snprintf(b1, sizeof b1, "%.0f", x);
				snprintf(b2, sizeof b2, "%.0f", y);
			}
			fprintf(ctx->out, "  %-20s %s -> %s\n", k, b1, b2);
		}
		if (outp && !rc)
			fprintf(ctx->out, "plan written to %s\n", outp);
	}
	if (rc)
		fprintf(ctx->log, "warning: %s\n", err0.msg);
	return PB_OK;
}

/* The planners' reloads at other batches go to a side session holding the
 * same model, so the session's graph, plan and history stay as they are. */
static int side_reload(void *ud, long batch, const pb_graph **g, pb_error *err)
{
	pb_session *side = ud;
	int rc = pb_session_set_batch(side, batch, err);
	*g = side->graph;
	return rc;
}

static int side_open(pb_session *s, const char *name, pb_session **side, pb_error *err)
{
	*side = NULL;
	if (!s->model_path || !s->model_path[0])
		return pb_err(err, PB_EUSAGE,
		              "%s: a pipeline plan needs a model loaded from a file", name);
	if (!(*side = pb_session_new()))
		return pb_err(err, PB_ENOMEM, "%s: out of memory", name);
	int rc = pb_session_open_model(*side, s->model_path, s->overrides, s->n_overrides, err);
	return rc ? pb_err_prefix(err, "%s", name) : PB_OK;
}

/* A pipeline edit's plan installed and printed (step time before -> after). */
static int pipe_finish(pb_cmd_ctx *ctx, const pb_args *a, pb_pipe_diff *r, const char *name, int rc,
                       pb_error *err)
{
	if (rc) {
		pb_plan_free(r->plan);
		if (rc == PB_EUSAGE) {
			size_t l = strlen(err->msg);
			snprintf(err->msg + l, sizeof err->msg - l, "; plan unchanged");
		}
		return pb_err_prefix(err, "%s", name);
	}
	const pb_plan *old = ctx->s->plan;
	json_t *jb = json_pack("{s:f}", "step_time", r->before);
	json_t *ja = json_pack("{s:f}", "step_time", r->after);
	if (pb_plan_has_metric(old, "memory_per_device")) {
		json_object_set_new(jb, "memory_per_device",
		                    json_real(pb_plan_metric(old, "memory_per_device", 0)));
		json_object_set_new(ja, "memory_per_device",
		                    json_real(pb_plan_metric(r->plan, "memory_per_device", 0)));
	}
	rc = edit_finish(ctx, a, r->plan, r->what, jb, ja);
	json_decref(jb);
	json_decref(ja);
	return rc;
}

/* The Lua cut and stage rules as a dp x tp x pp edit reads them. */
static int dtp_opts(pb_session *s, pb_session *side, const pb_plan *old, pb_dtp_opts *o,
                    pb_part_rules **rules, pb_error *err)
{
	pb_dtp_edit_options(old, o);
	o->pipe.reload = side_reload;
	o->pipe.reload_ud = side;
	int rc = session_rules(s, "stage", rules, err);
	o->pipe.rules = *rules;
	return rc;
}

/* boundary G DELTA on a pipeline plan: the stage (or chunk) split moves and
 * the plan is costed again (shard/pipeline/pipeline_edit.h). */
static int pipeline_boundary(pb_cmd_ctx *ctx, const pb_args *a, int k, int delta, pb_error *err)
{
	pb_session *s = ctx->s, *side = NULL;
	const pb_plan *old = s->plan;
	if (!s->hw)
		return pb_err(err, PB_EUSAGE, "boundary: no layout loaded (use 'layout FILE')");
	pb_cluster cl;
	int rc = pb_cluster_from_hw(s->hw, &cl, err);
	if (rc)
		return rc;
	pb_part_rules *rules = NULL;
	pb_pipe_diff r = {0};
	if ((rc = side_open(s, "boundary", &side, err)) == PB_OK) {
		const pb_graph *g = side->graph;
		if (pb_dtp_edit_is_dtp(old)) {
			pb_dtp_opts o;
			if ((rc = dtp_opts(s, side, old, &o, &rules, err)) == PB_OK)
				rc = pb_dtp_edit_boundary(&g, &cl, &o, old, k, delta, &r, err);
		} else {
			pb_pipe_opts o;
			pb_pipe_opts_default(&o);
			o.reload = side_reload;
			o.reload_ud = side;
			if ((rc = session_rules(s, "stage", &rules, err)) == PB_OK) {
				o.rules = rules;
				rc = pb_pipe_edit_boundary(g, &cl, &o, old, k, delta, &r, err);
			}
		}
	}
	rc = pipe_finish(ctx, a, &r, "boundary", rc, err);
	pb_part_rules_free(rules);
	pb_session_free(side);
	pb_cluster_free(&cl);
	return rc;
}

/* ------------------------------------------------ pin a sharding spec */

static const pb_opt pin_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    PB_OPTS_JSON,
    {.name = "node",
     .type = PB_OPT_STR,
     .metavar = "NAME",
     .help = "the operator to pin (required)"},
    {.name = "spec",
     .type = PB_OPT_STR,
     .metavar = "LABEL",
     .help = "its sharding strategy, as in shard's table: rep, m, n, k, b0, ... (per mesh axis, "
             "comma-separated; required)"},
    {.name = "plan",
     .short_name = 'p',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "edit this saved shard or dp x tp x pp plan (default: the session's)",
     .path = "r:json s"},
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "save the edited plan",
     .path = "w"},
    {.name = "list",
     .type = PB_OPT_FLAG,
     .help = "list the operator's candidate specs (time, memory per device) and change nothing"},
    PB_OPTS_END,
};

/* pin --list: the operator's candidates on a shard plan. */
static int pin_list(pb_cmd_ctx *ctx, const pb_args *a, int nid, pb_error *err)
{
	pb_session *s = ctx->s;
	pb_spec_cand *c;
	int n, rc = pb_spec_cands_of(s, nid, &c, &n, err);
	if (rc)
		return pb_err_prefix(err, "pin");
	const char *name = s->graph->nodes[nid].name,
	           *scheme = json_string_value(json_object_get(s->plan->detail, "scheme"));
	if (pb_args_has(a, "json")) {
		json_t *l = json_array();
		for (int i = 0; i < n; i++)
			json_array_append_new(
			    l, json_pack("{s:s,s:f,s:f,s:b,s:o}", "spec", c[i].label, "time",
			                 c[i].time, "memory_per_device", c[i].memory, "current",
			                 c[i].current, "refused_by",
			                 c[i].refused_by[0] ? json_string(c[i].refused_by)
			                                    : json_null()));
		json_t *j = json_pack("{s:s,s:s,s:o}", "node", name, "scheme", scheme ? scheme : "",
		                      "candidates", l);
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
		json_decref(j);
	} else {
		fprintf(
		    ctx->out,
		    "candidate specs of '%s' (%s) on scheme %s: the operator alone (compute and "
		    "its own collectives; resharding to its neighbours not included)\n"
		    "  %-16s %12s %12s\n",
		    name, s->graph->nodes[nid].op, scheme ? scheme : "?", "spec", "time",
		    "mem/device");
		for (int i = 0; i < n; i++) {
			char t[32], m[32];
			pb_fmt_time_fixed(c[i].time, t, sizeof t);
			pb_fmt_bytes(c[i].memory, m, sizeof m);
			fprintf(ctx->out, "%c %-16s %12s %12s%s%s%s\n", c[i].current ? '*' : ' ',
			        c[i].label, t, m, c[i].current ? "  (the plan's)" : "",
			        c[i].refused_by[0] ? "  refused by the rule " : "",
			        c[i].refused_by);
		}
	}
	free(c);
	return PB_OK;
}

/* A spec the session's Lua candidate filter removes is refused naming it
 * (the re-solve would only say it is no candidate). */
static int pin_check_rules(pb_session *s, int nid, const char *spec, pb_error *err)
{
	pb_spec_cand *c;
	int n, rc = pb_spec_cands_of(s, nid, &c, &n, err);
	for (int i = 0; rc == PB_OK && i < n; i++)
		if (!strcmp(c[i].label, spec) && c[i].refused_by[0])
			rc = pb_err(err, PB_EUSAGE,
			            "pin: spec '%s' of node '%s' is refused by the rule '%s' (the "
			            "session's Lua script); plan unchanged",
			            spec, s->graph->nodes[nid].name, c[i].refused_by);
	free(c);
	return rc;
}

/* pin on a dp x tp x pp plan: every chunk solved again with the pins. */
static int pin_dtp(pb_cmd_ctx *ctx, const pb_args *a, pb_spec_pin *pins, int n_pins, pb_error *err)
{
	pb_session *s = ctx->s, *side = NULL;
	const pb_plan *old = s->plan;
	pb_cluster cl;
	int rc = pb_cluster_from_hw(s->hw, &cl, err);
	if (rc)
		return rc;
	pb_part_rules *rules = NULL;
	pb_pipe_diff r = {0};
	if ((rc = side_open(s, "pin", &side, err)) == PB_OK) {
		const pb_graph *g = side->graph;
		pb_dtp_opts o;
		if ((rc = dtp_opts(s, side, old, &o, &rules, err)) == PB_OK)
			rc = pb_dtp_edit_pin(&g, &cl, &o, old, pins, n_pins, &r, err);
	}
	const pb_spec_pin *mine = &pins[n_pins - 1];
	if (rc == PB_OK &&
	    (!mine->seen || strcmp(pb_spec_pin_strategy(r.plan, mine->nid), mine->label) != 0))
		rc = pb_spec_pin_refuse(s->graph, mine, "its chunk's scheme",
		                        pb_spec_pin_strategy(old, mine->nid), err);
	if (rc == PB_OK) {
		char specs[512];
		size_t l = strlen(r.what);
		pb_spec_pin_describe(s->graph, old, r.plan, specs, sizeof specs);
		snprintf(r.what + l, sizeof r.what - l, "; %s", specs);
		json_object_set_new(r.plan->detail, "pinned",
		                    pb_spec_pin_json(s->graph, pins, n_pins));
	}
	rc = pipe_finish(ctx, a, &r, "pin", rc, err);
	pb_part_rules_free(rules);
	pb_session_free(side);
	pb_cluster_free(&cl);
	return rc;
}

static int cmd_pin(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	int nid, rc;
	if (!s->graph)
		return pb_err(err, PB_EUSAGE, "pin: no model is open");
	if ((rc = plan_option(ctx, a, err)) ||
	    (rc = node_option(s->graph, a, "pin", "node", &nid, err)))
		return rc;
	const pb_plan *old = s->plan;
	int dtp = pb_dtp_edit_is_dtp(old);
	if (!old || (strcmp(old->kind, "shard") != 0 && !dtp))
		return pb_err(
		    err, PB_EUSAGE,
		    "pin: the current plan is %s%s%s; pin edits 'shard' plans and dp x tp x "
		    "pp plans (shard --pipeline); run 'shard' first",
		    old ? "a '" : "absent", old ? old->kind : "", old ? "' plan" : "");
	if (!s->hw)
		return pb_err(err, PB_EUSAGE, "pin: no layout loaded (use 'layout FILE')");
	const char *spec = pb_args_str(a, "spec", NULL);
	int list = pb_args_has(a, "list");
	if (list && dtp)
		return pb_err(err, PB_EUSAGE, "pin: --list lists the candidates on 'shard' plans");
	if (!spec && !list)
		return pb_err(err, PB_EUSAGE, "pin: --spec LABEL is required");
	const char *was = pb_spec_pin_strategy(old, nid);
	if (!*was)
		return pb_err(err, PB_EUSAGE,
		              "pin: node '%s' (%s) is no operator of the %s plan (it touches no "
		              "activation)",
		              s->graph->nodes[nid].name, s->graph->nodes[nid].op, old->kind);
	if (list)
		return pin_list(ctx, a, nid, err);
	if (!dtp && (rc = pin_check_rules(s, nid, spec, err)))
		return rc;
	pb_spec_pin pins[PB_SPEC_PIN_MAX];
	int n_pins;
	if ((rc = pb_spec_pin_collect(s->graph, old, nid, spec, pins, &n_pins, err)))
		return pb_err_prefix(err, "pin");
	if (dtp)
		return pin_dtp(ctx, a, pins, n_pins, err);
	pb_cluster cl;
	if ((rc = pb_cluster_from_hw(s->hw, &cl, err)))
		return rc;
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	pb_hooks hk;
	pb_hooks_init(&hk, s);
	rc = pb_hooks_shard(&hk, &o, err);
	pb_plan *p = NULL;
	if (rc == PB_OK)
		rc = pb_shard_edit_pin(s->graph, &cl, &o, old, pins, n_pins, &p, err);
	rc = pb_hooks_finish(&hk, rc, err);
	pb_cluster_free(&cl);
	if (rc) {
		pb_plan_free(p);
		if (rc == PB_EUSAGE) {
			size_t l = strlen(err->msg);
			snprintf(err->msg + l, sizeof err->msg - l, "; plan unchanged");
		}
		return pb_err_prefix(err, "pin");
	}
	char what[768];
	pb_spec_pin_describe(s->graph, old, p, what, sizeof what);
	size_t wl = strlen(what);
	if (wl + 3 < sizeof what) {
		snprintf(what + wl, sizeof what - wl, "; ");
		pb_spec_pin_label(p, what + wl + 2, sizeof what - wl - 2);
	}
	json_t *jb = json_pack("{s:f,s:f,s:f}", "step_time", pb_plan_metric(old, "step_time", NAN),
	                       "comm_time", pb_plan_metric(old, "comm_time", NAN),
	                       "memory_per_device", pb_plan_metric(old, "memory_per_device", NAN));
	json_t *ja = json_pack("{s:f,s:f,s:f}", "step_time", pb_plan_metric(p, "step_time", NAN),
	                       "comm_time", pb_plan_metric(p, "comm_time", NAN),
	                       "memory_per_device", pb_plan_metric(p, "memory_per_device", NAN));
	rc = edit_finish(ctx, a, p, what, jb, ja);
	json_decref(jb);
	json_decref(ja);
	return rc;
}

static const pb_opt backend_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    PB_OPTS_JSON,
    {.name = "node", .type = PB_OPT_STR, .metavar = "NAME", .help = "the node to move (required)"},
    {.name = "to",
     .type = PB_OPT_STR,
     .metavar = "BACKEND",
     .help = "the backend it moves to (required)"},
    {.name = "region", .type = PB_OPT_FLAG, .help = "move the node's whole aggregate"},
    {.name = "plan",
     .short_name = 'p',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "edit this saved map plan (default: the session's)",
     .path = "r:json s"},
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "save the edited plan",
     .path = "w"},
    PB_OPTS_END,
};

static int cmd_backend(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	int node, rc;
	if ((rc = plan_option(ctx, a, err)) ||
	    (rc = node_option(s->graph, a, "backend", "node", &node, err)))
		return rc;
	const char *to = pb_args_str(a, "to", NULL);
	if (!to)
		return pb_err(err, PB_EUSAGE, "backend: --to BACKEND is required");
	pb_hetero *h = NULL;
	if ((rc = pb_hetero_parse(s->hw, &h, err)))
		return rc;
	int b = -1;
	for (int i = 0; i < h->n; i++)
		if (strcmp(h->b[i].name, to) == 0)
			b = i;
	if (b < 0) {
		rc = pb_err(err, PB_EUSAGE, "backend: %s has no backend named '%s'", h->path, to);
		pb_hetero_free(h);
		return rc;
	}
	pb_map_result *r = NULL;
	char what[512];
	/* the Lua backend rules the solvers obey */
	pb_hooks hk;
	pb_hooks_init(&hk, s);
	pb_map_opts mo = {0};
	rc = pb_hooks_map(&hk, h, &mo, err);
	if (rc == PB_OK)
		rc = pb_map_edit(s->graph, h, s->plan, node, b, pb_args_has(a, "region"), hk.force,
		                 (const char *const *)hk.force_rule, &r, what, sizeof what, err);
	rc = pb_hooks_finish(&hk, rc, err);
	pb_plan *p = rc ? NULL : pb_map_plan(s->graph, h, r);
	if (!rc && !p)
		rc = pb_err(err, PB_ENOMEM, "backend: out of memory");
	if (rc) {
		pb_map_result_free(r);
		pb_hetero_free(h);
		return pb_err_prefix(err, "backend");
	}
	pb_plan_set_method(p, "manual");
	json_t *before =
	    json_pack("{s:f,s:f,s:f}", "serial_time", pb_plan_metric(s->plan, "serial_time", NAN),
	              "pipelined_time", pb_plan_metric(s->plan, "pipelined_time", NAN),
	              "aggregates", (double)s->plan->n_groups);
	json_t *after = json_pack("{s:f,s:f,s:f}", "serial_time", r->serial_time, "pipelined_time",
	                          r->pipelined_time, "aggregates", (double)r->n_agg);
	rc = edit_finish(ctx, a, p, what, before, after);
	json_decref(before);
	json_decref(after);
	pb_map_result_free(r);
	pb_hetero_free(h);
	return rc;
}

static const pb_opt fuse_edit_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_JSON,
    {.name = "node", .type = PB_OPT_STR, .metavar = "NAME", .help = "the node to move (required)"},
    {.name = "with",
     .type = PB_OPT_STR,
     .metavar = "NAME",
     .help = "fuse-in: the node whose fusion group it joins (required)"},
    {.name = "layout",
     .short_name = 'l',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "read the cost model from the layout's `fusion` table",
     .path = "r:lua"},
    {.name = "plan",
     .short_name = 'p',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "edit this saved fuse plan (default: the session's)",
     .path = "r:json s"},
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "save the edited plan",
     .path = "w"},
    PB_OPTS_END,
};

static int fuse_edit(pb_cmd_ctx *ctx, const pb_args *a, const char *name, int in, pb_error *err)
{
	pb_session *s = ctx->s;
	int node, with = -1, rc;
	if ((rc = plan_option(ctx, a, err)) ||
	    (rc = node_option(s->graph, a, name, "node", &node, err)) ||
	    (in && (rc = node_option(s->graph, a, name, "with", &with, err))))
		return rc;
	const char *layout = pb_args_str(a, "layout", NULL);
	if (layout && (rc = pb_session_open_layout(s, layout, err)))
		return rc;
	pb_fuse_model m;
	pb_fuse_model_default(&m);
	if ((rc = pb_fuse_model_from_hw(s->hw, &m, err)))
		return rc;
	const pb_fuse_rules *session_rules = pb_fuse_rules_of(s);
	if (!session_rules)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", name);
	pb_fuse_rules rules = *session_rules;
	pb_hooks hk;
	pb_hooks_init(&hk, s);
	pb_hooks_fuse(&hk, &rules);
	pb_fuse_edit_result res;
	rc = pb_hooks_finish(
	    &hk, pb_fuse_edit(s->graph, s->plan, &rules, &m, node, with, &res, err), err);
	if (rc) {
		pb_plan_free(res.plan);
		return pb_err_prefix(err, "%s", name);
	}
	json_t *before = json_pack("{s:f,s:f}", "time", res.time_before, "launches",
	                           (double)res.launches_before);
	json_t *after =
	    json_pack("{s:f,s:f}", "time", res.time_after, "launches", (double)res.launches_after);
	rc = edit_finish(ctx, a, res.plan, res.what, before, after);
	json_decref(before);
	json_decref(after);
	return rc;
}

static int cmd_fuse_in(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	return fuse_edit(ctx, a, "fuse-in", 1, err);
}

static int cmd_fuse_out(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	return fuse_edit(ctx, a, "fuse-out", 0, err);
}

const pb_command pb_cmds_edit[] = {
    {.name = "action",
     .usage = "action K [--json]",
     .summary = "apply action number K of the method to the current partition plan",
     .opts = edit_opts,
     .fn = cmd_action,
     .help = "Actions are numbered 0..4(n-1)-1: K = type*(n-1) + i acts on cores (i, i+1)\n"
             "with type a=0 (merge into the later group), b=1 (merge onto the earlier core),\n"
             "c=2 (give the last layer of core i to i+1), d=3 (give the first layer of i+1\n"
             "to i). An invalid action leaves the plan unchanged and says why.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "boundary",
     .usage = "boundary G DELTA [--json]",
     .summary = "move the boundary between groups (or pipeline stages) G and G+1 by DELTA layers "
                "(DELTA>0 grows G)",
     .opts = edit_opts,
     .fn = cmd_boundary,
     .help = "On a partition plan: layers of the chain. On a pipeline plan: nodes in topological\n"
             "order (DELTA>0: the first DELTA nodes of stage G+1 join G; DELTA<0: the last nodes\n"
             "of G join G+1), then every stage is sharded again under the plan's batch,\n"
             "micro-batches and training flag; the step time before and after is printed.\n"
             "On a dp x tp x pp plan (shard --pipeline auto): chunks, every chunk costed again\n"
             "with the plan's dp, tp, pp, micro-batches, schedule and search options.\n"
             "A move that would break a Lua cut rule or a core/stage pin the plan obeys is\n"
             "refused, naming the rule and the node. The message lists the groups that\n"
             "changed, before -> after, with the figures of both plans.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "merge",
     .usage = "merge G [--json]",
     .summary = "merge groups G and G+1 into one group with the cores and layers of both",
     .opts = edit_opts,
     .fn = cmd_merge,
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "split",
     .usage = "split G [--json]",
     .summary = "split group G's cores into two groups, layers cut to balance MACs per core",
     .opts = edit_opts,
     .fn = cmd_split,
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "backend",
     .usage = "backend [MODEL] --node NAME --to BACKEND [--region] [--plan FILE] [-o FILE]",
     .summary = "move a node (or its aggregate) of the map plan to another backend",
     .opts = backend_opts,
     .fn = cmd_backend,
     .flags = PB_CMD_GRAPH | PB_CMD_LAYOUT,
     .help = "Every other node keeps its backend; aggregation, buffers and the pipelined model\n"
             "are redone, so aggregates stay acyclic and never span another backend's node.\n"
             "Prints the serial and pipelined time and the aggregate count before and after.\n"
             "Refused with the reason: a load-time constant, an op the backend does not\n"
             "support, no change, a node a Lua backend rule the plan obeys puts elsewhere.\n"
             "Undo restores the previous plan. See docs/transform.md.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "fuse-in",
     .usage = "fuse-in [MODEL] --node NAME --with NAME [--plan FILE] [-o FILE]",
     .summary = "put a node into another node's fusion group (a new group if that one is unfused)",
     .opts = fuse_edit_opts,
     .fn = cmd_fuse_in,
     .flags = PB_CMD_GRAPH,
     .help = "Only parallel nodes share a kernel: refused when a path joins the node to a member,\n"
             "when the contracted graph would have a cycle, for a load-time constant, or for a\n"
             "node the fusion rules (and Lua fusable rules) do not let fuse. Prints the modelled\n"
             "kernel time and launches before and after. See docs/transform.md.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "pin",
     .usage = "pin [MODEL] --layout L --node NAME --spec LABEL [--plan FILE] [-o FILE] [--json]",
     .summary = "pin an operator's sharding spec in the shard plan and re-solve the rest",
     .opts = pin_opts,
     .fn = cmd_pin,
     .flags = PB_CMD_GRAPH | PB_CMD_LAYOUT,
     .help =
         "The plan's scheme is solved again (GLPK MILP) with the operator's candidates\n"
         "reduced to LABEL (and the plan's earlier pins kept); shrinking and layer sharing are\n"
         "off so every pinned operator keeps its own variables. Prints the step time, the\n"
         "communication time and the memory per device before and after. Refused when LABEL\n"
         "is not one of the operator's candidates on that scheme (they are listed). On a\n"
         "dp x tp x pp plan the plan's chunks are solved again with the pins. See\n"
         "docs/shard.md.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "fuse-out",
     .usage = "fuse-out [MODEL] --node NAME [--plan FILE] [-o FILE]",
     .summary = "take a node out of its fusion group (a group left with one node dissolves)",
     .opts = fuse_edit_opts,
     .fn = cmd_fuse_out,
     .flags = PB_CMD_GRAPH,
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "move-core",
     .usage = "move-core ROW COL G [--json]",
     .summary =
         "placed plans (routed mesh): move the core at (ROW, COL) to its neighbouring group G",
     .opts = edit_opts,
     .fn = cmd_move_core,
     .help = "The donor keeps at least one core and stays one connected region; the groups keep\n"
             "their layers, their core counts follow the regions. Priced by the routed model\n"
             "(placed max(t) before -> after); a core holding a Lua pin of the donor's layer is\n"
             "refused naming the rule. Undo restores the previous plan. See docs/mesh.md.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "evaluate",
     .usage = "evaluate [--json]",
     .summary = "recompute the metrics of the current partition plan (and the exact optimum)",
     .opts = edit_opts,
     .fn = cmd_evaluate,
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {0},
};
