/*
 * cmds/plan_edit.c — what the plan edit commands share (plan_edit.h): the
 * saved plan of --plan and the node of --node, the session's Lua rules, a
 * side session for the planners' reloads at other batches, and the edited
 * plan installed (undoable), saved with -o and printed before -> after.
 */
#include "cmds/plan_edit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "script/hooks.h"
#include "shard/dtp/dtp_edit.h"
#include "util/fmt.h"

/* The session's Lua `cut` rules and `core` / `stage` pins (NULL: none). */
int pb_plan_edit_rules(pb_session *s, const char *kind, pb_part_rules **out, pb_error *err)
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

/* --plan FILE: the saved plan becomes the session's (undoable) first. */
int pb_plan_edit_load(pb_cmd_ctx *ctx, const pb_args *a, pb_error *err)
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

int pb_plan_edit_node(const pb_graph *g, const pb_args *a, const char *cmd, const char *opt,
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
int pb_plan_edit_finish(pb_cmd_ctx *ctx, const pb_args *a, pb_plan *p, const char *what,
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
int pb_plan_edit_side_reload(void *ud, long batch, const pb_graph **g, pb_error *err)
{
	pb_session *side = ud;
	int rc = pb_session_set_batch(side, batch, err);
	*g = side->graph;
	return rc;
}

int pb_plan_edit_side_open(pb_session *s, const char *name, pb_session **side, pb_error *err)
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
int pb_plan_edit_pipe_finish(pb_cmd_ctx *ctx, const pb_args *a, pb_pipe_diff *r, const char *name,
                             int rc, pb_error *err)
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
	rc = pb_plan_edit_finish(ctx, a, r->plan, r->what, jb, ja);
	json_decref(jb);
	json_decref(ja);
	return rc;
}

/* The Lua cut and stage rules as a dp x tp x pp edit reads them. */
int pb_plan_edit_dtp_opts(pb_session *s, pb_session *side, const pb_plan *old, pb_dtp_opts *o,
                          pb_part_rules **rules, pb_error *err)
{
	pb_dtp_edit_options(old, o);
	o->pipe.reload = pb_plan_edit_side_reload;
	o->pipe.reload_ud = side;
	int rc = pb_plan_edit_rules(s, "stage", rules, err);
	o->pipe.rules = *rules;
	return rc;
}
