/*
 * cmds/cmd_edit.c — manual edits of the current partition plan: action, boundary,
 * merge, split, evaluate (used by the TUI's keys and by scripts).
 *
 * Each command rebuilds the problem from the session's model and layout,
 * reads the plan's detail.arranged_core, changes it, and installs a new plan
 * (method "manual") with pb_session_set_plan, so every edit can be undone.
 * The exact optimum of the old plan is carried over when it was computed for
 * the same layout; `evaluate` recomputes it. Plans of another kind give a
 * clear error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "partition/env.h"
#include "partition/exact.h"
#include "partition/chain_problem.h"
#include "partition/report.h"
#include "script/hooks.h"

static const pb_opt edit_opts[] = {PB_OPTS_JSON, PB_OPTS_END};

typedef struct edit {
	pb_part_problem *P;
	int *ac;
	int n_groups;
	pb_part_group *groups;
} edit;

static void edit_free(edit *e)
{
	pb_part_problem_free(e->P);
	free(e->ac);
	free(e->groups);
}

static int edit_begin(pb_cmd_ctx *ctx, const char *name, edit *e, pb_error *err)
{
	memset(e, 0, sizeof *e);
	pb_session *s = ctx->s;
	if (!s->graph)
		return pb_err(err, PB_EUSAGE, "%s: no model is open", name);
	if (!s->plan)
		return pb_err(err, PB_EUSAGE, "%s: no plan yet (run 'partition' first)", name);
	if (strcmp(s->plan->kind, "partition") != 0)
		return pb_err(err, PB_EUSAGE,
		              "%s: the current plan is a '%s' plan; %s edits 'partition' plans "
		              "(run 'partition' first)",
		              name, s->plan->kind, name);
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
	if (rc)
		return pb_err_prefix(err, "%s", name);
	e->ac = malloc((size_t)e->P->n * sizeof *e->ac);
	e->groups = malloc((size_t)e->P->n * sizeof *e->groups);
	if (!e->ac || !e->groups) {
		edit_free(e);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", name);
	}
	if ((rc = pb_part_from_plan(e->P, s->plan, e->ac, err))) {
		edit_free(e);
		return pb_err_prefix(err, "%s", name);
	}
	e->n_groups = pb_part_groups(e->P, e->ac, e->groups);
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

static int edit_commit(pb_cmd_ctx *ctx, edit *e, const pb_args *a, double optimum, const char *what)
{
	pb_session *s = ctx->s;
	double before = pb_plan_metric(s->plan, "max_time", NAN);
	pb_plan *p = pb_part_to_plan(e->P, e->ac, "manual", optimum);
	if (!p)
		return PB_ENOMEM;
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
	double mt = pb_plan_metric(p, "max_time", NAN);
	fprintf(ctx->out, "%s\nmax(t) %.6f ms (was %.6f ms), reward %.6f, %d groups", what,
	        mt * 1e3, before * 1e3, pb_plan_metric(p, "reward", NAN), p->n_groups);
	if (isfinite(optimum))
		fprintf(ctx->out, ", gap %.3f%%", 100 * pb_plan_metric(p, "gap", NAN));
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
	*out = v;
	return PB_OK;
}

static int check_group(const char *cmd, const edit *e, long g, int need_next, pb_error *err)
{
	long last = e->n_groups - 1 - (need_next ? 1 : 0);
	if (g < 0 || g > last)
		return pb_err(err, PB_EUSAGE,
		              "%s: group %ld does not exist (valid: 0..%ld of %d groups)", cmd, g,
		              last, e->n_groups);
	return PB_OK;
}

static int cmd_action(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long k;
	int rc = parse_int("action", "K (action number)", pb_args_pos(a, 0), &k, err);
	if (rc)
		return rc;
	edit e;
	if ((rc = edit_begin(ctx, "action", &e, err)))
		return rc;
	char desc[200];
	int na = pb_env_n_actions(e.P->n);
	if (k < 0 || k >= na) {
		int n = e.P->n;
		edit_free(&e);
		return pb_err(err, PB_EUSAGE, "action: %ld is out of range (0..%d for %d cores)", k,
		              na - 1, n);
	}
	pb_env_describe(e.P->n, (int)k, desc, sizeof desc);
	const char *why;
	if (!pb_env_apply(e.ac, e.P->n, (int)k, &why)) {
		edit_free(&e);
		return pb_err(err, PB_EUSAGE, "action %ld is invalid here: %s (%s); plan unchanged",
		              k, desc, why);
	}
	rc = edit_commit(ctx, &e, a, carried_optimum(ctx->s, e.P), desc);
	edit_free(&e);
	return rc;
}

/* Rebuilds arranged_core from per-group cores and layers. */
static void rebuild(edit *e, int ng, const int *cores, const int *layers)
{
	pb_part_state_from_groups(ng, cores, layers, e->ac);
}

static int cmd_boundary(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long g, d;
	int rc = parse_int("boundary", "G (group)", pb_args_pos(a, 0), &g, err);
	if (!rc)
		rc = parse_int("boundary", "DELTA (layers)", pb_args_pos(a, 1), &d, err);
	if (rc)
		return rc;
	edit e;
	if ((rc = edit_begin(ctx, "boundary", &e, err)))
		return rc;
	if ((rc = check_group("boundary", &e, g, 1, err))) {
		edit_free(&e);
		return rc;
	}
	int lg = e.groups[g].layers, ln = e.groups[g + 1].layers;
	if (d == 0 || (d > 0 && d >= ln) || (d < 0 && -d >= lg)) {
		edit_free(&e);
		return pb_err(
		    err, PB_EUSAGE,
		    "boundary: cannot move %ld layers: group %ld has %d and group %ld has "
		    "%d, and each must keep at least one",
		    d, g, lg, g + 1, ln);
	}
	int *cores = malloc((size_t)e.n_groups * 2 * sizeof *cores), *layers = cores + e.n_groups;
	for (int i = 0; i < e.n_groups; i++) {
		cores[i] = e.groups[i].cores;
		layers[i] = e.groups[i].layers;
	}
	layers[g] += (int)d;
	layers[g + 1] -= (int)d;
	rebuild(&e, e.n_groups, cores, layers);
	free(cores);
	char what[128];
	snprintf(what, sizeof what, "moved the boundary between groups %ld and %ld by %+ld layers",
	         g, g + 1, d);
	rc = edit_commit(ctx, &e, a, carried_optimum(ctx->s, e.P), what);
	edit_free(&e);
	return rc;
}

static int cmd_merge(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long g;
	int rc = parse_int("merge", "G (group)", pb_args_pos(a, 0), &g, err);
	if (rc)
		return rc;
	edit e;
	if ((rc = edit_begin(ctx, "merge", &e, err)))
		return rc;
	if ((rc = check_group("merge", &e, g, 1, err))) {
		edit_free(&e);
		return rc;
	}
	/* Action a on the pair (last core of G, first core of G+1). */
	int core = e.groups[g].first_core + e.groups[g].cores - 1;
	pb_env_apply(e.ac, e.P->n, pb_env_encode(e.P->n, PB_ACT_A, core), NULL);
	char what[96];
	snprintf(what, sizeof what, "merged groups %ld and %ld", g, g + 1);
	rc = edit_commit(ctx, &e, a, carried_optimum(ctx->s, e.P), what);
	edit_free(&e);
	return rc;
}

static int cmd_split(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long g;
	int rc = parse_int("split", "G (group)", pb_args_pos(a, 0), &g, err);
	if (rc)
		return rc;
	edit e;
	if ((rc = edit_begin(ctx, "split", &e, err)))
		return rc;
	if ((rc = check_group("split", &e, g, 0, err))) {
		edit_free(&e);
		return rc;
	}
	const pb_part_group *gr = &e.groups[g];
	if (gr->cores < 2 || gr->layers < 2) {
		pb_err(err, PB_EUSAGE,
		       "split: group %ld has %d core(s) and %d layer(s); splitting needs at least "
		       "two of each",
		       g, gr->cores, gr->layers);
		edit_free(&e);
		return PB_EUSAGE;
	}
	int c1 = gr->cores / 2, c2 = gr->cores - c1;
	/* Layers: the cut that best balances MACs per core of the two halves. */
	int a0 = gr->first_layer, b0 = a0 + gr->layers, best = a0 + 1;
	double best_v = INFINITY;
	for (int k = a0 + 1; k < b0; k++) {
		double v = fmax((e.P->pmacs[k] - e.P->pmacs[a0]) / c1,
		                (e.P->pmacs[b0] - e.P->pmacs[k]) / c2);
		if (v < best_v) {
			best_v = v;
			best = k;
		}
	}
	int ng = e.n_groups + 1;
	int *cores = malloc((size_t)ng * 2 * sizeof *cores), *layers = cores + ng;
	for (int i = 0, j = 0; i < e.n_groups; i++) {
		if (i == g) {
			cores[j] = c1;
			layers[j++] = best - a0;
			cores[j] = c2;
			layers[j++] = b0 - best;
		} else {
			cores[j] = e.groups[i].cores;
			layers[j++] = e.groups[i].layers;
		}
	}
	rebuild(&e, ng, cores, layers);
	free(cores);
	char what[128];
	snprintf(what, sizeof what,
	         "split group %ld into %d cores (layers %d-%d) and %d cores (layers %d-%d)", g, c1,
	         a0, best - 1, c2, best, b0 - 1);
	rc = edit_commit(ctx, &e, a, carried_optimum(ctx->s, e.P), what);
	edit_free(&e);
	return rc;
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
	pb_plan *p = pb_part_to_plan(e.P, e.ac, ctx->s->plan->method, opt);
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

const pb_command pb_cmds_edit[] = {
    {"action", "action K [--json]",
     "apply action number K of the method to the current partition plan", edit_opts, cmd_action, 0,
     "Actions are numbered 0..4(n-1)-1: K = type*(n-1) + i acts on cores (i, i+1)\n"
     "with type a=0 (merge into the later group), b=1 (merge onto the earlier core),\n"
     "c=2 (give the last layer of core i to i+1), d=3 (give the first layer of i+1\n"
     "to i). An invalid action leaves the plan unchanged and says why."},
    {"boundary", "boundary G DELTA [--json]",
     "move the boundary between groups G and G+1 by DELTA layers (DELTA>0 grows G)", edit_opts,
     cmd_boundary, 0, NULL},
    {"merge", "merge G [--json]", "merge groups G and G+1 (their cores and layers)", edit_opts,
     cmd_merge, 0, NULL},
    {"split", "split G [--json]",
     "split group G's cores into two groups, layers cut to balance MACs per core", edit_opts,
     cmd_split, 0, NULL},
    {"evaluate", "evaluate [--json]",
     "recompute the metrics of the current partition plan (and the exact optimum)", edit_opts,
     cmd_evaluate, 0, NULL},
    {0}};
