/*
 * test_script_safety.c — hostile scripts against the session (issue 23).
 *
 * Re-entry: every kind of callback (candidate filter, specs / fusable /
 * backend rule, action mask, initial partition, cost term, plan_change and
 * solver_step handlers) tries every command that would free or replace what
 * the C loop around it holds (open, layout, plan --load, a plan change, a
 * solver start, source/lua, pb.clear, pb.undo, registrations): each must fail
 * with "not allowed inside", the command around it must fail with that
 * message, and the session must keep its graph, layout and plan. Run under
 * ASan (make asan) this also proves no freed memory is touched.
 * Sandbox: metatables of handles are hidden, nested `run` cannot raise the
 * memory cap, pb.cmd writes only under --allow-write and reads only expected
 * file kinds, time limits stop C-level loops (string.rep, table.move, pattern
 * backtracking, pb.find), and the interruptible pattern functions return
 * what Lua's own return (compared against a plain Lua state).
 */
#include "pb_test.h"

#include <lauxlib.h>
#include <lualib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "script/script.h"
#include "session.h"

static char outbuf[1 << 18];

typedef pb_test_session fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	pb_test_session_open(f, outbuf, sizeof outbuf);
	pb_error err = {0};
	assert_int_equal(pb_test_session_cmd(f, "open models/squeezenet1_1.onnx", &err), PB_OK);
	assert_int_equal(pb_test_session_cmd(f, "layout layouts/manycore-16.lua", &err), PB_OK);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	pb_test_session_close(*state);
	free(*state);
	return 0;
}

static int lua(fixture *f, const char *code, pb_error *err)
{
	return pb_test_session_lua(f, code, "safety.lua", err);
}

/* A callback kind: how to register it (%s is the callback's body) and the
 * command that makes a C loop call it. */
typedef struct cb_kind {
	const char *name;
	const char *reg;
	const char *trigger;
} cb_kind;

static const cb_kind kinds[] = {
    {"candidate_filter",
     "pb.heuristic{name='h', kind='candidate_filter', fn=function(n, c) %s return true end}",
     "shard --layout layouts/cluster-1x8.lua --scheme 8"},
    {"specs rule", "pb.rule{name='h', specs={'rep'}, match=function(op) %s return true end}",
     "shard --layout layouts/cluster-1x8.lua --scheme 8 --opt-level 1"},
    {"fusable rule", "pb.rule{name='h', fusable=false, match=function(op) %s return true end}",
     "fuse"},
    {"backend rule", "pb.rule{name='h', backend='cpu', match=function(op) %s return false end}",
     "map --layout layouts/hetero.lua"},
    {"action_mask",
     "pb.heuristic{name='h', kind='action_mask', fn=function(s) %s return {[0]=false} end}",
     "partition --method rl --episodes 2"},
    {"initial_partition",
     "pb.heuristic{name='h', kind='initial_partition', fn=function(i) %s "
     "local t = {} for c = 1, i.n_cores do t[c] = 0 end t[i.n_cores] = i.n_layers "
     "return t end}",
     "partition --method local"},
    {"cost_term", "pb.heuristic{name='h', kind='cost_term', fn=function(p) %s return 1 end}",
     "partition --method greedy"},
    {"plan_change", "pb.on('plan_change', function() %s end)", "partition --method greedy"},
    {"solver_step", "pb.on('solver_step', function() %s end)",
     "partition --method local --start'); pb.cmd('step"},
};

/* What a callback tries; each must fail inside any callback. */
static const char *const reentries[] = {
    "pb.cmd('open models/resnet18.onnx')",
    "pb.cmd('info models/resnet18.onnx')",
    "pb.cmd('layout layouts/manycore-64.lua')",
    "pb.cmd('export --layout layouts/manycore-64.lua -o /tmp/x.svg')",
    "pb.cmd('plan --load /tmp/pb_safety_plan.json')",
    "pb.cmd('load /tmp/pb_safety_session.json')",
    "pb.cmd('partition --method equal')",
    "pb.cmd('partition --method local --start')",
    "pb.cmd('evaluate')",
    "pb.cmd('undo')",
    "pb.cmd('repeat 2 undo')",
    "pb.cmd('lua pb.clear()')",
    "pb.cmd('source scripts/greedy_initial.lua')",
    "pb.cmd('fuse --apply')",
    "pb.clear()",
    "pb.undo()",
    "pb.redo()",
    "pb.heuristic{kind='cost_term', fn=function() return 0 end}",
    "pb.rule{match=function() return true end, fusable=true}",
    "pb.on('plan_change', function() end)",
};

static void test_reentry_is_refused(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	/* files the re-entering commands would load */
	assert_int_equal(pb_test_session_cmd(f, "partition --method equal", &err), PB_OK);
	assert_int_equal(pb_test_session_cmd(f, "plan -o /tmp/pb_safety_plan.json", &err), PB_OK);
	assert_int_equal(pb_test_session_cmd(f, "save /tmp/pb_safety_session.json", &err), PB_OK);
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		for (size_t r = 0; r < sizeof reentries / sizeof *reentries; r++) {
			char body[256], reg[1024], code[2048];
			/* the callback records the error it got and re-raises it */
			snprintf(body, sizeof body,
			         "local ok, e = pcall(function() %s end) "
			         "if ok then error('re-entry allowed') end "
			         "if not tostring(e):find('not allowed inside') then error(e) end "
			         "seen = (seen or 0) + 1 error(e)",
			         reentries[r]);
			snprintf(reg, sizeof reg, kinds[k].reg, body);
			snprintf(code, sizeof code, "%s\npb.cmd('%s')", reg, kinds[k].trigger);
			const pb_graph *g = f->s->graph;
			unsigned gen = f->s->graph_gen;
			int rc = lua(f, code, &err);
			if (rc == PB_OK || !strstr(err.msg, "not allowed inside")) {
				fprintf(stderr, "%s x %s: rc %d: %s\n%s\n", kinds[k].name,
				        reentries[r], rc, err.msg, outbuf);
				fail();
			}
			if (f->s->graph != g)
				fprintf(stderr, "%s x %s: graph replaced (%s)\n", kinds[k].name,
				        reentries[r], err.msg);
			assert_ptr_equal(f->s->graph, g);
			/* a trigger's --layout is rolled back with the failing script */
			assert_non_null(strstr(f->s->hw->path, "manycore-16"));
			assert_int_equal(f->s->graph_gen, gen);
			assert_int_equal(f->s->locked, 0);
			assert_non_null(f->s->plan);
			assert_string_equal(f->s->plan->method, "equal");
			/* the failing script's registrations are rolled back */
			assert_int_equal(pb_script_count(pb_script_of(f->s), "cost_term"), 0);
			assert_int_equal(pb_script_rule_count(pb_script_of(f->s), "fusable"), 0);
			pb_session_set_solver(f->s, NULL, NULL);
		}
	}
	/* reading inside a callback is fine */
	assert_int_equal(lua(f,
	                     "pb.heuristic{name='r', kind='cost_term', fn=function(p)"
	                     "  assert(#pb.cmd('info --top 2') > 0) assert(pb.cmd('scripts'))"
	                     "  assert(pb.cmd('layout'):find('manycore')) return #pb.nodes() end}"
	                     "pb.cmd('partition --method greedy')"
	                     "assert(pb.plan().metrics.script_cost == #pb.nodes()) pb.clear()",
	                     &err),
	                 PB_OK);
	unlink("/tmp/pb_safety_plan.json");
	unlink("/tmp/pb_safety_session.json");
}

static void test_callback_results(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	const char *bad[] = {"0/0", "1/0", "-1/0", "'x'", "nil"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char code[256];
		snprintf(code, sizeof code,
		         "pb.heuristic{name='nan', kind='cost_term', fn=function(p) return %s end}"
		         "pb.cmd('partition --method greedy')",
		         bad[i]);
		assert_int_not_equal(lua(f, code, &err), PB_OK);
		assert_non_null(strstr(err.msg, "must return a finite number"));
	}
}

static void test_mask_results(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	const char *bad[] = {"{0, 0/0}", "{1, 1.5}", "{2, 'x'}", "{3, {}}"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char code[256];
		snprintf(code, sizeof code,
		         "pb.heuristic{name='m', kind='action_mask', fn=function(s) return %s end}"
		         "pb.cmd('partition --method rl --episodes 2')",
		         bad[i]);
		assert_int_not_equal(lua(f, code, &err), PB_OK);
		assert_non_null(strstr(err.msg, "is not an action number"));
	}
}

static void test_metatables(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	assert_int_equal(lua(f,
	                     "local n = pb.node(0) assert(getmetatable(n) == false)"
	                     "assert(not pcall(setmetatable, n, {}))"
	                     "assert(getmetatable('') == false and getmetatable(_ENV) == false)"
	                     "assert(not pcall(setmetatable, {}, {__gc = true}))"
	                     "return n.name",
	                     &err),
	                 PB_OK);
	assert_string_equal(outbuf, "Identity_0\n");
}

static void test_limits_not_raised(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	FILE *fp = fopen("/tmp/pb_safety_big.lua", "w");
	fputs("local a = string.rep('x', 1 << 27) local b = a .. 'y' return #b\n", fp);
	fclose(fp);
	pb_lua_limits lim = {0, 64u << 20, 0};
	pb_script_set_limits(pb_script_get(f->s, &err), &lim);
	assert_int_not_equal(lua(f,
	                         "pb.cmd('run /tmp/pb_safety_big.lua --max-memory 8192 "
	                         "--max-instructions 9000000000')",
	                         &err),
	                     PB_OK);
	if (!strstr(err.msg, "memory cap"))
		fprintf(stderr, "%s\n", err.msg);
	assert_non_null(strstr(err.msg, "memory cap"));
	/* the same limits from outside any script do apply */
	assert_int_equal(
	    pb_test_session_cmd(f, "run /tmp/pb_safety_big.lua --max-memory 512", &err), PB_OK);
	lim.memory = 256u << 20;
	pb_script_set_limits(pb_script_get(f->s, &err), &lim);
	unlink("/tmp/pb_safety_big.lua");
}

static void test_capabilities(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	unlink("/tmp/pb_safety_w/p.json");
	unlink("/tmp/pb_safety_w/w.lua");
	rmdir("/tmp/pb_safety_w");
	assert_int_equal(mkdir("/tmp/pb_safety_w", 0700), 0);
	FILE *fp = fopen("/tmp/pb_safety_w/w.lua", "w");
	fputs("pb.cmd('partition --method greedy -o /tmp/pb_safety_w/p.json')\n"
	      "assert(not pcall(pb.cmd, 'plan -o /tmp/pb_safety_out.json'))\n"
	      "assert(not pcall(pb.cmd, 'save /tmp/pb_safety_w/../pb_safety_s.json'))\n"
	      "assert(not pcall(pb.cmd, 'run /tmp/pb_safety_w/w.lua --allow-write /tmp'))\n",
	      fp);
	fclose(fp);
	/* no --allow-write: nothing may be written */
	assert_int_not_equal(pb_test_session_cmd(f, "run /tmp/pb_safety_w/w.lua", &err), PB_OK);
	assert_non_null(strstr(err.msg, "may not write files"));
	assert_int_equal(access("/tmp/pb_safety_w/p.json", F_OK), -1);
	assert_int_equal(pb_test_session_cmd(
	                     f, "run /tmp/pb_safety_w/w.lua --allow-write /tmp/pb_safety_w", &err),
	                 PB_OK);
	assert_int_equal(access("/tmp/pb_safety_w/p.json", F_OK), 0);
	assert_int_equal(access("/tmp/pb_safety_out.json", F_OK), -1);
	/* reads: only the kinds a command expects, and no file's text comes back */
	const char *reads[] = {"source /etc/passwd", "run /etc/passwd",         "open /etc/passwd",
	                       "layout /etc/passwd", "plan --load /etc/passwd", "load /etc/passwd"};
	for (size_t i = 0; i < sizeof reads / sizeof *reads; i++) {
		char code[256];
		snprintf(code, sizeof code, "pb.cmd('%s')", reads[i]);
		assert_int_not_equal(lua(f, code, &err), PB_OK);
		assert_non_null(strstr(err.msg, "scripts read only"));
		assert_null(strstr(err.msg, "root"));
	}
	/* commands the table does not know are refused */
	assert_int_not_equal(lua(f, "pb.cmd('quit')", &err), PB_OK);
	assert_non_null(strstr(err.msg, "not available to scripts"));
	unlink("/tmp/pb_safety_w/p.json");
	unlink("/tmp/pb_safety_w/w.lua");
	rmdir("/tmp/pb_safety_w");
}

static void test_time_limits(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	pb_lua_limits lim = {1L << 40, 0, 0.3};
	pb_script_set_limits(pb_script_get(f->s, &err), &lim);
	const char *slow[] = {
	    "table.move({}, 1, math.maxinteger - 1, 2)",
	    "return string.rep('a', 1e4):find('.-.-x')",
	    "return (string.rep('a', 1e4)):match('.-.-.-x')",
	    "for x in string.rep('a', 1e4):gmatch('.-.-x') do end",
	    "return (string.rep('a', 1e4):gsub('.-.-x', 'y'))",
	    "return (string.rep('a', 1e4):gsub('.-.-x', function(x) return x end))",
	    "return #pb.find('.-.-.-.-.-.-.-.-.-.-x')",
	    "local t = setmetatable({}, {__len = function() return math.maxinteger - 1 end}) "
	    "table.insert(t, 1, 0)",
	    "while true do pcall(string.find, string.rep('a', 1e4), '.-.-x') end",
	    "while true do end",
	    /* issue 39: Lua's sort runs no instruction when the table's
	     * metamethods are C functions */
	    "table.sort(setmetatable({}, {__len = function() return 1 << 30 end, "
	    "__index = rawlen, __newindex = rawequal}))",
	    /* issue 39: the commands a script runs count */
	    "while true do pb.cmd('partition --method greedy') end",
	};
	for (size_t i = 0; i < sizeof slow / sizeof *slow; i++) {
		if (lua(f, slow[i], &err) == PB_OK ||
		    !strstr(err.msg, "time limit of 0.3 s exceeded") ||
		    !strstr(err.msg, "safety.lua:1")) {
			fprintf(stderr, "%s: %s\n", slow[i], err.msg);
			fail();
		}
	}
	/* a command the script runs is cancelled when the script's time is
	 * spent (it was at 60 times the limit, not counted). The limit is CPU
	 * time, so a loaded machine does not change which check stops the
	 * script: it reaches pb.cmd within 0.3 s of CPU also sanitized, and the
	 * command (1e8 episodes) cannot end before it. A command with little
	 * output: 'repeat N help' went past the output cap on a faster machine,
	 * which is another error. */
	assert_int_not_equal(lua(f, "pb.cmd('partition --method rl --episodes 100000000')", &err),
	                     PB_OK);
	if (!strstr(err.msg, "pb.cmd('partition --method rl --episodes 100000000'): time limit of "
	                     "0.3 s exceeded: cancelled")) {
		fprintf(stderr, "pb.cmd cancel: %s\n", err.msg);
		fail();
	}
	lim.seconds = 5;
	lim.instructions = 50000000;
	pb_script_set_limits(pb_script_get(f->s, &err), &lim);
	/* the session and the sandbox still work after interrupted matches */
	assert_int_equal(
	    lua(f,
	        "assert(#pb.find('^Conv$') == #pb.find{op='Conv'} and #pb.find('Conv') > 0)"
	        "return ('ab'):rep(3)",
	        &err),
	    PB_OK);
	assert_string_equal(outbuf, "ababab\n");
}

/* Runs code (which returns a string) in a plain Lua state. */
static char *plain_lua(const char *code)
{
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	char *res = NULL;
	if (luaL_dostring(L, code) == LUA_OK)
		res = strdup(lua_tostring(L, -1));
	else
		res = strdup(lua_tostring(L, -1));
	lua_close(L);
	return res;
}

static void test_patterns_as_lua(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	/* long subjects and several quantifiers take the interruptible path */
	const char *cases[] = {
	    "local s = string.rep('key=val, x=1; ', 300) local r = {} "
	    "for k, v in s:gmatch('(%w+)=(%w+)') do r[#r+1] = k .. v end "
	    "for a in s:gmatch('.-;') do r[#r+1] = #a end "
	    "for a in s:gmatch('%w*') do r[#r+1] = a end "
	    "for a in ('^a^b' .. s):gmatch('^%a') do r[#r+1] = a end "
	    "return table.concat(r, '|')",
	    "local s = string.rep('ab  cd', 400) local r = {} "
	    "r[1] = select(2, s:gsub('%s*', '-')) r[2] = (s:gsub('(%a)(%a)', '%2%1')) "
	    "r[3] = (s:gsub('%a+', function(w) if w == 'ab' then return nil end return #w end)) "
	    "r[4] = (s:gsub('(%a+)', {ab = 'X'})) r[5] = (s:gsub('^%a-b', 'S')) "
	    "r[6] = (s:gsub('', '.', 5)) r[7] = select(2, s:gsub('x*', '')) "
	    "r[8] = (s:gsub('()b()', '%1:%2', 3)) r[9] = (s:gsub('%f[%a]%a+', '<%0>', 4)) "
	    "r[10] = (s:gsub('%s*ab', 2.5, 3)) r[11] = (s:gsub('%s*cd', 7)) "
	    "return table.concat(r, '|')",
	    "local s = string.rep('a(b)c ', 300) .. 'zz' local r = {} "
	    "r[1] = table.concat({s:find('(%b())(.-)(z+)$')}, ',') "
	    "r[2] = table.concat({s:find('c.-c', -20)}, ',') "
	    "r[3] = table.concat({s:match('^(a)%((b)%)(c)%s+.-(zz)')}, ',') "
	    "r[4] = tostring(s:match('q.-q')) r[5] = tostring(s:find('.-.-q', 1000)) "
	    "r[6] = table.concat({s:find('()a.-()c', 5)}, ',') "
	    "r[7] = tostring(s:match('(a).-%1', 7)) "
	    "return table.concat(r, '|')",
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *want = plain_lua(cases[i]);
		assert_int_equal(lua(f, cases[i], &err), PB_OK);
		size_t n = strlen(outbuf);
		assert_true(n > 0);
		outbuf[n - 1] = '\0'; /* the printed newline */
		if (strcmp(outbuf, want) != 0) {
			fprintf(stderr, "case %zu:\n got %.300s\nwant %.300s\n", i, outbuf, want);
			fail();
		}
		free(want);
	}
	/* malformed patterns fail the same way through both paths */
	assert_int_not_equal(lua(f, "return string.rep('a', 5000):find('.-.-[x')", &err), PB_OK);
	assert_non_null(strstr(err.msg, "missing ']'"));
	/* an empty string repeated any number of times is made at once */
	assert_int_equal(
	    lua(f, "return #string.rep('', math.maxinteger) .. #('x'):rep(3, ', ')", &err), PB_OK);
	assert_string_equal(outbuf, "07\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_reentry_is_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_callback_results, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mask_results, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_metatables, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_limits_not_raised, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_capabilities, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_time_limits, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_patterns_as_lua, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
