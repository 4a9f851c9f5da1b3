/*
 * shard/pipeline_edit.c — hand edits of a `pipeline` plan (pipeline_edit.h):
 * a stage boundary moved, the plan made again with that split; and the
 * message of every pipeline edit, from the two plans.
 *
 * The split is moved by pb_plan_move_boundary (every node between the two
 * positions in topological order moves, so an edge that went forward still
 * does), checked against the Lua rules the plan obeys, and planned by
 * pb_pipe_plan with it given: micro-batches, batch and training flag are the
 * plan's, every stage is sharded again and the step time recomputed.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard/pipeline_edit.h"
#include "util/fmt.h"

int pb_pipe_edit_boundary(const pb_graph *g, const pb_cluster *cl, const pb_pipe_opts *base,
                          const pb_plan *old, int k, int delta, pb_dtp_edit_result *res,
                          pb_error *err)
{
	memset(res, 0, sizeof *res);
	if (pb_dtp_edit_is_dtp(old))
		return pb_err(err, PB_EUSAGE, "a dp x tp x pp plan: see pb_dtp_edit_boundary");
	int n = old->n_nodes;
	int *stage_of = malloc(((size_t)n + 1) * sizeof *stage_of);
	double *part = malloc(((size_t)n + 1) * sizeof *part);
	if (!stage_of || !part) {
		free(stage_of);
		free(part);
		return pb_err(err, PB_ENOMEM, "out of memory");
	}
	int rc = pb_plan_move_boundary(old, k, delta, stage_of, err);
	if (rc)
		pb_err_prefix(err, "stages");
	char why[400];
	for (int v = 0; v < n; v++)
		part[v] = old->group[v] >= 0 ? 0 : -1; /* the nodes of the split */
	if (rc == PB_OK && base->rules &&
	    pb_pipe_split_rule_broken(g, part, stage_of, old->group, base->rules, why, sizeof why))
		rc = pb_err(
		    err, PB_EUSAGE,
		    "moving the boundary between stages %d and %d by %+d nodes breaks Lua %s", k,
		    k + 1, delta, why);
	free(part);
	pb_pipe_opts o = *base;
	const json_t *d = old->detail;
	o.stages = old->n_groups;
	o.batch = (long)json_number_value(json_object_get(d, "batch"));
	o.microbatches = (int)pb_plan_metric(old, "microbatches", 0);
	o.train = json_is_true(json_object_get(d, "train"));
	o.stage_of = stage_of;
	pb_pipe_result r = {0};
	if (rc == PB_OK)
		rc = pb_pipe_plan(g, cl, &o, &r, err);
	free(stage_of);
	if (rc == PB_OK) {
		res->plan = r.plan;
		r.plan = NULL;
		pb_plan_set_method(res->plan, "manual");
		res->before = pb_plan_metric(old, "step_time", NAN);
		res->after = r.step_time;
		pb_pipe_edit_describe(old, res->plan, res->what, sizeof res->what);
	}
	pb_pipe_result_free(&r);
	return rc;
}

static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	if (*at >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at += (size_t)n;
}

static void put_group(char *buf, size_t len, size_t *at, const pb_plan *p, int k)
{
	const pb_plan_group *g = &p->groups[k];
	char t[32];
	pb_fmt_time_fixed(g->time, t, sizeof t);
	int nodes = 0;
	for (int v = 0; v < p->n_nodes; v++)
		nodes += p->group[v] == k;
	if (g->first_node >= 0)
		put(buf, len, at, "[nodes %d-%d, %d nodes, %s]", g->first_node, g->last_node, nodes,
		    t);
	else
		put(buf, len, at, "[%d nodes, %s]", nodes, t);
}

void pb_pipe_edit_describe(const pb_plan *before, const pb_plan *after, char *buf, size_t len)
{
	size_t at = 0;
	if (len)
		buf[0] = '\0';
	int ng = before->n_groups > after->n_groups ? before->n_groups : after->n_groups, shown = 0;
	for (int k = 0; k < ng; k++) {
		int same = k < before->n_groups && k < after->n_groups;
		for (int v = 0; same && v < before->n_nodes && v < after->n_nodes; v++)
			same = (before->group[v] == k) == (after->group[v] == k);
		if (same && before->groups[k].time == after->groups[k].time)
			continue;
		if (shown++ >= 4) {
			put(buf, len, &at, "; ...");
			break;
		}
		put(buf, len, &at, "%schunk %d (%s) ", shown > 1 ? "; " : "", k,
		    k < before->n_groups ? before->groups[k].label : after->groups[k].label);
		if (k < before->n_groups)
			put_group(buf, len, &at, before, k);
		else
			put(buf, len, &at, "[none]");
		put(buf, len, &at, " -> ");
		if (k < after->n_groups)
			put_group(buf, len, &at, after, k);
		else
			put(buf, len, &at, "[none]");
	}
	if (!shown)
		put(buf, len, &at, "no chunk changed");
	char a[32], b[32];
	pb_fmt_time_fixed(pb_plan_metric(before, "step_time", NAN), a, sizeof a);
	pb_fmt_time_fixed(pb_plan_metric(after, "step_time", NAN), b, sizeof b);
	put(buf, len, &at, "; step time %s -> %s", a, b);
}
