/*
 * cmds/cmd_view.c — commands on the view of the open session: view, find,
 * repeat, quit.
 *
 * The view (zoom, pan offset, selection, colouring, layout direction,
 * expanded blocks, last search) lives in the session's typed view (view.h),
 * so it is saved with the session, and the TUI's keys change it only by
 * running these commands. The front end reads its fields and draws.
 *
 * `view set KEY=VALUE` takes the keys of the saved form: zoom (0 labels, 1
 * compact, 2 one cell per node), x/y (top-left of the visible area, cells),
 * sel (selected node id), color (group|op|branch|none), dir (TB|LR), depth
 * (collapse depth, empty = automatic), open (expanded node ranges
 * "a-b,c-d"), find (last search), follow, mouse, constants (0/1), fit,
 * center, top (1 = the front end should fit / centre / show the selection at
 * the top once).
 */
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "util/regex_size.h"
#include "view.h"

static const pb_opt no_opts[] = {
    PB_OPTS_END,
};

/* A whole decimal number that fits a long (strtol clamps one that does
 * not to LONG_MAX or LONG_MIN: refused, never silently clamped). */
static int parse_long(const char *s, long *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	*out = strtol(s, &end, 10);
	return *end || errno == ERANGE ? -1 : 0;
}

/* Node id from "ID" or a node name. */
static int node_ref(const pb_graph *g, const char *ref, pb_error *err)
{
	long id;
	if (parse_long(ref, &id) == 0 && id >= 0 && id < g->n_nodes)
		return (int)id;
	int k = pb_graph_find_node(g, ref);
	if (k < 0)
		pb_err(err, PB_EUSAGE, "view: no node '%s' (give an id 0..%d or a node name)", ref,
		       g->n_nodes - 1);
	return k;
}

static int select_node(pb_cmd_ctx *ctx, const char *what, pb_error *err)
{
	pb_session *s = ctx->s;
	const pb_graph *g = s->graph;
	if (!g)
		return pb_err(err, PB_EUSAGE, "view select: no model open");
	long sel = s->view.sel;
	if (sel < 0 || sel >= g->n_nodes)
		sel = 0;
	int k;
	if (strcmp(what, "next") == 0)
		k = (int)(sel + 1 < g->n_nodes ? sel + 1 : sel);
	else if (strcmp(what, "prev") == 0)
		k = (int)(sel > 0 ? sel - 1 : 0);
	else if (strcmp(what, "succ") == 0)
		k = g->nodes[sel].n_succs ? g->nodes[sel].succs[0] : (int)sel;
	else if (strcmp(what, "pred") == 0)
		k = g->nodes[sel].n_preds ? g->nodes[sel].preds[g->nodes[sel].n_preds - 1]
		                          : (int)sel;
	else if ((k = node_ref(g, what, err)) < 0)
		return PB_EUSAGE;
	const pb_node *n = &g->nodes[k];
	int grp = s->plan && k < s->plan->n_nodes ? s->plan->group[k] : -1;
	fprintf(ctx->out, "node %d %s (%s)", k, n->name, n->op);
	if (grp >= 0)
		fprintf(ctx->out, " in group %d", grp);
	fputc('\n', ctx->out);
	s->view.sel = k;
	return PB_OK;
}

/* Adds or removes an expanded range: expand adds FIRST..LAST (once),
 * collapse removes the innermost range that contains the node. */
static int view_open(pb_view *v, long a, long b, int add, pb_error *err)
{
	int k = -1;
	for (int i = 0; i < v->n_open; i++) {
		int hit = add ? v->open_first[i] == a && v->open_last[i] == b
		              : v->open_first[i] <= a && a <= v->open_last[i] &&
		                    (k < 0 || v->open_last[i] - v->open_first[i] <
		                                  v->open_last[k] - v->open_first[k]);
		if (hit)
			k = i;
	}
	if (!add && k < 0)
		return pb_err(err, PB_EUSAGE, "view collapse: node %ld is in no expanded block", a);
	if (k >= 0) { /* drop it (an expand of an open range puts it last) */
		for (int i = k; i + 1 < v->n_open; i++) {
			v->open_first[i] = v->open_first[i + 1];
			v->open_last[i] = v->open_last[i + 1];
		}
		v->n_open--;
	}
	if (!add)
		return PB_OK;
	if (v->n_open == PB_VIEW_OPEN_MAX)
		return pb_err(err, PB_EUSAGE,
		              "view expand: %d blocks are expanded already; collapse some "
		              "('view collapse')",
		              PB_VIEW_OPEN_MAX);
	v->open_first[v->n_open] = a;
	v->open_last[v->n_open++] = b;
	return PB_OK;
}

static int cmd_view(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	const char *sub = pb_args_pos(a, 0);
	const char *v1 = pb_args_pos(a, 1), *v2 = pb_args_pos(a, 2);
	long x, y;
	int rc = PB_OK;
	pb_view *v = &s->view;
	if (!sub || strcmp(sub, "show") == 0) {
		char text[1024];
		pb_view_format(v, text, sizeof text);
		fprintf(ctx->out, "view: %s\n", text[0] ? text : "(defaults)");
		return PB_OK;
	}
	if (strcmp(sub, "zoom") == 0) {
		long z = v->zoom;
		if (v1 && strcmp(v1, "+") == 0)
			z--;
		else if (v1 && strcmp(v1, "-") == 0)
			z++;
		else if (parse_long(v1, &z) != 0)
			return pb_err(err, PB_EUSAGE,
			              "view zoom: give 0 (labels), 1 (compact), 2 "
			              "(one cell per node), + or -");
		v->zoom = (int)(z < 0 ? 0 : z > 2 ? 2 : z);
		ctx->redraw |= PB_REDRAW_CANVAS | PB_RELAYOUT;
	} else if (strcmp(sub, "pan") == 0 || strcmp(sub, "at") == 0) {
		if (parse_long(v1, &x) || parse_long(v2, &y))
			return pb_err(err, PB_EUSAGE, "view %s: give two integers (columns rows)",
			              sub);
		if (strcmp(sub, "pan") == 0) {
			x += v->x;
			y += v->y;
		}
		v->x = x;
		v->y = y;
		ctx->redraw |= PB_REDRAW_CANVAS;
	} else if (strcmp(sub, "fit") == 0) {
		v->fit = 1;
		ctx->redraw |= PB_REDRAW_CANVAS | PB_RELAYOUT;
	} else if (strcmp(sub, "center") == 0) {
		v->center = 1;
		ctx->redraw |= PB_REDRAW_CANVAS;
	} else if (strcmp(sub, "select") == 0) {
		if (!v1)
			return pb_err(err, PB_EUSAGE,
			              "view select: give ID, NAME, next, prev, succ or pred");
		rc = select_node(ctx, v1, err);
		ctx->redraw |= PB_REDRAW_ALL;
	} else if (strcmp(sub, "color") == 0) {
		/* branch: by the kind of the node's parallel-branch group (the
		 * TUI computes the groups, cmds/branch_of.h) */
		if (!v1 || strcmp(v1, "cycle") == 0)
			v1 = pb_view_color_name((pb_view_color)((v->color + 1) % 4));
		if (pb_view_set_key(v, "color", v1, err) != PB_OK)
			return pb_err(err, PB_EUSAGE,
			              "view color: give group, op, branch, none or cycle");
		fprintf(ctx->out, "colour by %s\n", v1);
		ctx->redraw |= PB_REDRAW_CANVAS;
	} else if (strcmp(sub, "dir") == 0) {
		if (!v1 || strcmp(v1, "toggle") == 0)
			v->lr = !v->lr;
		else if (strcmp(v1, "TB") && strcmp(v1, "LR"))
			return pb_err(err, PB_EUSAGE, "view dir: give TB (top down), LR or toggle");
		else
			v->lr = strcmp(v1, "LR") == 0;
		ctx->redraw |= PB_REDRAW_CANVAS | PB_RELAYOUT;
	} else if (strcmp(sub, "expand") == 0 || strcmp(sub, "collapse") == 0) {
		int add = strcmp(sub, "expand") == 0;
		if (parse_long(v1, &x) || (add && parse_long(v2, &y)))
			return pb_err(err, PB_EUSAGE,
			              "view %s: usage: view expand FIRST LAST | view "
			              "collapse NODE",
			              sub);
		if (add && (x < 0 || y < x))
			return pb_err(err, PB_EUSAGE, "view expand: bad range %ld-%ld", x, y);
		rc = view_open(v, x, add ? y : x, add, err);
		ctx->redraw |= PB_REDRAW_CANVAS | PB_RELAYOUT;
	} else if (strcmp(sub, "depth") == 0) {
		if (v1 && strcmp(v1, "auto") == 0) {
			v->depth = -1;
		} else if (parse_long(v1, &x) == 0 && x >= 0 && x <= 64) {
			v->depth = (int)x;
		} else {
			return pb_err(err, PB_EUSAGE, "view depth: give 0..64 or auto");
		}
		ctx->redraw |= PB_REDRAW_CANVAS | PB_RELAYOUT;
	} else if (strcmp(sub, "mouse") == 0 || strcmp(sub, "follow") == 0 ||
	           strcmp(sub, "chip") == 0) {
		int *field = strcmp(sub, "mouse") == 0    ? &v->mouse
		             : strcmp(sub, "follow") == 0 ? &v->follow
		                                          : &v->chip;
		int on = !*field;
		if (v1 && strcmp(v1, "on") == 0)
			on = 1;
		else if (v1 && strcmp(v1, "off") == 0)
			on = 0;
		else if (v1 && strcmp(v1, "toggle") != 0)
			return pb_err(err, PB_EUSAGE, "view %s: give on, off or toggle", sub);
		*field = on;
		fprintf(ctx->out, "%s %s\n", sub, on ? "on" : "off");
		ctx->redraw |= strcmp(sub, "chip") == 0 ? PB_REDRAW_ALL : PB_REDRAW_STATUS;
	} else if (strcmp(sub, "set") == 0) {
		for (int i = 1; i < a->n_pos && rc == PB_OK; i++) {
			const char *kv = pb_args_pos(a, i), *eq = strchr(kv, '=');
			if (!eq || eq == kv)
				return pb_err(err, PB_EUSAGE, "view set: give KEY=VALUE, not '%s'",
				              kv);
			char key[64];
			snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
			rc = pb_view_set_key(v, key, eq[1] ? eq + 1 : NULL, err);
		}
		ctx->redraw |= PB_REDRAW_ALL;
	} else {
		return pb_err(err, PB_EUSAGE, "view: unknown subcommand '%s' (usage: %s)", sub,
		              cmd->usage);
	}
	return rc;
}

static const pb_opt find_opts[] = {
    {.name = "prev",
     .short_name = 'p',
     .type = PB_OPT_FLAG,
     .help = "search backwards from the selection"},
    {.name = "all",
     .short_name = 'a',
     .type = PB_OPT_FLAG,
     .help = "list every match (id, name, op)"},
    PB_OPTS_END,
};

/* The expanded size of a `find` pattern (util/regex_size.h): 10,000 atoms
 * compile in milliseconds; patterns that name nodes are far smaller. */
enum { PB_FIND_REGEX_MAX = 10000 };

static int cmd_find(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	const pb_graph *g = s->graph;
	if (!g)
		return pb_err(err, PB_EUSAGE, "find: no model open");
	char pat[256];
	const char *given = pb_args_pos(a, 0);
	snprintf(pat, sizeof pat, "%s", given ? given : s->view.find);
	if (!pat[0])
		return pb_err(err, PB_EUSAGE, "find: usage: %s", cmd->usage);
	/* Back-references make matching exponential in the pattern (glibc
	 * backtracks): a `find` typed or run by a script would hang. */
	for (const char *p = pat; *p; p++) {
		if (p[0] != '\\' || !p[1])
			continue;
		if (p[1] >= '1' && p[1] <= '9')
			return pb_err(
			    err, PB_EUSAGE,
			    "find: back-references (\\%c) are not supported: they can take "
			    "exponential time",
			    p[1]);
		p++; /* an escaped character */
	}
	/* Nested bounds multiply what regcomp builds (issue 39: 10 s and
	 * 3.25 GB in C, where no script time limit reaches). */
	if (pb_regex_size(pat, PB_FIND_REGEX_MAX) > PB_FIND_REGEX_MAX)
		return pb_err(err, PB_EUSAGE,
		              "find: '%s' expands to more than %d characters once its repetition "
		              "counts ({m,n}) are multiplied out: too big to compile",
		              pat, PB_FIND_REGEX_MAX);
	regex_t re;
	int rc = regcomp(&re, pat, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char msg[200];
		regerror(rc, &re, msg, sizeof msg);
		regfree(&re);
		return pb_err(err, PB_EUSAGE, "find: bad regular expression '%s': %s", pat, msg);
	}
	long sel = s->view.sel;
	int back = pb_args_has(a, "prev"), all = pb_args_has(a, "all");
	int count = 0, hit = -1;
	for (int k = 0; k < g->n_nodes; k++) {
		/* visit in order starting after (or before) the selection, wrapping */
		int i = back ? (int)((sel - 1 - k + 2L * g->n_nodes) % g->n_nodes)
		             : (int)((sel + 1 + k + g->n_nodes) % g->n_nodes);
		const pb_node *n = &g->nodes[i];
		if (regexec(&re, n->name, 0, NULL, 0) == 0 ||
		    regexec(&re, n->op, 0, NULL, 0) == 0) {
			count++;
			if (hit < 0)
				hit = i;
		}
	}
	if (all)
		for (int i = 0; i < g->n_nodes; i++)
			if (regexec(&re, g->nodes[i].name, 0, NULL, 0) == 0 ||
			    regexec(&re, g->nodes[i].op, 0, NULL, 0) == 0)
				fprintf(ctx->out, "%d\t%s\t%s\n", i, g->nodes[i].name,
				        g->nodes[i].op);
	regfree(&re);
	snprintf(s->view.find, sizeof s->view.find, "%s", pat);
	if (hit < 0)
		return pb_err(err, PB_EUSAGE, "find: no node matches '%s'", pat);
	fprintf(ctx->out, "%d match%s for '%s'; selected %d %s (%s)\n", count,
	        count == 1 ? "" : "es", pat, hit, g->nodes[hit].name, g->nodes[hit].op);
	ctx->redraw |= PB_REDRAW_ALL;
	s->view.sel = hit;
	return PB_OK;
}

static int cmd_repeat(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long n;
	const char *ns = pb_args_pos(a, 0);
	if (!ns || a->n_pos < 2)
		return pb_err(err, PB_EUSAGE, "repeat: usage: %s", cmd->usage);
	if (parse_long(ns, &n) || n < 1)
		return pb_err(err, PB_EUSAGE,
		              "repeat: the count '%s' is not a whole number from 1 to %ld", ns,
		              LONG_MAX);
	char line[1024];
	size_t k = 0;
	line[0] = 0;
	for (int i = 1; i < a->n_pos && k < sizeof line; i++)
		k += (size_t)snprintf(line + k, sizeof line - k, "%s%s", i > 1 ? " " : "",
		                      pb_args_pos(a, i));
	if (strncmp(line, "repeat", 6) == 0)
		return pb_err(err, PB_EUSAGE, "repeat: cannot repeat 'repeat'");
	for (long i = 0; i < n; i++) {
		int rc = pb_cmd_run_line(ctx, line, err);
		if (rc)
			return pb_err_prefix(err, "repeat: run %ld of %ld", i + 1, n);
		if (pb_cmd_progress(ctx, (double)(i + 1) / (double)n, "%s %ld/%ld", line, i + 1,
		                    n)) {
			pb_cmd_progress(ctx, -1, "cancelled");
			fprintf(ctx->out, "repeat: cancelled after %ld of %ld\n", i + 1, n);
			return PB_OK;
		}
	}
	pb_cmd_progress(ctx, -1, "done");
	return PB_OK;
}

static int cmd_quit(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	ctx->redraw |= PB_QUIT;
	return PB_OK;
}

const pb_command pb_cmds_view[] = {
    {.name = "view",
     .usage = "view [zoom N|+|-] [pan DX DY] [at X Y] [fit] [center] [select "
              "ID|NAME|next|prev|succ|pred] [color group|op|branch|none|cycle] [dir TB|LR|toggle] "
              "[expand FIRST LAST] [collapse NODE] [depth N|auto] [mouse|follow|chip "
              "on|off|toggle] [set KEY=VALUE...]",
     .summary = "show or change the view (zoom, pan, selection, colouring, blocks)",
     .opts = no_opts,
     .fn = cmd_view,
     .help = "The view is saved with the session. Zoom 0 shows labelled boxes, 1 compact boxes,\n"
             "2 one cell per node. Large graphs are shown with repeated blocks collapsed by\n"
             "name prefix; 'expand' opens the nodes FIRST..LAST one level deeper.\n"
             "'chip' shows the mesh of a placed plan in the side column (docs/mesh.md).",
     .script = PB_SCRIPT_CALLS,
     .paths = ""},
    {.name = "find",
     .usage = "find [REGEX] [--prev] [--all]",
     .summary = "select the next node whose name or op matches a POSIX regex",
     .opts = find_opts,
     .fn = cmd_find,
     .help = "Without REGEX repeats the last search. The search starts after the selection and\n"
             "wraps around.",
     .script = PB_SCRIPT_CALLS,
     .paths = ""},
    {.name = "repeat",
     .usage = "repeat N 'COMMAND [ARGS...]'",
     .summary = "run a command N times with progress (e.g. repeat 50 'step -n 5' trains live)",
     .opts = no_opts,
     .fn = cmd_repeat,
     .help = "Quote the command when it has options. Stops at the first error; in the workbench\n"
             "any key cancels between runs. N is from 1 to the largest long; a count that does\n"
             "not fit is refused.",
     .script = PB_SCRIPT_CALLS,
     .paths = ""},
    {.name = "quit",
     .usage = "quit",
     .summary = "leave the workbench",
     .opts = no_opts,
     .fn = cmd_quit,
     .flags = PB_CMD_HIDDEN,
     .script = PB_SCRIPT_NO},
    {0},
};
