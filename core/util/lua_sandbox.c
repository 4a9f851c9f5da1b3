/*
 * util/lua_sandbox.c — the safe Lua state (see lua_sandbox.h).
 *
 * Memory: the allocator counts live bytes and, while script code runs (inside
 * pb_lua_call), refuses growth past the cap, so a huge allocation becomes an
 * ordinary Lua "not enough memory" error. Outside calls (C building a
 * callback's arguments, a command run by pb.cmd) the cap is not enforced: a
 * refused allocation there would be a Lua error outside any protected call.
 * Instructions: a count hook every 1000 instructions raises an error once the
 * budget of the current top-level call is spent; from then on it fires on
 * every instruction, so a script that catches the error with pcall is
 * stopped again at its next instruction. The hook also remembers the
 * script's position (file:line), which a memory error (raised without a
 * message handler) reports.
 * Globals: the safe library functions live in a hidden table G; every chunk
 * gets env = setmetatable({string = copy, ..., _G = env, load = load bound to
 * env}, {__index = G, __metatable = false}): library tables are copies and G
 * is out of reach, so scripts cannot change what other scripts see. The
 * string metatable is hidden too, and metatables with __gc are refused (a
 * finalizer would run at an arbitrary allocation, outside the budget).
 */
#include "util/lua_sandbox.h"
#include "util/read_file.h"

#include <errno.h>
#include <lauxlib.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pb_lua {
	lua_State *L;
	size_t used, cap;
	long budget, left;
	int safe_ref;   /* registry ref of the safe globals table */
	int load_ref;   /* registry ref of the original load */
	int enforce;    /* the memory cap applies (script code is running) */
	int exhausted;  /* the budget ran out in the current top-level call */
	char where[96]; /* "file:line" of the script when the hook last ran */
};

static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	pb_lua *S = ud;
	if (!ptr)
		osize = 0;
	if (nsize == 0) {
		S->used -= osize;
		free(ptr);
		return NULL;
	}
	if (S->enforce && nsize > osize && S->used + (nsize - osize) > S->cap)
		return NULL;
	void *np = realloc(ptr, nsize);
	if (np)
		S->used = S->used - osize + nsize;
	return np;
}

static void count_hook(lua_State *L, lua_Debug *ar)
{
	pb_lua *S;
	lua_getallocf(L, (void **)&S);
	if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0)
		snprintf(S->where, sizeof S->where, "%s:%d", ar->short_src, ar->currentline);
	S->left -= S->exhausted ? 1 : 1000;
	if (S->left < 0) {
		if (!S->exhausted) { /* fire on every instruction: pcall cannot outlast it */
			S->exhausted = 1;
			lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
		}
		/* The hook has no position of its own: name the script's. */
		lua_pushfstring(L,
		                "%s%sinstruction budget exhausted (%d million instructions): "
		                "infinite loop?",
		                S->where, S->where[0] ? ": " : "", (int)(S->budget / 1000000));
		lua_error(L);
	}
}

/* load() that accepts text chunks only; chunks without an explicit env get
 * the calling script's environment (upvalue 2). Upvalue 1 is the original
 * load. */
static int safe_load(lua_State *L)
{
	luaL_checkany(L, 1);
	lua_settop(L, 4);
	if (!lua_isnil(L, 3) && strchr(luaL_checkstring(L, 3), 'b'))
		return luaL_error(L, "load: binary chunks are not allowed");
	lua_pushstring(L, "t");
	lua_replace(L, 3);
	if (lua_isnil(L, 4)) {
		lua_pushvalue(L, lua_upvalueindex(2));
		lua_replace(L, 4);
	}
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, 4, LUA_MULTRET);
	return lua_gettop(L);
}

/* setmetatable() that refuses __gc: a finalizer would run during some later
 * allocation, possibly outside any script call and its budget. */
static int safe_setmetatable(lua_State *L)
{
	lua_pushliteral(L, "__gc");
	if (lua_istable(L, 2) && lua_rawget(L, 2) != LUA_TNIL)
		return luaL_error(L, "setmetatable: __gc metamethods are not allowed in scripts");
	lua_settop(L, 2);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, 2, 1);
	return 1;
}

/* xpcall(f, h, ...) as pcall plus h(error) called afterwards, not as a
 * message handler: Lua runs message handlers of errors raised by the count
 * hook with hooks disabled, so a handler that loops would never be stopped.
 * (Scripts have no debug library, so a handler cannot inspect the stack.) */
static int safe_xpcall(lua_State *L)
{
	int n = lua_gettop(L);
	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_pushvalue(L, 2);
	lua_insert(L, 1); /* h, f, h, args... */
	lua_remove(L, 3); /* h, f, args... */
	if (lua_pcall(L, n - 2, LUA_MULTRET, 0) == LUA_OK) {
		lua_pushboolean(L, 1);
		lua_replace(L, 1);
		return lua_gettop(L);
	}
	lua_pcall(L, 1, LUA_MULTRET, 0); /* h(err): its results, or its own error */
	lua_pushboolean(L, 0);
	lua_insert(L, 1);
	return lua_gettop(L);
}

static const char *const safe_base[] = {
    "assert",   "error",    "getmetatable", "ipairs", "next",     "pairs",  "pcall",
    "print",    "rawequal", "rawget",       "rawlen", "rawset",   "select", "setmetatable",
    "tonumber", "tostring", "type",         "xpcall", "_VERSION", NULL};

static void build_safe_globals(pb_lua *S)
{
	lua_State *L = S->L;
	luaL_requiref(L, "_G", luaopen_base, 1);
	lua_pop(L, 1);
	luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
	lua_pop(L, 1);
	luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
	lua_pop(L, 1);
	luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
	lua_pop(L, 1);
	luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
	lua_pop(L, 1);

	lua_newtable(L); /* safe */
	for (int i = 0; safe_base[i]; i++) {
		lua_getglobal(L, safe_base[i]);
		lua_setfield(L, -2, safe_base[i]);
	}
	const char *libs[] = {"string", "table", "math", "utf8", NULL};
	for (int i = 0; libs[i]; i++) {
		lua_getglobal(L, libs[i]);
		lua_setfield(L, -2, libs[i]);
	}
	lua_pushcfunction(L, safe_xpcall);
	lua_setfield(L, -2, "xpcall");
	lua_getglobal(L, "setmetatable");
	lua_pushcclosure(L, safe_setmetatable, 1);
	lua_setfield(L, -2, "setmetatable");
	lua_getglobal(L, "load");
	S->load_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	S->safe_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	/* Hide the string metatable: its __index is the shared string library. */
	lua_pushliteral(L, "");
	if (lua_getmetatable(L, -1)) {
		lua_pushboolean(L, 0);
		lua_setfield(L, -2, "__metatable");
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	/* Strip dangerous globals from the real _G as well. */
	const char *bad[] = {"dofile", "loadfile", "require", "collectgarbage", "load", NULL};
	for (int i = 0; bad[i]; i++) {
		lua_pushnil(L);
		lua_setglobal(L, bad[i]);
	}
}

pb_lua *pb_lua_new(const pb_lua_limits *limits)
{
	pb_lua *S = calloc(1, sizeof *S);
	if (!S)
		return NULL;
	S->cap = 256u << 20;
	S->budget = 50000000;
	pb_lua_set_limits(S, limits);
	S->L = lua_newstate(sandbox_alloc, S);
	if (!S->L) {
		free(S);
		return NULL;
	}
	build_safe_globals(S);
	return S;
}

void pb_lua_set_limits(pb_lua *S, const pb_lua_limits *limits)
{
	if (!limits)
		return;
	if (limits->memory)
		S->cap = limits->memory;
	if (limits->instructions)
		S->budget = limits->instructions;
}

void pb_lua_free(pb_lua *S)
{
	if (!S)
		return;
	if (S->L)
		lua_close(S->L);
	free(S);
}

lua_State *pb_lua_state(pb_lua *S)
{
	return S->L;
}

/* env = setmetatable({<copies of the library tables>, _G = env, load = ...},
 * {__index = safe, __metatable = false}) */
static void push_new_env(pb_lua *S)
{
	lua_State *L = S->L;
	lua_newtable(L);
	int env = lua_gettop(L);
	lua_rawgeti(L, LUA_REGISTRYINDEX, S->safe_ref);
	lua_pushnil(L);
	while (lua_next(L, -2)) { /* safe: key, value */
		if (lua_type(L, -1) == LUA_TTABLE && lua_type(L, -2) == LUA_TSTRING) {
			lua_newtable(L);
			lua_pushnil(L);
			while (lua_next(L, -3)) {
				lua_pushvalue(L, -2);
				lua_insert(L, -2);
				lua_rawset(L, -4);
			}
			lua_pushvalue(L, -3);
			lua_insert(L, -2);
			lua_rawset(L, env);
		}
		lua_pop(L, 1);
	}
	lua_newtable(L); /* the metatable */
	lua_insert(L, -2);
	lua_setfield(L, -2, "__index");
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "__metatable");
	lua_setmetatable(L, env);
	lua_pushvalue(L, env);
	lua_setfield(L, env, "_G");
	lua_rawgeti(L, LUA_REGISTRYINDEX, S->load_ref);
	lua_pushvalue(L, env);
	lua_pushcclosure(L, safe_load, 2);
	lua_setfield(L, env, "load");
}

int pb_lua_new_env(pb_lua *S)
{
	push_new_env(S);
	return luaL_ref(S->L, LUA_REGISTRYINDEX);
}

int pb_lua_load_in(pb_lua *S, const char *text, size_t len, const char *chunkname, int env_ref,
                   pb_error *err)
{
	lua_State *L = S->L;
	if (len > 0 && text[0] == LUA_SIGNATURE[0])
		return pb_err(err, PB_EINPUT, "%s: binary (precompiled) chunks are not allowed",
		              chunkname);
	char name[512];
	snprintf(name, sizeof name, "@%s", chunkname);
	if (env_ref == LUA_NOREF)
		push_new_env(S);
	else
		lua_rawgeti(L, LUA_REGISTRYINDEX, env_ref);
	int rc = luaL_loadbufferx(L, text, len, name, "t");
	if (rc != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		pb_err(err, rc == LUA_ERRMEM ? PB_ENOMEM : PB_EINPUT, "%s",
		       msg ? msg : "cannot load script");
		lua_pop(L, 2);
		return err ? err->code : PB_EINPUT;
	}
	lua_pushvalue(L, -2);
	if (!lua_setupvalue(L, -2, 1))
		lua_pop(L, 1);
	return PB_OK;
}

int pb_lua_load(pb_lua *S, const char *text, size_t len, const char *chunkname, pb_error *err)
{
	return pb_lua_load_in(S, text, len, chunkname, LUA_NOREF, err);
}

int pb_lua_run_string_in(pb_lua *S, const char *text, const char *name, int env_ref, pb_error *err)
{
	int rc = pb_lua_load_in(S, text, strlen(text), name, env_ref, err);
	if (rc)
		return rc;
	rc = pb_lua_call(S, 0, 1, err);
	if (rc) {
		lua_pop(S->L, 1); /* env */
		return rc;
	}
	return PB_OK;
}

static int traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	if (!msg) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

int pb_lua_call(pb_lua *S, int nargs, int nresults, pb_error *err)
{
	lua_State *L = S->L;
	int base = lua_gettop(L) - nargs;
	lua_pushcfunction(L, traceback);
	lua_insert(L, base);
	/* Nested calls (a callback inside a script) share the outer budget. */
	int outer = lua_gethook(L) != NULL;
	if (!outer) {
		S->left = S->budget;
		S->exhausted = 0;
		S->where[0] = '\0';
		lua_sethook(L, count_hook, LUA_MASKCOUNT, 1000);
	}
	int enforce = S->enforce;
	S->enforce = 1;
	int rc = lua_pcall(L, nargs, nresults, base);
	S->enforce = enforce;
	if (!outer)
		lua_sethook(L, NULL, 0, 0);
	lua_remove(L, base);
	if (rc != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		if (rc == LUA_ERRMEM)
			pb_err(
			    err, PB_ENOMEM,
			    "%s%snot enough memory: the script exceeded its memory cap of %zu MiB",
			    S->where, S->where[0] ? ": " : "", S->cap >> 20);
		else
			pb_err(err, PB_EINPUT, "%s", msg ? msg : "script error");
		lua_pop(L, 1);
		return err ? err->code : PB_EINPUT;
	}
	return PB_OK;
}

int pb_lua_run_string(pb_lua *S, const char *text, const char *name, pb_error *err)
{
	return pb_lua_run_string_in(S, text, name, LUA_NOREF, err);
}

int pb_lua_run_file(pb_lua *S, const char *path, pb_error *err)
{
	char *buf;
	size_t len;
	int rc = pb_read_file(path, (size_t)64 << 20, "script", &buf, &len, err);
	if (rc != PB_OK)
		return rc;
	rc = pb_lua_load(S, buf, len, path, err);
	free(buf);
	if (rc)
		return rc;
	rc = pb_lua_call(S, 0, 1, err);
	if (rc) {
		lua_pop(S->L, 1);
		if (!strstr(err->msg, path)) /* e.g. out of memory: say which script */
			pb_err_prefix(err, "%s", path);
		return rc;
	}
	return PB_OK;
}

/* Limits of a conversion: a table is converted again each time it is
 * reached, so a table holding the same table twice at each of 60 levels
 * would take 2^60 steps; a table holding itself stops at the depth limit. */
enum { TO_JSON_MAX_DEPTH = 64, TO_JSON_MAX_VALUES = 100000 };

static int to_json_rec(lua_State *L, int idx, const char *src, char *path, size_t plen, int depth,
                       long *left, json_t **out, pb_error *err)
{
	idx = lua_absindex(L, idx);
	if (depth > TO_JSON_MAX_DEPTH)
		return pb_err(err, PB_EINPUT,
		              "%s: field '%s': tables nested more than %d deep (a table that holds "
		              "itself?)",
		              src, path, TO_JSON_MAX_DEPTH);
	if (--*left < 0)
		return pb_err(err, PB_EINPUT,
		              "%s: more than %d keys and values in all (shared tables count each "
		              "time they are reached)",
		              src, TO_JSON_MAX_VALUES);
	/* each level holds a key and a value on the stack (and the table's
	 * own slot): grow it rather than write past its end */
	if (!lua_checkstack(L, 4))
		return pb_err(err, PB_ENOMEM, "%s: field '%s': out of Lua stack", src, path);
	switch (lua_type(L, idx)) {
	case LUA_TNIL:
		*out = json_null();
		return PB_OK;
	case LUA_TBOOLEAN:
		*out = json_boolean(lua_toboolean(L, idx));
		return PB_OK;
	case LUA_TNUMBER:
		if (!lua_isinteger(L, idx) && !isfinite(lua_tonumber(L, idx)))
			return pb_err(err, PB_EINPUT, "%s: field '%s' = %g is not a finite number",
			              src, path[0] ? path : "(result)",
			              (double)lua_tonumber(L, idx));
		*out = lua_isinteger(L, idx) ? json_integer(lua_tointeger(L, idx))
		                             : json_real(lua_tonumber(L, idx));
		return PB_OK;
	case LUA_TSTRING:
		*out = json_string(lua_tostring(L, idx));
		if (!*out)
			return pb_err(err, PB_EINPUT, "%s: field '%s': string is not UTF-8", src,
			              path);
		return PB_OK;
	case LUA_TTABLE:
		break;
	default:
		return pb_err(err, PB_EINPUT,
		              "%s: field '%s': a %s cannot be used here (only "
		              "numbers, strings, booleans and tables)",
		              src, path[0] ? path : "(result)", luaL_typename(L, idx));
	}
	lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
	int count = 0;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		count++;
		lua_pop(L, 1);
	}
	size_t base = strlen(path);
	if (n > 0 && count == n) {
		json_t *arr = json_array();
		for (lua_Integer i = 1; i <= n; i++) {
			snprintf(path + base, plen - base, "[%lld]", (long long)i);
			lua_rawgeti(L, idx, i);
			json_t *v;
			int rc = to_json_rec(L, -1, src, path, plen, depth + 1, left, &v, err);
			lua_pop(L, 1);
			if (rc) {
				json_decref(arr);
				return rc;
			}
			json_array_append_new(arr, v);
		}
		path[base] = '\0';
		*out = arr;
		return PB_OK;
	}
	json_t *obj = json_object();
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		char key[128];
		if (lua_type(L, -2) == LUA_TSTRING)
			snprintf(key, sizeof key, "%s", lua_tostring(L, -2));
		else if (lua_isinteger(L, -2))
			snprintf(key, sizeof key, "%lld", (long long)lua_tointeger(L, -2));
		else {
			lua_pop(L, 2);
			json_decref(obj);
			return pb_err(err, PB_EINPUT,
			              "%s: field '%s': keys must be strings or integers", src,
			              path);
		}
		snprintf(path + base, plen - base, "%s%s", base ? "." : "", key);
		json_t *v;
		int rc = to_json_rec(L, -1, src, path, plen, depth + 1, left, &v, err);
		if (rc) {
			lua_pop(L, 2);
			json_decref(obj);
			return rc;
		}
		json_object_set_new(obj, key, v);
		lua_pop(L, 1);
	}
	path[base] = '\0';
	*out = obj;
	return PB_OK;
}

int pb_lua_to_json(lua_State *L, int idx, const char *src, json_t **out, pb_error *err)
{
	char path[1024] = "";
	long left = TO_JSON_MAX_VALUES;
	return to_json_rec(L, idx, src, path, sizeof path, 0, &left, out, err);
}

void pb_lua_set_global(pb_lua *S, const char *name)
{
	lua_State *L = S->L;
	lua_rawgeti(L, LUA_REGISTRYINDEX, S->safe_ref);
	lua_insert(L, -2);
	lua_setfield(L, -2, name);
	lua_pop(L, 1);
}

size_t pb_lua_memory(pb_lua *S)
{
	return S->used;
}

int pb_lua_cap_suspend(pb_lua *S, int suspend)
{
	int was = S->enforce;
	S->enforce = !suspend && was;
	return was;
}

void pb_lua_cap_restore(pb_lua *S, int was)
{
	S->enforce = was;
}

void pb_lua_push_json(lua_State *L, const json_t *j)
{
	luaL_checkstack(L, 4, "JSON too deep");
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		lua_createtable(L, 0, (int)json_object_size(j));
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)j, k, v)
		{
			pb_lua_push_json(L, v);
			lua_setfield(L, -2, k);
		}
		break;
	}
	case JSON_ARRAY: {
		lua_createtable(L, (int)json_array_size(j), 0);
		size_t i;
		json_t *v;
		json_array_foreach(j, i, v)
		{
			pb_lua_push_json(L, v);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		break;
	}
	case JSON_STRING:
		lua_pushstring(L, json_string_value(j));
		break;
	case JSON_INTEGER:
		lua_pushinteger(L, (lua_Integer)json_integer_value(j));
		break;
	case JSON_REAL:
		lua_pushnumber(L, json_real_value(j));
		break;
	case JSON_TRUE:
		lua_pushboolean(L, 1);
		break;
	case JSON_FALSE:
		lua_pushboolean(L, 0);
		break;
	default:
		lua_pushnil(L);
		break;
	}
}
