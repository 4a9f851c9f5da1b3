/* test_json.c — partbench's JSON graph format: what the file holds (the
 * fields readers of issue 6 rely on), and errors naming the file and the
 * line:column or field path. Round trips are in test_convert.c. */
#include "pb_test.h"
#include "model/json_graph.h"
#include "load.h"

#include <jansson.h>
#include <unistd.h>

static pb_graph *load_str(const char *text, pb_error *err)
{
	pb_graph *g = NULL;
	int rc = pb_json_graph_load_buffer(text, strlen(text), "g.json", NULL, &g, err);
	if (rc != PB_OK) {
		assert_null(g);
		return NULL;
	}
	return g;
}

static void expect_error(const char *text, const char *must1, const char *must2)
{
	pb_error err = {0};
	pb_graph *g = load_str(text, &err);
	assert_null(g);
	pb_test_expect_msg(&err, "g.json", must1, must2);
}

/* The saved file carries nodes with names/ops/members and from/to/bytes edges. */
static void test_file_fields(void **state)
{
	pb_builder *b = pb_builder_new("f.test", "test");
	pb_builder_input(b, pb_builder_tensor(b, "x"));
	const char *i0[] = {"x"}, *o0[] = {"t0"}, *i1[] = {"t0"}, *o1[] = {"t1"};
	int a = pb_builder_node(b, "first", "Conv", "", i0, 1, o0, 1);
	int f = pb_builder_node(b, "fused", "FusedAdd", "partbench", i1, 1, o1, 1);
	int64_t d[2] = {2, 3};
	pb_builder_set_shape(b, pb_builder_tensor(b, "t0"), PB_DT_FLOAT, 2, d, NULL);
	pb_builder_output(b, pb_builder_tensor(b, "t1"));
	int ids[2] = {4, 7};
	const char *names[2] = {"add_a", "add_b"};
	pb_builder_node_members(b, f, ids, names, 2);
	pb_cost c = {10, NAN, 0, NAN, 24, NAN};
	pb_builder_node_cost(b, a, &c);
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_build(b, NULL, &g, &err), PB_OK);
	char path[] = "/tmp/pb_test_json_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pb_json_graph_save(g, path, &err), PB_OK);
	pb_graph_free(g);

	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	unlink(path);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "format")), "partbench-graph");
	json_t *nodes = json_object_get(j, "nodes");
	assert_int_equal(json_array_size(nodes), 2);
	json_t *n1 = json_array_get(nodes, 1);
	assert_string_equal(json_string_value(json_object_get(n1, "name")), "fused");
	assert_string_equal(json_string_value(json_object_get(n1, "op")), "FusedAdd");
	assert_string_equal(json_string_value(json_object_get(n1, "domain")), "partbench");
	json_t *mem = json_object_get(n1, "members");
	assert_int_equal(json_array_size(mem), 2);
	assert_string_equal(json_string_value(json_array_get(mem, 1)), "add_b");
	assert_int_equal(json_integer_value(json_array_get(json_object_get(n1, "member_ids"), 1)),
	                 7);
	json_t *n0 = json_array_get(nodes, 0);
	assert_null(json_object_get(n0, "members"));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(n0, "cost"), "macs")),
	                 10);
	assert_string_equal(json_string_value(json_object_get(n0, "shape")), "2x3");
	json_t *edges = json_object_get(j, "edges");
	assert_int_equal(json_array_size(edges), 1);
	json_t *e = json_array_get(edges, 0);
	assert_string_equal(json_string_value(json_object_get(e, "from")), "first");
	assert_string_equal(json_string_value(json_object_get(e, "to")), "fused");
	assert_true(json_number_value(json_object_get(e, "bytes")) == 24);
	json_decref(j);
}

/* A hand-written minimal file: no file_order, no shape_known, costs partly
 * stated; tensors named only by nodes are declared implicitly. */
static void test_minimal_hand_written(void **state)
{
	pb_error err = {0};
	pb_graph *g = load_str("{\"nodes\": ["
	                       " {\"name\": \"b\", \"op\": \"Relu\", \"inputs\": [\"ta\"],"
	                       "  \"outputs\": [\"tb\"], \"cost\": {\"macs\": 5}},"
	                       " {\"name\": \"a\", \"op\": \"Conv\", \"inputs\": [\"x\"],"
	                       "  \"outputs\": [\"ta\"], \"attrs\": [{\"name\": \"group\","
	                       "  \"type\": \"int\", \"value\": 2}]}],"
	                       " \"inputs\": [\"x\"], \"outputs\": [\"tb\"],"
	                       " \"opsets\": [{\"domain\": \"\", \"version\": 17}]}",
	                       &err);
	if (!g)
		fail_msg("%s", err.msg);
	assert_string_equal(g->format, "json");
	/* b consumes a's output: a comes first */
	assert_string_equal(g->nodes[0].name, "a");
	assert_string_equal(g->nodes[1].name, "b");
	assert_int_equal(pb_node_attr_int(&g->nodes[0], "group", 0), 2);
	assert_true(g->nodes[1].cost.macs == 5);
	assert_int_equal(pb_graph_opset(g, ""), 17);
	assert_int_equal(g->n_inputs, 1);
	assert_int_equal(g->nodes[1].n_preds, 1);
	pb_graph_free(g);
}

static void test_errors(void **state)
{
	expect_error("{\"nodes\": [\n  {\"name\": \"a\",, }]}", "g.json:2:", NULL);
	expect_error("", "g.json:", NULL);
	expect_error("[1, 2]", "expected a JSON object", NULL);
	expect_error("{}", "nodes", "missing");
	expect_error("{\"nodes\": 3}", "nodes", "expected an array");
	expect_error("{\"nodes\": [{\"name\": \"a\"}]}", "nodes[0].op", "missing");
	expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": 5}]}", "nodes[0].op", "string");
	expect_error("{\"nodes\": [{\"op\": \"A\", \"inputs\": [\"x\", 3]}]}", "nodes[0].inputs[1]",
	             NULL);
	expect_error("{\"nodes\": [{\"op\": \"A\", \"cost\": {\"macs\": \"many\"}}]}",
	             "nodes[0].cost.macs", "number");
	expect_error("{\"nodes\": [{\"op\": \"A\", \"attrs\": [{\"name\": \"k\", \"type\": "
	             "\"ints\", \"value\": [1, 2.5]}]}]}",
	             "nodes[0].attrs[0].value[1]", "integer");
	expect_error("{\"nodes\": [{\"op\": \"A\", \"attrs\": [{\"name\": \"k\", \"type\": "
	             "\"matrix\", \"value\": 1}]}]}",
	             "nodes[0].attrs[0].type", "matrix");
	expect_error("{\"nodes\": [], \"tensors\": [{\"name\": \"t\", \"dtype\": \"float99\"}]}",
	             "tensors[0].dtype", "float99");
	expect_error("{\"nodes\": [], \"tensors\": [{\"name\": \"t\", \"shape\": [1, -7]}]}",
	             "tensors[0].shape[1]", "range");
	expect_error("{\"nodes\": [], \"tensors\": [{\"name\": \"t\", \"shape\": "
	             "[9223372036854775807, 4]}]}",
	             "tensors[0].shape", "elements");
	expect_error("{\"nodes\": [], \"tensors\": [{\"name\": \"t\"}, {\"name\": \"t\"}]}",
	             "tensors[1]", "twice");
	expect_error("{\"nodes\": [], \"tensors\": [{\"name\": \"t\", \"value\": {\"dtype\": "
	             "\"int64\", \"dims\": [3], \"data\": [1, 2]}}]}",
	             "tensors[0].value.data", "3");
	expect_error("{\"nodes\": [{\"op\": \"A\", \"inputs\": [\"nowhere\"]}]}", "nowhere", NULL);
	expect_error("{\"nodes\": [{\"name\": \"p\", \"op\": \"A\", \"inputs\": [\"tq\"], "
	             "\"outputs\": [\"tp\"]}, {\"name\": \"q\", \"op\": \"A\", \"inputs\": "
	             "[\"tp\"], \"outputs\": [\"tq\"]}]}",
	             "cycle", NULL);
	expect_error("{\"format\": \"partbench-plan\", \"nodes\": []}", "plan", NULL);
	expect_error("{\"version\": 99, \"nodes\": []}", "version", NULL);
	expect_error("{\"nodes\": [], \"nodes\": []}", "duplicate", NULL);
	/* costs are counts from 0 to 1e18 */
	expect_error("{\"nodes\": [{\"op\": \"A\", \"cost\": {\"macs\": -1}}]}",
	             "nodes[0].cost.macs", "-1");
	expect_error("{\"nodes\": [{\"op\": \"A\", \"cost\": {\"flops\": 1e300}}]}",
	             "nodes[0].cost.flops", "1e+300");
	expect_error("{\"nodes\": [{\"op\": \"A\", \"cost\": {\"params\": \"nan\"}}]}",
	             "nodes[0].cost.params", NULL);
	expect_error("{\"nodes\": [{\"op\": \"A\", \"members\": [\"a\"], \"member_ids\": []}]}",
	             "nodes[0].member_ids", NULL);
}

static void test_missing_file(void **state)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_load("/nonexistent/g.json", NULL, &g, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "/nonexistent/g.json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_file_fields),
	    cmocka_unit_test(test_minimal_hand_written),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_missing_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
