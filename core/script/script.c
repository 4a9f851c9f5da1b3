/*
 * script.c — the `pb` Lua API, registries of heuristics and rules, events.
 *
 * Handles (vis pattern): a node handle is a full userdata {graph generation,
 * node id}. Every access checks the generation against the session's
 * graph_gen, so a handle whose graph was closed or replaced raises a clear
 * Lua error instead of touching freed memory.
 *
 * Rollback: before a script runs, the plan, the undo and redo histories and
 * the view are copied, the layout's path and the registries' sizes noted; if
 * the script fails, all of them are put back (the layout reloaded when it was
 * replaced, heuristics, rules and callbacks it registered dropped), so a
 * failing script leaves the session unchanged. Only a model the script opened
 * (or a graph transformation it ran) stays: the old plans no longer fit it.
 *
 * Callbacks (heuristics, rules, events) run inside C loops that hold the
 * graph, the layout, the plan, the solver and the registries below: while
 * one runs the session is locked (session.h: commands that would replace
 * or free any of them fail, commands.c) and pb.heuristic / pb.rule / pb.on /
 * pb.clear / pb.undo / pb.redo raise an error, so no loop sees freed memory
 * and no plan of one model ends up attached to another. A callback's result
 * is checked (numbers must be finite).
 *
 * Capabilities: commands run through pb.cmd are marked from_script (checked
 * against commands.c's table: no writes outside the folder the user
 * allowed, reads of expected file kinds only); the time such a command
 * works counts against the script's time limit. Names and rule tables kept
 * in C count against its memory cap (pb_lua_reserve).
 */
#include "script/script.h"

#include "partition/chain/chain_layers.h"
#include "partition/chain/env.h"

#include <lauxlib.h>
#include <limits.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NODE_MT "pb.node"
#define SCRIPT_KEY "pb.script"

typedef struct entry {
	char *name;
	char *kind;    /* heuristic kind, or the effect of a rule ("specs", "fusable", ...) */
	int fn_ref;    /* heuristic fn or rule match fn */
	int specs_ref; /* rule specs table, LUA_NOREF otherwise */
	int fusable;
	char *backend;
	int cut;     /* "cut" rules: 1 forbid, 2 force */
	int pin;     /* "core" / "stage" rules: the core or stage number */
	size_t held; /* bytes reserved against the script's memory cap */
} entry;

typedef struct event_cb {
	char *event;
	int ref;
	size_t held; /* bytes reserved against the script's memory cap */
} event_cb;

struct pb_script {
	pb_lua *S;
	pb_session *s;
	pb_cmd_ctx *ctx; /* the running command's context, or NULL */
	entry *heur;
	int n_heur;
	entry *rules;
	int n_rules;
	event_cb *ev;
	int n_ev;
	int console_env; /* registry ref: the `lua` console's shared environment */
	int in_event;
	int running;    /* scripts running (nested through pb.cmd('source ...')) */
	int hw_changed; /* the layout was replaced (a PB_EVENT_HW was seen) */
	int matched;    /* rule index of the last match_rule hit, -1 */
	char event_err[1024];
	int has_event_err;
	int in_callback;          /* callbacks running (the session is locked) */
	char write_dir[PATH_MAX]; /* where the running script's commands may write */
};

typedef struct node_handle {
	unsigned gen;
	int id;
} node_handle;

static pb_script *get_sc(lua_State *L)
{
	lua_getfield(L, LUA_REGISTRYINDEX, SCRIPT_KEY);
	pb_script *sc = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return sc;
}

/* Raises an error when called inside a callback (see the top of the file). */
static void not_in_callback(lua_State *L, pb_script *sc, const char *what)
{
	if (sc->in_callback > 0)
		luaL_error(L,
		           "%s: not allowed inside %s: callbacks run inside a solver's loop and "
		           "may only read the session",
		           what, sc->s->locked_by[0] ? sc->s->locked_by : "a callback");
}

/* Calls a callback (function and nargs arguments on the stack) with the
 * session locked; `what` and `name` say which, for error messages. */
static int callback_call(pb_script *sc, int nargs, int nres, const char *what, const char *name,
                         pb_error *err)
{
	pb_session *s = sc->s;
	char outer[sizeof s->locked_by];
	memcpy(outer, s->locked_by, sizeof outer);
	snprintf(s->locked_by, sizeof s->locked_by, "%s '%s'", what, name ? name : "?");
	s->locked++;
	sc->in_callback++;
	int rc = pb_lua_call(sc->S, nargs, nres, err);
	sc->in_callback--;
	s->locked--;
	memcpy(s->locked_by, outer, sizeof outer);
	return rc;
}

static const pb_graph *need_graph(lua_State *L, pb_script *sc)
{
	if (!sc->s->graph)
		luaL_error(L, "no model is open (open one with pb.cmd('open MODEL'))");
	return sc->s->graph;
}

/* ------------------------------------------------------------ node handles */

static void push_node(lua_State *L, pb_script *sc, int id)
{
	node_handle *h = lua_newuserdatauv(L, sizeof *h, 0);
	h->gen = sc->s->graph_gen;
	h->id = id;
	luaL_setmetatable(L, NODE_MT);
}

static const pb_node *check_node(lua_State *L, int idx, int *id)
{
	node_handle *h = luaL_checkudata(L, idx, NODE_MT);
	pb_script *sc = get_sc(L);
	if (!sc->s->graph || h->gen != sc->s->graph_gen)
		luaL_error(L, "stale node handle: the graph it belongs to was closed or replaced");
	if (id)
		*id = h->id;
	return &sc->s->graph->nodes[h->id];
}

static void push_shape(lua_State *L, const pb_tensor *t)
{
	lua_createtable(L, t->rank > 0 ? t->rank : 0, 0);
	for (int d = 0; d < t->rank; d++) {
		if (t->dims[d] >= 0)
			lua_pushinteger(L, t->dims[d]);
		else
			lua_pushstring(L, t->dim_params[d] ? t->dim_params[d] : "?");
		lua_rawseti(L, -2, d + 1);
	}
}

static void push_attr(lua_State *L, const pb_attr *a)
{
	switch (a->type) {
	case PB_ATTR_FLOAT:
		lua_pushnumber(L, a->f);
		break;
	case PB_ATTR_INT:
		lua_pushinteger(L, a->i);
		break;
	case PB_ATTR_STRING:
		lua_pushstring(L, a->s ? a->s : "");
		break;
	case PB_ATTR_INTS:
		lua_createtable(L, a->n, 0);
		for (int i = 0; i < a->n; i++) {
			lua_pushinteger(L, a->ints[i]);
			lua_rawseti(L, -2, i + 1);
		}
		break;
	case PB_ATTR_FLOATS:
		lua_createtable(L, a->n, 0);
		for (int i = 0; i < a->n; i++) {
			lua_pushnumber(L, a->floats[i]);
			lua_rawseti(L, -2, i + 1);
		}
		break;
	case PB_ATTR_STRINGS:
		lua_createtable(L, a->n, 0);
		for (int i = 0; i < a->n; i++) {
			lua_pushstring(L, a->strings[i] ? a->strings[i] : "");
			lua_rawseti(L, -2, i + 1);
		}
		break;
	default:
		lua_pushboolean(L, 1);
		break; /* tensor/graph: present */
	}
}

static void push_ids(lua_State *L, const int *ids, int n)
{
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushinteger(L, ids[i]);
		lua_rawseti(L, -2, i + 1);
	}
}

static void push_tensor_names(lua_State *L, const pb_graph *g, const int *ts, int n)
{
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushstring(L, ts[i] >= 0 ? g->tensors[ts[i]].name : "");
		lua_rawseti(L, -2, i + 1);
	}
}

static int node_index(lua_State *L)
{
	int id;
	const pb_node *n = check_node(L, 1, &id);
	const char *k = luaL_checkstring(L, 2);
	pb_script *sc = get_sc(L);
	const pb_graph *g = sc->s->graph;
	if (!strcmp(k, "id"))
		lua_pushinteger(L, id);
	else if (!strcmp(k, "name"))
		lua_pushstring(L, n->name);
	else if (!strcmp(k, "short_name"))
		lua_pushstring(L, pb_node_short_name(n));
	else if (!strcmp(k, "op"))
		lua_pushstring(L, n->op);
	else if (!strcmp(k, "domain"))
		lua_pushstring(L, n->domain);
	else if (!strcmp(k, "macs"))
		lua_pushnumber(L, n->cost.macs);
	else if (!strcmp(k, "flops"))
		lua_pushnumber(L, n->cost.flops);
	else if (!strcmp(k, "params"))
		lua_pushnumber(L, n->cost.params);
	else if (!strcmp(k, "param_bytes"))
		lua_pushnumber(L, n->cost.param_bytes);
	else if (!strcmp(k, "out_bytes") || !strcmp(k, "bytes"))
		lua_pushnumber(L, n->cost.out_bytes);
	else if (!strcmp(k, "inputs"))
		push_tensor_names(L, g, n->inputs, n->n_inputs);
	else if (!strcmp(k, "outputs"))
		push_tensor_names(L, g, n->outputs, n->n_outputs);
	else if (!strcmp(k, "preds"))
		push_ids(L, n->preds, n->n_preds);
	else if (!strcmp(k, "succs"))
		push_ids(L, n->succs, n->n_succs);
	else if (!strcmp(k, "members")) {
		lua_createtable(L, n->n_members, 0);
		for (int i = 0; i < n->n_members; i++) {
			lua_pushstring(L, n->member_names && n->member_names[i] ? n->member_names[i]
			                                                        : "");
			lua_rawseti(L, -2, i + 1);
		}
	} else if (!strcmp(k, "shape") || !strcmp(k, "shapes")) {
		int first = !strcmp(k, "shape");
		if (first) {
			if (n->n_outputs > 0 && n->outputs[0] >= 0)
				push_shape(L, &g->tensors[n->outputs[0]]);
			else
				lua_pushnil(L);
		} else {
			lua_createtable(L, n->n_outputs, 0);
			for (int i = 0; i < n->n_outputs; i++) {
				if (n->outputs[i] >= 0)
					push_shape(L, &g->tensors[n->outputs[i]]);
				else
					lua_newtable(L);
				lua_rawseti(L, -2, i + 1);
			}
		}
	} else if (!strcmp(k, "input_shapes")) {
		lua_createtable(L, n->n_inputs, 0);
		for (int i = 0; i < n->n_inputs; i++) {
			if (n->inputs[i] >= 0)
				push_shape(L, &g->tensors[n->inputs[i]]);
			else
				lua_newtable(L);
			lua_rawseti(L, -2, i + 1);
		}
	} else if (!strcmp(k, "attrs")) {
		lua_createtable(L, 0, n->n_attrs);
		for (int i = 0; i < n->n_attrs; i++) {
			push_attr(L, &n->attrs[i]);
			lua_setfield(L, -2, n->attrs[i].name);
		}
	} else if (!strcmp(k, "group")) {
		const pb_plan *p = sc->s->plan;
		if (p && id < p->n_nodes && p->group[id] >= 0)
			lua_pushinteger(L, p->group[id]);
		else
			lua_pushnil(L);
	} else
		return luaL_error(L, "node has no field '%s' (see docs/lua-api.md)", k);
	return 1;
}

static int node_tostring(lua_State *L)
{
	int id;
	const pb_node *n = check_node(L, 1, &id);
	lua_pushfstring(L, "node %d %s (%s)", id, n->name, n->op);
	return 1;
}

static int node_eq(lua_State *L)
{
	node_handle *a = luaL_checkudata(L, 1, NODE_MT), *b = luaL_checkudata(L, 2, NODE_MT);
	lua_pushboolean(L, a->gen == b->gen && a->id == b->id);
	return 1;
}

/* ------------------------------------------------------------ graph API */

static int l_node(lua_State *L)
{
	pb_script *sc = get_sc(L);
	const pb_graph *g = need_graph(L, sc);
	int id;
	if (lua_type(L, 1) == LUA_TNUMBER) {
		/* range-checked before the cast: pb.node(1 << 32) was node 0 */
		lua_Integer i = luaL_checkinteger(L, 1);
		id = i >= 0 && i < g->n_nodes ? (int)i : -1;
	} else {
		id = pb_graph_find_node(g, luaL_checkstring(L, 1));
	}
	if (id < 0)
		lua_pushnil(L);
	else
		push_node(L, sc, id);
	return 1;
}

static int l_nodes(lua_State *L)
{
	pb_script *sc = get_sc(L);
	const pb_graph *g = need_graph(L, sc);
	lua_createtable(L, g->n_nodes, 0);
	for (int i = 0; i < g->n_nodes; i++) {
		push_node(L, sc, i);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static int l_topo(lua_State *L)
{
	pb_script *sc = get_sc(L);
	const pb_graph *g = need_graph(L, sc);
	lua_createtable(L, g->n_nodes, 0);
	for (int i = 0; i < g->n_nodes; i++) {
		lua_pushinteger(L, i);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* pb.layers(): the node ids of the many-core partition's layers, in order
 * (load-time constants are none: core/partition/chain/chain_layers.h); layer i
 * (0-based, as arranged_core counts) is node layers[i + 1]. */
static int l_layers(lua_State *L)
{
	pb_script *sc = get_sc(L);
	const pb_graph *g = need_graph(L, sc);
	/* the table first, at its largest size: filling it allocates nothing,
	 * so no Lua error can unwind past ly */
	lua_createtable(L, g->n_nodes, 0);
	pb_part_layers ly = {0};
	pb_error err = {0};
	if (pb_part_layers_new(g, &ly, &err))
		return luaL_error(L, "pb.layers: %s", err.msg);
	for (int i = 0; i < ly.m; i++) {
		lua_pushinteger(L, ly.layer_node[i]);
		lua_rawseti(L, -2, i + 1);
	}
	pb_part_layers_free(&ly);
	return 1;
}

static int l_edges(lua_State *L)
{
	pb_script *sc = get_sc(L);
	const pb_graph *g = need_graph(L, sc);
	lua_newtable(L);
	int k = 1;
	for (int i = 0; i < g->n_nodes; i++)
		for (int j = 0; j < g->nodes[i].n_succs; j++) {
			int to = g->nodes[i].succs[j];
			lua_createtable(L, 0, 3);
			lua_pushinteger(L, i);
			lua_setfield(L, -2, "from");
			lua_pushinteger(L, to);
			lua_setfield(L, -2, "to");
			lua_pushnumber(L, pb_graph_edge_bytes(g, i, to));
			lua_setfield(L, -2, "bytes");
			lua_rawseti(L, -2, k++);
		}
	return 1;
}

/* Lua pattern match with the sandbox's time limit (util/lua_sandbox.h). */
static int lua_match(lua_State *L, const char *s, const char *pat)
{
	return pb_lua_pattern_find(L, s, strlen(s), pat);
}

/* pb.find("pattern") matches name or op; pb.find{op="Conv", name="pattern"}. */
static int l_find(lua_State *L)
{
	pb_script *sc = get_sc(L);
	const pb_graph *g = need_graph(L, sc);
	const char *op = NULL, *name = NULL, *any = NULL;
	if (lua_istable(L, 1)) {
		lua_getfield(L, 1, "op");
		op = lua_tostring(L, -1);
		lua_getfield(L, 1, "name");
		name = lua_tostring(L, -1);
		lua_pop(L, 2); /* strings stay alive: they belong to the table */
	} else {
		any = luaL_checkstring(L, 1);
	}
	lua_newtable(L);
	int k = 1;
	for (int i = 0; i < g->n_nodes; i++) {
		const pb_node *n = &g->nodes[i];
		int hit;
		if (any)
			hit = lua_match(L, n->name, any) || lua_match(L, n->op, any);
		else
			hit = (!op || strcmp(n->op, op) == 0) &&
			      (!name || lua_match(L, n->name, name));
		if (hit) {
			push_node(L, sc, i);
			lua_rawseti(L, -2, k++);
		}
	}
	return 1;
}

static int l_graph(lua_State *L)
{
	pb_script *sc = get_sc(L);
	const pb_graph *g = sc->s->graph;
	if (!g) {
		lua_pushnil(L);
		return 1;
	}
	lua_createtable(L, 0, 8);
	lua_pushstring(L, g->path);
	lua_setfield(L, -2, "path");
	lua_pushstring(L, g->name ? g->name : "");
	lua_setfield(L, -2, "name");
	lua_pushinteger(L, g->n_nodes);
	lua_setfield(L, -2, "n_nodes");
	lua_pushnumber(L, g->total.macs);
	lua_setfield(L, -2, "macs");
	lua_pushnumber(L, g->total.flops);
	lua_setfield(L, -2, "flops");
	lua_pushnumber(L, g->total.params);
	lua_setfield(L, -2, "params");
	lua_pushnumber(L, g->total.out_bytes);
	lua_setfield(L, -2, "activation_bytes");
	return 1;
}

static void push_int_array_l(lua_State *L, const int *a, int n)
{
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushinteger(L, a[i]);
		lua_rawseti(L, -2, i + 1);
	}
}

/* ------------------------------------------------------------ plans, commands */

static int l_plan(lua_State *L)
{
	pb_script *sc = get_sc(L);
	if (!sc->s->plan) {
		lua_pushnil(L);
		return 1;
	}
	json_t *j = pb_plan_to_json(sc->s->plan, NULL);
	pb_lua_push_json(L, j);
	json_decref(j);
	return 1;
}

static int l_layout(lua_State *L)
{
	pb_script *sc = get_sc(L);
	if (!sc->s->hw)
		lua_pushnil(L);
	else
		pb_lua_push_json(L, sc->s->hw->root);
	return 1;
}

/* A command run by a script counts against the script's time limit (issue
 * 39): the script thread's CPU clock runs on while the command works on it,
 * the CPU time of the command's other threads is charged after it, and the
 * command is cancelled (through the progress hook: partition, train, shard,
 * repeat poll it) once the process has spent the time the script had left.
 * Commands that never poll the hook are charged when they return. */
/* A command line as quoted in an error: at most 200 bytes, "..." after a
 * cut (a script's 50 MB line is not echoed whole). */
static const char *cmd_echo(const char *line, char *buf, size_t len)
{
	size_t n = strlen(line);
	if (n < len)
		return line;
	snprintf(buf, len, "%.*s...", (int)(len - 4), line);
	return buf;
}

typedef struct cmd_watch {
	pb_progress_fn outer;
	void *outer_ud;
	double start, left; /* process CPU time at the start; the script's time left */
	int expired;
	const int *over; /* the output went past its bound: stop the command */
} cmd_watch;

/* The CPU time of the whole process: a command may work on several threads,
 * and the progress hook may be called from any of them. */
static double process_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int watch_progress(void *ud, double fraction, const char *line)
{
	cmd_watch *w = ud;
	if (w->outer && w->outer(w->outer_ud, fraction, line))
		return 1;
	if (!w->expired && process_cpu() - w->start > w->left)
		w->expired = 1;
	return w->expired || (w->over && *w->over);
}

/* The output pb.cmd collects, bounded by what the script's memory cap has
 * left (and 1 MiB): it is made outside the Lua allocator (a command printing without end
 * collected 2.3 GB against a 256 MiB cap, issue 39). Beyond the bound the
 * writes fail and the rest is dropped; pb.cmd then fails saying so. */
typedef struct cmd_out {
	char *buf;
	size_t len, cap, limit;
	int over;
} cmd_out;

static ssize_t cmd_out_write(void *cookie, const char *data, size_t n)
{
	cmd_out *o = cookie;
	if (o->over || n > o->limit - o->len) {
		o->over = 1;
		return -1;
	}
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap < o->len + n + 1)
			cap *= 2;
		char *b = realloc(o->buf, cap);
		if (!b) {
			o->over = 1;
			return -1;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, data, n);
	o->len += n;
	return (ssize_t)n;
}

/* pb.cmd("partition --method exact") runs a command of the command table and
 * returns what it printed; a failing command raises a Lua error. */
static int l_cmd(lua_State *L)
{
	pb_script *sc = get_sc(L);
	const char *line = luaL_checkstring(L, 1);
	pb_lua_limits lim0;
	pb_lua_get_limits(sc->S, &lim0);
	size_t mcap = lim0.memory ? lim0.memory : (size_t)256 << 20, used = pb_lua_memory(sc->S);
	/* plus 1 MiB: a script holding memory near its cap (caught with pcall)
	 * still reads a command's report */
	cmd_out out = {NULL, 0, 0, (mcap > used ? mcap - used : 0) + ((size_t)1 << 20), 0};
	FILE *mem = fopencookie(&out, "w", (cookie_io_functions_t){.write = cmd_out_write});
	if (!mem)
		return luaL_error(L, "pb.cmd: out of memory");
	pb_cmd_ctx sub = {.s = sc->s,
	                  .out = mem,
	                  .log = mem,
	                  .from_script = 1,
	                  .allow_write = sc->write_dir[0] ? sc->write_dir : NULL};
	cmd_watch w = {NULL, NULL, process_cpu(), pb_lua_time_left(sc->S), 0, &out.over};
	double thread0 = thread_cpu();
	if (sc->ctx) {
		sub.interactive = sc->ctx->interactive;
		w.outer = sc->ctx->progress;
		w.outer_ud = sc->ctx->progress_ud;
	}
	sub.progress = watch_progress;
	sub.progress_ud = &w;
	pb_error err = {0};
	char echo[201];
	/* The command's own Lua pushes (callback arguments) must not hit the cap:
	 * they are not inside a protected call. */
	int cap = pb_lua_cap_suspend(sc->S, 1);
	int rc = pb_cmd_run_line(&sub, line, &err);
	/* the thread's own time is on the script's clock already */
	pb_lua_charge(sc->S, (process_cpu() - w.start) - (thread_cpu() - thread0));
	fclose(mem);
	char *buf = out.buf;
	size_t len = out.len;
	if (sc->ctx)
		sc->ctx->redraw |= sub.redraw;
	if (out.over) {
		pb_lua_cap_restore(sc->S, cap);
		free(buf);
		return luaL_error(L,
		                  "pb.cmd('%s'): its output went past the script's memory cap of "
		                  "%d MiB (the rest was dropped)",
		                  cmd_echo(line, echo, sizeof echo), (int)(mcap >> 20));
	}
	if (rc == PB_OK)
		lua_pushlstring(L, buf ? buf : "", len);
	pb_lua_cap_restore(sc->S, cap);
	free(buf);
	if (w.expired) {
		if (rc == PB_OK)
			lua_pop(L, 1);
		pb_lua_limits lim;
		pb_lua_get_limits(sc->S, &lim);
		char msg[400];
		snprintf(msg, sizeof msg,
		         "pb.cmd('%s'): time limit of %g s exceeded: cancelled (a command run by a "
		         "script counts against its time limit; raise it with --max-seconds)",
		         cmd_echo(line, echo, sizeof echo), lim.seconds);
		return luaL_error(L, "%s", msg);
	}
	pb_lua_check_time(L, "pb.cmd");
	if (rc != PB_OK)
		return luaL_error(L, "pb.cmd('%s'): %s", cmd_echo(line, echo, sizeof echo),
		                  err.msg);
	return 1;
}

/* pb.undo() / pb.redo(): one function, the direction in upvalue 1. */
static int l_undo_redo(lua_State *L)
{
	pb_script *sc = get_sc(L);
	int redo = lua_toboolean(L, lua_upvalueindex(1));
	not_in_callback(L, sc, redo ? "pb.redo" : "pb.undo");
	lua_pushboolean(L, redo ? pb_session_redo(sc->s) : pb_session_undo(sc->s));
	if (sc->ctx)
		sc->ctx->redraw |= PB_REDRAW_ALL;
	return 1;
}

static int l_print(lua_State *L)
{
	pb_script *sc = get_sc(L);
	FILE *out = sc->ctx ? sc->ctx->out : NULL;
	int n = lua_gettop(L);
	for (int i = 1; i <= n; i++) {
		size_t len;
		const char *s = luaL_tolstring(L, i, &len);
		if (out) {
			if (i > 1)
				fputc('\t', out);
			fwrite(s, 1, len, out);
		}
		lua_pop(L, 1);
	}
	if (out)
		fputc('\n', out);
	return 0;
}

/* pb.partition_apply(arranged_core, k): the state after action k of the
 * many-core environment (core/partition/chain/env.h), or nil and the reason when
 * k is invalid there. Lets an action mask look one step ahead. */
static int l_partition_apply(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_Integer k = luaL_checkinteger(L, 2);
	lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
	if (n < 2 || n > 1 << 16)
		return luaL_error(L, "pb.partition_apply: arranged_core must list 2..65536 cores");
	/* a Lua-owned buffer: nothing leaks when an error unwinds */
	int *ac = lua_newuserdatauv(L, (size_t)n * sizeof *ac, 0);
	lua_Integer total = 0; /* at most 2^30: no action's sum overflows an int */
	for (lua_Integer i = 0; i < n; i++) {
		lua_rawgeti(L, 1, i + 1);
		int isnum;
		lua_Integer v = lua_tointegerx(L, -1, &isnum);
		lua_pop(L, 1);
		if (!isnum || v < 0 || v > 1 << 30) {
			return luaL_error(L,
			                  "pb.partition_apply: arranged_core[%d] must be a "
			                  "non-negative integer",
			                  (int)i + 1);
		}
		total += v;
		if (total > 1 << 30)
			return luaL_error(L,
			                  "pb.partition_apply: arranged_core holds more than 2^30 "
			                  "layers in all (%d entries read)",
			                  (int)i + 1);
		ac[i] = (int)v;
	}
	const char *why = NULL;
	if (k < 0 || k >= pb_env_n_actions((int)n) || !pb_env_apply(ac, (int)n, (int)k, &why)) {
		lua_pushnil(L);
		lua_pushstring(L, why ? why : "action out of range");
		return 2;
	}
	push_int_array_l(L, ac, (int)n);
	return 1;
}

/* ------------------------------------------------------------ registries */

static const char *const heuristic_kinds[] = {"action_mask", "initial_partition",
                                              "candidate_filter", "cost_term", NULL};

static char *field_str(lua_State *L, int t, const char *k, int required, const char *what)
{
	lua_getfield(L, t, k);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		if (required)
			luaL_error(L, "%s: field '%s' is required", what, k);
		return NULL;
	}
	if (lua_type(L, -1) != LUA_TSTRING)
		luaL_error(L, "%s: field '%s' must be a string", what, k);
	char *s = strdup(lua_tostring(L, -1));
	lua_pop(L, 1);
	return s;
}

/* The bytes of string field k of table t with its terminator (0 when it is
 * nil or no string). */
static size_t field_len(lua_State *L, int t, const char *k)
{
	size_t len = 0;
	lua_getfield(L, t, k);
	if (lua_type(L, -1) == LUA_TSTRING)
		len = lua_rawlen(L, -1) + 1;
	lua_pop(L, 1);
	return len;
}

/* A registration's copies are made in C, outside the Lua allocator: they
 * count against the script's memory cap (issue 39: names of 100 MB,
 * registered in a loop, took 3 GB under a 256 MiB cap). Raises the memory
 * error when the cap is passed; call it before anything is strdup'ed. */
static void reserve_or_raise(lua_State *L, pb_script *sc, size_t bytes, const char *what)
{
	if (pb_lua_reserve(sc->S, bytes) == 0)
		return;
	pb_lua_limits lim;
	pb_lua_get_limits(sc->S, &lim);
	luaL_error(L,
	           "%s: not enough memory: its %zu bytes (name and entry, kept outside Lua) "
	           "exceed the script's memory cap of %zu MiB",
	           what, bytes, lim.memory >> 20);
}

static int l_heuristic(lua_State *L)
{
	pb_script *sc = get_sc(L);
	not_in_callback(L, sc, "pb.heuristic");
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "name"); /* check before anything is strdup'ed */
	if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
		return luaL_error(L, "pb.heuristic: field 'name' must be a string");
	lua_pop(L, 1);
	char *kind = field_str(L, 1, "kind", 1, "pb.heuristic");
	int ok = 0;
	for (int i = 0; heuristic_kinds[i]; i++)
		ok |= strcmp(kind, heuristic_kinds[i]) == 0;
	if (!ok) {
		lua_pushfstring(L,
		                "pb.heuristic: unknown kind '%s' (action_mask, initial_partition, "
		                "candidate_filter, cost_term)",
		                kind);
		free(kind);
		return lua_error(L);
	}
	lua_getfield(L, 1, "fn");
	if (!lua_isfunction(L, -1)) {
		free(kind);
		return luaL_error(L, "pb.heuristic: field 'fn' must be a function");
	}
	size_t nl = field_len(L, 1, "name"), kl = strlen(kind) + 1;
	size_t held = sizeof(entry) + kl + (nl ? nl : kl);
	if (pb_lua_reserve(sc->S, held) != 0) {
		free(kind);
		reserve_or_raise(L, sc, held, "pb.heuristic");
	}
	char *name = field_str(L, 1, "name", 0, "pb.heuristic");
	entry *ne = realloc(sc->heur, (size_t)(sc->n_heur + 1) * sizeof *ne);
	if (!ne) {
		pb_lua_release(sc->S, held);
		free(kind);
		free(name);
		return luaL_error(L, "out of memory");
	}
	sc->heur = ne;
	entry *e = &sc->heur[sc->n_heur++];
	memset(e, 0, sizeof *e);
	e->kind = kind;
	e->name = name ? name : strdup(kind);
	e->held = held;
	e->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	e->specs_ref = LUA_NOREF;
	return 0;
}

static int l_rule(lua_State *L)
{
	pb_script *sc = get_sc(L);
	not_in_callback(L, sc, "pb.rule");
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "match");
	if (!lua_isfunction(L, -1))
		return luaL_error(L, "pb.rule: field 'match' must be a function(op) returning true "
		                     "for the operators the rule applies to");
	int match = luaL_ref(L, LUA_REGISTRYINDEX);
	entry e = {0};
	e.fn_ref = match;
	e.specs_ref = LUA_NOREF;
	/* One effect per rule (docs/lua-api.md). */
	static const char *const effects[] = {"specs", "fusable", "backend",
	                                      "cut",   "core",    "stage"};
	enum { N_EFFECTS = 6 };
	int which = -1, count = 0;
	for (int k = 0; k < N_EFFECTS; k++) {
		lua_getfield(L, 1, effects[k]);
		if (!lua_isnil(L, -1)) {
			which = k;
			count++;
		}
		lua_pop(L, 1);
	}
	if (count != 1) {
		luaL_unref(L, LUA_REGISTRYINDEX, match);
		return luaL_error(L, "pb.rule: give exactly one of specs={...}, fusable=false, "
		                     "backend=\"name\", cut=\"forbid\"|\"force\", core=K, stage=K");
	}
	lua_getfield(L, 1, effects[which]);
	const char *bad = NULL;
	if (which == 2 && lua_type(L, -1) != LUA_TSTRING)
		bad = "pb.rule: 'backend' must be a string";
	else if (which == 0 && !lua_istable(L, -1))
		bad = "pb.rule: 'specs' must be a table";
	else if (which == 3 &&
	         (lua_type(L, -1) != LUA_TSTRING ||
	          (strcmp(lua_tostring(L, -1), "forbid") && strcmp(lua_tostring(L, -1), "force"))))
		bad = "pb.rule: 'cut' must be \"forbid\" (never a boundary after a matching node) "
		      "or \"force\" (always one)";
	else if (which >= 4 && (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0 ||
	                        lua_tointeger(L, -1) > 1000000))
		bad = which == 4 ? "pb.rule: 'core' must be a core number (an integer >= 0)"
		                 : "pb.rule: 'stage' must be a stage number (an integer >= 0)";
	if (bad) {
		luaL_unref(L, LUA_REGISTRYINDEX, match);
		return luaL_error(L, "%s", bad);
	}
	/* Everything that can raise a Lua error (a longjmp) comes before the
	 * strdup()s below, so nothing leaks. */
	size_t nl = field_len(L, 1, "name"), kl = strlen(effects[which]) + 1;
	e.held = sizeof(entry) + kl + (nl ? nl : kl) + (which == 2 ? lua_rawlen(L, -1) + 1 : 0);
	if (pb_lua_reserve(sc->S, e.held) != 0) {
		luaL_unref(L, LUA_REGISTRYINDEX, match);
		reserve_or_raise(L, sc, e.held, "pb.rule");
	}
	char *name = field_str(L, 1, "name", 0, "pb.rule");
	if (which == 0) {
		lua_pushvalue(L, -1);
		e.specs_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	} else if (which == 1) {
		e.fusable = lua_toboolean(L, -1);
	} else if (which == 2) {
		e.backend = strdup(lua_tostring(L, -1));
	} else if (which == 3) {
		e.cut = strcmp(lua_tostring(L, -1), "force") == 0 ? 2 : 1;
	} else {
		e.pin = (int)lua_tointeger(L, -1);
	}
	e.kind = strdup(effects[which]);
	lua_pop(L, 1);
	e.name = name ? name : strdup(e.kind);
	entry *ne = realloc(sc->rules, (size_t)(sc->n_rules + 1) * sizeof *ne);
	if (!ne) {
		pb_lua_release(sc->S, e.held);
		free(e.name), free(e.kind), free(e.backend);
		return luaL_error(L, "out of memory");
	}
	sc->rules = ne;
	sc->rules[sc->n_rules++] = e;
	return 0;
}

static int l_on(lua_State *L)
{
	pb_script *sc = get_sc(L);
	not_in_callback(L, sc, "pb.on");
	const char *ev = luaL_checkstring(L, 1);
	if (strcmp(ev, "plan_change") != 0 && strcmp(ev, "solver_step") != 0)
		return luaL_error(L, "pb.on: unknown event '%s' (plan_change, solver_step)", ev);
	luaL_checktype(L, 2, LUA_TFUNCTION);
	size_t held = sizeof(event_cb) + strlen(ev) + 1;
	reserve_or_raise(L, sc, held, "pb.on");
	event_cb *ne = realloc(sc->ev, (size_t)(sc->n_ev + 1) * sizeof *ne);
	if (!ne) {
		pb_lua_release(sc->S, held);
		return luaL_error(L, "out of memory");
	}
	lua_pushvalue(L, 2);
	sc->ev = ne;
	sc->ev[sc->n_ev].held = held;
	sc->ev[sc->n_ev].event = strdup(ev);
	sc->ev[sc->n_ev].ref = luaL_ref(L, LUA_REGISTRYINDEX);
	sc->n_ev++;
	return 0;
}

static void free_entry(pb_script *sc, lua_State *L, entry *e)
{
	pb_lua_release(sc->S, e->held);
	luaL_unref(L, LUA_REGISTRYINDEX, e->fn_ref);
	if (e->specs_ref != LUA_NOREF)
		luaL_unref(L, LUA_REGISTRYINDEX, e->specs_ref);
	free(e->name);
	free(e->kind);
	free(e->backend);
}

/* pb.clear() forgets every heuristic, rule and event callback. */
static int l_clear(lua_State *L)
{
	pb_script *sc = get_sc(L);
	not_in_callback(L, sc, "pb.clear");
	for (int i = 0; i < sc->n_heur; i++)
		free_entry(sc, L, &sc->heur[i]);
	for (int i = 0; i < sc->n_rules; i++)
		free_entry(sc, L, &sc->rules[i]);
	for (int i = 0; i < sc->n_ev; i++) {
		pb_lua_release(sc->S, sc->ev[i].held);
		luaL_unref(L, LUA_REGISTRYINDEX, sc->ev[i].ref);
		free(sc->ev[i].event);
	}
	sc->n_heur = sc->n_rules = sc->n_ev = 0;
	return 0;
}

static const luaL_Reg pb_funcs[] = {
    {"graph", l_graph}, {"node", l_node},           {"nodes", l_nodes},
    {"topo", l_topo},   {"layers", l_layers},       {"edges", l_edges},
    {"find", l_find},   {"plan", l_plan},           {"layout", l_layout},
    {"cmd", l_cmd},     {"heuristic", l_heuristic}, {"rule", l_rule},
    {"on", l_on},       {"clear", l_clear},         {"partition_apply", l_partition_apply},
    {NULL, NULL}};

/* ------------------------------------------------------------ lifecycle */

static void on_session_event(void *ud, int what);
static void report_event_error(void *p, FILE *log);

static void script_free(void *p)
{
	pb_script *sc = p;
	if (!sc)
		return;
	pb_session_unlisten(sc->s, on_session_event, sc);
	lua_State *L = pb_lua_state(sc->S);
	l_clear(L);
	free(sc->heur);
	free(sc->rules);
	free(sc->ev);
	pb_lua_free(sc->S);
	free(sc);
}

static void on_session_event(void *ud, int what)
{
	pb_script *sc = ud;
	if (what & PB_EVENT_HW)
		sc->hw_changed = 1;
	if (sc->in_event || sc->n_ev == 0)
		return;
	const char *name = (what & PB_EVENT_SOLVER_STEP) ? "solver_step"
	                   : (what & PB_EVENT_PLAN)      ? "plan_change"
	                                                 : NULL;
	if (!name)
		return;
	lua_State *L = pb_lua_state(sc->S);
	sc->in_event = 1;
	for (int i = 0; i < sc->n_ev; i++) {
		if (strcmp(sc->ev[i].event, name) != 0)
			continue;
		lua_rawgeti(L, LUA_REGISTRYINDEX, sc->ev[i].ref);
		lua_pushstring(L, name);
		pb_error err = {0};
		if (callback_call(sc, 1, 0, "a callback of", name, &err) != PB_OK) {
			snprintf(sc->event_err, sizeof sc->event_err, "in a '%s' callback: %.900s",
			         name, err.msg);
			sc->has_event_err = 1;
		}
	}
	sc->in_event = 0;
}

pb_script *pb_script_of(pb_session *s)
{
	return s ? (pb_script *)s->script : NULL;
}

pb_script *pb_script_get(pb_session *s, pb_error *err)
{
	if (s->script)
		return s->script;
	pb_script *sc = calloc(1, sizeof *sc);
	if (!sc) {
		pb_err(err, PB_ENOMEM, "out of memory creating the Lua state");
		return NULL;
	}
	sc->s = s;
	sc->S = pb_lua_new(NULL);
	if (!sc->S) {
		free(sc);
		pb_err(err, PB_ENOMEM, "cannot create the Lua state");
		return NULL;
	}
	lua_State *L = pb_lua_state(sc->S);
	lua_pushlightuserdata(L, sc);
	lua_setfield(L, LUA_REGISTRYINDEX, SCRIPT_KEY);
	luaL_newmetatable(L, NODE_MT);
	lua_pushcfunction(L, node_index);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, node_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pushcfunction(L, node_eq);
	lua_setfield(L, -2, "__eq");
	lua_pushboolean(L, 0); /* getmetatable(node) is false: scripts cannot change it */
	lua_setfield(L, -2, "__metatable");
	lua_pop(L, 1);
	luaL_newlib(L, pb_funcs);
	for (int redo = 0; redo <= 1; redo++) {
		lua_pushboolean(L, redo);
		lua_pushcclosure(L, l_undo_redo, 1);
		lua_setfield(L, -2, redo ? "redo" : "undo");
	}
	pb_lua_set_global(sc->S, "pb");
	lua_pushcfunction(L, l_print);
	pb_lua_set_global(sc->S, "print");
	sc->console_env = pb_lua_new_env(sc->S);
	s->script = sc;
	s->script_free = script_free;
	s->script_report = report_event_error;
	pb_session_listen(s, on_session_event, sc);
	return sc;
}

void pb_script_set_limits(pb_script *sc, const pb_lua_limits *lim)
{
	pb_lua_set_limits(sc->S, lim);
}

/* ------------------------------------------------------------ running */

/* What a failing script must leave as it was (see the top of the file). */
typedef struct snapshot {
	unsigned gen;
	pb_plan *plan;
	pb_plan *undo[PB_UNDO_MAX], *redo[PB_UNDO_MAX];
	int n_undo, n_redo;
	pb_view view;
	char *hw_path; /* NULL: no layout was loaded */
	int n_heur, n_rules, n_ev;
} snapshot;

static snapshot *snapshot_take(pb_script *sc)
{
	pb_session *s = sc->s;
	snapshot *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	k->gen = s->graph_gen;
	k->plan = pb_plan_copy(s->plan);
	for (; k->n_undo < s->n_undo; k->n_undo++)
		k->undo[k->n_undo] = pb_plan_copy(s->undo[k->n_undo]);
	for (; k->n_redo < s->n_redo; k->n_redo++)
		k->redo[k->n_redo] = pb_plan_copy(s->redo[k->n_redo]);
	k->view = s->view;
	k->hw_path = s->hw && s->hw->path ? strdup(s->hw->path) : NULL;
	k->n_heur = sc->n_heur;
	k->n_rules = sc->n_rules;
	k->n_ev = sc->n_ev;
	return k;
}

static void snapshot_free(snapshot *k)
{
	if (!k)
		return;
	pb_plan_free(k->plan);
	for (int i = 0; i < k->n_undo; i++)
		pb_plan_free(k->undo[i]);
	for (int i = 0; i < k->n_redo; i++)
		pb_plan_free(k->redo[i]);
	free(k->hw_path);
	free(k);
}

static void rollback(pb_script *sc, snapshot *k, int hw_changed)
{
	pb_session *s = sc->s;
	lua_State *L = pb_lua_state(sc->S);
	/* registrations made by the failing script (unless it called pb.clear) */
	while (sc->n_heur > k->n_heur)
		free_entry(sc, L, &sc->heur[--sc->n_heur]);
	while (sc->n_rules > k->n_rules)
		free_entry(sc, L, &sc->rules[--sc->n_rules]);
	while (sc->n_ev > k->n_ev) {
		sc->n_ev--;
		pb_lua_release(sc->S, sc->ev[sc->n_ev].held);
		luaL_unref(L, LUA_REGISTRYINDEX, sc->ev[sc->n_ev].ref);
		free(sc->ev[sc->n_ev].event);
	}
	if (hw_changed) {
		pb_error e = {0};
		if (k->hw_path)
			pb_session_open_layout(s, k->hw_path, &e);
		else if (s->hw) {
			pb_hw_free(s->hw);
			s->hw = NULL;
			pb_session_notify(s, PB_EVENT_HW);
		}
	}
	s->view = k->view;
	if (s->graph_gen == k->gen) { /* else the old plans no longer fit the graph */
		for (int i = 0; i < s->n_undo; i++)
			pb_plan_free(s->undo[i]);
		for (int i = 0; i < s->n_redo; i++)
			pb_plan_free(s->redo[i]);
		memcpy(s->undo, k->undo, sizeof s->undo);
		memcpy(s->redo, k->redo, sizeof s->redo);
		s->n_undo = k->n_undo;
		s->n_redo = k->n_redo;
		k->n_undo = k->n_redo = 0;
		pb_session_replace_plan(s, k->plan);
		k->plan = NULL;
	}
	snapshot_free(k);
}

/* tostring(v) as a C function, to call through pb_lua_call. */
static int to_string(lua_State *L)
{
	luaL_tolstring(L, 1, NULL);
	return 1;
}

typedef int (*runner)(pb_script *sc, const char *src, const char *name, pb_error *err);

static int run_file(pb_script *sc, const char *src, const char *name, pb_error *err)
{
	(void)name;
	return pb_lua_run_file(sc->S, src, err);
}

/* Console lines share one environment, so `x = 1` then `x + 1` works. */
static int run_console(pb_script *sc, const char *src, const char *name, pb_error *err)
{
	return pb_lua_run_string_in(sc->S, src, name, sc->console_env, err);
}

static int run_guarded(pb_script *sc, pb_cmd_ctx *ctx, runner fn, const char *src, const char *name,
                       pb_error *err)
{
	snapshot *snap = snapshot_take(sc);
	if (!snap)
		return pb_err(err, PB_ENOMEM, "out of memory");
	int hw_changed = sc->hw_changed;
	sc->hw_changed = 0;
	pb_cmd_ctx *outer = sc->ctx;
	sc->ctx = ctx;
	/* where this script's commands may write (ctx->allow_write may point
	 * at write_dir itself: a script run by a script) */
	char outer_dir[sizeof sc->write_dir], dir[sizeof sc->write_dir];
	memcpy(outer_dir, sc->write_dir, sizeof dir);
	snprintf(dir, sizeof dir, "%s", ctx && ctx->allow_write ? ctx->allow_write : "");
	memcpy(sc->write_dir, dir, sizeof dir);
	int had_event_err = sc->has_event_err;
	sc->running++;
	int rc = fn(sc, src, name, err);
	sc->running--;
	sc->ctx = outer;
	memcpy(sc->write_dir, outer_dir, sizeof dir);
	int changed_hw = sc->hw_changed;
	sc->hw_changed = hw_changed || changed_hw;
	lua_State *L = pb_lua_state(sc->S);
	if (rc == PB_OK && sc->has_event_err && !had_event_err) {
		/* A callback failed while this script ran: the script fails with it. */
		lua_pop(L, 2); /* env, result */
		sc->has_event_err = 0;
		rc = pb_err(err, PB_EINPUT, "%s", sc->event_err);
	}
	if (rc != PB_OK) {
		if (!had_event_err) /* a callback failing during this run: part of its failure */
			sc->has_event_err = 0;
		rollback(sc, snap, changed_hw);
		if (ctx)
			ctx->redraw |= PB_REDRAW_ALL;
		return rc;
	}
	snapshot_free(snap);
	/* A value returned by the chunk is printed (handy for `:lua 1+1`); its
	 * __tostring is script code: it runs as a call of its own, with limits. */
	if (!lua_isnil(L, -1) && ctx && ctx->out) {
		lua_pushcfunction(L, to_string);
		lua_insert(L, -2);
		pb_error e = {0};
		if (pb_lua_call(sc->S, 1, 1, &e) == PB_OK) {
			size_t len;
			const char *v = lua_tolstring(L, -1, &len);
			fwrite(v, 1, len, ctx->out);
			fputc('\n', ctx->out);
		} else {
			lua_pushnil(L);
			if (ctx->log)
				fprintf(ctx->log,
				        "warning: the returned value cannot be printed: %s\n",
				        e.msg);
		}
	}
	lua_pop(L, 2); /* env, result */
	const char *ev = pb_script_take_event_error(sc);
	if (ev && ctx && ctx->log)
		fprintf(ctx->log, "warning: %s\n", ev);
	return PB_OK;
}

int pb_script_run_file(pb_script *sc, pb_cmd_ctx *ctx, const char *path, pb_error *err)
{
	return run_guarded(sc, ctx, run_file, path, path, err);
}

int pb_script_run_string(pb_script *sc, pb_cmd_ctx *ctx, const char *code, const char *name,
                         pb_error *err)
{
	/* `:lua 1+1` — try as an expression first, then as a statement. */
	size_t len = strlen(code) + 8;
	char *expr = malloc(len);
	if (!expr)
		return pb_err(err, PB_ENOMEM, "out of memory");
	snprintf(expr, len, "return %s", code);
	lua_State *L = pb_lua_state(sc->S);
	int top = lua_gettop(L);
	int is_expr = luaL_loadbufferx(L, expr, strlen(expr), "=expr", "t") == LUA_OK;
	lua_settop(L, top);
	int rc = run_guarded(sc, ctx, run_console, is_expr ? expr : code, name, err);
	free(expr);
	return rc;
}

/* The session's script_report hook (session.h): after a command run outside
 * any script, a callback error the command caused is a warning on log. */
static void report_event_error(void *p, FILE *log)
{
	pb_script *sc = p;
	if (!sc || sc->running || !sc->has_event_err)
		return;
	const char *e = pb_script_take_event_error(sc);
	if (log)
		fprintf(log, "warning: %s\n", e);
}

const char *pb_script_take_event_error(pb_script *sc)
{
	if (!sc || !sc->has_event_err)
		return NULL;
	sc->has_event_err = 0;
	return sc->event_err;
}

/* ------------------------------------------------------------ registry queries */

const char *pb_script_heuristic_name(pb_script *sc, const char *kind, int k)
{
	for (int i = 0; sc && i < sc->n_heur; i++)
		if (strcmp(sc->heur[i].kind, kind) == 0 && k-- == 0)
			return sc->heur[i].name;
	return NULL;
}

int pb_script_count(pb_script *sc, const char *kind)
{
	int n = 0;
	for (int i = 0; sc && i < sc->n_heur; i++)
		n += strcmp(sc->heur[i].kind, kind) == 0;
	return n;
}

static void push_int_array(lua_State *L, const int *a, int n)
{
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushinteger(L, a[i]);
		lua_rawseti(L, -2, i + 1);
	}
}

static void push_num_array(lua_State *L, const double *a, int n)
{
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushnumber(L, a ? a[i] : 0);
		lua_rawseti(L, -2, i + 1);
	}
}

static int call_entry(pb_script *sc, const entry *e, int nargs, int nres, pb_error *err)
{
	int rc = callback_call(sc, nargs, nres, e->kind, e->name, err);
	if (rc != PB_OK) {
		pb_err_prefix(err, "heuristic '%s' (%s)", e->name, e->kind);
		return -rc;
	}
	return PB_OK;
}

int pb_script_action_mask(pb_script *sc, const int *arranged_core, const double *arranged_macs,
                          int n_cores, int n_actions, unsigned char *mask, pb_error *err)
{
	if (!sc)
		return 0;
	lua_State *L = pb_lua_state(sc->S);
	int applied = 0;
	for (int i = 0; i < sc->n_heur; i++) {
		const entry *e = &sc->heur[i];
		if (strcmp(e->kind, "action_mask") != 0)
			continue;
		lua_rawgeti(L, LUA_REGISTRYINDEX, e->fn_ref);
		lua_createtable(L, 0, 4);
		push_int_array(L, arranged_core, n_cores);
		lua_setfield(L, -2, "arranged_core");
		push_num_array(L, arranged_macs, n_cores);
		lua_setfield(L, -2, "arranged_macs");
		lua_pushinteger(L, n_cores);
		lua_setfield(L, -2, "n_cores");
		lua_pushinteger(L, n_actions);
		lua_setfield(L, -2, "n_actions");
		int rc = call_entry(sc, e, 1, 1, err);
		if (rc)
			return rc;
		if (!lua_istable(L, -1)) {
			lua_pop(L, 1);
			pb_err(err, PB_EINPUT,
			       "heuristic '%s' (action_mask) must return a table: {[k]=false,...} "
			       "indexed by action number (0-based) or a list of allowed actions",
			       e->name);
			return -PB_EINPUT;
		}
		/* Two forms: a list of allowed action numbers, or a map k -> boolean. */
		lua_rawgeti(L, -1, 1);
		int list = lua_isinteger(L, -1);
		lua_pop(L, 1);
		if (list) {
			unsigned char *allowed = calloc((size_t)n_actions + 1, 1);
			if (!allowed) {
				lua_pop(L, 1);
				pb_err(err, PB_ENOMEM, "out of memory");
				return -PB_ENOMEM;
			}
			lua_Integer len = (lua_Integer)lua_rawlen(L, -1);
			for (lua_Integer k = 1; k <= len; k++) {
				lua_rawgeti(L, -1, k);
				int isint;
				lua_Integer a = lua_tointegerx(L, -1, &isint);
				lua_pop(L, 1);
				if (!isint) { /* NaN, 1.5, "x": not an action number */
					free(allowed);
					lua_pop(L, 1);
					pb_err(err, PB_EINPUT,
					       "heuristic '%s' (action_mask): entry %lld of the "
					       "list is not "
					       "an action number (an integer)",
					       e->name, (long long)k);
					return -PB_EINPUT;
				}
				if (a >= 0 && a < n_actions)
					allowed[a] = 1;
			}
			for (int a = 0; a < n_actions; a++)
				mask[a] &= allowed[a];
			free(allowed);
		} else {
			for (int a = 0; a < n_actions; a++) {
				lua_rawgeti(L, -1, a);
				if (lua_isboolean(L, -1) && !lua_toboolean(L, -1))
					mask[a] = 0;
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
		applied = 1;
	}
	return applied;
}

int pb_script_initial_partition(pb_script *sc, int n_cores, int n_layers, const double *layer_macs,
                                int *arranged_core, pb_error *err)
{
	if (!sc)
		return 0;
	lua_State *L = pb_lua_state(sc->S);
	for (int i = sc->n_heur - 1; i >= 0; i--) { /* the latest one wins */
		const entry *e = &sc->heur[i];
		if (strcmp(e->kind, "initial_partition") != 0)
			continue;
		lua_rawgeti(L, LUA_REGISTRYINDEX, e->fn_ref);
		lua_createtable(L, 0, 3);
		lua_pushinteger(L, n_cores);
		lua_setfield(L, -2, "n_cores");
		lua_pushinteger(L, n_layers);
		lua_setfield(L, -2, "n_layers");
		push_num_array(L, layer_macs, n_layers);
		lua_setfield(L, -2, "macs");
		int rc = call_entry(sc, e, 1, 1, err);
		if (rc)
			return rc;
		int ok = lua_istable(L, -1) && (int)lua_rawlen(L, -1) == n_cores;
		long sum = 0;
		for (int c = 0; ok && c < n_cores; c++) {
			lua_rawgeti(L, -1, c + 1);
			if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0)
				ok = 0;
			else {
				arranged_core[c] = (int)lua_tointeger(L, -1);
				sum += arranged_core[c];
			}
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
		if (!ok || sum != n_layers) {
			pb_err(err, PB_EINPUT,
			       "heuristic '%s' (initial_partition) must return a list of %d "
			       "non-negative integers (layers per core) summing to %d",
			       e->name, n_cores, n_layers);
			return -PB_EINPUT;
		}
		return 1;
	}
	return 0;
}

int pb_script_candidate_filter(pb_script *sc, int which, int node, const json_t *candidate,
                               int *keep, pb_error *err)
{
	*keep = 1;
	if (!sc || !sc->s->graph)
		return 0;
	lua_State *L = pb_lua_state(sc->S);
	int applied = 0;
	for (int i = 0, k = -1; i < sc->n_heur && *keep; i++) {
		const entry *e = &sc->heur[i];
		if (strcmp(e->kind, "candidate_filter") != 0 || (++k != which && which >= 0))
			continue;
		lua_rawgeti(L, LUA_REGISTRYINDEX, e->fn_ref);
		push_node(L, sc, node);
		pb_lua_push_json(L, candidate);
		int rc = call_entry(sc, e, 2, 1, err);
		if (rc)
			return rc;
		*keep = lua_toboolean(L, -1);
		lua_pop(L, 1);
		applied = 1;
	}
	return applied;
}

int pb_script_cost_terms(pb_script *sc, const pb_plan *plan, double *extra, pb_error *err)
{
	*extra = 0;
	if (!sc)
		return 0;
	lua_State *L = pb_lua_state(sc->S);
	int applied = 0;
	for (int i = 0; i < sc->n_heur; i++) {
		const entry *e = &sc->heur[i];
		if (strcmp(e->kind, "cost_term") != 0)
			continue;
		lua_rawgeti(L, LUA_REGISTRYINDEX, e->fn_ref);
		json_t *j = pb_plan_to_json(plan, NULL);
		pb_lua_push_json(L, j);
		json_decref(j);
		int rc = call_entry(sc, e, 1, 1, err);
		if (rc)
			return rc;
		if (!lua_isnumber(L, -1) || !isfinite(lua_tonumber(L, -1))) {
			lua_pop(L, 1);
			pb_err(err, PB_EINPUT,
			       "heuristic '%s' (cost_term) must return a finite number", e->name);
			return -PB_EINPUT;
		}
		double v = lua_tonumber(L, -1);
		lua_pop(L, 1);
		if (!isfinite(*extra + v)) { /* each finite, the sum not: refused where it arises */
			pb_err(err, PB_EINPUT,
			       "heuristic '%s' (cost_term) returned %g: the cost terms sum to "
			       "infinity "
			       "(%g before it); return smaller values",
			       e->name, v, *extra);
			return -PB_EINPUT;
		}
		*extra += v;
		applied = 1;
	}
	return applied;
}

/* Finds the last rule of `kind` whose match(op) is true for node; returns its
 * index, -1 if none, or a negative status - 2 on error. */
static int match_rule(pb_script *sc, const char *kind, int node, pb_error *err, int *status)
{
	*status = 0;
	if (sc)
		sc->matched = -1;
	if (!sc || !sc->s->graph || node < 0 || node >= sc->s->graph->n_nodes)
		return -1;
	lua_State *L = pb_lua_state(sc->S);
	for (int i = sc->n_rules - 1; i >= 0; i--) {
		const entry *e = &sc->rules[i];
		if (strcmp(e->kind, kind) != 0)
			continue;
		lua_rawgeti(L, LUA_REGISTRYINDEX, e->fn_ref);
		push_node(L, sc, node);
		int rc = callback_call(sc, 1, 1, "rule", e->name, err);
		if (rc != PB_OK) {
			pb_err_prefix(err, "rule '%s'", e->name);
			*status = -rc;
			return -1;
		}
		int hit = lua_toboolean(L, -1);
		lua_pop(L, 1);
		if (hit)
			return sc->matched = i;
	}
	return -1;
}

const char *pb_script_matched_rule(pb_script *sc)
{
	return sc && sc->matched >= 0 && sc->matched < sc->n_rules ? sc->rules[sc->matched].name
	                                                           : "";
}

int pb_script_rule_count(pb_script *sc, const char *kind)
{
	int n = 0;
	for (int i = 0; sc && i < sc->n_rules; i++)
		n += strcmp(sc->rules[i].kind, kind) == 0;
	return n;
}

int pb_script_rule_fusable(pb_script *sc, int node, int *fusable, pb_error *err)
{
	int st, i = match_rule(sc, "fusable", node, err, &st);
	if (st)
		return st;
	if (i < 0)
		return 0;
	*fusable = sc->rules[i].fusable;
	return 1;
}

int pb_script_rule_backend(pb_script *sc, int node, const char **backend, pb_error *err)
{
	int st, i = match_rule(sc, "backend", node, err, &st);
	if (st)
		return st;
	if (i < 0)
		return 0;
	*backend = sc->rules[i].backend;
	return 1;
}

int pb_script_rule_cut(pb_script *sc, int node, int *how, pb_error *err)
{
	int st, i = match_rule(sc, "cut", node, err, &st);
	if (st)
		return st;
	if (i < 0)
		return 0;
	*how = sc->rules[i].cut;
	return 1;
}

int pb_script_rule_pin(pb_script *sc, const char *kind, int node, int *pin, pb_error *err)
{
	int st, i = match_rule(sc, kind, node, err, &st);
	if (st)
		return st;
	if (i < 0)
		return 0;
	*pin = sc->rules[i].pin;
	return 1;
}

int pb_script_rule_specs(pb_script *sc, int node, json_t **specs, char *rule_name, size_t name_len,
                         pb_error *err)
{
	int st, i = match_rule(sc, "specs", node, err, &st);
	if (st)
		return st;
	if (i < 0)
		return 0;
	lua_State *L = pb_lua_state(sc->S);
	lua_rawgeti(L, LUA_REGISTRYINDEX, sc->rules[i].specs_ref);
	int rc = pb_lua_to_json(L, -1, sc->rules[i].name, specs, err);
	lua_pop(L, 1);
	if (rc)
		return -rc;
	if (rule_name && name_len)
		snprintf(rule_name, name_len, "%s", sc->rules[i].name);
	return 1;
}

json_t *pb_script_registry_json(pb_script *sc)
{
	json_t *j = json_object(), *h = json_array(), *r = json_array(), *ev = json_array();
	for (int i = 0; sc && i < sc->n_heur; i++)
		json_array_append_new(
		    h, json_pack("{s:s,s:s}", "name", sc->heur[i].name, "kind", sc->heur[i].kind));
	for (int i = 0; sc && i < sc->n_rules; i++)
		json_array_append_new(r, json_pack("{s:s,s:s}", "name", sc->rules[i].name, "kind",
		                                   sc->rules[i].kind));
	for (int i = 0; sc && i < sc->n_ev; i++)
		json_array_append_new(ev, json_string(sc->ev[i].event));
	json_object_set_new(j, "heuristics", h);
	json_object_set_new(j, "rules", r);
	json_object_set_new(j, "events", ev);
	return j;
}
