/*
 * cmds/cmd_backend.c — backend: a node of a map plan (or its aggregate,
 * --region) moved to another backend, under the session's Lua backend
 * rules (transform/map.h, pb_map_edit).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmds/plan_edit.h"
#include "commands.h"
#include "script/hooks.h"
#include "transform/map.h"

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
	if ((rc = pb_plan_edit_load(ctx, a, err)) ||
	    (rc = pb_plan_edit_node(s->graph, a, "backend", "node", &node, err)))
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
	rc = pb_plan_edit_finish(ctx, a, p, what, before, after);
	json_decref(before);
	json_decref(after);
	pb_map_result_free(r);
	pb_hetero_free(h);
	return rc;
}

const pb_command pb_cmds_backend[] = {
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
    {0},
};
