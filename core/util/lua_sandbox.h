/*
 * util/lua_sandbox.h — a Lua 5.4 state that runs untrusted text safely.
 *
 * Follows the Redis pattern: only base (without dofile, loadfile, and load of
 * binary chunks), string, table, math and utf8 are opened; each chunk runs in
 * its own _ENV with its own copies of the library tables, whose other reads
 * fall back to the (unreachable) shared safe globals; an
 * instruction budget (count hook) stops runaway loops; a custom allocator caps
 * memory; a CPU-time limit stops long calls, including single library
 * calls that run long in C (string.rep, table.concat/insert/remove/move/sort
 * are replaced by versions that look at the clock; pattern functions run
 * where a timer can stop them). Every call goes through pb_lua_call(),
 * which adds a traceback.
 */
#ifndef PB_SANDBOX_H
#define PB_SANDBOX_H

#include <stddef.h>

#include <jansson.h>
#include <lua.h>

#include "util/error.h"

typedef struct pb_lua_limits {
	long instructions; /* per top-level call; 0 = default (50M) */
	size_t memory;     /* bytes; 0 = default (256 MiB) */
	double seconds;    /* CPU time per top-level call, commands it runs included; 0 = default */
} pb_lua_limits;

/* The default time limit per top-level call, in seconds of CPU time (the
 * script's thread, and every thread of a command it runs): 30 s, since the
 * commands a script runs count (issue 39; scripts/stage_rules.lua solves its
 * pipeline MILPs in 5 s of CPU in a release build, and stopped at the 5 s
 * the limit was when commands did not count), times
 * PB_LUA_SANITIZER_SLOWDOWN in a build with
 * AddressSanitizer (make asan). The sanitizers slow the allocations a script
 * makes by 10-40x (measured: scripts/attention_blocks.lua needs 0.31 s of CPU
 * in a release build, 11 s under ASan with fast_unwind_on_malloc=0), so a
 * script that finishes well inside the limit in a release build would be
 * stopped in a sanitized one. Limits given explicitly (--max-seconds) are
 * not scaled: they are the user's. */
#define PB_LUA_DEFAULT_SECONDS 30.0
#define PB_LUA_SANITIZER_SLOWDOWN 40.0
double pb_lua_default_seconds(void);

typedef struct pb_lua pb_lua;

pb_lua *pb_lua_new(const pb_lua_limits *limits);
void pb_lua_free(pb_lua *S);
lua_State *pb_lua_state(pb_lua *S);
/* Outside a call: sets the limits of the following top-level calls. Inside
 * one (a script running `run --max-memory ...` through pb.cmd): limits can
 * only go down, for the rest of the current top-level call; a script never
 * raises its own cap, budget or time limit. */
void pb_lua_set_limits(pb_lua *S, const pb_lua_limits *limits);
/* The limits in force: inside a call its memory cap, the instructions left
 * and its time limit; outside, those of the next top-level call. */
void pb_lua_get_limits(pb_lua *S, pb_lua_limits *out);

/* Loads text (never bytecode) and pushes a fresh environment table plus the
 * compiled function bound to it. Stack after success: ..., env, fn. */
int pb_lua_load(pb_lua *S, const char *text, size_t len, const char *chunkname, pb_error *err);
/* Like pb_lua_load, but binds the chunk to an existing environment table held
 * in the registry under env_ref (a console whose lines share globals). */
int pb_lua_load_in(pb_lua *S, const char *text, size_t len, const char *chunkname, int env_ref,
                   pb_error *err);
/* Creates a fresh sandbox environment and returns a registry reference to it. */
int pb_lua_new_env(pb_lua *S);
/* Runs text in the environment env_ref; leaves ..., env, ret like run_string. */
int pb_lua_run_string_in(pb_lua *S, const char *text, const char *name, int env_ref, pb_error *err);

/* Calls the function at the top of the stack with nargs arguments below it
 * (like lua_pcall) under the instruction budget, with a traceback. Leaves
 * nresults values on success, nothing on failure. */
int pb_lua_call(pb_lua *S, int nargs, int nresults, pb_error *err);
/* Reads a file (text only) and runs it in its own environment. Leaves the
 * chunk's first return value and then its env on the stack: ..., env, ret. */
int pb_lua_run_file(pb_lua *S, const char *path, pb_error *err);
int pb_lua_run_string(pb_lua *S, const char *text, const char *name, pb_error *err);

/* Pops the value at the top of the stack and makes it a global visible to
 * every chunk loaded afterwards (e.g. the `pb` API table). */
void pb_lua_set_global(pb_lua *S, const char *name);
/* Memory currently held by the state and reserved by pb_lua_reserve, in
 * bytes. */
size_t pb_lua_memory(pb_lua *S);
/* Memory a script causes outside the Lua allocator (heuristic and rule
 * names, the rule tables kept in C) counts against its cap (issue 39: names
 * copied in C grew to 3 GB under a 256 MiB cap). Reserve before allocating:
 * 0, or -1 when script code runs and the cap would be passed; release what
 * was reserved when it is freed. */
int pb_lua_reserve(pb_lua *S, size_t bytes);
void pb_lua_release(pb_lua *S, size_t bytes);
/* The memory cap applies only while script code runs. A C function called by
 * a script that runs other work (pb.cmd) suspends it, so that work's own Lua
 * pushes cannot fail outside a protected call: was = suspend(S, 1) ...
 * restore(S, was). */
int pb_lua_cap_suspend(pb_lua *S, int suspend);
void pb_lua_cap_restore(pb_lua *S, int was);
/* Time a command run by the script spends counts against the script's
 * limit (issue 39: `while true do pb.cmd("info") end` ran 1.5 h on the
 * instruction budget alone). The thread's CPU time keeps running while the
 * command works on it; CPU time its other threads spent is charged after it
 * with pb_lua_charge. pb_lua_time_left: seconds of the current call's limit
 * left (of the next call's, outside a call). */
double pb_lua_time_left(pb_lua *S);
void pb_lua_charge(pb_lua *S, double seconds);
/* For C functions called by scripts: raises the call's time-limit (or
 * budget) error, naming `in`, when it is spent. */
void pb_lua_check_time(lua_State *L, const char *in);

/* Lua pattern search that honours the call's time limit (the sandbox's
 * string.find): 1 when pattern pat matches somewhere in s, 0 when not;
 * raises a Lua error on a malformed pattern or when time runs out. For C
 * functions called by scripts (pb.find). */
int pb_lua_pattern_find(lua_State *L, const char *s, size_t len, const char *pat);

/* Converts the Lua value at idx into JSON (tables with 1..n keys become
 * arrays; functions and userdata are an error naming the key path). Grows
 * the Lua stack as it descends; refuses tables nested more than 64 deep (a
 * table that holds itself) and more than 100,000 keys and values in all. */
int pb_lua_to_json(lua_State *L, int idx, const char *src, json_t **out, pb_error *err);
/* Pushes a JSON value as a Lua value (arrays become 1-based sequences). */
void pb_lua_push_json(lua_State *L, const json_t *j);

#endif
