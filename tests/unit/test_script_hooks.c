/* test_script_hooks.c — Lua heuristics and rules reach the solvers through
 * the real commands (core/script/hooks.c): an initial partition seeds the RL
 * agent, a mask that forbids every action keeps it there, a malformed specs
 * rule and a failing rule abort the command with the script's message and
 * leave the plan unchanged. */
#include "pb_test.h"

#include "commands.h"
#include "script/script.h"
#include "session.h"

static char outbuf[1 << 18];

typedef pb_test_session fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	pb_test_session_open(f, outbuf, sizeof outbuf);
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
	return pb_test_session_lua(f, code, "hooks.lua", err);
}

static void test_initial_and_frozen_mask(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	assert_int_equal(pb_test_session_cmd(f, "open models/squeezenet1_1.onnx", &err), PB_OK);
	assert_int_equal(pb_test_session_cmd(f, "layout layouts/manycore-16.lua", &err), PB_OK);
	/* All layers but 15 on core 0, one on each other core; no action allowed. */
	assert_int_equal(
	    lua(f,
	        "pb.heuristic{name='start', kind='initial_partition', fn=function(i)"
	        "  local t = {i.n_layers - (i.n_cores - 1)}"
	        "  for c = 2, i.n_cores do t[c] = 1 end return t end}"
	        "pb.heuristic{name='freeze', kind='action_mask', fn=function(s) return {-1} end}"
	        "pb.cmd('partition --method rl --episodes 4 --seed 3')"
	        "local ac = pb.plan().detail.arranged_core "
	        "return ac[1] .. ' ' .. ac[2] .. ' ' .. ac[16] .. ' ' .. #ac",
	        &err),
	    PB_OK);
	char got[64];
	snprintf(got, sizeof got, "%s", outbuf);
	/* the layers: squeezenet's nodes less its load-time constants (docs/partition.md) */
	assert_int_equal(lua(f, "return #pb.layers()", &err), PB_OK);
	int m = atoi(outbuf);
	assert_true(m > 15 && m < f->s->graph->n_nodes);
	char want[64];
	snprintf(want, sizeof want, "%d 1 1 16\n", m - 15);
	assert_string_equal(got, want);
}

static void test_failing_mask_keeps_plan(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	assert_int_equal(pb_test_session_cmd(f, "open models/squeezenet1_1.onnx", &err), PB_OK);
	assert_int_equal(pb_test_session_cmd(
	                     f, "partition --layout layouts/manycore-16.lua --method greedy", &err),
	                 PB_OK);
	pb_plan *before = pb_plan_copy(f->s->plan);
	int undo = f->s->n_undo;
	assert_int_equal(lua(f,
	                     "pb.heuristic{name='broken', kind='action_mask', fn=function(s)\n"
	                     "  error('no mask today')\nend}",
	                     &err),
	                 PB_OK);
	assert_int_not_equal(pb_test_session_cmd(f, "partition --method rl --episodes 3", &err),
	                     PB_OK);
	assert_non_null(strstr(err.msg, "no mask today"));
	assert_non_null(strstr(err.msg, "hooks.lua:2"));
	assert_non_null(strstr(err.msg, "broken"));
	assert_string_equal(f->s->plan->method, before->method);
	assert_memory_equal(f->s->plan->group, before->group,
	                    (size_t)before->n_nodes * sizeof *before->group);
	assert_int_equal(f->s->n_undo, undo);
	pb_plan_free(before);
	/* The session keeps working once the heuristic is gone. */
	assert_int_equal(lua(f, "pb.clear()", &err), PB_OK);
	assert_int_equal(pb_test_session_cmd(f, "partition --method rl --episodes 2", &err), PB_OK);
	assert_string_equal(f->s->plan->method, "rl");
}

static void test_bad_rules(void **state)
{
	fixture *f = *state;
	pb_error err = {0};
	assert_int_equal(pb_test_session_cmd(f, "open models/squeezenet1_1.onnx", &err), PB_OK);
	assert_int_equal(lua(f,
	                     "pb.rule{name='typo', match=function(op) return op.op == 'Conv' end,"
	                     "  specs={{lable='n'}}}",
	                     &err),
	                 PB_OK);
	assert_int_not_equal(
	    pb_test_session_cmd(
	        f, "shard --layout layouts/cluster-1x8.lua --scheme 8 --opt-level 1", &err),
	    PB_OK);
	assert_non_null(strstr(err.msg, "typo"));
	assert_non_null(strstr(err.msg, "lable"));
	assert_null(f->s->plan);
	assert_int_equal(lua(f,
	                     "pb.clear() pb.rule{name='boom', fusable=false, match=function(op)"
	                     " if op.op == 'Relu' then error('bad match') end end}",
	                     &err),
	                 PB_OK);
	assert_int_not_equal(pb_test_session_cmd(f, "fuse", &err), PB_OK);
	assert_non_null(strstr(err.msg, "bad match"));
	assert_non_null(strstr(err.msg, "boom"));
	assert_null(f->s->plan);
	/* A filter that rejects everything leaves full menus: shard still plans. */
	assert_int_equal(lua(f,
	                     "pb.clear() pb.heuristic{name='none', kind='candidate_filter',"
	                     " fn=function(n, c) return false end}",
	                     &err),
	                 PB_OK);
	assert_int_equal(
	    pb_test_session_cmd(f, "shard --layout layouts/cluster-1x8.lua --scheme 8", &err),
	    PB_OK);
	assert_non_null(f->s->plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_initial_and_frozen_mask, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failing_mask_keeps_plan, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_rules, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
