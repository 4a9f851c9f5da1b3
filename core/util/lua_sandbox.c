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
 * Time: the same hook compares the clock (the thread's CPU time: see
 * now_s) with the call's deadline; a command run by pb.cmd counts too (its
 * other threads' CPU time is charged: pb_lua_charge). A library function runs to
 * its end between two hooks, so the ones that can run long on little memory
 * are replaced: string.rep, table.concat/insert/remove/move loop here and look
 * at the clock; string.find/match/gmatch/gsub estimate the backtracking a
 * pattern can cost (length ^ quantifiers) and, when it could be large, run
 * the original matcher in a scratch Lua state under a POSIX timer whose
 * signal handler siglongjmps out of it. The scratch state is then thrown
 * away whole (its allocator keeps a list of its blocks); the handler never
 * jumps while that allocator is inside malloc, and nothing of the script's
 * own state is touched by the interrupted code (it only sees copies).
 * Limits never go up inside a call (pb_lua_set_limits).
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
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { STOP_NONE, STOP_BUDGET, STOP_TIME };

/* A block of the scratch state's allocator: a list, so that a state left
 * behind by an interrupted match can be freed without lua_close. */
typedef union blk {
	struct {
		union blk *prev, *next;
		size_t size;
	} h;
	max_align_t align;
} blk;

struct pb_lua {
	lua_State *L;
	size_t used, cap;
	size_t outside; /* bytes the script holds in C (pb_lua_reserve) */
	long budget, left;
	double seconds, deadline;
	size_t base_cap; /* limits of the next top-level call */
	long base_budget;
	double base_seconds;
	int depth;      /* pb_lua_call nesting */
	int safe_ref;   /* registry ref of the safe globals table */
	int load_ref;   /* registry ref of the original load */
	int find_ref;   /* registry ref of the original string.find */
	int enforce;    /* the memory cap applies (script code is running) */
	int stop;       /* STOP_*: the current top-level call ran out */
	char where[96]; /* "file:line" of the script when the hook last ran */
	/* the scratch state for pattern matches that may run long */
	lua_State *SL;
	blk *blocks;
	size_t scratch_used;
	int sfind_ref, sgsub_ref, ssubj_ref; /* in SL's registry */
	int subj_ref;                        /* main registry: the cached subject */
	const char *subj;
	size_t subj_len;
	volatile sig_atomic_t in_alloc, pending;
	sigjmp_buf jb;
};

/* The clock of the time limit: the CPU time of the thread that runs the
 * script. A script cannot wait (no io, no os; commands it runs pause the
 * clock), so this is the wall-clock time of its work, without the limit
 * firing early because the machine is loaded. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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
	if (S->enforce && nsize > osize &&
	    S->used + S->scratch_used + S->outside + (nsize - osize) > S->cap)
		return NULL;
	void *np = realloc(ptr, nsize);
	if (np)
		S->used = S->used - osize + nsize;
	return np;
}

/* Remembers the position of the script function at stack level `level`. */
static void note_where(lua_State *L, pb_lua *S, int level)
{
	lua_Debug ar;
	if (lua_getstack(L, level, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0)
		snprintf(S->where, sizeof S->where, "%s:%d", ar.short_src, ar.currentline);
}

static void count_hook(lua_State *L, lua_Debug *ar);

/* Raises the error of a spent budget or time limit, and makes the hook fire
 * on every instruction: pcall cannot outlast it. */
static int stop_error(lua_State *L, pb_lua *S, const char *in)
{
	if (lua_gethook(L))
		lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
	char msg[256];
	if (S->stop == STOP_TIME)
		snprintf(msg, sizeof msg,
		         "%s%stime limit of %g s exceeded%s%s: endless loop, or a pattern that "
		         "backtracks? (raise it with --max-seconds)",
		         S->where, S->where[0] ? ": " : "", S->seconds, in ? " in " : "",
		         in ? in : "");
	else /* the hook has no position of its own: name the script's */
		snprintf(msg, sizeof msg,
		         "%s%sinstruction budget exhausted (%d million instructions): infinite "
		         "loop?",
		         S->where, S->where[0] ? ": " : "", (int)(S->budget / 1000000));
	lua_pushstring(L, msg);
	return lua_error(L);
}

static double time_left(pb_lua *S)
{
	if (S->depth == 0)
		return S->base_seconds;
	return S->deadline - now_s();
}

/* For C functions called by scripts: raises the stop error when the call's
 * budget or time is spent. */
static pb_lua *check_clock(lua_State *L, const char *in)
{
	pb_lua *S;
	lua_getallocf(L, (void **)&S);
	if (!S->stop && S->depth > 0 && now_s() > S->deadline)
		S->stop = STOP_TIME;
	if (S->stop) {
		note_where(L, S, 1);
		stop_error(L, S, in);
	}
	return S;
}

static void count_hook(lua_State *L, lua_Debug *ar)
{
	pb_lua *S;
	lua_getallocf(L, (void **)&S);
	if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0)
		snprintf(S->where, sizeof S->where, "%s:%d", ar->short_src, ar->currentline);
	if (S->stop) {
		stop_error(L, S, NULL);
		return;
	}
	S->left -= 1000;
	if (S->left < 0)
		S->stop = STOP_BUDGET;
	else if (now_s() > S->deadline)
		S->stop = STOP_TIME;
	if (S->stop)
		stop_error(L, S, NULL);
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

/* ------------------------------------------------ the interruptible matcher */

#define PB_LUA_SIGNAL (SIGRTMIN + 5)

static _Thread_local pb_lua *volatile armed; /* the state a timer signal may stop */
static _Thread_local timer_t tl_timer;
static _Thread_local int tl_timer_ok; /* 1 created, -1 failed */

static void on_timer(int sig)
{
	(void)sig;
	pb_lua *S = armed;
	if (!S)
		return;
	if (S->in_alloc) { /* never leave malloc half done: the allocator jumps */
		S->pending = 1;
		return;
	}
	armed = NULL;
	siglongjmp(S->jb, 1);
}

static int timer_ready(void)
{
	static volatile sig_atomic_t installed;
	if (!installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_timer;
		sigemptyset(&sa.sa_mask);
		if (sigaction(PB_LUA_SIGNAL, &sa, NULL) != 0)
			return 0;
		installed = 1;
	}
	if (!tl_timer_ok) {
		struct sigevent ev;
		memset(&ev, 0, sizeof ev);
		ev.sigev_notify = SIGEV_THREAD_ID;
		ev.sigev_signo = PB_LUA_SIGNAL;
		ev._sigev_un._tid = gettid();
		tl_timer_ok = timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &tl_timer) == 0 ? 1 : -1;
	}
	return tl_timer_ok == 1;
}

static void timer_set(double seconds)
{
	struct itimerspec it;
	memset(&it, 0, sizeof it);
	if (seconds > 0) {
		if (seconds < 1e-6)
			seconds = 1e-6;
		it.it_value.tv_sec = (time_t)seconds;
		it.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
	}
	timer_settime(tl_timer, 0, &it, NULL);
}

static void *scratch_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	pb_lua *S = ud;
	void *res = NULL;
	S->in_alloc = 1;
	blk *b = ptr ? (blk *)ptr - 1 : NULL;
	if (b) { /* unlink: realloc may move it */
		if (b->h.prev)
			b->h.prev->h.next = b->h.next;
		else
			S->blocks = b->h.next;
		if (b->h.next)
			b->h.next->h.prev = b->h.prev;
		S->scratch_used -= b->h.size;
	}
	size_t old = b ? b->h.size : 0;
	if (nsize == 0) {
		free(b);
	} else if (S->enforce && nsize > old &&
	           S->used + S->scratch_used + S->outside + nsize > S->cap) {
		res = NULL;
	} else {
		blk *nb = realloc(b, sizeof *nb + nsize);
		if (nb) {
			b = nb;
			b->h.size = nsize;
			res = b + 1;
		}
	}
	if (nsize != 0 && b) { /* link (the new block, or the old one kept) */
		b->h.prev = NULL;
		b->h.next = S->blocks;
		if (S->blocks)
			S->blocks->h.prev = b;
		S->blocks = b;
		S->scratch_used += b->h.size;
	}
	S->in_alloc = 0;
	if (S->pending && armed == S) {
		armed = NULL;
		siglongjmp(S->jb, 1);
	}
	return res;
}

/* Frees a scratch state without running it (it may be mid-operation). */
static void scratch_abandon(pb_lua *S)
{
	S->in_alloc = 1;
	while (S->blocks) {
		blk *b = S->blocks;
		S->blocks = b->h.next;
		free(b);
	}
	S->scratch_used = 0;
	S->in_alloc = 0;
	S->SL = NULL;
	S->subj = NULL;
}

/* After a top-level call: drops the cached subject (its copy counts
 * against the cap) and lets the scratch state collect. Nothing here
 * allocates or raises. */
static void scratch_release(pb_lua *S)
{
	if (S->subj_ref != LUA_NOREF) {
		luaL_unref(S->L, LUA_REGISTRYINDEX, S->subj_ref);
		S->subj_ref = LUA_NOREF;
	}
	S->subj = NULL;
	if (!S->SL)
		return;
	lua_settop(S->SL, 0);
	lua_pushboolean(S->SL, 0);
	lua_rawseti(S->SL, LUA_REGISTRYINDEX, S->ssubj_ref);
	lua_gc(S->SL, LUA_GCCOLLECT);
}

static void scratch_close(pb_lua *S)
{
	if (S->SL)
		lua_close(S->SL);
	scratch_abandon(S);
}

static int scratch_open(lua_State *SL)
{
	pb_lua *S = lua_touserdata(SL, 1);
	luaL_requiref(SL, LUA_STRLIBNAME, luaopen_string, 0);
	lua_getfield(SL, -1, "find");
	S->sfind_ref = luaL_ref(SL, LUA_REGISTRYINDEX);
	lua_getfield(SL, -1, "gsub");
	S->sgsub_ref = luaL_ref(SL, LUA_REGISTRYINDEX);
	lua_pushboolean(SL, 0);
	S->ssubj_ref = luaL_ref(SL, LUA_REGISTRYINDEX);
	return 0;
}

static int scratch_ready(pb_lua *S)
{
	if (S->SL)
		return 1;
	int was = S->enforce;
	S->enforce = 0;
	S->SL = lua_newstate(scratch_alloc, S);
	S->enforce = was;
	if (!S->SL)
		return 0;
	lua_pushcfunction(S->SL, scratch_open);
	lua_pushlightuserdata(S->SL, S);
	if (lua_pcall(S->SL, 1, 0, 0) != LUA_OK) {
		scratch_close(S);
		return 0;
	}
	return 1;
}

/* What a scratch call copies: up to 4 strings or integers. */
typedef struct scratch_args {
	int fn_ref, n, cached, subj_ref;
	int type[4];
	const char *str[4];
	size_t len[4];
	lua_Integer num[4];
} scratch_args;

static int scratch_entry(lua_State *SL)
{
	scratch_args *a = lua_touserdata(SL, 1);
	lua_settop(SL, 0);
	lua_rawgeti(SL, LUA_REGISTRYINDEX, a->fn_ref);
	for (int i = 0; i < a->n; i++) {
		if (i == 0 && a->cached == 1) {
			lua_rawgeti(SL, LUA_REGISTRYINDEX, a->subj_ref);
			continue;
		}
		if (a->type[i] == LUA_TSTRING)
			lua_pushlstring(SL, a->str[i], a->len[i]);
		else if (a->type[i] == LUA_TNUMBER)
			lua_pushinteger(SL, a->num[i]);
		else
			lua_pushnil(SL);
		if (i == 0 && a->cached == 2) { /* keep the subject for the next call */
			lua_pushvalue(SL, -1);
			lua_rawseti(SL, LUA_REGISTRYINDEX, a->subj_ref);
		}
	}
	lua_call(SL, a->n, LUA_MULTRET);
	return lua_gettop(SL);
}

/* Runs the scratch state's string.find or gsub (fn_ref) on the values at
 * idx[0..n-1] of L (strings, integers or nil) under the time left, pushes
 * its results on L and returns their count. Raises the call's time error
 * when the timer stops it, and the matcher's own errors. */
static int scratch_call(lua_State *L, pb_lua *S, int gsub, const int *idx, int n, const char *fname)
{
	check_clock(L, fname);
	if (!scratch_ready(S))
		return luaL_error(L, "%s: not enough memory", fname);
	scratch_args a;
	memset(&a, 0, sizeof a);
	a.fn_ref = gsub ? S->sgsub_ref : S->sfind_ref;
	a.n = n;
	for (int i = 0; i < n; i++) {
		a.type[i] = lua_type(L, idx[i]);
		if (a.type[i] == LUA_TSTRING)
			a.str[i] = lua_tolstring(L, idx[i], &a.len[i]);
		else if (a.type[i] == LUA_TNUMBER)
			a.num[i] = lua_tointeger(L, idx[i]);
	}
	/* A long subject searched again (gmatch, gsub with a function) is
	 * copied once: the main state keeps it alive, so its address names it. */
	if (a.type[0] == LUA_TSTRING && a.len[0] >= 256) {
		if (a.str[0] == S->subj && a.len[0] == S->subj_len) {
			a.cached = 1;
		} else {
			luaL_unref(L, LUA_REGISTRYINDEX, S->subj_ref);
			S->subj_ref = LUA_NOREF;
			S->subj = NULL;
			lua_pushvalue(L, idx[0]);
			S->subj_ref = luaL_ref(L, LUA_REGISTRYINDEX);
			a.cached = 2;
		}
		a.subj_ref = S->ssubj_ref;
	}
	double left = time_left(S);
	int timed = left < 1e9 && timer_ready();
	lua_State *SL = S->SL;
	lua_settop(SL, 0);
	S->pending = 0;
	if (sigsetjmp(S->jb, 1)) { /* the timer fired inside the match */
		armed = NULL;
		timer_set(0);
		scratch_abandon(S);
		S->stop = STOP_TIME;
		note_where(L, S, 1);
		return stop_error(L, S, fname);
	}
	if (timed) {
		armed = S;
		timer_set(left);
	}
	lua_pushcfunction(SL, scratch_entry);
	lua_pushlightuserdata(SL, &a);
	int rc = lua_pcall(SL, 1, LUA_MULTRET, 0);
	if (timed) {
		armed = NULL;
		timer_set(0);
	}
	if (rc != LUA_OK) {
		char msg[256];
		snprintf(msg, sizeof msg, "%s",
		         lua_type(SL, -1) == LUA_TSTRING ? lua_tostring(SL, -1) : "error");
		lua_settop(SL, 0);
		if (a.cached == 2) /* the subject may not be stored */
			S->subj = NULL;
		note_where(L, S, 1);
		return luaL_error(L, "%s: %s", fname, msg);
	}
	if (a.cached == 2) {
		S->subj = a.str[0];
		S->subj_len = a.len[0];
	}
	int nres = lua_gettop(SL);
	luaL_checkstack(L, nres, "too many captures");
	for (int i = 1; i <= nres; i++) {
		switch (lua_type(SL, i)) {
		case LUA_TNUMBER:
			lua_pushinteger(L, lua_tointeger(SL, i));
			break;
		case LUA_TSTRING: {
			size_t len;
			const char *s = lua_tolstring(SL, i, &len);
			lua_pushlstring(L, s, len);
			break;
		}
		default:
			lua_pushnil(L);
		}
	}
	lua_settop(SL, 0);
	return nres;
}

/* Steps the matcher may take, at most (length ^ quantifiers x the pattern's
 * items, roughly: each start position may walk the whole pattern, so a plain
 * pattern of 5e4 items over 1e5 bytes is 5e9 steps, 33 s, issue 39): below a
 * million, the original runs directly. */
static double pattern_cost(size_t len, const char *p, size_t lp)
{
	double n = (double)len + 1, cost = 1;
	size_t i = 0;
	int anchored = lp > 0 && p[0] == '^';
	if (anchored)
		i = 1;
	while (i < lp) {
		char c = p[i++];
		if (c == '(' || c == ')')
			continue;
		if (c == '%' && i < lp) {
			char k = p[i++];
			if (k == 'b') {
				i += 2;
				cost *= n;
				continue;
			}
			if (k == 'f') {
				if (i < lp && p[i] == '[') { /* skip the set */
					i++;
					if (i < lp && p[i] == '^')
						i++;
					do {
						if (i < lp && p[i] == '%')
							i++;
						i++;
					} while (i < lp && p[i] != ']');
					i++;
				}
				continue;
			}
			if (k >= '0' && k <= '9') {
				cost *= n;
				continue;
			}
		} else if (c == '[') {
			if (i < lp && p[i] == '^')
				i++;
			do {
				if (i < lp && p[i] == '%')
					i++;
				i++;
			} while (i < lp && p[i] != ']');
			i++;
		}
		if (i < lp && (p[i] == '*' || p[i] == '+' || p[i] == '-')) {
			cost *= n;
			i++;
		} else if (i < lp && p[i] == '?') {
			cost *= 2;
			i++;
		}
	}
	return (anchored ? cost : cost * n) * ((double)lp + 1);
}

#define CHEAP_PATTERN 1e6

static int is_cheap(lua_State *L, int si, int pi)
{
	size_t ls, lp;
	luaL_checklstring(L, si, &ls);
	const char *p = luaL_checklstring(L, pi, &lp);
	return pattern_cost(ls, p, lp) <= CHEAP_PATTERN;
}

/* Calls the original function (upvalue 1) with the arguments as given. */
static int call_original(lua_State *L)
{
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
	return lua_gettop(L);
}

/* find(s, p, init) through the scratch state; pushes start, end, captures
 * (or nothing when there is no match) and returns their count. */
static int slow_find(lua_State *L, pb_lua *S, int si, int pi, lua_Integer init, const char *fn)
{
	lua_pushinteger(L, init);
	int idx[3] = {si, pi, lua_gettop(L)};
	int n = scratch_call(L, S, 0, idx, 3, fn);
	lua_remove(L, -n - 1); /* init */
	if (n == 1 && lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	return n;
}

static int safe_find(lua_State *L)
{
	pb_lua *S = check_clock(L, "string.find");
	if (lua_toboolean(L, 4) || is_cheap(L, 1, 2))
		return call_original(L);
	lua_Integer init = luaL_optinteger(L, 3, 1);
	lua_settop(L, 2);
	int n = slow_find(L, S, 1, 2, init, "string.find");
	if (n == 0)
		lua_pushnil(L);
	return n ? n : 1;
}

/* Turns find's results (start, end, captures) at the top into match's. */
static int match_results(lua_State *L, const char *s, int n)
{
	if (n == 2) {
		lua_Integer st = lua_tointeger(L, -2), en = lua_tointeger(L, -1);
		lua_pop(L, 2);
		lua_pushlstring(L, s + st - 1, (size_t)(en - st + 1));
		return 1;
	}
	lua_remove(L, -n);
	lua_remove(L, -n + 1);
	return n - 2;
}

static int safe_match(lua_State *L)
{
	pb_lua *S = check_clock(L, "string.match");
	if (is_cheap(L, 1, 2))
		return call_original(L);
	const char *s = lua_tostring(L, 1);
	lua_Integer init = luaL_optinteger(L, 3, 1);
	lua_settop(L, 2);
	int n = slow_find(L, S, 1, 2, init, "string.match");
	if (n == 0) {
		lua_pushnil(L);
		return 1;
	}
	return match_results(L, s, n);
}

/* gmatch's iterator: upvalues s, pattern (a leading '^' escaped: gmatch
 * takes it literally, find as an anchor), next position, end of the last
 * match (-1 before the first). */
static int gmatch_step(lua_State *L)
{
	pb_lua *S = check_clock(L, "string.gmatch");
	size_t ls;
	const char *s = lua_tolstring(L, lua_upvalueindex(1), &ls);
	lua_Integer src = lua_tointeger(L, lua_upvalueindex(3));
	lua_Integer last = lua_tointeger(L, lua_upvalueindex(4));
	while (src <= (lua_Integer)ls + 1) {
		int n =
		    slow_find(L, S, lua_upvalueindex(1), lua_upvalueindex(2), src, "string.gmatch");
		if (n == 0)
			break;
		lua_Integer st = lua_tointeger(L, -n), en = lua_tointeger(L, -n + 1);
		if (en == last) { /* an empty match where the last one ended */
			lua_pop(L, n);
			src = st + 1;
			continue;
		}
		lua_pushinteger(L, en + 1);
		lua_replace(L, lua_upvalueindex(3));
		lua_pushinteger(L, en);
		lua_replace(L, lua_upvalueindex(4));
		return match_results(L, s, n);
	}
	lua_pushinteger(L, (lua_Integer)ls + 2);
	lua_replace(L, lua_upvalueindex(3));
	return 0;
}

static int safe_gmatch(lua_State *L)
{
	check_clock(L, "string.gmatch");
	if (is_cheap(L, 1, 2))
		return call_original(L);
	size_t ls, lp;
	luaL_checklstring(L, 1, &ls);
	const char *p = luaL_checklstring(L, 2, &lp);
	lua_Integer init = luaL_optinteger(L, 3, 1);
	if (init < 0)
		init = (lua_Integer)ls + init + 1 < 1 ? 1 : (lua_Integer)ls + init + 1;
	else if (init == 0)
		init = 1;
	if (init > (lua_Integer)ls + 1)
		init = (lua_Integer)ls + 1;
	lua_settop(L, 2);
	if (lp > 0 && p[0] == '^') {
		lua_pushliteral(L, "%");
		lua_pushvalue(L, 2);
		lua_concat(L, 2);
		lua_replace(L, 2);
	}
	lua_pushinteger(L, init);
	lua_pushinteger(L, -1);
	lua_pushcclosure(L, gmatch_step, 4);
	return 1;
}

/* gsub with a function or table replacement: the matches come from the
 * scratch find, the replacement runs here (under the hook). */
static int gsub_call(lua_State *L, pb_lua *S)
{
	size_t ls, lp;
	const char *s = lua_tolstring(L, 1, &ls);
	const char *p = lua_tolstring(L, 2, &lp);
	int tr = lua_type(L, 3);
	lua_Integer max_n = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
	int anchor = lp > 0 && p[0] == '^';
	lua_settop(L, 3);
	lua_newtable(L); /* 4: captures of the current match */
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	lua_Integer src = 0, last = -1, n = 0; /* src: 0-based */
	while (n < max_n) {
		int k = slow_find(L, S, 1, 2, src + 1, "string.gsub");
		if (k == 0)
			break;
		lua_Integer st = lua_tointeger(L, -k) - 1, en = lua_tointeger(L, -k + 1);
		int ncap = k - 2;
		for (int i = ncap; i >= 1; i--)
			lua_rawseti(L, 4, i);
		lua_pop(L, 2);
		if (en == last) { /* empty match where the last one ended: skip a char */
			if (src >= (lua_Integer)ls)
				break;
			luaL_addchar(&b, s[src]);
			src++;
			if (anchor)
				break;
			continue;
		}
		luaL_addlstring(&b, s + src, (size_t)(st - src));
		n++;
		if (ncap == 0) {
			lua_pushlstring(L, s + st, (size_t)(en - st));
			lua_rawseti(L, 4, 1);
			ncap = 1;
		}
		if (tr == LUA_TFUNCTION) {
			lua_pushvalue(L, 3);
			for (int i = 1; i <= ncap; i++)
				lua_rawgeti(L, 4, i);
			lua_call(L, ncap, 1);
		} else {
			lua_rawgeti(L, 4, 1);
			lua_gettable(L, 3);
		}
		if (!lua_toboolean(L, -1)) {
			lua_pop(L, 1);
			luaL_addlstring(&b, s + st, (size_t)(en - st));
		} else if (!lua_isstring(L, -1)) {
			return luaL_error(L, "invalid replacement value (a %s)",
			                  luaL_typename(L, -1));
		} else {
			luaL_addvalue(&b);
		}
		for (int i = 1; i <= ncap; i++) {
			lua_pushnil(L);
			lua_rawseti(L, 4, i);
		}
		src = last = en;
		if (anchor)
			break;
	}
	if (src < (lua_Integer)ls)
		luaL_addlstring(&b, s + src, (size_t)((lua_Integer)ls - src));
	luaL_pushresult(&b);
	lua_pushinteger(L, n);
	return 2;
}

static int safe_gsub(lua_State *L)
{
	pb_lua *S = check_clock(L, "string.gsub");
	int tr = lua_type(L, 3);
	luaL_argexpected(
	    L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE, 3,
	    "string/function/table");
	if (is_cheap(L, 1, 2))
		return call_original(L);
	if (tr == LUA_TFUNCTION || tr == LUA_TTABLE)
		return gsub_call(L, S);
	luaL_optinteger(L, 4, 0);
	lua_settop(L, 4);
	if (tr == LUA_TNUMBER) { /* 1.5 replaces as "1.5": the scratch call copies integers */
		luaL_tolstring(L, 3, NULL);
		lua_replace(L, 3);
	}
	int idx[4] = {1, 2, 3, 4};
	return scratch_call(L, S, 1, idx, lua_isnil(L, 4) ? 3 : 4, "string.gsub");
}

int pb_lua_pattern_find(lua_State *L, const char *s, size_t len, const char *pat)
{
	pb_lua *S = check_clock(L, "pb.find");
	int top = lua_gettop(L);
	lua_pushlstring(L, s, len);
	lua_pushstring(L, pat);
	int n;
	if (pattern_cost(len, pat, strlen(pat)) <= CHEAP_PATTERN) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, S->find_ref);
		lua_pushvalue(L, top + 1);
		lua_pushvalue(L, top + 2);
		lua_call(L, 2, 1);
		n = !lua_isnil(L, -1);
	} else {
		n = slow_find(L, S, top + 1, top + 2, 1, "pb.find") > 0;
	}
	lua_settop(L, top);
	return n;
}

/* ------------------------------------------------ table and string loops */

#define CLOCK_EVERY 4096

static int safe_rep(lua_State *L)
{
	pb_lua *S = check_clock(L, "string.rep");
	size_t l, lsep;
	const char *s = luaL_checklstring(L, 1, &l);
	lua_Integer n = luaL_checkinteger(L, 2);
	const char *sep = luaL_optlstring(L, 3, "", &lsep);
	if (n <= 0 || l + lsep == 0) {
		lua_pushliteral(L, "");
		return 1;
	}
	if (l + lsep < l ||
	    (lua_Unsigned)(l + lsep) > (lua_Unsigned)(SIZE_MAX / 2) / (lua_Unsigned)n)
		return luaL_error(L, "resulting string too large");
	size_t total = (size_t)n * l + (size_t)(n - 1) * lsep;
	if (total > S->cap) {
		char msg[128];
		snprintf(msg, sizeof msg,
		         "string.rep: a string of %zu bytes exceeds the memory cap of %zu MiB",
		         total, S->cap >> 20);
		return luaL_error(L, "%s", msg);
	}
	luaL_Buffer b;
	char *p = luaL_buffinitsize(L, &b, total);
	if (l == 1 && lsep == 0) {
		memset(p, s[0], total);
		n = 0;
	}
	for (lua_Integer i = 0; i < n; i++) {
		if ((i & (CLOCK_EVERY - 1)) == CLOCK_EVERY - 1)
			check_clock(L, "string.rep");
		memcpy(p, s, l);
		p += l;
		if (lsep > 0 && i + 1 < n) {
			memcpy(p, sep, lsep);
			p += lsep;
		}
	}
	luaL_pushresultsize(&b, total);
	return 1;
}

static lua_Integer table_len(lua_State *L, int idx)
{
	luaL_checktype(L, idx, LUA_TTABLE);
	return luaL_len(L, idx);
}

static int safe_concat(lua_State *L)
{
	lua_Integer last = table_len(L, 1);
	size_t lsep;
	const char *sep = luaL_optlstring(L, 2, "", &lsep);
	lua_Integer i = luaL_optinteger(L, 3, 1);
	last = luaL_optinteger(L, 4, last);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	for (lua_Integer k = 0; i <= last; i++, k++) {
		if ((k & (CLOCK_EVERY - 1)) == CLOCK_EVERY - 1)
			check_clock(L, "table.concat");
		lua_geti(L, 1, i);
		if (!lua_isstring(L, -1))
			return luaL_error(L, "invalid value (at index %I) in table for 'concat'",
			                  (LUAI_UACINT)i);
		luaL_addvalue(&b);
		if (i != last)
			luaL_addlstring(&b, sep, lsep);
		if (i == LUA_MAXINTEGER)
			break;
	}
	luaL_pushresult(&b);
	return 1;
}

static int safe_insert(lua_State *L)
{
	lua_Integer e = (lua_Integer)((lua_Unsigned)table_len(L, 1) + 1u), pos; /* wraps as Lua's */
	switch (lua_gettop(L)) {
	case 2:
		pos = e;
		break;
	case 3:
		pos = luaL_checkinteger(L, 2);
		luaL_argcheck(L, (lua_Unsigned)pos - 1u < (lua_Unsigned)e, 2,
		              "position out of bounds");
		for (lua_Integer i = e, k = 0; i > pos; i--, k++) {
			if ((k & (CLOCK_EVERY - 1)) == CLOCK_EVERY - 1)
				check_clock(L, "table.insert");
			lua_geti(L, 1, i - 1);
			lua_seti(L, 1, i);
		}
		break;
	default:
		return luaL_error(L, "wrong number of arguments to 'insert'");
	}
	lua_seti(L, 1, pos);
	return 0;
}

static int safe_remove(lua_State *L)
{
	lua_Integer size = table_len(L, 1);
	lua_Integer pos = luaL_optinteger(L, 2, size);
	if (pos != size)
		luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)size, 2,
		              "position out of bounds");
	lua_geti(L, 1, pos);
	for (lua_Integer k = 0; pos < size; pos++, k++) {
		if ((k & (CLOCK_EVERY - 1)) == CLOCK_EVERY - 1)
			check_clock(L, "table.remove");
		lua_geti(L, 1, pos + 1);
		lua_seti(L, 1, pos);
	}
	lua_pushnil(L);
	lua_seti(L, 1, pos);
	return 1;
}

static int safe_move(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_Integer f = luaL_checkinteger(L, 2), e = luaL_checkinteger(L, 3);
	lua_Integer t = luaL_checkinteger(L, 4);
	int tt = !lua_isnoneornil(L, 5) ? 5 : 1;
	luaL_checktype(L, tt, LUA_TTABLE);
	if (e >= f) {
		luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
		lua_Integer n = e - f;
		luaL_argcheck(L, t <= LUA_MAXINTEGER - n, 4, "destination wrap around");
		if (t > e || t <= f || (tt != 1 && !lua_compare(L, 1, tt, LUA_OPEQ))) {
			for (lua_Integer i = 0; i <= n; i++) {
				if ((i & (CLOCK_EVERY - 1)) == CLOCK_EVERY - 1)
					check_clock(L, "table.move");
				lua_geti(L, 1, f + i);
				lua_seti(L, tt, t + i);
			}
		} else {
			for (lua_Integer i = n, k = 0; i >= 0; i--, k++) {
				if ((k & (CLOCK_EVERY - 1)) == CLOCK_EVERY - 1)
					check_clock(L, "table.move");
				lua_geti(L, 1, f + i);
				lua_seti(L, tt, t + i);
			}
		}
	}
	lua_pushvalue(L, tt);
	return 1;
}

/* table.sort as a heap sort that looks at the clock: Lua's own sort runs to
 * its end between two hooks, so a table whose __index, __newindex or __lt
 * are C functions (no Lua instruction runs) sorted for 36 s against a 5 s
 * limit (issue 39). A heap sort never goes quadratic, whatever the order
 * function answers. The comparison is the order function at index 2, or <
 * (which honours __lt). */
static int sort_less(lua_State *L, lua_Integer i, lua_Integer j, lua_Integer *steps)
{
	if ((++*steps & (CLOCK_EVERY - 1)) == 0)
		check_clock(L, "table.sort");
	lua_geti(L, 1, i);
	lua_geti(L, 1, j);
	int lt;
	if (lua_isfunction(L, 2)) {
		lua_pushvalue(L, 2);
		lua_insert(L, -3);
		lua_call(L, 2, 1);
		lt = lua_toboolean(L, -1);
		lua_pop(L, 1);
	} else {
		lt = lua_compare(L, -2, -1, LUA_OPLT);
		lua_pop(L, 2);
	}
	return lt;
}

static void sort_swap(lua_State *L, lua_Integer i, lua_Integer j)
{
	lua_geti(L, 1, i);
	lua_geti(L, 1, j);
	lua_seti(L, 1, i);
	lua_seti(L, 1, j);
}

/* Sifts element `root` down the max-heap of elements 1..end. */
static void sort_sift(lua_State *L, lua_Integer root, lua_Integer end, lua_Integer *steps)
{
	while (root <= end / 2) {
		lua_Integer child = 2 * root;
		if (child < end && sort_less(L, child, child + 1, steps))
			child++;
		if (!sort_less(L, root, child, steps))
			return;
		sort_swap(L, root, child);
		root = child;
	}
}

static int safe_sort(lua_State *L)
{
	lua_Integer n = table_len(L, 1);
	if (n > 1) {
		luaL_argcheck(L, n < INT32_MAX, 1, "array too big");
		if (!lua_isnoneornil(L, 2))
			luaL_checktype(L, 2, LUA_TFUNCTION);
		lua_settop(L, 2);
		luaL_checkstack(L, 8, "table.sort");
		lua_Integer steps = 0;
		for (lua_Integer k = n / 2; k >= 1; k--)
			sort_sift(L, k, n, &steps);
		for (lua_Integer end = n; end > 1; end--) {
			sort_swap(L, 1, end);
			sort_sift(L, 1, end - 1, &steps);
		}
	}
	return 0;
}

/* Puts the safe versions into the library tables (the string metatable's
 * __index is the same table as `string`, so methods get them too). */
static void install_safe_libs(pb_lua *S)
{
	lua_State *L = S->L;
	lua_getglobal(L, "string");
	lua_getfield(L, -1, "find");
	lua_pushvalue(L, -1);
	S->find_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_pushcclosure(L, safe_find, 1);
	lua_setfield(L, -2, "find");
	static const struct {
		const char *name;
		lua_CFunction fn;
	} wrapped[] = {{"match", safe_match}, {"gmatch", safe_gmatch}, {"gsub", safe_gsub}};
	for (size_t i = 0; i < sizeof wrapped / sizeof *wrapped; i++) {
		lua_getfield(L, -1, wrapped[i].name);
		lua_pushcclosure(L, wrapped[i].fn, 1);
		lua_setfield(L, -2, wrapped[i].name);
	}
	lua_pushcfunction(L, safe_rep);
	lua_setfield(L, -2, "rep");
	lua_pop(L, 1);
	lua_getglobal(L, "table");
	lua_pushcfunction(L, safe_concat);
	lua_setfield(L, -2, "concat");
	lua_pushcfunction(L, safe_insert);
	lua_setfield(L, -2, "insert");
	lua_pushcfunction(L, safe_remove);
	lua_setfield(L, -2, "remove");
	lua_pushcfunction(L, safe_move);
	lua_setfield(L, -2, "move");
	lua_pushcfunction(L, safe_sort);
	lua_setfield(L, -2, "sort");
	lua_pop(L, 1);
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
	install_safe_libs(S);

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

#if defined(__SANITIZE_ADDRESS__)
#define PB_LUA_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PB_LUA_SANITIZED 1
#endif
#endif

double pb_lua_default_seconds(void)
{
#ifdef PB_LUA_SANITIZED
	return PB_LUA_DEFAULT_SECONDS * PB_LUA_SANITIZER_SLOWDOWN;
#else
	return PB_LUA_DEFAULT_SECONDS;
#endif
}

pb_lua *pb_lua_new(const pb_lua_limits *limits)
{
	pb_lua *S = calloc(1, sizeof *S);
	if (!S)
		return NULL;
	S->base_cap = 256u << 20;
	S->base_budget = 50000000;
	S->base_seconds = pb_lua_default_seconds();
	S->subj_ref = LUA_NOREF;
	pb_lua_set_limits(S, limits);
	S->cap = S->base_cap;
	S->budget = S->base_budget;
	S->seconds = S->base_seconds;
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
	if (S->depth > 0) { /* inside a call: only lower, for the rest of it */
		if (limits->memory && limits->memory < S->cap)
			S->cap = limits->memory;
		if (limits->instructions && limits->instructions < S->left)
			S->left = limits->instructions;
		if (limits->seconds > 0 && limits->seconds < time_left(S))
			S->deadline = now_s() + limits->seconds;
		return;
	}
	if (limits->memory)
		S->base_cap = limits->memory;
	if (limits->instructions)
		S->base_budget = limits->instructions;
	if (limits->seconds > 0)
		S->base_seconds = limits->seconds;
}

void pb_lua_get_limits(pb_lua *S, pb_lua_limits *out)
{
	if (S->depth > 0) {
		out->memory = S->cap;
		out->instructions = S->left > 0 ? S->left : 1;
		out->seconds = S->seconds;
	} else {
		out->memory = S->base_cap;
		out->instructions = S->base_budget;
		out->seconds = S->base_seconds;
	}
}

void pb_lua_free(pb_lua *S)
{
	if (!S)
		return;
	scratch_close(S);
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
	/* Nested calls (a callback inside a script, or inside a command the
	 * script runs) share the outer budget and clock. */
	int outer = S->depth > 0;
	if (!outer) {
		S->cap = S->base_cap;
		S->budget = S->left = S->base_budget;
		S->seconds = S->base_seconds;
		S->deadline = now_s() + S->seconds;
		S->stop = STOP_NONE;
		S->where[0] = '\0';
		lua_sethook(L, count_hook, LUA_MASKCOUNT, 1000);
	}
	S->depth++;
	int enforce = S->enforce;
	S->enforce = 1;
	int rc = lua_pcall(L, nargs, nresults, base);
	S->enforce = enforce;
	S->depth--;
	if (!outer) {
		lua_sethook(L, NULL, 0, 0);
		scratch_release(S);
	}
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
	int rc = pb_read_file(path, PB_DOOR_LUA, (size_t)64 << 20, "script", &buf, &len, err);
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
	return S->used + S->outside;
}

int pb_lua_reserve(pb_lua *S, size_t bytes)
{
	size_t held = S->used + S->scratch_used + S->outside;
	if (S->enforce && (bytes > S->cap || held > S->cap - bytes))
		return -1;
	S->outside += bytes;
	return 0;
}

void pb_lua_release(pb_lua *S, size_t bytes)
{
	S->outside -= bytes < S->outside ? bytes : S->outside;
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

double pb_lua_time_left(pb_lua *S)
{
	return time_left(S);
}

void pb_lua_charge(pb_lua *S, double seconds)
{
	if (S->depth == 0 || !(seconds > 0))
		return;
	S->deadline -= seconds;
}

void pb_lua_check_time(lua_State *L, const char *in)
{
	check_clock(L, in);
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
