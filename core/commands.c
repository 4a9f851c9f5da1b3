/*
 * commands.c — lookup, parsing and dispatch for the command table.
 *
 * pb_cmd_run_argv() is the single entry point used by the CLI, the TUI's `:`
 * line and Lua: it parses the command's options (args.c), answers --help from
 * the table, and prepares the session (MODEL, --input, --layout) for commands
 * flagged PB_CMD_GRAPH / PB_CMD_LAYOUT before calling the handler.
 *
 * Commands run by scripts (ctx->from_script) and commands run while a script
 * callback holds the session (s->locked) first pass check_script_cmd(): a
 * table of what each command may do there (below). Paths are checked before
 * anything is opened: reads by file kind (extension), writes by folder.
 */
#include "commands.h"

#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "util/file_door.h"
#include "util/job.h"

const pb_command *pb_cmd_find(const char *name)
{
	for (int t = 0; pb_cmd_tables[t]; t++)
		for (const pb_command *c = pb_cmd_tables[t]; c->name; c++)
			if (strcmp(c->name, name) == 0)
				return c;
	return NULL;
}

static int cmp_cmd(const void *a, const void *b)
{
	return strcmp((*(const pb_command *const *)a)->name, (*(const pb_command *const *)b)->name);
}

void pb_cmd_foreach(void (*fn)(void *ud, const pb_command *c), void *ud)
{
	const pb_command *all[256] = {0};
	int n = 0;
	for (int t = 0; pb_cmd_tables[t]; t++)
		for (const pb_command *c = pb_cmd_tables[t]; c->name && n < 256; c++)
			all[n++] = c;
	qsort(all, (size_t)n, sizeof all[0], cmp_cmd);
	for (int i = 0; i < n; i++)
		fn(ud, all[i]);
}

void pb_cmd_print_help(const pb_command *c, FILE *out)
{
	fprintf(out, "Usage: partbench %s\n\n%s\n", c->usage ? c->usage : c->name,
	        c->summary ? c->summary : "");
	if (c->help)
		fprintf(out, "\n%s\n", c->help);
	if (c->help_more) {
		fputc('\n', out);
		c->help_more(out);
	}
	fputc('\n', out);
	pb_args_print_options(c->opts, out);
}

static int has_opt(const pb_opt *spec, const char *name)
{
	for (int i = 0; spec && spec[i].name; i++)
		if (strcmp(spec[i].name, name) == 0)
			return 1;
	return 0;
}

/* `export out.svg`, `plot load out.svg` (the workbench's `:export out.svg`):
 * for commands that write an SVG, a last positional ending in .svg is the
 * output file when -o is not given. Models and inputs are never SVG. */
static void svg_output_positional(const pb_command *c, pb_args *a)
{
	if (!(c->flags & PB_CMD_SVG_OUT) || a->n_pos == 0 || pb_args_has(a, "output"))
		return;
	const char *last = a->pos[a->n_pos - 1];
	size_t n = strlen(last);
	if (n <= 4 || strcasecmp(last + n - 4, ".svg") != 0)
		return;
	for (int i = 0; i < a->n_spec; i++)
		if (strcmp(a->spec[i].name, "output") == 0) {
			a->set[i] = 1;
			a->val[i] = last;
			a->n_pos--;
			return;
		}
}

/* ------------------------------------------------ what scripts may run
 * Each command says it on its entry (pb_command.script and .paths,
 * commands.h), each option on its own (pb_opt.path, args.h);
 * check_script_cmd applies them before the command runs. */

int pb_cmd_path_within(const char *dir, const char *path)
{
	if (!dir || !path || !path[0])
		return 0;
	char parent[PATH_MAX], real[PATH_MAX];
	snprintf(parent, sizeof parent, "%s", path);
	char *slash = strrchr(parent, '/');
	if (!slash)
		snprintf(parent, sizeof parent, ".");
	else if (slash == parent)
		parent[1] = '\0';
	else
		*slash = '\0';
	if (!realpath(parent, real))
		return 0;
	size_t n = strlen(dir);
	int inside = !strcmp(dir, "/") || (!strncmp(real, dir, n) && (!real[n] || real[n] == '/'));
	struct stat st;
	if (inside && lstat(path, &st) == 0) { /* an existing file or link: where it leads */
		if (!realpath(path, real))
			return 0;
		inside =
		    !strcmp(dir, "/") || (!strncmp(real, dir, n) && (!real[n] || real[n] == '/'));
	}
	return inside;
}

/* the capability rules of util/file_door.h, by the kind names of path tokens */
static int kind_ok(const char *kind, const char *path)
{
	return pb_door_kind_ok(pb_door_kind_named(kind), path);
}

static const char *kind_list(const char *kind)
{
	return pb_door_kind_list(pb_door_kind_named(kind));
}

static const char *opt_value(const pb_args *a, const char *opt)
{
	return pb_args_str(a, opt, NULL);
}

/* The value a path token names, or NULL when the command line lacks it. */
static const char *token_value(const pb_args *a, const char *tok, char *kind, size_t klen)
{
	char name[64];
	kind[0] = '\0';
	const char *colon = strchr(tok, ':');
	if (tok[0] == '@' || (colon && colon[1] == '@')) {
		const char *num = tok[0] == '@' ? tok + 1 : colon + 2;
		int i = atoi(num);
		const char *k = strchr(num, ':');
		if (k)
			snprintf(kind, klen, "%s", k + 1);
		return pb_args_pos(a, i);
	}
	snprintf(name, sizeof name, "%s", tok);
	char *k = strchr(name, ':');
	if (k) {
		*k = '\0';
		snprintf(kind, klen, "%s", k + 1);
	}
	return opt_value(a, name);
}

/* Values of a path option that are words, not files (`--agent none`,
 * `--place-agent none`: a fresh agent). The token is "r:OPT:KIND". */
static int path_word(const char *tok, const char *v)
{
	static const char *const words[][2] = {{"r:agent:", "none"}, {"r:place-agent:", "none"}};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (!strncmp(tok, words[i][0], strlen(words[i][0])) && !strcmp(v, words[i][1]))
			return 1;
	return 0;
}

char *pb_cmd_path_tokens(const pb_command *c, char *buf, size_t len)
{
	size_t k = 0;
	if (!len)
		return buf;
	k = (size_t)snprintf(buf, len, "%s", c->paths ? c->paths : "");
	for (const pb_opt *o = c->opts; o && o->name && k < len; o++) {
		char words[64];
		snprintf(words, sizeof words, "%s", o->path ? o->path : "");
		for (char *save = NULL, *w = strtok_r(words, " ", &save); w && k < len;
		     w = strtok_r(NULL, " ", &save))
			k += (size_t)snprintf(buf + k, len - k, "%s%c:%s%s", k ? " " : "", w[0],
			                      o->name, w[1] == ':' ? w + 1 : "");
	}
	return buf;
}

static int check_script_cmd(pb_cmd_ctx *ctx, const pb_command *c, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	if (c->script == PB_SCRIPT_NO && (ctx->from_script || s->locked))
		return pb_err(err, PB_EUSAGE, "%s: not available to scripts", c->name);
	if (c->script == PB_SCRIPT_NO)
		return PB_OK;
	char paths[512];
	pb_cmd_path_tokens(c, paths, sizeof paths);
	int changes = (c->flags & PB_CMD_GRAPH && pb_args_pos(a, 0)) ||
	              (c->flags & PB_CMD_LAYOUT && pb_args_str(a, "layout", NULL));
	char buf[512], kind[16];
	snprintf(buf, sizeof buf, "%s", paths);
	for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save))
		if (tok[0] == 's' && token_value(a, tok + 1 + (tok[1] == ':'), kind, sizeof kind))
			changes = 1;
	if (s->locked && (c->script != PB_SCRIPT_CALLS || changes))
		return pb_err(err, PB_EUSAGE,
		              "%s: not allowed inside %s: a callback runs inside a solver's loop "
		              "and may only read the session (commands that open a model or "
		              "layout, change the plan or run scripts fail there)",
		              c->name, s->locked_by[0] ? s->locked_by : "a script callback");
	if (!ctx->from_script)
		return PB_OK;
	snprintf(buf, sizeof buf, "%s", paths);
	for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		const char *v = token_value(a, tok + 1 + (tok[1] == ':'), kind, sizeof kind);
		if (!v || tok[0] == 's' || tok[0] == 'g')
			continue;
		if (tok[0] == 'r' && kind[0] && !kind_ok(kind, v) && !path_word(tok, v))
			return pb_err(
			    err, PB_EUSAGE,
			    "%s: scripts read only %s files here, not '%s' (docs/lua-api.md, "
			    "Sandbox)",
			    c->name, kind_list(kind), v);
		if (tok[0] == 'w' && !pb_cmd_path_within(ctx->allow_write, v))
			return ctx->allow_write
			           ? pb_err(err, PB_EUSAGE,
			                    "%s: scripts may write only under %s, not to '%s' (run "
			                    "--allow-write DIR)",
			                    c->name, ctx->allow_write, v)
			           : pb_err(
			                 err, PB_EUSAGE,
			                 "%s: this script may not write files ('%s'): run it with "
			                 "--allow-write DIR",
			                 c->name, v);
	}
	if (c->flags & PB_CMD_GRAPH && pb_args_pos(a, 0) && !kind_ok("model", pb_args_pos(a, 0)))
		return pb_err(err, PB_EUSAGE, "%s: scripts read only %s files here, not '%s'",
		              c->name, kind_list("model"), pb_args_pos(a, 0));
	if (c->flags & PB_CMD_LAYOUT && pb_args_str(a, "layout", NULL) &&
	    !kind_ok("lua", pb_args_str(a, "layout", NULL)))
		return pb_err(err, PB_EUSAGE, "%s: scripts read only .lua layouts, not '%s'",
		              c->name, pb_args_str(a, "layout", NULL));
	return PB_OK;
}

static int prepare_session(pb_cmd_ctx *ctx, const pb_command *c, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	if (c->flags & PB_CMD_GRAPH) {
		const char *model = pb_args_pos(a, 0);
		const char **specs;
		int n_ov = has_opt(c->opts, "input") ? pb_args_list(a, "input", &specs) : 0;
		if (model) {
			pb_input_override ov[PB_ARGS_MAX_LIST];
			int rc = PB_OK;
			for (int i = 0; i < n_ov; i++) {
				rc = pb_parse_input_override(specs[i], &ov[i], err);
				if (rc) {
					for (int k = 0; k < i; k++)
						pb_input_override_free(&ov[k]);
					return rc;
				}
			}
			rc = pb_session_open_model(s, model, ov, n_ov, err);
			for (int i = 0; i < n_ov; i++)
				pb_input_override_free(&ov[i]);
			if (rc)
				return rc;
			ctx->redraw |= PB_REDRAW_ALL;
		} else if (!s->graph) {
			return pb_err(err, PB_EUSAGE,
			              "%s: no model given and none is open (usage: %s)", c->name,
			              c->usage ? c->usage : c->name);
		}
	}
	if (c->flags & PB_CMD_LAYOUT) {
		const char *layout = pb_args_str(a, "layout", NULL);
		if (layout) {
			int rc = pb_session_open_layout(s, layout, err);
			if (rc)
				return rc;
			ctx->redraw |= PB_REDRAW_ALL;
		} else if (!s->hw) {
			return pb_err(err, PB_EUSAGE,
			              "%s: needs a hardware layout: --layout FILE (see layouts/)",
			              c->name);
		}
	}
	return PB_OK;
}

int pb_cmd_run_argv(pb_cmd_ctx *ctx, int argc, char **argv, pb_error *err)
{
	if (argc < 1)
		return pb_err(err, PB_EUSAGE, "empty command");
	const pb_command *c = pb_cmd_find(argv[0]);
	if (!c)
		return pb_err(err, PB_EUSAGE, "unknown command '%s' (try 'help')", argv[0]);
	pb_args a;
	int rc = pb_args_parse(c->opts, argc - 1, argv + 1, &a, c->name, err);
	if (rc)
		return rc;
	if (a.help) {
		pb_cmd_print_help(c, ctx->out);
		return PB_OK;
	}
	svg_output_positional(c, &a);
	if (ctx->from_script || ctx->s->locked) {
		rc = check_script_cmd(ctx, c, &a, err);
		if (rc)
			return rc;
	}
	/* every file the command opens goes through util/file_door.h: under a
	 * script only the kinds it expects (also paths found inside files); the
	 * files it reads are remembered until it ends */
	int mark = pb_door_mark();
	if (ctx->from_script)
		pb_door_script_enter();
	rc = prepare_session(ctx, c, &a, err);
	int prepared = rc == PB_OK;
	if (prepared)
		rc = c->fn(ctx, c, &a, err);
	if (ctx->from_script)
		pb_door_script_leave();
	pb_door_release(mark);
	if (!prepared)
		return rc;
	/* a Lua event callback that failed during a command typed outside any
	 * script (workbench, CLI) is a warning, not lost (the hook script/
	 * registers on the session, see session.h) */
	if (ctx->s->script && ctx->s->script_report)
		ctx->s->script_report(ctx->s->script, ctx->log ? ctx->log : ctx->out);
	return rc;
}

int pb_cmd_split(const char *line, char ***argv_out)
{
	size_t len = strlen(line);
	char **argv = calloc(len / 2 + 2, sizeof *argv);
	char *buf = malloc(len + 1);
	int argc = 0;
	const char *p = line;
	*argv_out = NULL;
	if (!argv || !buf) {
		free(argv);
		free(buf);
		return -1;
	}
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		size_t k = 0;
		char quote = 0;
		while (*p && (quote || (*p != ' ' && *p != '\t' && *p != '\n'))) {
			if (quote) {
				if (*p == quote)
					quote = 0;
				else if (*p == '\\' && quote == '"' && p[1])
					buf[k++] = *++p;
				else
					buf[k++] = *p;
			} else if (*p == '"' || *p == '\'') {
				quote = *p;
			} else if (*p == '\\' && p[1]) {
				buf[k++] = *++p;
			} else {
				buf[k++] = *p;
			}
			p++;
		}
		if (quote) {
			pb_cmd_split_free(argc, argv);
			free(buf);
			return -1;
		}
		argv[argc++] = strndup(buf, k);
	}
	free(buf);
	*argv_out = argv;
	return argc;
}

void pb_cmd_split_free(int argc, char **argv)
{
	for (int i = 0; argv && i < argc; i++)
		free(argv[i]);
	free(argv);
}

int pb_cmd_run_line(pb_cmd_ctx *ctx, const char *line, pb_error *err)
{
	char **argv;
	int argc = pb_cmd_split(line, &argv);
	if (argc < 0)
		return pb_err(err, PB_EUSAGE, "unbalanced quotes in: %s", line);
	if (argc == 0) {
		pb_cmd_split_free(argc, argv);
		return PB_OK;
	}
	const pb_command *c = pb_cmd_find(argv[0]);
	if (c && (c->flags & PB_CMD_RAW) && argc > 1) {
		/* `lua print("a  b")`: quotes and spaces belong to the code */
		const char *rest = line + strspn(line, " \t\n");
		rest += strcspn(rest, " \t\n");
		rest += strspn(rest, " \t\n");
		char *raw[] = {argv[0], "--", (char *)rest};
		int rc = pb_cmd_run_argv(ctx, 3, raw, err);
		pb_cmd_split_free(argc, argv);
		return rc;
	}
	int rc = pb_cmd_run_argv(ctx, argc, argv, err);
	pb_cmd_split_free(argc, argv);
	return rc;
}

int pb_cmd_complete(const char *prefix, const char **out, int max)
{
	int n = 0;
	size_t len = strlen(prefix);
	for (int t = 0; pb_cmd_tables[t]; t++)
		for (const pb_command *c = pb_cmd_tables[t]; c->name; c++)
			if (strncmp(c->name, prefix, len) == 0 && n < max)
				out[n++] = c->name;
	return n;
}

int pb_cmd_progress(pb_cmd_ctx *ctx, double fraction, const char *fmt, ...)
{
	pb_job_tick();
	if (!ctx->progress)
		return pb_job_cancelled();
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	return ctx->progress(ctx->progress_ud, fraction, line);
}

int pb_cmd_report_fit(pb_cmd_ctx *ctx, const pb_args *a, const char *cmd, double memory,
                      pb_error *err)
{
	const char *model =
	    ctx->s->graph && ctx->s->graph->path ? ctx->s->graph->path : "the model";
	const char *layout = ctx->s->hw && ctx->s->hw->path ? ctx->s->hw->path : "the layout";
	fprintf(ctx->log,
	        "warning: the best %s plan of %s does not fit %s: a device may be planned to %.3f "
	        "GB (stages or "
	        "schemes over it are marked OVER MEMORY / does not fit)\n",
	        cmd, model, layout, memory / 1e9);
	if (pb_args_has(a, "require-fit"))
		return pb_err(err, PB_EINPUT,
		              "%s: the %s plan does not fit the device memory of %s", model, cmd,
		              layout);
	return PB_OK;
}
