/*
 * cmds/cmd_run.c — scripting commands: run, lua, source, scripts.
 *
 * Limits and capabilities (docs/lua-api.md, Sandbox): `run` sets the
 * instruction budget, memory cap and time limit of the script, and the
 * folder where the commands it runs may write (--allow-write; none by
 * default, the current folder for `source` and `lua` in the workbench). A
 * script that runs a script (pb.cmd("run ...")) can only lower its limits
 * and narrow that folder: the sandbox ignores higher limits inside a call,
 * and a wider --allow-write is refused here.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "script/script.h"
#include "util/lua_sandbox.h"

static const pb_opt run_opts[] = {
    PB_OPTS_LAYOUT,
    PB_OPTS_GRAPH,
    {.name = "max-instructions",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "instruction budget per top-level call (default 50000000)"},
    {.name = "max-memory",
     .type = PB_OPT_INT,
     .metavar = "MIB",
     .help = "memory cap of the Lua state in MiB (default 256)"},
    {.name = "max-seconds",
     .type = PB_OPT_DOUBLE,
     .metavar = "S",
     .help = "time limit per top-level call in seconds of CPU time, commands run by pb.cmd "
             "included (default 30; 40x in a sanitizer build)"},
    {.name = "allow-write",
     .type = PB_OPT_STR,
     .metavar = "DIR",
     .help = "commands run by the script may write files under DIR (default: nowhere)",
     .path = "g"},
    PB_OPTS_END,
};

/* Outside scripts every limit is set (defaults for those not given); inside
 * one only those given, and the sandbox lowers, never raises them. */
static int apply_limits(pb_cmd_ctx *ctx, pb_script *sc, const pb_args *a, pb_error *err)
{
	long ins, mem;
	double sec;
	int rc = pb_args_int(a, "max-instructions", 50000000, 1000, 1L << 40, &ins, err);
	if (!rc)
		rc = pb_args_int(a, "max-memory", 256, 1, 1 << 20, &mem, err);
	if (!rc)
		rc = pb_args_double(a, "max-seconds", pb_lua_default_seconds(), 0.001, 1e6, &sec,
		                    err);
	if (rc)
		return rc;
	pb_lua_limits lim = {ins, (size_t)mem << 20, sec};
	if (ctx->from_script) {
		if (!pb_args_has(a, "max-instructions"))
			lim.instructions = 0;
		if (!pb_args_has(a, "max-memory"))
			lim.memory = 0;
		if (!pb_args_has(a, "max-seconds"))
			lim.seconds = 0;
	}
	pb_script_set_limits(sc, &lim);
	return PB_OK;
}

/* The folder the script's commands may write to, as a real path in out
 * ("" for nowhere): --allow-write DIR, else the caller's (a script run by a
 * script), else the current folder in the workbench for `source`. */
static int write_folder(pb_cmd_ctx *ctx, const pb_args *a, int cwd_default, char out[PATH_MAX],
                        pb_error *err)
{
	const char *d = pb_args_str(a, "allow-write", NULL);
	out[0] = '\0';
	if (!d) {
		if (ctx->from_script)
			snprintf(out, PATH_MAX, "%s", ctx->allow_write ? ctx->allow_write : "");
		else if (cwd_default && ctx->interactive && !realpath(".", out))
			out[0] = '\0';
		return PB_OK;
	}
	struct stat st;
	if (!realpath(d, out) || stat(out, &st) != 0 || !S_ISDIR(st.st_mode)) {
		out[0] = '\0';
		return pb_err(err, PB_EUSAGE, "--allow-write %s: not a folder", d);
	}
	if (ctx->from_script && !(ctx->allow_write && (!strcmp(ctx->allow_write, out) ||
	                                               pb_cmd_path_within(ctx->allow_write, out))))
		return pb_err(err, PB_EUSAGE,
		              "--allow-write %s: a script cannot let the scripts it runs write "
		              "where it may not",
		              d);
	return PB_OK;
}

/* Runs a file with the write folder of a (copied) context. */
static int run_script_file(pb_cmd_ctx *ctx, pb_script *sc, const char *path, const char *dir,
                           pb_error *err)
{
	pb_cmd_ctx sub = *ctx;
	sub.allow_write = dir[0] ? dir : NULL;
	int rc = pb_script_run_file(sc, &sub, path, err);
	ctx->redraw |= sub.redraw;
	return rc;
}

static int cmd_run(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const char *script = pb_args_pos(a, 0), *model = pb_args_pos(a, 1);
	if (!script)
		return pb_err(err, PB_EUSAGE, "%s: usage: %s", cmd->name, cmd->usage);
	int rc;
	if (model) {
		const char **specs;
		int n = pb_args_list(a, "input", &specs);
		pb_input_override ov[PB_ARGS_MAX_LIST];
		for (int i = 0; i < n; i++)
			if ((rc = pb_parse_input_override(specs[i], &ov[i], err))) {
				for (int k = 0; k < i; k++)
					pb_input_override_free(&ov[k]);
				return rc;
			}
		rc = pb_session_open_model(ctx->s, model, ov, n, err);
		for (int i = 0; i < n; i++)
			pb_input_override_free(&ov[i]);
		if (rc)
			return rc;
	}
	const char *layout = pb_args_str(a, "layout", NULL);
	if (layout && (rc = pb_session_open_layout(ctx->s, layout, err)))
		return rc;
	char dir[PATH_MAX];
	if ((rc = write_folder(ctx, a, 0, dir, err)))
		return rc;
	pb_script *sc = pb_script_get(ctx->s, err);
	if (!sc)
		return err->code ? err->code : PB_ENOMEM;
	if ((rc = apply_limits(ctx, sc, a, err)))
		return rc;
	ctx->redraw |= PB_REDRAW_ALL;
	return run_script_file(ctx, sc, script, dir, err);
}

static const pb_opt lua_opts[] = {
    PB_OPTS_END,
};

static int cmd_lua(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	if (a->n_pos == 0)
		return pb_err(err, PB_EUSAGE, "lua: usage: %s", cmd->usage);
	size_t len = 1;
	for (int i = 0; i < a->n_pos; i++)
		len += strlen(a->pos[i]) + 1;
	char *code = calloc(len, 1);
	if (!code)
		return pb_err(err, PB_ENOMEM, "out of memory");
	for (int i = 0; i < a->n_pos; i++) {
		if (i)
			strcat(code, " ");
		strcat(code, a->pos[i]);
	}
	pb_script *sc = pb_script_get(ctx->s, err);
	char dir[PATH_MAX] = "";
	if (ctx->from_script)
		snprintf(dir, sizeof dir, "%s", ctx->allow_write ? ctx->allow_write : "");
	else if (ctx->interactive && !realpath(".", dir))
		dir[0] = '\0';
	pb_cmd_ctx sub = *ctx;
	sub.allow_write = dir[0] ? dir : NULL;
	int rc = sc ? pb_script_run_string(sc, &sub, code, "lua", err) : PB_ENOMEM;
	ctx->redraw |= sub.redraw;
	free(code);
	ctx->redraw |= PB_REDRAW_ALL;
	return rc;
}

static int cmd_source(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const char *path = pb_args_pos(a, 0);
	if (!path)
		return pb_err(err, PB_EUSAGE, "source: usage: %s", cmd->usage);
	char dir[PATH_MAX];
	int rc = write_folder(ctx, a, 1, dir, err);
	if (rc)
		return rc;
	pb_script *sc = pb_script_get(ctx->s, err);
	if (!sc)
		return PB_ENOMEM;
	ctx->redraw |= PB_REDRAW_ALL;
	return run_script_file(ctx, sc, path, dir, err);
}

static const pb_opt source_opts[] = {
    {.name = "allow-write",
     .type = PB_OPT_STR,
     .metavar = "DIR",
     .help = "commands run by the script may write files under DIR (default: the current folder in "
             "the workbench, else nowhere)",
     .path = "g"},
    PB_OPTS_END,
};

static const pb_opt scripts_opts[] = {
    PB_OPTS_JSON,
    PB_OPTS_END,
};

static int cmd_scripts(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	json_t *j = pb_script_registry_json(pb_script_of(ctx->s));
	if (pb_args_has(a, "json")) {
		json_dumpf(j, ctx->out, JSON_INDENT(1));
		fputc('\n', ctx->out);
	} else {
		size_t i;
		json_t *e;
		fprintf(ctx->out, "heuristics:\n");
		json_array_foreach(json_object_get(j, "heuristics"), i, e)
		    fprintf(ctx->out, "  %-24s %s\n", json_string_value(json_object_get(e, "name")),
		            json_string_value(json_object_get(e, "kind")));
		fprintf(ctx->out, "rules:\n");
		json_array_foreach(json_object_get(j, "rules"), i, e)
		    fprintf(ctx->out, "  %-24s %s\n", json_string_value(json_object_get(e, "name")),
		            json_string_value(json_object_get(e, "kind")));
	}
	json_decref(j);
	return PB_OK;
}

const pb_command pb_cmds_run[] = {
    {.name = "run",
     .usage = "run SCRIPT.lua [MODEL] [--layout L] [--input NAME=DIMS] [--allow-write DIR] "
              "[--max-seconds S]",
     .summary = "run a Lua script headless (sandboxed; see docs/lua-api.md)",
     .opts = run_opts,
     .fn = cmd_run,
     .help = "The script runs in its own environment with only base, string, table, math and\n"
             "utf8; io, os, require and bytecode are unavailable. It stops with an error when\n"
             "it exceeds the instruction budget, the memory cap or the time limit; a failing\n"
             "script leaves the session's plan unchanged. Commands it runs (pb.cmd) write files\n"
             "only under --allow-write DIR and read only .lua, model and JSON files.",
     .script = PB_SCRIPT_RUN,
     .paths = "r@0:lua r@1:model"},
    {.name = "lua",
     .usage = "lua CODE...",
     .summary = "run one line of Lua in the session (prints a returned value)",
     .opts = lua_opts,
     .fn = cmd_lua,
     .flags = PB_CMD_RAW,
     .help = "On a command line (the workbench's ':' line, pb.cmd) the rest of the line is the\n"
             "code as typed: quotes and spaces are kept, e.g. :lua print(\"a  b\").",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {.name = "source",
     .usage = "source FILE.lua [--allow-write DIR]",
     .summary = "run a Lua file in the session",
     .opts = source_opts,
     .fn = cmd_source,
     .script = PB_SCRIPT_RUN,
     .paths = "r@0:lua"},
    {.name = "scripts",
     .usage = "scripts [--json]",
     .summary = "list the registered Lua heuristics, rules and events",
     .opts = scripts_opts,
     .fn = cmd_scripts,
     .script = PB_SCRIPT_CALLS,
     .paths = ""},
    {0},
};
