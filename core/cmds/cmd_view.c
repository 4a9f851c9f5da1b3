/*
 * cmds/cmd_view.c — commands on the view of the open session: view, find,
 * repeat, quit.
 *
 * The view (zoom, pan offset, selection, colouring, layout direction,
 * expanded blocks, last search) lives in the session's view string (view.h),
 * so it is saved with the session, and the TUI's keys change it only by
 * running these commands. The front end reads the string and draws.
 *
 * Keys of the view string: zoom (0 labels, 1 compact, 2 one cell per node),
 * x/y (top-left of the visible area, cells), sel (selected node id), color
 * (group|op|branch|none), dir (TB|LR), depth (collapse depth, absent = automatic),
 * open (expanded node ranges "a-b,c-d"), find (last search), follow (0/1),
 * mouse (0/1), fit (1 = front end should fit the drawing once).
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "view.h"

static const pb_opt no_opts[] = {PB_OPTS_END};

#define VIEW_CAP sizeof(((pb_session *)0)->view)

static int set_str(pb_session *s, const char *key, const char *v, pb_error *err)
{
	if (pb_view_set(s->view, VIEW_CAP, key, v) != 0)
		return pb_err(err, PB_EUSAGE,
		              "view: the view settings are full (%zu bytes); collapse some "
		              "blocks ('view collapse')",
		              VIEW_CAP);
	return PB_OK;
}

static int set_int(pb_session *s, const char *key, long v, pb_error *err)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%ld", v);
	return set_str(s, key, buf, err);
}

static int parse_long(const char *s, long *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	*out = strtol(s, &end, 10);
	return *end ? -1 : 0;
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
	long sel = pb_view_get_int(s->view, "sel", 0);
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
	return set_int(s, "sel", k, err);
}

/* Adds or removes an expanded range in the "open" list. */
static int view_open(pb_session *s, long a, long b, int add, pb_error *err)
{
	char cur[256], out[256];
	pb_view_get(s->view, "open", "", cur, sizeof cur);
	out[0] = 0;
	long best_a = -1, best_b = -1;
	if (!add) { /* innermost range that contains a */
		for (char *p = cur; *p;) {
			long x, y;
			int used = 0;
			if (sscanf(p, "%ld-%ld%n", &x, &y, &used) != 2)
				break;
			if (x <= a && a <= y && (best_a < 0 || y - x < best_b - best_a)) {
				best_a = x;
				best_b = y;
			}
			p += used;
			if (*p == ',')
				p++;
		}
		if (best_a < 0)
			return pb_err(err, PB_EUSAGE,
			              "view collapse: node %ld is in no expanded block", a);
	}
	int dropped = 0;
	for (char *p = cur; *p;) {
		long x, y;
		int used = 0;
		if (sscanf(p, "%ld-%ld%n", &x, &y, &used) != 2)
			break;
		int drop =
		    (!add && !dropped && x == best_a && y == best_b) || (add && x == a && y == b);
		if (drop)
			dropped = 1;
		else
			snprintf(out + strlen(out), sizeof out - strlen(out), "%s%ld-%ld",
			         out[0] ? "," : "", x, y);
		p += used;
		if (*p == ',')
			p++;
	}
	if (add)
		snprintf(out + strlen(out), sizeof out - strlen(out), "%s%ld-%ld",
		         out[0] ? "," : "", a, b);
	return set_str(s, "open", out[0] ? out : NULL, err);
}

static int cmd_view(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	const char *sub = pb_args_pos(a, 0);
	const char *v1 = pb_args_pos(a, 1), *v2 = pb_args_pos(a, 2);
	long x, y;
	int rc = PB_OK;
	if (!sub || strcmp(sub, "show") == 0) {
		fprintf(ctx->out, "view: %s\n", s->view[0] ? s->view : "(defaults)");
		return PB_OK;
	}
	if (strcmp(sub, "zoom") == 0) {
		long z = pb_view_get_int(s->view, "zoom", 0);
		if (v1 && strcmp(v1, "+") == 0)
			z--;
		else if (v1 && strcmp(v1, "-") == 0)
			z++;
		else if (parse_long(v1, &z) != 0)
			return pb_err(err, PB_EUSAGE,
			              "view zoom: give 0 (labels), 1 (compact), 2 "
			              "(one cell per node), + or -");
		z = z < 0 ? 0 : z > 2 ? 2 : z;
		rc = set_int(s, "zoom", z, err);
		ctx->redraw |= PB_REDRAW_CANVAS | PB_RELAYOUT;
	} else if (strcmp(sub, "pan") == 0 || strcmp(sub, "at") == 0) {
		if (parse_long(v1, &x) || parse_long(v2, &y))
			return pb_err(err, PB_EUSAGE, "view %s: give two integers (columns rows)",
			              sub);
		if (strcmp(sub, "pan") == 0) {
			x += pb_view_get_int(s->view, "x", 0);
			y += pb_view_get_int(s->view, "y", 0);
		}
		rc = set_int(s, "x", x, err);
		if (!rc)
			rc = set_int(s, "y", y, err);
		ctx->redraw |= PB_REDRAW_CANVAS;
	} else if (strcmp(sub, "fit") == 0) {
		rc = set_str(s, "fit", "1", err);
		ctx->redraw |= PB_REDRAW_CANVAS | PB_RELAYOUT;
	} else if (strcmp(sub, "center") == 0) {
		rc = set_str(s, "center", "1", err);
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
		const char *modes[] = {"group", "op", "branch", "none"};
		const int n_modes = 4;
		char cur[16];
		pb_view_get(s->view, "color", "group", cur, sizeof cur);
		if (!v1 || strcmp(v1, "cycle") == 0) {
			int k = 0;
			while (k < n_modes && strcmp(cur, modes[k]) != 0)
				k++;
			v1 = modes[(k + 1) % n_modes];
		} else {
			int k = 0;
			while (k < n_modes && strcmp(v1, modes[k]) != 0)
				k++;
			if (k == n_modes)
				return pb_err(err, PB_EUSAGE,
				              "view color: give group, op, branch, none or cycle");
		}
		rc = set_str(s, "color", v1, err);
		fprintf(ctx->out, "colour by %s\n", v1);
		ctx->redraw |= PB_REDRAW_CANVAS;
	} else if (strcmp(sub, "dir") == 0) {
		char cur[8];
		pb_view_get(s->view, "dir", "TB", cur, sizeof cur);
		if (!v1 || strcmp(v1, "toggle") == 0)
			v1 = strcmp(cur, "LR") == 0 ? "TB" : "LR";
		else if (strcmp(v1, "TB") && strcmp(v1, "LR"))
			return pb_err(err, PB_EUSAGE, "view dir: give TB (top down), LR or toggle");
		rc = set_str(s, "dir", v1, err);
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
		rc = view_open(s, x, add ? y : x, add, err);
		ctx->redraw |= PB_REDRAW_CANVAS | PB_RELAYOUT;
	} else if (strcmp(sub, "depth") == 0) {
		if (v1 && strcmp(v1, "auto") == 0) {
			rc = set_str(s, "depth", NULL, err);
		} else if (parse_long(v1, &x) == 0 && x >= 0 && x <= 64) {
			rc = set_int(s, "depth", x, err);
		} else {
			return pb_err(err, PB_EUSAGE, "view depth: give 0..64 or auto");
		}
		ctx->redraw |= PB_REDRAW_CANVAS | PB_RELAYOUT;
	} else if (strcmp(sub, "mouse") == 0 || strcmp(sub, "follow") == 0) {
		long cur = pb_view_get_int(s->view, sub, 1);
		long on = !cur;
		if (v1 && strcmp(v1, "on") == 0)
			on = 1;
		else if (v1 && strcmp(v1, "off") == 0)
			on = 0;
		else if (v1 && strcmp(v1, "toggle") != 0)
			return pb_err(err, PB_EUSAGE, "view %s: give on, off or toggle", sub);
		rc = set_int(s, sub, on, err);
		fprintf(ctx->out, "%s %s\n", sub, on ? "on" : "off");
		ctx->redraw |= PB_REDRAW_STATUS;
	} else if (strcmp(sub, "set") == 0) {
		for (int i = 1; i < a->n_pos && rc == PB_OK; i++) {
			const char *kv = pb_args_pos(a, i), *eq = strchr(kv, '=');
			if (!eq || eq == kv)
				return pb_err(err, PB_EUSAGE, "view set: give KEY=VALUE, not '%s'",
				              kv);
			char key[64];
			snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
			rc = set_str(s, key, eq[1] ? eq + 1 : NULL, err);
		}
		ctx->redraw |= PB_REDRAW_ALL;
	} else {
		return pb_err(err, PB_EUSAGE, "view: unknown subcommand '%s' (usage: %s)", sub,
		              cmd->usage);
	}
	return rc;
}

static const pb_opt find_opts[] = {
    {"prev", 'p', PB_OPT_FLAG, NULL, "search backwards from the selection"},
    {"all", 'a', PB_OPT_FLAG, NULL, "list every match (id, name, op)"},
    PB_OPTS_END};

static int cmd_find(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	const pb_graph *g = s->graph;
	if (!g)
		return pb_err(err, PB_EUSAGE, "find: no model open");
	char pat[256];
	const char *given = pb_args_pos(a, 0);
	if (given)
		snprintf(pat, sizeof pat, "%s", given);
	else if (!pb_view_get(s->view, "find", NULL, pat, sizeof pat) || !pat[0])
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
	regex_t re;
	int rc = regcomp(&re, pat, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char msg[200];
		regerror(rc, &re, msg, sizeof msg);
		regfree(&re);
		return pb_err(err, PB_EUSAGE, "find: bad regular expression '%s': %s", pat, msg);
	}
	long sel = pb_view_get_int(s->view, "sel", -1);
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
	rc = set_str(s, "find", pat, err);
	if (rc)
		return rc;
	if (hit < 0)
		return pb_err(err, PB_EUSAGE, "find: no node matches '%s'", pat);
	fprintf(ctx->out, "%d match%s for '%s'; selected %d %s (%s)\n", count,
	        count == 1 ? "" : "es", pat, hit, g->nodes[hit].name, g->nodes[hit].op);
	ctx->redraw |= PB_REDRAW_ALL;
	return set_int(s, "sel", hit, err);
}

static int cmd_repeat(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long n;
	const char *ns = pb_args_pos(a, 0);
	if (!ns || parse_long(ns, &n) || n < 1 || a->n_pos < 2)
		return pb_err(err, PB_EUSAGE, "repeat: usage: %s", cmd->usage);
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
    {"view",
     "view [zoom N|+|-] [pan DX DY] [at X Y] [fit] [center] [select ID|NAME|next|prev|succ|pred] "
     "[color group|op|branch|none|cycle] [dir TB|LR|toggle] [expand FIRST LAST] [collapse NODE] "
     "[depth N|auto] [mouse|follow on|off|toggle] [set KEY=VALUE...]",
     "show or change the view (zoom, pan, selection, colouring, blocks)", no_opts, cmd_view, 0,
     "The view is saved with the session. Zoom 0 shows labelled boxes, 1 compact boxes,\n"
     "2 one cell per node. Large graphs are shown with repeated blocks collapsed by\n"
     "name prefix; 'expand' opens the nodes FIRST..LAST one level deeper."},
    {"find", "find [REGEX] [--prev] [--all]",
     "select the next node whose name or op matches a POSIX regex", find_opts, cmd_find, 0,
     "Without REGEX repeats the last search. The search starts after the selection and\n"
     "wraps around."},
    {"repeat", "repeat N 'COMMAND [ARGS...]'",
     "run a command N times with progress (e.g. repeat 50 'step -n 5' trains live)", no_opts,
     cmd_repeat, 0,
     "Quote the command when it has options. Stops at the first error; in the workbench\n"
     "any key cancels between runs."},
    {"quit", "quit", "leave the workbench", no_opts, cmd_quit, PB_CMD_HIDDEN, NULL},
    {0}};
