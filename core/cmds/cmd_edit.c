/*
 * cmds/cmd_edit.c — manual edits of the current plan: action, boundary,
 * merge, split, evaluate on partition plans; backend on map plans; fuse-in
 * and fuse-out on fuse plans (used by the TUI's keys and by scripts; from
 * the CLI on a saved plan with --plan FILE -o FILE).
 *
 * Each command rebuilds the problem from the session's model and layout,
 * reads the plan's detail.arranged_core, changes it, and installs a new plan
 * (method "manual") with pb_session_set_plan, so every edit can be undone.
 * The exact optimum of the old plan is carried over when it was computed for
 * the same layout; `evaluate` recomputes it. Plans of another kind give a
 * clear error. The session's Lua `cut` rules and pins (`core` on partition
 * plans, `stage` on pipeline plans) are in force: an edit that would break
 * one the plan obeys is refused naming the rule (`evaluate` solves the
 * optimum under them, as `partition` does).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "partition/env.h"
#include "partition/exact.h"
#include "partition/chain_problem.h"
#include "partition/chain_rules.h"
#include "partition/report.h"
#include "script/hooks.h"
#include "shard/pipeline_plan.h"
#include "shard/search.h"
#include "transform/fuse.h"
#include "transform/map.h"
#include "util/fmt.h"

static const pb_opt edit_opts[] = {PB_OPTS_JSON, PB_OPTS_END};

typedef struct edit {
	pb_part_problem *P;
	int *ac;
	int *ac0; /* the plan's state before the edit */
	int n_groups;
	pb_part_group *groups;
} edit;

static void edit_free(edit *e)
{
	pb_part_problem_free(e->P);
	free(e->ac);
	free(e->ac0);
	free(e->groups);
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
	e->groups = malloc((size_t)e->P->n * sizeof *e->groups);
	if (!e->ac || !e->ac0 || !e->groups) {
		edit_free(e);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", name);
	}
	if ((rc = pb_part_from_plan(e->P, s->plan, e->ac, err))) {
		edit_free(e);
		return pb_err_prefix(err, "%s", name);
	}
	memcpy(e->ac0, e->ac, (size_t)e->P->n * sizeof *e->ac);
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

/* Group index per layer of state ac (groups: capacity P->n). */
static void layer_groups(pb_part_problem *P, const int *ac, pb_part_group *groups, int *of)
{
	int ng = pb_part_groups(P, ac, groups);
	for (int G = 0; G < ng; G++)
		for (int l = groups[G].first_layer; l < groups[G].first_layer + groups[G].layers;
		     l++)
			of[l] = G;
}

/* The first Lua rule the edited state breaks that the plan before it obeyed
 * (as pb_part_group_violations counts them): 1 and msg naming the rule and
 * the node, else 0. */
static int edit_breaks_rule(edit *e, const pb_graph *g, char *msg, size_t len)
{
	pb_part_problem *P = e->P;
	if (!P->cut && !P->pin)
		return 0;
	int m = P->m, n = P->n, found = 0;
	int *gn = calloc((size_t)(2 * m + 1), sizeof *gn), *go = gn ? gn + m : NULL;
	pb_part_group *grn = calloc((size_t)(2 * n), sizeof *grn), *gro = grn ? grn + n : NULL;
	if (!gn || !grn) {
		free(gn);
		free(grn);
		return 0;
	}
	layer_groups(P, e->ac, grn, gn);
	layer_groups(P, e->ac0, gro, go);
	/* layer l is node pb_part_layer_node(P, l) (load-time constants are no layers) */
#define NODE(l) pb_part_layer_node(P, l)
#define NAME(l) (NODE(l) < g->n_nodes && g->nodes[NODE(l)].name ? g->nodes[NODE(l)].name : "?")
	for (int q = 1; q < m && P->cut && !found; q++) {
		int bn = gn[q - 1] != gn[q], bo = go[q - 1] != go[q];
		const char *effect = NULL;
		if (P->cut[q] == PB_CUT_FORBID && bn && !bo)
			effect = "cut=forbid";
		else if (P->cut[q] == PB_CUT_FORCE && !bn && bo)
			effect = "cut=force";
		if (effect) {
			snprintf(msg, len, "rule '%s' (%s): %s group boundary after node '%s'",
			         pb_part_rules_info_name(P->rules, effect, NAME(q - 1)), effect,
			         bn ? "a" : "no", NAME(q - 1));
			found = 1;
		}
	}
	for (int v = 0; v < m && P->pin && !found; v++) {
		int k = P->pin[v];
		const pb_part_group *a = &grn[gn[v]], *b = &gro[go[v]];
		if (k < 0 || (k >= a->first_core && k < a->first_core + a->cores) ||
		    !(k >= b->first_core && k < b->first_core + b->cores))
			continue;
		char effect[32];
		snprintf(effect, sizeof effect, "core=%d", k);
		snprintf(msg, len, "rule '%s' (%s): node '%s' would be on cores %d-%d",
		         pb_part_rules_info_name(P->rules, effect, NAME(v)), effect, NAME(v),
		         a->first_core, a->first_core + a->cores - 1);
		found = 1;
	}
#undef NAME
#undef NODE
	free(gn);
	free(grn);
	return found;
}

static int edit_commit(pb_cmd_ctx *ctx, edit *e, const pb_args *a, double optimum, const char *what,
                       const char *name, pb_error *err)
{
	pb_session *s = ctx->s;
	char why[400];
	if (edit_breaks_rule(e, s->graph, why, sizeof why))
		return pb_err(err, PB_EUSAGE, "%s: the edit (%s) breaks Lua %s; plan unchanged",
		              name, what, why);
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
	rc = edit_commit(ctx, &e, a, carried_optimum(ctx->s, e.P), desc, "action", err);
	edit_free(&e);
	return rc;
}

/* Rebuilds arranged_core from per-group cores and layers. */
static void rebuild(edit *e, int ng, const int *cores, const int *layers)
{
	pb_part_state_from_groups(ng, cores, layers, e->ac);
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
	rc = edit_commit(ctx, &e, a, carried_optimum(ctx->s, e.P), what, "boundary", err);
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
	rc = edit_commit(ctx, &e, a, carried_optimum(ctx->s, e.P), what, "merge", err);
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
	rc = edit_commit(ctx, &e, a, carried_optimum(ctx->s, e.P), what, "split", err);
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
			int time = strstr(k, "time") != NULL;
			if (time) {
				pb_fmt_time_fixed(x, b1, sizeof b1);
				pb_fmt_time_fixed(y, b2, sizeof b2);
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

/* The pipeline planner's reload: the session reopens the model at the
 * batch (as the pipeline command does). */
static int pipe_reload(void *ud, long batch, const pb_graph **g, pb_error *err)
{
	pb_session *s = ud;
	int rc = pb_session_set_batch(s, batch, err);
	*g = s->graph;
	return rc;
}

/* boundary G DELTA on a pipeline plan: the stage split moves, every stage
 * is sharded again and the step time recomputed, under the plan's batch,
 * micro-batches and training flag. */
static int pipeline_boundary(pb_cmd_ctx *ctx, const pb_args *a, int k, int delta, pb_error *err)
{
	pb_session *s = ctx->s;
	const pb_plan *old = s->plan;
	if (!s->hw)
		return pb_err(err, PB_EUSAGE, "boundary: no layout loaded (use 'layout FILE')");
	/* the re-split below is the plain pipeline's: it would drop dp, tp and chunks */
	if (pb_plan_has_metric(old, "dp"))
		return pb_err(err, PB_EUSAGE,
		              "boundary: a dp x tp x pp pipeline plan (shard --pipeline) cannot be "
		              "re-split by hand; a 'pipeline' plan can");
	int *stage_of = malloc(((size_t)old->n_nodes + 1) * sizeof *stage_of);
	if (!stage_of)
		return pb_err(err, PB_ENOMEM, "boundary: out of memory");
	int rc = pb_plan_move_boundary(old, k, delta, stage_of, err);
	if (rc) {
		free(stage_of);
		return pb_err_prefix(err, "boundary: stages");
	}
	/* the Lua `cut` rules and `stage` pins the split obeyed still hold */
	pb_part_rules *rules = NULL;
	double *part = malloc(((size_t)old->n_nodes + 1) * sizeof *part);
	if (!part)
		rc = pb_err(err, PB_ENOMEM, "boundary: out of memory");
	if (!rc && !(rc = session_rules(s, "stage", &rules, err)) && rules) {
		char why[400];
		for (int v = 0; v < old->n_nodes; v++)
			part[v] = old->group[v] >= 0 ? 0 : -1; /* the nodes of the split */
		if (pb_pipe_split_rule_broken(s->graph, part, stage_of, old->group, rules, why,
		                              sizeof why))
			rc = pb_err(err, PB_EUSAGE,
			            "boundary: moving the boundary between stages %d and %d by %+d "
			            "nodes breaks Lua %s; plan unchanged",
			            k, k + 1, delta, why);
	}
	pb_part_rules_free(rules);
	free(part);
	if (rc) {
		free(stage_of);
		return rc;
	}
	pb_cluster cl;
	if ((rc = pb_cluster_from_hw(s->hw, &cl, err))) {
		free(stage_of);
		return rc;
	}
	pb_pipe_opts o;
	pb_pipe_opts_default(&o);
	const json_t *d = old->detail;
	o.stages = old->n_groups;
	o.batch = (long)json_number_value(json_object_get(d, "batch"));
	o.microbatches = (int)pb_plan_metric(old, "microbatches", 0);
	o.train = json_is_true(json_object_get(d, "train"));
	o.stage_of = stage_of;
	o.reload = pipe_reload;
	o.reload_ud = s;
	double before = pb_plan_metric(old, "step_time", NAN);
	double slow_before = 0;
	for (int i = 0; i < old->n_groups; i++)
		slow_before = fmax(slow_before, old->groups[i].time);
	/* The planner's reloads reopen the model, which clears the plan and its
	 * history: keep them aside (the node list does not change with the
	 * batch) so the edit stays undoable. */
	pb_plan *hold = s->plan, **undo = malloc((size_t)PB_UNDO_MAX * sizeof *undo);
	int n_undo = s->n_undo;
	if (!undo) {
		free(stage_of);
		pb_cluster_free(&cl);
		return pb_err(err, PB_ENOMEM, "boundary: out of memory");
	}
	memcpy(undo, s->undo, (size_t)n_undo * sizeof *undo);
	s->plan = NULL;
	s->n_undo = 0;
	pb_pipe_result r = {0};
	rc = pb_pipe_plan(s->graph, &cl, &o, &r, err);
	free(stage_of);
	pb_plan_free(s->plan); /* none expected */
	for (int i = 0; i < s->n_undo; i++)
		pb_plan_free(s->undo[i]);
	memcpy(s->undo, undo, (size_t)n_undo * sizeof *undo);
	s->n_undo = n_undo;
	s->plan = hold;
	free(undo);
	if (rc) {
		pb_pipe_result_free(&r);
		pb_cluster_free(&cl);
		return pb_err_prefix(err, "boundary");
	}
	pb_plan *p = r.plan;
	r.plan = NULL;
	pb_plan_set_method(p, "manual");
	char what[160];
	snprintf(what, sizeof what, "moved the boundary between stages %d and %d by %+d nodes", k,
	         k + 1, delta);
	json_t *jb = json_pack("{s:f,s:f}", "step_time", before, "slowest_stage_time", slow_before);
	json_t *ja =
	    json_pack("{s:f,s:f}", "step_time", r.step_time, "slowest_stage_time", r.slowest);
	rc = edit_finish(ctx, a, p, what, jb, ja);
	json_decref(jb);
	json_decref(ja);
	pb_pipe_result_free(&r);
	pb_cluster_free(&cl);
	return rc;
}

/* ------------------------------------------------ pin a sharding spec */

#define PIN_MAX 64

/* The pins of a shard plan: its detail.pinned list plus the new one. */
typedef struct pin_rule {
	int nid;
	char label[40];
	int seen; /* the search offered this label for the node */
} pin_rule;

static int pin_match(const pb_graph *g, int nid, void *ud)
{
	(void)g;
	return nid == ((const pin_rule *)ud)->nid;
}

static int pin_keep(const pb_graph *g, int nid, const pb_strat *st, const pb_mesh *m, void *ud)
{
	(void)g;
	(void)nid;
	(void)m;
	pin_rule *p = ud;
	int k = strcmp(st->label, p->label) == 0;
	p->seen |= k;
	return k;
}

/* The strategy the shard plan gives node nid ("" when it has none). */
static const char *plan_strategy(const pb_plan *p, int nid)
{
	const json_t *ops = json_object_get(p->detail, "ops");
	for (size_t i = 0; i < json_array_size(ops); i++) {
		const json_t *o = json_array_get(ops, i);
		if (json_integer_value(json_object_get(o, "id")) == nid) {
			const char *st = json_string_value(json_object_get(o, "strategy"));
			return st ? st : "";
		}
	}
	return "";
}

static const pb_opt pin_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    PB_OPTS_JSON,
    {"node", 0, PB_OPT_STR, "NAME", "the operator to pin (required)"},
    {"spec", 0, PB_OPT_STR, "LABEL",
     "its sharding strategy, as in shard's table: rep, m, n, k, b0, ... (per mesh axis, "
     "comma-separated; required)"},
    {"plan", 'p', PB_OPT_STR, "FILE", "edit this saved shard plan (default: the session's)"},
    {"output", 'o', PB_OPT_STR, "FILE", "save the edited plan"},
    PB_OPTS_END};

/* Collects the pins: the plan's earlier ones (by node name) and the new one. */
static int collect_pins(const pb_graph *g, const pb_plan *old, int nid, const char *spec,
                        pin_rule *pins, int *n, pb_error *err)
{
	*n = 0;
	const json_t *pl = json_object_get(old->detail, "pinned");
	for (size_t i = 0; i < json_array_size(pl) && *n < PIN_MAX - 1; i++) {
		const json_t *e = json_array_get(pl, i);
		int v = pb_graph_find_node(g, json_string_value(json_object_get(e, "node")));
		const char *l = json_string_value(json_object_get(e, "spec"));
		if (v < 0 || !l || v == nid)
			continue;
		pins[*n].nid = v;
		snprintf(pins[*n].label, sizeof pins[*n].label, "%s", l);
		pins[(*n)++].seen = 0;
	}
	if (strlen(spec) >= sizeof pins[0].label)
		return pb_err(err, PB_EUSAGE, "pin: --spec '%s' is too long", spec);
	pins[*n].nid = nid;
	snprintf(pins[*n].label, sizeof pins[*n].label, "%s", spec);
	pins[(*n)++].seen = 0;
	return PB_OK;
}

/* Re-solves the plan's scheme with the pins as candidate filters (shrinking
 * and layer sharing off, so each pinned operator keeps its own variables). */
static int pin_solve(pb_cmd_ctx *ctx, const pb_plan *old, pin_rule *pins, int n_pins,
                     pb_shard_search **out, pb_error *err)
{
	pb_session *s = ctx->s;
	*out = NULL;
	pb_cluster cl;
	int rc = pb_cluster_from_hw(s->hw, &cl, err);
	if (rc)
		return rc;
	pb_shard_opts o;
	pb_shard_opts_default(&o);
	const json_t *d = old->detail;
	o.train = json_is_true(json_object_get(d, "train"));
	o.opt_level = (int)json_integer_value(json_object_get(d, "opt_level"));
	o.no_shrink = 1;
	o.layers = 0;
	pb_hooks hk;
	pb_hooks_init(&hk, s);
	rc = pb_hooks_shard(&hk, &o, err);
	pb_shard_rules *own = NULL;
	if (rc == PB_OK && !o.filters && !(o.filters = own = pb_shard_rules_new(0)))
		rc = pb_err(err, PB_ENOMEM, "pin: out of memory");
	for (int i = 0; rc == PB_OK && i < n_pins; i++) {
		pb_shard_rule r = {"pin",     "an operator's spec pinned by hand",
		                   pin_match, pin_keep,
		                   &pins[i],  NULL};
		rc = pb_shard_rules_add(o.filters, &r, err);
	}
	pb_shard_search *sr = NULL;
	if (rc == PB_OK)
		rc = pb_shard_search_new(s->graph, &cl, &o,
		                         json_string_value(json_object_get(d, "scheme")), 2, NULL,
		                         &sr, err);
	for (int done = 0; rc == PB_OK && !done;)
		rc = pb_shard_search_step(sr, &done, err);
	if (rc == PB_OK)
		rc = pb_shard_search_finish(sr, err);
	rc = pb_hooks_finish(&hk, rc, err);
	pb_shard_rules_free(own);
	pb_cluster_free(&cl);
	if (rc == PB_OK && !sr->plan)
		rc = pb_err(err, PB_EINPUT, "pin: the scheme has no feasible plan with these pins");
	if (rc) {
		pb_shard_search_free(sr);
		return rc;
	}
	*out = sr;
	return PB_OK;
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
	if (!old || strcmp(old->kind, "shard") != 0)
		return pb_err(err, PB_EUSAGE, "pin: the current plan is %s%s%s; run 'shard' first",
		              old ? "a '" : "absent", old ? old->kind : "", old ? "' plan" : "");
	const char *spec = pb_args_str(a, "spec", NULL);
	if (!spec)
		return pb_err(err, PB_EUSAGE, "pin: --spec LABEL is required");
	const char *was = plan_strategy(old, nid);
	const char *name = s->graph->nodes[nid].name;
	if (!*was)
		return pb_err(err, PB_EUSAGE,
		              "pin: node '%s' (%s) is no operator of the shard plan (it touches no "
		              "activation)",
		              name, s->graph->nodes[nid].op);
	pin_rule pins[PIN_MAX];
	int n_pins;
	if ((rc = collect_pins(s->graph, old, nid, spec, pins, &n_pins, err)))
		return rc;
	pb_shard_search *sr = NULL;
	if ((rc = pin_solve(ctx, old, pins, n_pins, &sr, err)))
		return pb_err_prefix(err, "pin");
	const pin_rule *mine = &pins[n_pins - 1];
	const char *now = plan_strategy(sr->plan, nid);
	if (!mine->seen || strcmp(now, spec) != 0) {
		rc = pb_err(err, PB_EUSAGE,
		            "pin: '%s' is not a candidate spec of node '%s' (%s) on scheme %s (it "
		            "has '%s'; see the strategy column of 'shard'); plan unchanged",
		            spec, name, s->graph->nodes[nid].op,
		            json_string_value(json_object_get(old->detail, "scheme")), was);
		pb_shard_search_free(sr);
		return rc;
	}
	pb_plan *p = pb_plan_copy(sr->plan);
	pb_shard_search_free(sr);
	if (!p)
		return pb_err(err, PB_ENOMEM, "pin: out of memory");
	pb_plan_set_method(p, "manual");
	json_t *pl = json_array();
	for (int i = 0; i < n_pins; i++)
		json_array_append_new(pl, json_pack("{s:s,s:s}", "node",
		                                    s->graph->nodes[pins[i].nid].name, "spec",
		                                    pins[i].label));
	json_object_set_new(p->detail, "pinned", pl);
	char what[256];
	snprintf(what, sizeof what, "pinned '%s' to %s (was %s); the rest re-solved", name, spec,
	         was);
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
    {"node", 0, PB_OPT_STR, "NAME", "the node to move (required)"},
    {"to", 0, PB_OPT_STR, "BACKEND", "the backend it moves to (required)"},
    {"region", 0, PB_OPT_FLAG, NULL, "move the node's whole aggregate"},
    {"plan", 'p', PB_OPT_STR, "FILE", "edit this saved map plan (default: the session's)"},
    {"output", 'o', PB_OPT_STR, "FILE", "save the edited plan"},
    PB_OPTS_END};

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
	char what[256];
	rc = pb_map_edit(s->graph, h, s->plan, node, b, pb_args_has(a, "region"), &r, what,
	                 sizeof what, err);
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
    {"node", 0, PB_OPT_STR, "NAME", "the node to move (required)"},
    {"with", 0, PB_OPT_STR, "NAME", "fuse-in: the node whose fusion group it joins (required)"},
    {"layout", 'l', PB_OPT_STR, "FILE", "read the cost model from the layout's `fusion` table"},
    {"plan", 'p', PB_OPT_STR, "FILE", "edit this saved fuse plan (default: the session's)"},
    {"output", 'o', PB_OPT_STR, "FILE", "save the edited plan"},
    PB_OPTS_END};

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
    {"action", "action K [--json]",
     "apply action number K of the method to the current partition plan", edit_opts, cmd_action, 0,
     "Actions are numbered 0..4(n-1)-1: K = type*(n-1) + i acts on cores (i, i+1)\n"
     "with type a=0 (merge into the later group), b=1 (merge onto the earlier core),\n"
     "c=2 (give the last layer of core i to i+1), d=3 (give the first layer of i+1\n"
     "to i). An invalid action leaves the plan unchanged and says why."},
    {"boundary", "boundary G DELTA [--json]",
     "move the boundary between groups (or pipeline stages) G and G+1 by DELTA layers "
     "(DELTA>0 grows G)",
     edit_opts, cmd_boundary, 0,
     "On a partition plan: layers of the chain. On a pipeline plan: nodes in topological\n"
     "order (DELTA>0: the first DELTA nodes of stage G+1 join G; DELTA<0: the last nodes\n"
     "of G join G+1), then every stage is sharded again under the plan's batch,\n"
     "micro-batches and training flag; the step time before and after is printed.\n"
     "A move that would break a Lua cut rule or a core/stage pin the plan obeys is\n"
     "refused, naming the rule and the node."},
    {"merge", "merge G [--json]", "merge groups G and G+1 (their cores and layers)", edit_opts,
     cmd_merge, 0, NULL},
    {"split", "split G [--json]",
     "split group G's cores into two groups, layers cut to balance MACs per core", edit_opts,
     cmd_split, 0, NULL},
    {"backend", "backend [MODEL] --node NAME --to BACKEND [--region] [--plan FILE] [-o FILE]",
     "move a node (or its aggregate) of the map plan to another backend", backend_opts, cmd_backend,
     PB_CMD_GRAPH | PB_CMD_LAYOUT,
     "Every other node keeps its backend; aggregation, buffers and the pipelined model\n"
     "are redone, so aggregates stay acyclic and never span another backend's node.\n"
     "Prints the serial and pipelined time and the aggregate count before and after.\n"
     "Refused with the reason: a load-time constant, an op the backend does not\n"
     "support, no change. Undo restores the previous plan. See docs/transform.md."},
    {"fuse-in", "fuse-in [MODEL] --node NAME --with NAME [--plan FILE] [-o FILE]",
     "put a node into another node's fusion group (a new group if that one is unfused)",
     fuse_edit_opts, cmd_fuse_in, PB_CMD_GRAPH,
     "Only parallel nodes share a kernel: refused when a path joins the node to a member,\n"
     "when the contracted graph would have a cycle, for a load-time constant, or for a\n"
     "node the fusion rules (and Lua fusable rules) do not let fuse. Prints the modelled\n"
     "kernel time and launches before and after. See docs/transform.md."},
    {"pin", "pin [MODEL] --layout L --node NAME --spec LABEL [--plan FILE] [-o FILE] [--json]",
     "pin an operator's sharding spec in the shard plan and re-solve the rest", pin_opts, cmd_pin,
     PB_CMD_GRAPH | PB_CMD_LAYOUT,
     "The plan's scheme is solved again (GLPK MILP) with the operator's candidates\n"
     "reduced to LABEL (and the plan's earlier pins kept); shrinking and layer sharing are\n"
     "off so every pinned operator keeps its own variables. Prints the step time, the\n"
     "communication time and the memory per device before and after. Refused when LABEL\n"
     "is not one of the operator's candidates on that scheme. See docs/shard.md."},
    {"fuse-out", "fuse-out [MODEL] --node NAME [--plan FILE] [-o FILE]",
     "take a node out of its fusion group (a group left with one node dissolves)", fuse_edit_opts,
     cmd_fuse_out, PB_CMD_GRAPH, NULL},
    {"evaluate", "evaluate [--json]",
     "recompute the metrics of the current partition plan (and the exact optimum)", edit_opts,
     cmd_evaluate, 0, NULL},
    {0}};
