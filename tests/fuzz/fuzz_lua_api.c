/*
 * fuzz_lua_api.c — libFuzzer target for the Lua API surface (core/script,
 * core/util/lua_sandbox): the input is a script, run in a fresh session
 * (models/tiny_branches.dot and layouts/manycore-16.lua, opened relative to
 * the working directory: `make fuzz` runs from the repository root) with
 * small limits (2M instructions, 32 MiB, 0.5 s).
 *
 * The seeds (tests/fuzz/seeds/fuzz_lua_api/) call every pb.* function with
 * odd arguments, register every kind of heuristic, rule and event callback
 * and re-enter the session from inside them, and try the sandbox's limits;
 * the fuzzer recombines them. After the script, commands that call the
 * registered callbacks run once more outside any script (as the workbench
 * would), then the session is freed.
 * Invariants: no crash, no leak, no sanitizer report; the session is never
 * left locked; a failing script reports a message.
 * A prelude wraps pb.cmd in the script's environment so that commands that
 * only take long (training, tuning, large repeat counts, all-scheme shards)
 * are skipped: their time is not the script's and they would slow fuzzing.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "fuzz_target.h"
#include "script/script.h"
#include "session.h"

static const char prelude[] =
    "local cmd = pb.cmd\n"
    "pb.cmd = function(line, ...)\n"
    "  if type(line) == 'string' and (#line > 300 or line:find('tune') or "
    "line:find('train') or line:find('%d%d%d') or line:find('pipeline') or "
    "line:find('jobs') or (line:find('shard') and not line:find('scheme')) or "
    "(line:find('rl') and not line:find('episodes')) or line:find('swin') or "
    "line:find('densenet') or line:find('bert') or line:find('weights')) then\n"
    "    error('fuzz: command skipped')\n"
    "  end\n"
    "  return cmd(line, ...)\n"
    "end\n";

/* Commands that call callbacks a script left registered. */
static const char *const after[] = {"partition --method greedy", "evaluate", "fuse",
                                    "partition --method rl --episodes 2", "undo"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	char *code = malloc(size + 1);
	if (!code)
		return 0;
	memcpy(code, data, size);
	code[size] = '\0';
	pb_session *s = pb_session_new();
	FILE *out = fopen("/dev/null", "w");
	pb_error err = {0};
	if (!s || !out || pb_session_open_model(s, "models/tiny_branches.dot", NULL, 0, &err) ||
	    pb_session_open_layout(s, "layouts/manycore-16.lua", &err)) {
		fprintf(stderr, "fuzz_lua_api: run from the repository root (%s)\n", err.msg);
		abort();
	}
	pb_cmd_ctx ctx = {.s = s, .out = out, .log = out};
	pb_script *sc = pb_script_get(s, &err);
	if (!sc)
		abort();
	pb_lua_limits lim = {2000000, 32u << 20, 0.5};
	pb_script_set_limits(sc, &lim);
	if (pb_script_run_string(sc, &ctx, prelude, "prelude", &err) != PB_OK)
		abort();
	memset(&err, 0, sizeof err);
	int rc = pb_script_run_string(sc, &ctx, code, "fuzz.lua", &err);
	if (rc != PB_OK && !err.msg[0])
		abort(); /* a failure says why */
	if (s->locked || !s->graph)
		abort();
	for (size_t i = 0; i < sizeof after / sizeof *after; i++) {
		memset(&err, 0, sizeof err);
		rc = pb_cmd_run_line(&ctx, after[i], &err);
		if ((rc != PB_OK && !err.msg[0]) || s->locked)
			abort();
	}
	pb_session_free(s);
	fclose(out);
	free(code);
	return 0;
}
