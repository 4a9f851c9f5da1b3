/*
 * cmds/cmd_session.c — commands on the open session: open, layout, plan, undo,
 * redo, save, load, step, help.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cmds/cmd_calibrate.h"
#include "render/svg_export.h"
#include "util/fmt.h"

static const pb_opt no_opts[] = {
    PB_OPTS_END,
};

static void help_line(void *ud, const pb_command *c)
{
	if (!(c->flags & PB_CMD_HIDDEN))
		fprintf((FILE *)ud, "  %-12s %s\n", c->name, c->summary);
}

static int cmd_help(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const char *name = pb_args_pos(a, 0);
	if (name) {
		const pb_command *c = pb_cmd_find(name);
		if (!c)
			return pb_err(err, PB_EUSAGE, "help: no command '%s'", name);
		pb_cmd_print_help(c, ctx->out);
		return PB_OK;
	}
	fprintf(ctx->out, "Commands (COMMAND --help for details):\n");
	pb_cmd_foreach(help_line, ctx->out);
	return PB_OK;
}

static const pb_opt open_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_END,
};

static int cmd_open(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	if (!pb_args_pos(a, 0))
		return pb_err(err, PB_EUSAGE, "open: usage: %s", cmd->usage);
	const pb_graph *g = ctx->s->graph;
	fprintf(ctx->out, "opened %s: %d nodes, %.3f GMACs\n", g->path, g->n_nodes,
	        g->total.macs / 1e9);
	ctx->redraw |= PB_REDRAW_ALL | PB_RELAYOUT;
	return PB_OK;
}

static const pb_opt layout_opts[] = {
    PB_OPTS_JSON,
    PB_OPTS_CALIBRATE,
    PB_OPTS_END,
};

static int cmd_layout(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const char *path = pb_args_pos(a, 0);
	if (path) {
		int rc = pb_session_open_layout(ctx->s, path, err);
		if (rc)
			return rc;
		ctx->redraw |= PB_REDRAW_ALL;
	}
	if (!ctx->s->hw)
		return pb_err(err, PB_EUSAGE, "layout: no layout loaded (usage: %s)", cmd->usage);
	if (pb_args_has(a, "calibrate"))
		return pb_cmd_layout_calibrate(ctx, a, err);
	if (pb_args_has(a, "json")) {
		json_dumpf(ctx->s->hw->root, ctx->out, JSON_INDENT(1) | JSON_SORT_KEYS);
		fputc('\n', ctx->out);
	} else {
		fprintf(ctx->out, "layout %s (%s) from %s\n", ctx->s->hw->name, ctx->s->hw->kind,
		        ctx->s->hw->path);
	}
	return PB_OK;
}

/* "partition/exact (6 groups)" or "no plan" */
static void plan_name(const pb_plan *p, char *buf, size_t len)
{
	/* the plan's headline time, so an undo says what it changed */
	static const char *const figure[] = {"step_time", "max_time", "time_after"};
	if (p) {
		int n = snprintf(buf, len, "%s/%s (%d group%s", p->kind, p->method, p->n_groups,
		                 p->n_groups == 1 ? "" : "s");
		for (size_t i = 0; i < sizeof figure / sizeof *figure; i++) {
			char t[32];
			if (!pb_plan_has_metric(p, figure[i]))
				continue;
			pb_fmt_time(pb_plan_metric(p, figure[i], NAN), t, sizeof t);
			if (n >= 0 && (size_t)n < len)
				n += snprintf(buf + n, len - (size_t)n, ", %s %s", figure[i], t);
			break;
		}
		if (n >= 0 && (size_t)n < len)
			snprintf(buf + n, len - (size_t)n, ")");
	} else
		snprintf(buf, len, "no plan");
}

static int cmd_undo(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	int redo = strcmp(cmd->name, "redo") == 0;
	pb_session *s = ctx->s;
	char was[128], now[128];
	plan_name(s->plan, was, sizeof was);
	if (!(redo ? pb_session_redo(s) : pb_session_undo(s)))
		return pb_err(err, PB_EUSAGE, "%s: nothing to %s", cmd->name, cmd->name);
	plan_name(s->plan, now, sizeof now);
	/* name the change, and say so when it leaves no plan at all */
	fprintf(ctx->out, "%s: %s -> %s%s (%d more to undo, %d to redo)\n", cmd->name, was, now,
	        s->plan ? "" : ": the plan is removed ('redo' brings it back)", s->n_undo,
	        s->n_redo);
	ctx->redraw |= PB_REDRAW_ALL;
	return PB_OK;
}

static const pb_opt plan_opts[] = {
    PB_OPTS_JSON,
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "save the current plan as JSON",
     .path = "w"},
    {.name = "load",
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "load a plan saved with -o (checks it fits the model)",
     .path = "r:json s"},
    PB_OPTS_END,
};

static void print_plan(FILE *out, const pb_plan *p)
{
	fprintf(out, "plan: %s (method %s), %d group%s\n", p->kind, p->method, p->n_groups,
	        p->n_groups == 1 ? "" : "s");
	fprintf(out, "%-4s %-24s %6s %12s %12s %12s %12s %12s\n", "#", "group", "units", "nodes",
	        "MACs", "time (ms)", "storage", "routing(ms)");
	char m[32], b[32];
	for (int i = 0; i < p->n_groups; i++) {
		const pb_plan_group *g = &p->groups[i];
		char nodes[32];
		if (g->first_node >= 0)
			snprintf(nodes, sizeof nodes, "%d-%d", g->first_node, g->last_node);
		else
			snprintf(nodes, sizeof nodes, "-");
		fprintf(out, "%-4d %-24.24s %6d %12s %12s %12.4f %12s %12.4f%s%s\n", i, g->label,
		        g->n_units, nodes, pb_fmt_si(g->macs, m, sizeof m), g->time * 1e3,
		        pb_fmt_bytes(g->storage, b, sizeof b), g->routing * 1e3,
		        g->bottleneck ? "  <- bottleneck" : "",
		        g->over_memory ? "  OVER MEMORY" : "");
	}
	for (int i = 0; i < p->n_metrics; i++) /* with units, as the SVG title block */
		fprintf(
		    out, "%s = %s\n", p->metric_names[i],
		    pb_plan_metric_text(p, p->metric_names[i], p->metric_values[i], m, sizeof m));
}

static int cmd_plan(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	const char *load = pb_args_str(a, "load", NULL);
	if (load) {
		if (!s->graph)
			return pb_err(
			    err, PB_EUSAGE,
			    "plan --load %s: no model is open (a plan belongs to a model: "
			    "'open MODEL' first)",
			    load);
		pb_plan *p;
		int rc = pb_plan_load(load, s->graph->n_nodes, &p, err);
		if (rc)
			return rc;
		pb_session_set_plan(s, p);
		ctx->redraw |= PB_REDRAW_ALL;
	}
	if (!s->plan)
		return pb_err(err, PB_EUSAGE, "plan: no plan yet (run a solver, or --load FILE)");
	const char *outp = pb_args_str(a, "output", NULL);
	if (outp) {
		int rc = pb_plan_save(s->plan, pb_session_node_names(s), outp, err);
		if (rc)
			return rc;
		fprintf(ctx->log, "wrote %s\n", outp);
	}
	if (pb_args_has(a, "json")) {
		json_t *j = pb_plan_to_json(s->plan, NULL);
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
		json_decref(j);
	} else if (!outp) {
		print_plan(ctx->out, s->plan);
	}
	return PB_OK;
}

static int cmd_save(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const char *path = pb_args_pos(a, 0);
	int vim = cmd->name[0] == 'w'; /* w, wq: FILE defaults to the session's file */
	if (!path && vim)
		path = ctx->s->session_path ? ctx->s->session_path : "partbench-session.json";
	if (!path)
		return pb_err(err, PB_EUSAGE, "%s: usage: %s", cmd->name, cmd->usage);
	if (strcmp(cmd->name, "load") != 0) {
		if (!ctx->s->graph)
			return pb_err(err, PB_EUSAGE, "%s: nothing to save (no model open)",
			              cmd->name);
		char *p = strdup(path); /* path may be the session's own, which save replaces */
		if (!p)
			return pb_err(err, PB_ENOMEM, "%s: out of memory", cmd->name);
		int rc = pb_session_save(ctx->s, p, err);
		if (rc == PB_OK)
			fprintf(ctx->out, "session saved to %s\n", p);
		free(p);
		if (rc == PB_OK && strcmp(cmd->name, "wq") == 0)
			ctx->redraw |= PB_QUIT;
		ctx->redraw |= PB_REDRAW_STATUS;
		return rc;
	}
	int rc = pb_session_load(ctx->s, path, err);
	if (rc == PB_OK) {
		fprintf(ctx->out, "session loaded from %s\n", path);
		ctx->redraw |= PB_REDRAW_ALL | PB_RELAYOUT;
	}
	return rc;
}

/* q refuses while there are unsaved changes (vim's habit; the workbench asks
 * instead before running it); q! quits whatever the state. */
static int cmd_q(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	if (strcmp(cmd->name, "q") == 0 && ctx->s->dirty)
		return pb_err(err, PB_EUSAGE,
		              "q: the session has unsaved changes (:w [FILE] saves them, :q! "
		              "discards them)");
	ctx->redraw |= PB_QUIT;
	return PB_OK;
}

static const pb_opt step_opts[] = {
    {.name = "count",
     .short_name = 'n',
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "units of work (actions, episodes, nodes); default 1"},
    PB_OPTS_END,
};

static int cmd_step(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	if (!s->solver && s->solver_detached[0])
		return pb_err(err, PB_EUSAGE,
		              "step: no solver is running (%s; start one again, e.g. 'partition "
		              "--method rl --start')",
		              s->solver_detached);
	if (!s->solver)
		return pb_err(err, PB_EUSAGE,
		              "step: no solver is running (start one, e.g. 'partition --method rl "
		              "--start')");
	long n;
	int rc = pb_args_int(a, "count", 1, 1, 100000000, &n, err);
	if (rc)
		return rc;
	/* One unit at a time, so that N units are N units for every solver and a
	 * front end can show progress and cancel between them. */
	pb_solver_progress p = {0};
	int improved = 0;
	long done = 0;
	for (; done < n && !p.done; done++) {
		if ((rc = pb_solver_step(s->solver, 1, &p, err)))
			return rc;
		improved |= p.improved;
		if (n > 1 && pb_cmd_progress(ctx, (double)(done + 1) / (double)n,
		                             "step %ld/%ld: %s", done + 1, n, p.message)) {
			done++;
			fprintf(ctx->out, "step: cancelled after %ld of %ld units\n", done, n);
			break;
		}
	}
	p.improved = improved;
	const pb_plan *inc = pb_solver_incumbent(s->solver);
	if (inc && p.improved)
		pb_session_set_solver_plan(s, pb_plan_copy(inc));
	pb_session_notify(s, PB_EVENT_SOLVER_STEP);
	fprintf(ctx->out, "%s: %s%s\n", s->solver_name ? s->solver_name : "solver", p.message,
	        p.done ? " (done)" : "");
	ctx->redraw |= PB_REDRAW_ALL;
	return PB_OK;
}

const pb_command pb_cmds_session[] = {
    {.name = "help",
     .usage = "help [COMMAND]",
     .summary = "list commands, or show one command's help",
     .opts = no_opts,
     .fn = cmd_help,
     .script = PB_SCRIPT_CALLS,
     .paths = ""},
    {.name = "open",
     .usage = "open MODEL [--input NAME=DIMS]",
     .summary = "open a model (ONNX, DOT or JSON graph)",
     .opts = open_opts,
     .fn = cmd_open,
     .flags = PB_CMD_GRAPH,
     .script = PB_SCRIPT_RUN,
     .paths = "r@0:model"},
    {.name = "layout",
     .usage = "layout [FILE] [--json] [--calibrate PROFILE [--model MODEL]]",
     .summary = "load or show the hardware layout",
     .opts = layout_opts,
     .fn = cmd_layout,
     .script = PB_SCRIPT_CALLS,
     .paths = "r@0:lua s@0"},
    {.name = "plan",
     .usage = "plan [--json] [-o FILE] [--load FILE]",
     .summary = "show, save or load the current plan",
     .opts = plan_opts,
     .fn = cmd_plan,
     .script = PB_SCRIPT_CALLS,
     .paths = ""},
    {.name = "undo",
     .usage = "undo",
     .summary = "undo the last change to the plan",
     .opts = no_opts,
     .fn = cmd_undo,
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "redo",
     .usage = "redo",
     .summary = "redo the last undone change",
     .opts = no_opts,
     .fn = cmd_undo,
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "save",
     .usage = "save FILE",
     .summary = "save the session (model, layout, plan, view) atomically",
     .opts = no_opts,
     .fn = cmd_save,
     .script = PB_SCRIPT_RUN,
     .paths = "w@0"},
    {.name = "load",
     .usage = "load FILE",
     .summary = "load a saved session",
     .opts = no_opts,
     .fn = cmd_save,
     .script = PB_SCRIPT_RUN,
     .paths = "r@0:json"},
    {.name = "w",
     .usage = "w [FILE]",
     .summary = "save the session to FILE, else to the file it was saved to or loaded from",
     .opts = no_opts,
     .fn = cmd_save,
     .flags = PB_CMD_HIDDEN,
     .script = PB_SCRIPT_NO},
    {.name = "wq",
     .usage = "wq [FILE]",
     .summary = "save the session (as w) and leave the workbench",
     .opts = no_opts,
     .fn = cmd_save,
     .flags = PB_CMD_HIDDEN,
     .script = PB_SCRIPT_NO},
    {.name = "q",
     .usage = "q",
     .summary = "leave the workbench (refused while there are unsaved changes)",
     .opts = no_opts,
     .fn = cmd_q,
     .flags = PB_CMD_HIDDEN,
     .script = PB_SCRIPT_NO},
    {.name = "q!",
     .usage = "q!",
     .summary = "leave the workbench, discarding unsaved changes",
     .opts = no_opts,
     .fn = cmd_q,
     .flags = PB_CMD_HIDDEN},
    {.name = "step",
     .usage = "step [-n N]",
     .summary = "advance the running solver by N units of work",
     .opts = step_opts,
     .fn = cmd_step,
     .help = "Runs the attached solver's step() N times, one unit each, stopping early when it\n"
             "is done or (in the workbench) when Esc / Ctrl-C cancels. Units: partition exact one\n"
             "bisection check, milp one probe / one <= 50 ms LP or column slice / one B&B node,\n"
             "rl one episode, local one move, greedy / equal / pack all at once; shard --start\n"
             "one incumbent or about 50 ms of a scheme's MILP.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {0},
};
