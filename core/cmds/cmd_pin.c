/*
 * cmds/cmd_pin.c — pin: an operator of a shard plan (or of a dp x tp x pp
 * plan's chunks) held to a sharding spec and the plan solved again
 * (shard/search/spec_pin.h, shard/dtp/dtp_edit.h); --list shows the
 * operator's candidate specs. A spec the session's Lua candidate filter
 * removes is refused naming the rule.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmds/plan_edit.h"
#include "cmds/spec_cands.h"
#include "commands.h"
#include "script/hooks.h"
#include "shard/dtp/dtp_edit.h"
#include "shard/search/spec_pin.h"
#include "shard/strategy/strategy_problem.h"
#include "util/fmt.h"

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
	if ((rc = pb_plan_edit_side_open(s, "pin", &side, err)) == PB_OK) {
		const pb_graph *g = side->graph;
		pb_dtp_opts o;
		if ((rc = pb_plan_edit_dtp_opts(s, side, old, &o, &rules, err)) == PB_OK)
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
	rc = pb_plan_edit_pipe_finish(ctx, a, &r, "pin", rc, err);
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
	if ((rc = pb_plan_edit_load(ctx, a, err)) ||
	    (rc = pb_plan_edit_node(s->graph, a, "pin", "node", &nid, err)))
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
		rc = pb_spec_pin_edit(s->graph, &cl, &o, old, pins, n_pins, &p, err);
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
	rc = pb_plan_edit_finish(ctx, a, p, what, jb, ja);
	json_decref(jb);
	json_decref(ja);
	return rc;
}

const pb_command pb_cmds_pin[] = {
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
    {0},
};
