/* test_graph_memory.c — large graphs built through pb_builder_reserve: the
 * node and tensor arrays then start in a mapped block of the graph's pool
 * and must move to the heap when a loader's estimate was too small (more
 * nodes and tensors than reserved), with every name, edge and id intact,
 * and pb_graph_free must release both kinds (ASan/LSan check this). */
#include "pb_test.h"
#include "load.h"

static void build_chain(int reserve_nodes, int reserve_tensors, int n)
{
	pb_builder *b = pb_builder_new("mem.test", "test");
	pb_builder_reserve(b, reserve_nodes, reserve_tensors);
	int x = pb_builder_tensor(b, "x");
	pb_builder_input(b, x);
	int64_t d[2] = {2, 3};
	pb_builder_set_shape(b, x, PB_DT_FLOAT, 2, d, NULL);
	char prev[32] = "x", name[32], out[32], side[32];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "relu_%d", i);
		snprintf(out, sizeof out, "t%d", i);
		snprintf(side, sizeof side, "side%d", i); /* two outputs per node */
		const char *ins[1] = {prev};
		const char *outs[2] = {out, side};
		pb_builder_node(b, name, "Relu", "", ins, 1, outs, 2);
		snprintf(prev, sizeof prev, "%s", out);
	}
	pb_builder_output(b, pb_builder_tensor(b, prev));
	pb_graph *g = NULL;
	pb_error err = {0};
	int rc = pb_graph_build(b, NULL, &g, &err);
	if (rc != PB_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(g->n_nodes, n);
	assert_int_equal(g->n_tensors, 1 + 2 * n);
	for (int i = 0; i < n; i += 997) {
		snprintf(name, sizeof name, "relu_%d", i);
		int id = pb_graph_find_node(g, name);
		assert_int_equal(id, i);
		assert_string_equal(g->nodes[id].name, name);
		assert_int_equal(g->nodes[id].n_preds, i ? 1 : 0);
		snprintf(out, sizeof out, "t%d", i);
		int t = pb_graph_find_tensor(g, out);
		assert_true(t >= 0);
		assert_string_equal(g->tensors[t].name, out);
		assert_int_equal(g->tensors[t].producer, i);
		assert_int_equal(g->tensors[t].rank, 2); /* Relu keeps the shape */
	}
	pb_graph_free(g);
}

static void test_reserve_exact(void **state)
{
	build_chain(4000, 8001, 4000);
}

static void test_reserve_too_small(void **state)
{
	build_chain(2500, 100, 6000); /* both arrays outgrow the reserved block */
}

static void test_reserve_small_graph(void **state)
{
	build_chain(10, 10, 50); /* below the threshold: plain heap */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reserve_exact),
	    cmocka_unit_test(test_reserve_too_small),
	    cmocka_unit_test(test_reserve_small_graph),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
