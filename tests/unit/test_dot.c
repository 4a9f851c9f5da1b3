/* test_dot.c — the Graphviz DOT loader: mapping of nodes/edges/attributes to
 * the Graph, edge bytes, stated costs, and clear errors (never on stderr). */
#include "pb_test.h"
#include "load.h"

#include <fcntl.h>
#include <unistd.h>

static pb_graph *load_str(const char *text, const char *name, pb_error *err)
{
	pb_graph *g = NULL;
	pb_load_opts opts = {0};
	int rc = pb_dot_load_buffer(text, strlen(text), name, &opts, &g, err);
	if (rc != PB_OK) {
		assert_null(g);
		assert_int_equal(err->code, rc);
		return NULL;
	}
	return g;
}

static int node(const pb_graph *g, const char *name)
{
	int id = pb_graph_find_node(g, name);
	if (id < 0)
		fail_msg("node %s not found", name);
	return id;
}

static void test_sample_model(void **state)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_load("models/tiny_branches.dot", NULL, &g, &err), PB_OK);
	assert_string_equal(g->format, "dot");
	assert_string_equal(g->name, "tiny_branches");
	assert_int_equal(g->n_nodes, 9);
	/* file order is a valid topological order, so it is kept */
	const char *order[] = {"input", "stem", "b1_a",   "b1_b", "b2_a",
	                       "b2_b",  "b3",   "concat", "head"};
	for (int i = 0; i < 9; i++)
		assert_string_equal(g->nodes[i].name, order[i]);
	/* node [op=Conv] default and explicit ops */
	assert_string_equal(g->nodes[node(g, "b1_a")].op, "Conv");
	assert_string_equal(g->nodes[node(g, "b3")].op, "MaxPool");
	/* stated costs, with K/M suffixes */
	const pb_node *stem = &g->nodes[node(g, "stem")];
	assert_true(stem->cost.macs == 5.4e6);
	assert_true(stem->cost.flops == 2 * 5.4e6);
	assert_true(stem->cost.params == 1728);
	assert_true(stem->cost.param_bytes == 4 * 1728);
	/* out_bytes from the shape (float32) unless stated */
	assert_true(stem->cost.out_bytes == 64.0 * 56 * 56 * 4);
	assert_true(g->nodes[node(g, "head")].cost.out_bytes == 4000);
	assert_true(g->nodes[node(g, "b1_b")].cost.flops == 200704);
	/* edges: shape bytes, and the stated bytes on concat -> head */
	assert_true(pb_graph_edge_bytes(g, node(g, "stem"), node(g, "b2_a")) == 802816);
	assert_true(pb_graph_edge_bytes(g, node(g, "concat"), node(g, "head")) == 768);
	assert_true(pb_graph_edge_bytes(g, node(g, "stem"), node(g, "head")) == 0);
	const pb_node *concat = &g->nodes[node(g, "concat")];
	assert_int_equal(concat->n_preds, 3);
	assert_int_equal(concat->n_succs, 1);
	char buf[64];
	assert_string_equal(pb_tensor_shape_str(&g->tensors[concat->outputs[0]], buf, sizeof buf),
	                    "1x192x56x56");
	assert_true(fabs(g->total.macs - (5.4e6 + 12.8e6 + 115.6e6 + 192000)) < 1e-3);
	assert_int_equal(g->n_unknown_shapes, 0);
	assert_int_equal(g->n_outputs, 1);
	assert_string_equal(g->tensors[g->outputs[0]].name, "head");
	pb_graph_free(g);
}

static void test_edge_bytes_without_shapes(void **state)
{
	pb_error err = {0};
	pb_graph *g = load_str("digraph {\n"
	                       "  a [op=MatMul macs=100 out_bytes=50];\n"
	                       "  b [op=Add]; c [op=Add]; d [op=Add];\n"
	                       "  a -> b [bytes=10];\n"
	                       "  a -> b [bytes=5];\n" /* parallel edges add up */
	                       "  a -> c;\n"           /* carries a's out_bytes */
	                       "  a -> d [bytes=0];\n" /* a stated 0 stays 0 */
	                       "  b -> d [bytes=\"1K\"];\n"
	                       "}\n",
	                       "eb.dot", &err);
	assert_non_null(g);
	int a = node(g, "a"), b = node(g, "b"), c = node(g, "c"), d = node(g, "d");
	assert_true(pb_graph_edge_bytes(g, a, b) == 15);
	assert_true(pb_graph_edge_bytes(g, a, c) == 50);
	assert_true(pb_graph_edge_bytes(g, a, d) == 0);
	assert_true(pb_graph_edge_bytes(g, b, d) == 1000);
	assert_true(pb_graph_edge_bytes(g, c, d) == 0);
	/* b states no out_bytes and no shape: the largest out-edge bytes */
	assert_true(g->nodes[b].cost.out_bytes == 1000);
	assert_true(g->nodes[a].cost.macs == 100);
	assert_int_equal(g->nodes[d].n_preds, 2);
	/* a's main tensor has no shape: an unknown shape is reported */
	assert_int_equal(g->nodes[a].shape_known, 0);
	assert_true(g->n_unknown_shapes >= 1);
	pb_graph_free(g);
}

static void test_unsorted_and_attrs(void **state)
{
	pb_error err = {0};
	/* c is declared first but consumes b: ids follow the dependencies. Extra
	 * attributes are kept with a type; Graphviz drawing attributes are not. */
	pb_graph *g =
	    load_str("strict digraph net {\n"
	             "  c [op=Relu label=\"C node\" shape=box];\n"
	             "  b [op=Conv kernel=3 alpha=0.5 pad=same dtype=float16 shape=\"2,8\"];\n"
	             "  subgraph cluster_x { a [op=Input] }\n"
	             "  b -> c; a -> b;\n"
	             "}\n",
	             "u.gv", &err);
	assert_non_null(g);
	assert_string_equal(g->nodes[0].name, "a");
	assert_string_equal(g->nodes[1].name, "b");
	assert_string_equal(g->nodes[2].name, "c");
	const pb_node *b = &g->nodes[1];
	assert_int_equal(pb_node_attr_int(b, "kernel", -1), 3);
	assert_int_equal(pb_node_attr(b, "kernel")->type, PB_ATTR_INT);
	assert_true(pb_node_attr_float(b, "alpha", 0) == 0.5);
	assert_string_equal(pb_node_attr_str(b, "pad", ""), "same");
	assert_null(pb_node_attr(&g->nodes[2], "label"));
	assert_null(pb_node_attr(&g->nodes[2], "shape"));
	const pb_tensor *t = &g->tensors[b->outputs[0]];
	assert_int_equal(t->dtype, PB_DT_FLOAT16);
	assert_int_equal(t->rank, 2);
	assert_true(b->cost.out_bytes == 2 * 8 * 2);
	pb_graph_free(g);
}

/* Every bad input fails with PB_EINPUT and a message naming the file and the
 * culprit; nothing may be written to stderr. */
static void expect_error(const char *text, const char *must1, const char *must2)
{
	pb_error err = {0};
	fflush(stderr);
	int saved = dup(2);
	char tmpl[] = "/tmp/pb_test_dot_XXXXXX";
	int fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	dup2(fd, 2);
	pb_graph *g = load_str(text, "bad.dot", &err);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	off_t written = lseek(fd, 0, SEEK_END);
	close(fd);
	unlink(tmpl);
	assert_null(g);
	pb_test_expect_msg(&err, "bad.dot", must1, must2);
	assert_int_equal(written, 0);
}

static void test_errors(void **state)
{
	expect_error("digraph { a -> b -> c -> a; }", "cycle", "'");
	expect_error("digraph { a -> a; }", "cycle", "'a'");
	expect_error("digraph { x [macs=abc]; }", "'x'", "macs=\"abc\"");
	expect_error("digraph { x [params=\"-5\"]; }", "'x'", "params");
	expect_error("digraph { x [out_bytes=\"1e999\"]; }", "'x'", "out_bytes");
	expect_error("digraph { x [macs=nan]; }", "'x'", "macs");
	expect_error("graph { a -- b; }", "undirected", NULL);
	expect_error("digraph {\n a -> b;\n c -> ;\n}\n", "line 3", NULL);
	expect_error("digraph { a -> b [bytes=1.5]; }", "'a' -> 'b'", "bytes");
	expect_error("digraph { a -> b [bytes=lots]; }", "'a' -> 'b'", "bytes");
	expect_error("digraph { a [shape=\"1x-3\"]; }", "'a'", "shape");
	expect_error("digraph { a [shape=\"1x2x\"]; }", "'a'", "shape");
	expect_error("digraph { a [shape=\"1x2x3x4x5x6x7x8x9\"]; }", "'a'", "shape");
	expect_error("digraph { a [dtype=float13]; }", "'a'", "dtype");
	expect_error("digraph { a [label=\"unterminated]; }", NULL, NULL);
	expect_error("   \n", "empty", NULL);
	/* an unquoted suffix splits a number in two: the error says so */
	expect_error("digraph { a [macs=5.4M]; }", "line 1", "badly delimited number '5.4M'");
	expect_error("digraph { a -> 2K; }", "badly delimited number", NULL);
	expect_error("this is not dot", NULL, NULL);
	/* numbers no layer has, several graphs, text after the graph */
	expect_error("digraph { x [macs=\"1e300\"]; }", "'x'", "macs");
	expect_error("digraph { x [flops=\"2000000T\"]; }", "'x'", "flops");
	expect_error("digraph a { x } digraph b { y }", "2 graphs", NULL);
	expect_error("digraph a { x } trailing", "line 1", NULL);
	/* the parser recovers: a valid graph right after an error loads */
	pb_error err = {0};
	pb_graph *g = load_str("digraph { p -> q; }", "ok.dot", &err);
	assert_non_null(g);
	assert_int_equal(g->n_nodes, 2);
	pb_graph_free(g);
}

static void test_missing_file(void **state)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_dot_load("models/no_such_graph.dot", NULL, &g, &err), PB_EINPUT);
	assert_null(g);
	assert_non_null(strstr(err.msg, "models/no_such_graph.dot"));
}

static void test_names_do_not_collide(void **state)
{
	pb_error err = {0};
	/* a node literally named "a->b" and an edge a -> b with bytes */
	pb_graph *g = load_str("digraph { \"a->b\" [op=X]; a -> b [bytes=7]; \"a->b\" -> b; }",
	                       "names.dot", &err);
	assert_non_null(g);
	assert_int_equal(g->n_nodes, 3);
	assert_true(pb_graph_edge_bytes(g, node(g, "a"), node(g, "b")) == 7);
	assert_int_equal(g->nodes[node(g, "b")].n_preds, 2);
	pb_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sample_model),
	    cmocka_unit_test(test_edge_bytes_without_shapes),
	    cmocka_unit_test(test_unsorted_and_attrs),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_missing_file),
	    cmocka_unit_test(test_names_do_not_collide),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
