/* test_script.c — the pb Lua API: handles, stale handles, pb.cmd, rollback of a
 * failing script, heuristic and rule registries, events, sandbox safety. */
#include "pb_test.h"

#include <unistd.h>

#include "commands.h"
#include "script/script.h"
#include "session.h"

static char outbuf[1 << 16];

typedef struct fixture {
	pb_test_session t;
	pb_script *sc;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	pb_test_session_open(&f->t, outbuf, sizeof outbuf);
	/* diamond: n0 -> n1, n0 -> n2, n1 -> n3, n2 -> n3 */
	double macs[4] = {10, 20, 30, 40};
	pb_session_set_graph(f->t.s, pb_test_chain_graph(4, macs, "0>1 0>2 1>3 2>3"), "diamond");
	pb_error err = {0};
	f->sc = pb_script_get(f->t.s, &err);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	pb_test_session_close(&f->t);
	free(f);
	return 0;
}

static int run(fixture *f, const char *code, pb_error *err)
{
	pb_test_session_rewind(&f->t);
	int rc = pb_script_run_string(f->sc, &f->t.ctx, code, "t.lua", err);
	fflush(f->t.out);
	return rc;
}

static void test_graph_access(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	assert_int_equal(run(f,
	                     "local n = pb.node('n3'); return n.id .. ':' .. n.op .. ':' .. "
	                     "#n.preds .. ':' .. n.macs",
	                     &err),
	                 PB_OK);
	assert_string_equal(outbuf, "3:Op:2:40.0\n");
	assert_int_equal(
	    run(f, "return #pb.nodes() .. ' ' .. #pb.edges() .. ' ' .. #pb.find('n[12]')", &err),
	    PB_OK);
	assert_string_equal(outbuf, "4 4 2\n");
	assert_int_equal(run(f, "return pb.node('nope') == nil and pb.node(99) == nil", &err),
	                 PB_OK);
	assert_string_equal(outbuf, "true\n");
	assert_int_equal(run(f, "return pb.node(0).nosuchfield", &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "nosuchfield"));
}

static void test_stale_handle(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	assert_int_equal(run(f, "keep = pb.node(1); return keep.name", &err), PB_OK);
	/* Replace the graph: the handle kept in a global must now be refused. */
	pb_session_set_graph(f->t.s, pb_test_chain_graph(2, NULL, "0>1"), "other");
	assert_int_equal(run(f, "return keep.name", &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "stale node handle"));
	/* ... and the program keeps working. */
	assert_int_equal(run(f, "return pb.node(1).name", &err), PB_OK);
	assert_string_equal(outbuf, "n1\n");
}

static void test_cmd_and_rollback(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	pb_plan *p = pb_plan_new("partition", "first", 4);
	pb_session_set_plan(f->t.s, p);
	char path[] = "/tmp/pb_script_plan_XXXXXX";
	close(mkstemp(path));
	pb_plan *q = pb_plan_new("partition", "second", 4);
	assert_int_equal(pb_plan_save(q, NULL, path, &err), PB_OK);
	pb_plan_free(q);
	int undo_before = f->t.s->n_undo;
	/* A script that changes the plan through a command and then fails ... */
	char code[256];
	snprintf(code, sizeof code, "pb.cmd('plan --load %s'); error('boom')", path);
	assert_int_equal(run(f, code, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "boom"));
	assert_non_null(strstr(err.msg, "t.lua:1"));
	/* ... leaves the session as it was. */
	assert_string_equal(f->t.s->plan->method, "first");
	assert_int_equal(f->t.s->n_undo, undo_before);
	/* The same without the error keeps the change. */
	snprintf(code, sizeof code, "pb.cmd('plan --load %s')", path);
	assert_int_equal(run(f, code, &err), PB_OK);
	assert_string_equal(f->t.s->plan->method, "second");
	assert_int_equal(run(f, "return pb.plan().method", &err), PB_OK);
	assert_string_equal(outbuf, "second\n");
	/* A failing command raises an error that names it. */
	assert_int_equal(run(f, "pb.cmd('nosuchcommand')", &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "nosuchcommand"));
	unlink(path);
}

static void test_heuristics(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	assert_int_equal(
	    run(f,
	        "pb.heuristic{name='only0and2', kind='action_mask', fn=function(s)"
	        "  return {0, 2} end}"
	        "pb.heuristic{name='no2', kind='action_mask', fn=function(s)"
	        "  return {[2]=false} end}"
	        "pb.heuristic{name='init', kind='initial_partition', fn=function(i)"
	        "  local t = {} for c=1,i.n_cores do t[c]=0 end t[i.n_cores]=i.n_layers"
	        "  return t end}"
	        "pb.heuristic{name='c1', kind='cost_term', fn=function(p) return 1.5 end}"
	        "pb.heuristic{name='c2', kind='cost_term', fn=function(p) return #p.assignment "
	        "end}",
	        &err),
	    PB_OK);
	int core[3] = {1, 1, 2};
	unsigned char mask[8];
	memset(mask, 1, sizeof mask);
	assert_int_equal(pb_script_action_mask(f->sc, core, NULL, 3, 8, mask, &err), 1);
	for (int a = 0; a < 8; a++)
		assert_int_equal(mask[a], a == 0);
	int init[3];
	assert_int_equal(pb_script_initial_partition(f->sc, 3, 7, NULL, init, &err), 1);
	assert_int_equal(init[0], 0);
	assert_int_equal(init[2], 7);
	pb_plan *p = pb_plan_new("partition", "x", 4);
	double extra;
	assert_int_equal(pb_script_cost_terms(f->sc, p, &extra, &err), 1);
	assert_true(fabs(extra - 5.5) < 1e-12);
	pb_plan_free(p);
	/* A bad initial partition is refused with a message naming the heuristic. */
	assert_int_equal(run(f,
	                     "pb.heuristic{name='bad', kind='initial_partition', "
	                     "fn=function(i) return {1} end}",
	                     &err),
	                 PB_OK);
	assert_true(pb_script_initial_partition(f->sc, 3, 7, NULL, init, &err) < 0);
	assert_non_null(strstr(err.msg, "bad"));
	assert_int_equal(run(f, "pb.heuristic{kind='nonsense', fn=print}", &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "unknown kind"));
}

static void test_rules(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	assert_int_equal(
	    run(f,
	        "pb.rule{name='nofuse3', match=function(op) return op.name=='n3' end, "
	        "fusable=false}"
	        "pb.rule{name='fpga1', match=function(op) return op.id==1 end, backend='fpga'}"
	        "pb.rule{name='split', match=function(op) return op.macs > 25 end,"
	        "  specs={{input={'S0','R'}}}}",
	        &err),
	    PB_OK);
	int fus = 1;
	assert_int_equal(pb_script_rule_fusable(f->sc, 3, &fus, &err), 1);
	assert_int_equal(fus, 0);
	assert_int_equal(pb_script_rule_fusable(f->sc, 2, &fus, &err), 0);
	const char *be = NULL;
	assert_int_equal(pb_script_rule_backend(f->sc, 1, &be, &err), 1);
	assert_string_equal(be, "fpga");
	json_t *specs = NULL;
	char name[32];
	assert_int_equal(pb_script_rule_specs(f->sc, 2, &specs, name, sizeof name, &err), 1);
	assert_string_equal(name, "split");
	assert_true(json_is_array(specs));
	json_decref(specs);
	assert_int_equal(pb_script_rule_specs(f->sc, 1, &specs, name, sizeof name, &err), 0);
	assert_int_equal(run(f, "pb.rule{match=function() end}", &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "exactly one"));
}

static void test_events(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	assert_int_equal(
	    run(f, "changes = 0 pb.on('plan_change', function() changes = changes + 1 end)", &err),
	    PB_OK);
	pb_session_set_plan(f->t.s, pb_plan_new("partition", "a", 4));
	pb_session_set_plan(f->t.s, pb_plan_new("partition", "b", 4));
	assert_int_equal(run(f, "return changes", &err), PB_OK);
	assert_string_equal(outbuf, "2\n");
	/* An error inside a callback is reported, not fatal. */
	assert_int_equal(run(f, "pb.on('plan_change', function() error('cb fails') end)", &err),
	                 PB_OK);
	pb_session_set_plan(f->t.s, pb_plan_new("partition", "c", 4));
	const char *e = pb_script_take_event_error(f->sc);
	assert_non_null(e);
	assert_non_null(strstr(e, "cb fails"));
	assert_int_equal(run(f, "return changes", &err), PB_OK);
	assert_string_equal(outbuf, "3\n");
	/* A command run outside any script (typed in the workbench) reports the
	 * callback's error as a warning in its output. */
	assert_int_equal(pb_test_session_cmd(&f->t, "undo", &err), PB_OK);
	assert_non_null(strstr(outbuf, "warning: in a 'plan_change' callback"));
	assert_non_null(strstr(outbuf, "cb fails"));
	assert_null(pb_script_take_event_error(f->sc));
}

static void test_safety(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	pb_lua_limits lim = {5000000, 32u << 20};
	pb_script_set_limits(f->sc, &lim);
	const char *bad[] = {"while true do end",
	                     "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 100) .. i end",
	                     "os.execute('echo hacked')",
	                     "io.open('/etc/passwd')",
	                     "require('os')",
	                     "load(string.dump(function() return 1 end))()",
	                     "dofile('/etc/passwd')",
	                     "while true do pcall(function() while true do end end) end",
	                     "setmetatable({}, {__gc = function() end})",
	                     NULL};
	for (int i = 0; bad[i]; i++) {
		assert_int_not_equal(run(f, bad[i], &err), PB_OK);
		assert_true(strlen(err.msg) > 0);
	}
	/* Still usable afterwards, and text load() works. */
	assert_int_equal(run(f, "return load('return 2+3')()", &err), PB_OK);
	assert_string_equal(outbuf, "5\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_graph_access, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stale_handle, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cmd_and_rollback, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_heuristics, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rules, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_events, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_safety, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
