/*
 * cmds/cmd_fuse_edit.c — fuse-in and fuse-out: a node of a fuse plan joins
 * another node's fusion group or leaves its own (transform/fuse.h,
 * pb_fuse_edit), under the session's Lua fusion rules.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmds/plan_edit.h"
#include "commands.h"
#include "script/hooks.h"
#include "transform/fuse.h"

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
	if ((rc = pb_plan_edit_load(ctx, a, err)) ||
	    (rc = pb_plan_edit_node(s->graph, a, name, "node", &node, err)) ||
	    (in && (rc = pb_plan_edit_node(s->graph, a, name, "with", &with, err))))
		return rc;
	const char *layout = pb_args_str(a, "layout", NULL);
	if (layout && (rc = pb_session_open_layout(s, layout, err)))
		return rc;
	pb_fuse_model m;
	pb_fuse_model_default(&m);
	if ((rc = pb_fuse_model_from_hw(s->hw, &m, err)))
		return rc;
	const pb_fuse_rules *pb_plan_edit_rules = pb_fuse_rules_of(s);
	if (!pb_plan_edit_rules)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", name);
	pb_fuse_rules rules = *pb_plan_edit_rules;
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
	rc = pb_plan_edit_finish(ctx, a, res.plan, res.what, before, after);
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

const pb_command pb_cmds_fuse_edit[] = {
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
    {.name = "fuse-out",
     .usage = "fuse-out [MODEL] --node NAME [--plan FILE] [-o FILE]",
     .summary = "take a node out of its fusion group (a group left with one node dissolves)",
     .opts = fuse_edit_opts,
     .fn = cmd_fuse_out,
     .flags = PB_CMD_GRAPH,
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {0},
};
