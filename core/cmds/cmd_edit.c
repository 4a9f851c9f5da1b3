/*
 * cmds/cmd_edit.c — manual edits of the current partition plan: action,
 * boundary (also on pipeline plans), merge, split, move-core and evaluate
 * (used by the TUI's keys and by scripts). The other plan kinds' edits are
 * cmd_pin.c (shard), cmd_backend.c (map) and cmd_fuse_edit.c (fuse); what
 * they share is plan_edit.h.
 *
 * Each command parses its arguments, runs the edit of the plan kind's
 * module (partition/chain/part_edit.h, partition/mesh/mesh_edit.h,
 * shard/pipeline/pipeline_edit.h, shard/dtp/dtp_edit.h) and installs the
 * new plan (method "manual") with pb_session_set_plan, so every edit can be
 * undone; a refused edit leaves the plan as it was and says why. The
 * printed message is made from the two plans (the groups that differ,
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

#include "cmds/plan_edit.h"
#include "commands.h"
#include "partition/chain/report.h"
#include "partition/edit/part_plan_edit.h"
#include "partition/edit/part_plan_evaluate.h"
#include "script/hooks.h"
#include "shard/dtp/dtp_edit.h"
#include "shard/pipeline/pipeline_edit.h"
#include "shard/pipeline/pipeline_plan.h"

static const pb_opt edit_opts[] = {
    PB_OPTS_JSON,
    PB_OPTS_END,
};

/* The session's partition plan with its problem rebuilt (a usage error
 * naming the edit each other plan kind has when it is not one). */
static int edit_begin(pb_cmd_ctx *ctx, const char *name, pb_part_plan_edit *e, pb_error *err)
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
	pb_part_rules *rules = NULL;
	int rc = pb_plan_edit_rules(s, "core", &rules, err);
	if (rc == PB_OK)
		rc = pb_part_plan_edit_begin(s->graph, s->hw, s->plan, rules, name, e, err);
	else
		pb_err_prefix(err, "%s", name);
	pb_part_rules_free(rules);
	return rc;
}

/* The edited plan installed and printed (text, or --json). */
static void edit_print(pb_cmd_ctx *ctx, const pb_args *a, pb_plan *p, const char *hw,
                       const char *what, double optimum)
{
	pb_session_set_plan(ctx->s, p);
	ctx->redraw |= PB_REDRAW_ALL;
	if (pb_args_has(a, "json")) {
		json_t *j = pb_part_report_json(p, "manual", hw);
		json_object_set_new(j, "edit", json_string(what));
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
		json_decref(j);
		return;
	}
	fprintf(ctx->out, "%s\nreward %.6f", what, pb_plan_metric(p, "reward", NAN));
	if (isfinite(optimum))
		fprintf(ctx->out, ", gap %.3f%% to the optimum %.6f ms",
		        100 * pb_plan_metric(p, "gap", NAN), optimum * 1e3);
	if (pb_plan_metric(p, "max_storage", 0) > pb_plan_metric(p, "memory", INFINITY))
		fprintf(ctx->out, ", OVER MEMORY");
	fputc('\n', ctx->out);
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

/* The partition edits: parse, run the edit (partition/edit/part_plan_edit.h),
 * print. */
static int part_edit(pb_cmd_ctx *ctx, const pb_args *a, const char *name,
                     pb_part_plan_edit_kind kind, long x, long y, pb_error *err)
{
	pb_part_plan_edit e;
	int rc = edit_begin(ctx, name, &e, err);
	if (rc)
		return rc;
	double optimum = pb_part_plan_edit_optimum(&e);
	pb_plan *p = NULL;
	char what[1024];
	rc = pb_part_plan_edit_apply(&e, kind, (int)x, (int)y, name, &optimum, &p, what,
	                             sizeof what, err);
	if (rc == PB_OK)
		edit_print(ctx, a, p, e.P->hw.name, what, optimum);
	pb_part_plan_edit_free(&e);
	return rc;
}

static int cmd_action(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long k;
	int rc = parse_int("action", "K (action number)", pb_args_pos(a, 0), &k, err);
	return rc ? rc : part_edit(ctx, a, "action", PB_PART_PLAN_ACTION, k, 0, err);
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
	return part_edit(ctx, a, "boundary", PB_PART_PLAN_BOUNDARY, g, d, err);
}

static int cmd_merge(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long g;
	int rc = parse_int("merge", "G (group)", pb_args_pos(a, 0), &g, err);
	return rc ? rc : part_edit(ctx, a, "merge", PB_PART_PLAN_MERGE, g, 0, err);
}

static int cmd_split(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long g;
	int rc = parse_int("split", "G (group)", pb_args_pos(a, 0), &g, err);
	return rc ? rc : part_edit(ctx, a, "split", PB_PART_PLAN_SPLIT, g, 0, err);
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
	pb_part_plan_edit e;
	if (rc || (rc = edit_begin(ctx, "move-core", &e, err)))
		return rc;
	char what[512];
	pb_plan *p = NULL;
	rc = pb_part_plan_edit_move_core(&e, (int)r, (int)c, (int)g, &p, what, sizeof what, err);
	if (rc == PB_OK) {
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
	}
	pb_part_plan_edit_free(&e);
	return rc;
}

static int cmd_evaluate(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_part_plan_edit e;
	int rc = edit_begin(ctx, "evaluate", &e, err);
	if (rc)
		return rc;
	pb_plan *p = NULL;
	rc = pb_part_plan_evaluate(&e, &p, err);
	pb_part_plan_edit_free(&e);
	if (rc)
		return rc;
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
	if ((rc = pb_plan_edit_side_open(s, "boundary", &side, err)) == PB_OK) {
		const pb_graph *g = side->graph;
		if (pb_dtp_edit_is_dtp(old)) {
			pb_dtp_opts o;
			if ((rc = pb_plan_edit_dtp_opts(s, side, old, &o, &rules, err)) == PB_OK)
				rc = pb_dtp_edit_boundary(&g, &cl, &o, old, k, delta, &r, err);
		} else {
			pb_pipe_opts o;
			pb_pipeline_plan_opts_default(&o);
			o.reload = pb_plan_edit_side_reload;
			o.reload_ud = side;
			if ((rc = pb_plan_edit_rules(s, "stage", &rules, err)) == PB_OK) {
				o.rules = rules;
				rc = pb_pipeline_edit_boundary(g, &cl, &o, old, k, delta, &r, err);
			}
		}
	}
	rc = pb_plan_edit_pipe_finish(ctx, a, &r, "boundary", rc, err);
	pb_part_rules_free(rules);
	pb_session_free(side);
	pb_cluster_free(&cl);
	return rc;
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
