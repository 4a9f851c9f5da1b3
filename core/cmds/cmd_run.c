/*
 * cmds/cmd_run.c — scripting commands: run, lua, source, scripts.
 */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "script/script.h"

static const pb_opt run_opts[] = {
    PB_OPTS_LAYOUT,
    PB_OPTS_GRAPH,
    {"max-instructions", 0, PB_OPT_INT, "N",
     "instruction budget per top-level call (default 50000000)"},
    {"max-memory", 0, PB_OPT_INT, "MIB", "memory cap of the Lua state in MiB (default 256)"},
    PB_OPTS_END};

static int apply_limits(pb_script *sc, const pb_args *a, pb_error *err)
{
	long ins, mem;
	int rc = pb_args_int(a, "max-instructions", 50000000, 1000, 1L << 40, &ins, err);
	if (!rc)
		rc = pb_args_int(a, "max-memory", 256, 1, 1 << 20, &mem, err);
	if (rc)
		return rc;
	pb_lua_limits lim = {ins, (size_t)mem << 20};
	pb_script_set_limits(sc, &lim);
	return PB_OK;
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
	pb_script *sc = pb_script_get(ctx->s, err);
	if (!sc)
		return err->code ? err->code : PB_ENOMEM;
	if ((rc = apply_limits(sc, a, err)))
		return rc;
	ctx->redraw |= PB_REDRAW_ALL;
	return pb_script_run_file(sc, ctx, script, err);
}

static const pb_opt lua_opts[] = {PB_OPTS_END};

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
	int rc = sc ? pb_script_run_string(sc, ctx, code, "lua", err) : PB_ENOMEM;
	free(code);
	ctx->redraw |= PB_REDRAW_ALL;
	return rc;
}

static int cmd_source(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const char *path = pb_args_pos(a, 0);
	if (!path)
		return pb_err(err, PB_EUSAGE, "source: usage: %s", cmd->usage);
	pb_script *sc = pb_script_get(ctx->s, err);
	if (!sc)
		return PB_ENOMEM;
	ctx->redraw |= PB_REDRAW_ALL;
	return pb_script_run_file(sc, ctx, path, err);
}

static const pb_opt scripts_opts[] = {PB_OPTS_JSON, PB_OPTS_END};

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
    {"run", "run SCRIPT.lua [MODEL] [--layout L] [--input NAME=DIMS]",
     "run a Lua script headless (sandboxed; see docs/lua-api.md)", run_opts, cmd_run, 0,
     "The script runs in its own environment with only base, string, table, math and\n"
     "utf8; io, os, require and bytecode are unavailable. It stops with an error when\n"
     "it exceeds the instruction budget or the memory cap; a failing script leaves the\n"
     "session's plan unchanged."},
    {"lua", "lua CODE...", "run one line of Lua in the session (prints a returned value)", lua_opts,
     cmd_lua, PB_CMD_RAW,
     "On a command line (the workbench's ':' line, pb.cmd) the rest of the line is the\n"
     "code as typed: quotes and spaces are kept, e.g. :lua print(\"a  b\")."},
    {"source", "source FILE.lua", "run a Lua file in the session", lua_opts, cmd_source, 0, NULL},
    {"scripts", "scripts [--json]", "list the registered Lua heuristics, rules and events",
     scripts_opts, cmd_scripts, 0, NULL},
    {0}};
