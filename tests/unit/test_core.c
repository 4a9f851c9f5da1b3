/* test_core.c — graph builder, topological order, args, plan JSON, session
 * undo/redo, Lua sandbox and layout field errors. */
#include "pb_test.h"
#include "load.h"

#include <math.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "hw.h"
#include "plan.h"
#include "util/lua_sandbox.h"
#include "session.h"

static void test_topo_keeps_file_order(void **state)
{
	/* 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3: file order is valid and must be kept. */
	pb_graph *g = pb_test_chain_graph(4, NULL, "0>1 0>2 1>3 2>3");
	assert_non_null(g);
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof name, "n%d", i);
		assert_string_equal(g->nodes[i].name, name);
	}
	assert_int_equal(g->nodes[0].n_succs, 2);
	assert_int_equal(g->nodes[3].n_preds, 2);
	assert_int_equal(pb_graph_find_node(g, "n2"), 2);
	pb_graph_free(g);
}

static void test_topo_reorders_unsorted_file(void **state)
{
	/* Node 0 consumes node 2's output: 2 must come first. */
	pb_graph *g = pb_test_chain_graph(3, NULL, "2>0 1>2");
	assert_non_null(g);
	assert_string_equal(g->nodes[0].name, "n1");
	assert_string_equal(g->nodes[1].name, "n2");
	assert_string_equal(g->nodes[2].name, "n0");
	for (int i = 0; i < g->n_nodes; i++)
		for (int k = 0; k < g->nodes[i].n_preds; k++)
			assert_true(g->nodes[i].preds[k] < i);
	pb_graph_free(g);
}

static void test_cycle_is_named(void **state)
{
	pb_builder *b = pb_builder_new("cyc.test", "test");
	const char *a_in[] = {"tb"}, *a_out[] = {"ta"}, *b_in[] = {"ta"}, *b_out[] = {"tb"};
	pb_builder_node(b, "A", "Relu", "", a_in, 1, a_out, 1);
	pb_builder_node(b, "B", "Relu", "", b_in, 1, b_out, 1);
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_build(b, NULL, &g, &err), PB_EINPUT);
	assert_null(g);
	assert_non_null(strstr(err.msg, "cycle"));
	assert_true(strstr(err.msg, "'A'") || strstr(err.msg, "'B'"));
	assert_non_null(strstr(err.msg, "cyc.test"));
}

/* Random graphs with cycles between and around acyclic parts: the node the
 * error names must lie on a cycle (reach itself). igraph's approximate
 * feedback arc set also holds edges whose head is on no cycle. */
static void test_cycle_node_is_on_a_cycle(void **state)
{
	unsigned long long seed = 12345;
	int checked = 0;
	for (int trial = 0; trial < 1500; trial++) {
		enum { MAXN = 25 };
		int n = 3 + (int)((seed = seed * 6364136223846793005ULL + 1442695040888963407ULL) >>
		                  33) %
		                (MAXN - 2);
		unsigned char adj[MAXN][MAXN] = {{0}};
		int m = n + (int)((seed = seed * 6364136223846793005ULL + 1) >> 33) % (2 * n + 1);
		char text[8192];
		int off = snprintf(text, sizeof text, "digraph g {");
		for (int i = 0; i < n; i++)
			off += snprintf(text + off, sizeof text - off, " n%d;", i);
		for (int e = 0; e < m; e++) {
			int a = (int)((seed = seed * 6364136223846793005ULL + 1) >> 33) % n;
			int c = (int)((seed = seed * 6364136223846793005ULL + 1) >> 33) % n;
			if (a == c || adj[a][c])
				continue;
			adj[a][c] = 1;
			off += snprintf(text + off, sizeof text - off, " n%d -> n%d;", a, c);
		}
		snprintf(text + off, sizeof text - off, " }");
		/* reach[i][j]: a path i -> j (Floyd-Warshall closure) */
		unsigned char reach[MAXN][MAXN];
		memcpy(reach, adj, sizeof reach);
		for (int k = 0; k < n; k++)
			for (int i = 0; i < n; i++)
				for (int j = 0; j < n; j++)
					reach[i][j] |= reach[i][k] & reach[k][j];
		int cyclic = 0;
		for (int i = 0; i < n; i++)
			cyclic |= reach[i][i];
		pb_graph *g = NULL;
		pb_error err = {0};
		int rc = pb_dot_load_buffer(text, strlen(text), "r.dot", NULL, &g, &err);
		if (!cyclic) {
			assert_int_equal(rc, PB_OK);
			pb_graph_free(g);
			continue;
		}
		assert_int_equal(rc, PB_EINPUT);
		const char *p = strstr(err.msg, "cycle through node 'n");
		assert_non_null(p);
		int named = atoi(p + strlen("cycle through node 'n"));
		if (!reach[named][named])
			fail_msg("trial %d: %s names n%d, which is on no cycle (%s)", trial,
			         err.msg, named, text);
		checked++;
	}
	assert_true(checked > 500);
}

static void test_missing_producer(void **state)
{
	pb_builder *b = pb_builder_new("m.test", "test");
	const char *in[] = {"nowhere"}, *out[] = {"y"};
	pb_builder_node(b, "A", "Relu", "", in, 1, out, 1);
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_build(b, NULL, &g, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "nowhere"));
}

static void test_args(void **state)
{
	static const pb_opt spec[] = {{"n", 'n', PB_OPT_INT, "N", ""},
	                              {"json", 0, PB_OPT_FLAG, NULL, ""},
	                              {"input", 'i', PB_OPT_LIST, "X", ""},
	                              {0}};
	char *argv[] = {"model.onnx", "-n", "7", "--json", "--input=a=1,2", "-i", "b=3", "-1.5"};
	pb_args a;
	pb_error err = {0};
	assert_int_equal(pb_args_parse(spec, 8, argv, &a, "t", &err), PB_OK);
	long n;
	assert_int_equal(pb_args_int(&a, "n", 0, 0, 10, &n, &err), PB_OK);
	assert_int_equal(n, 7);
	assert_true(pb_args_has(&a, "json"));
	const char **l;
	assert_int_equal(pb_args_list(&a, "input", &l), 2);
	assert_string_equal(l[0], "a=1,2");
	assert_string_equal(l[1], "b=3");
	assert_int_equal(a.n_pos, 2);
	assert_string_equal(pb_args_pos(&a, 1), "-1.5");
	assert_int_equal(pb_args_int(&a, "n", 0, 0, 5, &n, &err), PB_EUSAGE);
	char *bad[] = {"--nope"};
	assert_int_equal(pb_args_parse(spec, 1, bad, &a, "t", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "--nope"));
}

static void test_input_override(void **state)
{
	pb_input_override o;
	pb_error err = {0};
	assert_int_equal(pb_parse_input_override("x=1,3,640,640", &o, &err), PB_OK);
	assert_string_equal(o.name, "x");
	assert_int_equal(o.rank, 4);
	assert_int_equal(o.dims[3], 640);
	pb_input_override_free(&o);
	assert_int_equal(pb_parse_input_override("x=1,a", &o, &err), PB_EUSAGE);
	assert_int_equal(pb_parse_input_override("=1", &o, &err), PB_EUSAGE);
	/* out of range: overflow, negative, above 2^40 */
	assert_int_equal(pb_parse_input_override("x=99999999999999999999,3", &o, &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "2^40"));
	assert_int_equal(pb_parse_input_override("x=1,-3", &o, &err), PB_EUSAGE);
	assert_int_equal(pb_parse_input_override("x=1099511627777", &o, &err), PB_EUSAGE);
	assert_int_equal(pb_parse_input_override("x=1099511627776", &o, &err), PB_OK);
	pb_input_override_free(&o);
}

static void test_plan_roundtrip(void **state)
{
	pb_plan *p = pb_plan_new("partition", "exact", 3);
	pb_plan_group g = {.label = "cores 0-1",
	                   .n_units = 2,
	                   .time = 1.5,
	                   .first_node = 0,
	                   .last_node = 1,
	                   .bottleneck = 1};
	pb_plan_add_group(p, &g);
	g.label = "core 2";
	g.bottleneck = 0;
	pb_plan_add_group(p, &g);
	p->group[0] = p->group[1] = 0;
	p->group[2] = 1;
	pb_plan_set_metric(p, "max_time", 1.5);
	json_object_set_new(p->detail, "arranged_core", json_pack("[ii]", 2, 1));
	char path[] = "/tmp/pb_plan_XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	pb_error err = {0};
	assert_int_equal(pb_plan_save(p, NULL, path, &err), PB_OK);
	pb_plan *q = NULL;
	assert_int_equal(pb_plan_load(path, 3, &q, &err), PB_OK);
	assert_string_equal(q->kind, "partition");
	assert_int_equal(q->n_groups, 2);
	assert_int_equal(q->group[2], 1);
	assert_true(q->groups[0].bottleneck);
	assert_true(fabs(pb_plan_metric(q, "max_time", 0) - 1.5) < 1e-12);
	assert_true(json_equal(p->detail, q->detail));
	pb_plan_free(q);
	/* A plan for another model is refused with a clear message. */
	assert_int_equal(pb_plan_load(path, 5, &q, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "another model"));
	unlink(path);
	pb_plan_free(p);
}

static void test_session_undo_redo(void **state)
{
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, pb_test_chain_graph(2, NULL, "0>1"), "x");
	pb_session_set_plan(s, pb_plan_new("partition", "a", 2));
	pb_session_set_plan(s, pb_plan_new("partition", "b", 2));
	assert_string_equal(s->plan->method, "b");
	assert_int_equal(pb_session_undo(s), 1);
	assert_string_equal(s->plan->method, "a");
	assert_int_equal(pb_session_redo(s), 1);
	assert_string_equal(s->plan->method, "b");
	assert_int_equal(pb_session_undo(s), 1);
	assert_int_equal(pb_session_undo(s), 1);
	assert_null(s->plan);
	assert_int_equal(pb_session_undo(s), 0);
	pb_session_free(s);
}

static void test_sandbox(void **state)
{
	pb_lua_limits lim = {2000000, 8u << 20};
	pb_lua *S = pb_lua_new(&lim);
	pb_error err = {0};
	assert_int_equal(pb_lua_run_string(S, "while true do end", "loop.lua", &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "loop.lua:1: instruction budget"));
	assert_int_not_equal(pb_lua_run_string(S, "return os.execute('true')", "os.lua", &err),
	                     PB_OK);
	assert_int_not_equal(pb_lua_run_string(S, "return io.open('/etc/passwd')", "io.lua", &err),
	                     PB_OK);
	assert_int_not_equal(pb_lua_run_string(S, "return require('os')", "req.lua", &err), PB_OK);
	assert_int_not_equal(
	    pb_lua_run_string(S, "local t = {} for i=1,1e9 do t[i]=i end", "mem.lua", &err), PB_OK);
	assert_int_not_equal(pb_lua_run_string(S,
	                                       "return load(string.dump(function() end), 'x', 'b')",
	                                       "bc.lua", &err),
	                     PB_OK);
	/* The state keeps working after all of that. */
	assert_int_equal(pb_lua_run_string(S, "return 6*7", "ok.lua", &err), PB_OK);
	assert_int_equal(lua_tointeger(pb_lua_state(S), -1), 42);
	pb_lua_free(S);
}

static void test_layout_errors(void **state)
{
	pb_hw *hw = NULL;
	pb_error err = {0};
	assert_int_equal(
	    pb_hw_load_string("return { kind = 'manycore', cores = 'x' }", "l.lua", &hw, &err),
	    PB_OK);
	double v;
	assert_int_equal(pb_hw_num(hw, hw->root, "", "cores", 1, 0, 1, 1e6, &v, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "l.lua"));
	assert_non_null(strstr(err.msg, "'cores'"));
	assert_int_equal(pb_hw_num(hw, hw->root, "", "rate", 1, 0, 1, 1e6, &v, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "missing"));
	pb_hw_free(hw);
	assert_int_equal(pb_hw_load_string("return 3", "bad.lua", &hw, &err), PB_EINPUT);
	assert_int_equal(pb_hw_load_string("return {", "syntax.lua", &hw, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "syntax.lua"));
}

static void test_command_line_split(void **state)
{
	char **argv;
	int argc = pb_cmd_split("partition 'a b' --x \"c\\\"d\" e\\ f", &argv);
	assert_int_equal(argc, 5);
	assert_string_equal(argv[1], "a b");
	assert_string_equal(argv[3], "c\"d");
	assert_string_equal(argv[4], "e f");
	pb_cmd_split_free(argc, argv);
	assert_int_equal(pb_cmd_split("x 'unbalanced", &argv), -1);
	assert_non_null(pb_cmd_find("help"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_topo_keeps_file_order),
	    cmocka_unit_test(test_topo_reorders_unsorted_file),
	    cmocka_unit_test(test_cycle_is_named),
	    cmocka_unit_test(test_missing_producer),
	    cmocka_unit_test(test_args),
	    cmocka_unit_test(test_input_override),
	    cmocka_unit_test(test_cycle_node_is_on_a_cycle),
	    cmocka_unit_test(test_plan_roundtrip),
	    cmocka_unit_test(test_session_undo_redo),
	    cmocka_unit_test(test_sandbox),
	    cmocka_unit_test(test_layout_errors),
	    cmocka_unit_test(test_command_line_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
