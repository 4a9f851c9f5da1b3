/* test_convert.c — `convert` and the JSON round trip: saving any graph as
 * partbench JSON and loading it back gives an identical pb_graph (node order,
 * names, ops, domains, attributes, tensors, shapes, values, costs, edges,
 * members, inputs/outputs, opsets). Run on a rich hand-built graph, on the
 * DOT samples, and on every ONNX model in models/. */
#include "pb_test.h"
#include "model/json_graph.h"
#include "load.h"

#include <dirent.h>
#include <jansson.h>
#include <unistd.h>

#include "commands.h"
#include "session.h"

/* ------------------------------------------------------------ equality */

static char diff[512];

static int same_double(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return a == b && signbit(a) == signbit(b);
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

#define DIFF(...) (snprintf(diff, sizeof diff, __VA_ARGS__), 0)

static int same_value(const pb_value *a, const pb_value *b, const char *where)
{
	if (!a || !b)
		return (!a && !b) ? 1 : DIFF("%s: value present in one graph only", where);
	if (a->dtype != b->dtype || a->rank != b->rank || a->numel != b->numel)
		return DIFF("%s: value dtype/rank/numel differ", where);
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return DIFF("%s: value dims differ", where);
	for (int64_t k = 0; k < a->numel; k++)
		if (a->i[k] != b->i[k] || !same_double(a->f[k], b->f[k]))
			return DIFF("%s: value element %lld differs (%lld/%.17g vs %lld/%.17g)",
			            where, (long long)k, (long long)a->i[k], a->f[k],
			            (long long)b->i[k], b->f[k]);
	return 1;
}

static int same_attr(const pb_attr *a, const pb_attr *b, const char *node)
{
	char where[256];
	snprintf(where, sizeof where, "node %s attr %s", node, a->name);
	if (!same_str(a->name, b->name) || a->type != b->type)
		return DIFF("%s: name/type differ", where);
	switch (a->type) {
	case PB_ATTR_FLOAT:
		return same_double(a->f, b->f) ? 1 : DIFF("%s: float", where);
	case PB_ATTR_INT:
		return a->i == b->i ? 1 : DIFF("%s: int", where);
	case PB_ATTR_STRING:
		return same_str(a->s, b->s) ? 1 : DIFF("%s: string", where);
	case PB_ATTR_TENSOR:
		return same_value(a->t, b->t, where);
	case PB_ATTR_GRAPH:
		return a->subgraph_nodes == b->subgraph_nodes ? 1 : DIFF("%s: graph", where);
	default:
		break;
	}
	if (a->n != b->n)
		return DIFF("%s: list length %d vs %d", where, a->n, b->n);
	for (int k = 0; k < a->n; k++) {
		int ok = a->type == PB_ATTR_FLOATS    ? same_double(a->floats[k], b->floats[k])
		         : a->type == PB_ATTR_INTS    ? a->ints[k] == b->ints[k]
		         : a->type == PB_ATTR_STRINGS ? same_str(a->strings[k], b->strings[k])
		                                      : 1;
		if (!ok)
			return DIFF("%s: element %d", where, k);
	}
	return 1;
}

static int same_ints(const int *a, int na, const int *b, int nb)
{
	if (na != nb)
		return 0;
	for (int i = 0; i < na; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static int same_cost(const pb_cost *a, const pb_cost *b)
{
	return same_double(a->macs, b->macs) && same_double(a->flops, b->flops) &&
	       same_double(a->params, b->params) && same_double(a->param_bytes, b->param_bytes) &&
	       same_double(a->out_bytes, b->out_bytes) && same_double(a->in_bytes, b->in_bytes);
}

/* 1 when identical (the path and format, which name the file, may differ). */
static int graph_equal(const pb_graph *a, const pb_graph *b)
{
	if (!same_str(a->name, b->name))
		return DIFF("graph name '%s' vs '%s'", a->name, b->name);
	if (a->n_nodes != b->n_nodes || a->n_tensors != b->n_tensors)
		return DIFF("sizes: %d nodes %d tensors vs %d nodes %d tensors", a->n_nodes,
		            a->n_tensors, b->n_nodes, b->n_tensors);
	if (!same_ints(a->inputs, a->n_inputs, b->inputs, b->n_inputs))
		return DIFF("graph inputs differ");
	if (!same_ints(a->outputs, a->n_outputs, b->outputs, b->n_outputs))
		return DIFF("graph outputs differ");
	if (a->n_opsets != b->n_opsets)
		return DIFF("opset count differs");
	for (int i = 0; i < a->n_opsets; i++)
		if (!same_str(a->opsets[i].domain, b->opsets[i].domain) ||
		    a->opsets[i].version != b->opsets[i].version)
			return DIFF("opset %d differs", i);
	if (a->n_unknown_shapes != b->n_unknown_shapes)
		return DIFF("unknown shapes %d vs %d", a->n_unknown_shapes, b->n_unknown_shapes);
	if (!same_cost(&a->total, &b->total))
		return DIFF("totals differ");
	for (int i = 0; i < a->n_nodes; i++) {
		const pb_node *x = &a->nodes[i], *y = &b->nodes[i];
		if (!same_str(x->name, y->name) || !same_str(x->op, y->op) ||
		    !same_str(x->domain, y->domain))
			return DIFF("node %d: %s/%s/%s vs %s/%s/%s", i, x->name, x->op, x->domain,
			            y->name, y->op, y->domain);
		if (!same_ints(x->inputs, x->n_inputs, y->inputs, y->n_inputs) ||
		    !same_ints(x->outputs, x->n_outputs, y->outputs, y->n_outputs))
			return DIFF("node %s: inputs/outputs differ", x->name);
		if (!same_ints(x->preds, x->n_preds, y->preds, y->n_preds) ||
		    !same_ints(x->succs, x->n_succs, y->succs, y->n_succs))
			return DIFF("node %s: edges differ", x->name);
		if (x->file_order != y->file_order || x->shape_known != y->shape_known)
			return DIFF("node %s: file_order %d/%d shape_known %d/%d", x->name,
			            x->file_order, y->file_order, x->shape_known, y->shape_known);
		if (!same_cost(&x->cost, &y->cost))
			return DIFF("node %s: cost macs %.17g/%.17g out_bytes %.17g/%.17g", x->name,
			            x->cost.macs, y->cost.macs, x->cost.out_bytes,
			            y->cost.out_bytes);
		if (x->n_attrs != y->n_attrs)
			return DIFF("node %s: %d vs %d attrs", x->name, x->n_attrs, y->n_attrs);
		for (int k = 0; k < x->n_attrs; k++)
			if (!same_attr(&x->attrs[k], &y->attrs[k], x->name))
				return 0;
		if (!same_ints(x->members, x->n_members, y->members, y->n_members))
			return DIFF("node %s: members differ", x->name);
		for (int m = 0; m < x->n_members; m++)
			if (!same_str(x->member_names[m], y->member_names[m]))
				return DIFF("node %s: member name %d differs", x->name, m);
		for (int k = 0; k < x->n_succs; k++)
			if (!same_double(pb_graph_edge_bytes(a, i, x->succs[k]),
			                 pb_graph_edge_bytes(b, i, y->succs[k])))
				return DIFF("edge %s -> %s: bytes differ", x->name,
				            a->nodes[x->succs[k]].name);
		if (pb_graph_find_node(a, x->name) != pb_graph_find_node(b, y->name))
			return DIFF("node %s: lookup differs", x->name);
	}
	for (int t = 0; t < a->n_tensors; t++) {
		const pb_tensor *x = &a->tensors[t], *y = &b->tensors[t];
		if (!same_str(x->name, y->name) || x->dtype != y->dtype || x->rank != y->rank)
			return DIFF("tensor %d (%s): name/dtype/rank differ (%s %d %d vs %s %d %d)",
			            t, x->name, x->name, x->dtype, x->rank, y->name, y->dtype,
			            y->rank);
		for (int d = 0; d < x->rank; d++)
			if (x->dims[d] != y->dims[d] ||
			    !same_str(x->dim_params[d], y->dim_params[d]))
				return DIFF("tensor %s: dim %d differs", x->name, d);
		if (x->producer != y->producer ||
		    !same_ints(x->consumers, x->n_consumers, y->consumers, y->n_consumers))
			return DIFF("tensor %s: producer/consumers differ", x->name);
		if (x->is_initializer != y->is_initializer || x->is_input != y->is_input ||
		    x->is_output != y->is_output || x->external_data != y->external_data)
			return DIFF("tensor %s: flags differ", x->name);
		char where[256];
		snprintf(where, sizeof where, "tensor %s", x->name);
		if (!same_value(x->value, y->value, where))
			return 0;
		if (pb_graph_find_tensor(a, x->name) != pb_graph_find_tensor(b, y->name))
			return DIFF("tensor %s: lookup differs", x->name);
	}
	return 1;
}

/* ------------------------------------------------------------ helpers */

static char tmpdir[64];

static int setup(void **state)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/pb_test_convert_XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char p[512];
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(tmpdir);
	return 0;
}

/* Saves g, loads it back, compares; then saves the copy again and checks the
 * second load is identical too. */
static void round_trip(const pb_graph *g, const char *label)
{
	char path[512];
	snprintf(path, sizeof path, "%s/rt.json", tmpdir);
	pb_error err = {0};
	if (pb_json_graph_save(g, path, &err) != PB_OK)
		fail_msg("%s: save: %s", label, err.msg);
	pb_graph *h = NULL;
	if (pb_graph_load(path, NULL, &h, &err) != PB_OK)
		fail_msg("%s: reload: %s", label, err.msg);
	assert_string_equal(h->format, "json");
	if (!graph_equal(g, h))
		fail_msg("%s: round trip differs: %s", label, diff);
	if (pb_json_graph_save(h, path, &err) != PB_OK)
		fail_msg("%s: save again: %s", label, err.msg);
	pb_graph *k = NULL;
	if (pb_graph_load(path, NULL, &k, &err) != PB_OK)
		fail_msg("%s: reload again: %s", label, err.msg);
	if (!graph_equal(g, k))
		fail_msg("%s: second round trip differs: %s", label, diff);
	pb_graph_free(h);
	pb_graph_free(k);
	unlink(path);
}

/* ------------------------------------------------------------ tests */

/* The equality check must see differences, or the round trips prove nothing. */
static void test_equality_detects_changes(void **state)
{
	double m1[3] = {1, 2, 3}, m2[3] = {1, 2, 4};
	pb_graph *a = pb_test_chain_graph(3, m1, "0>1 1>2");
	pb_graph *b = pb_test_chain_graph(3, m1, "0>1 1>2");
	pb_graph *c = pb_test_chain_graph(3, m2, "0>1 1>2");
	pb_graph *d = pb_test_chain_graph(3, m1, "0>1 0>2");
	assert_true(graph_equal(a, b));
	assert_false(graph_equal(a, c));
	assert_false(graph_equal(a, d));
	free(b->nodes[1].op);
	b->nodes[1].op = strdup("Other");
	assert_false(graph_equal(a, b));
	pb_graph_free(a);
	pb_graph_free(b);
	pb_graph_free(c);
	pb_graph_free(d);
}

/* Every kind of data a loader or a transformation can put in a graph. */
static void test_rich_graph_round_trip(void **state)
{
	pb_builder *b = pb_builder_new("rich.test", "test");
	pb_builder_name(b, "rich \xce\xb1 graph");
	pb_builder_opset(b, "", 13);
	pb_builder_opset(b, "com.microsoft", 1);
	/* an unused tensor first, so tensor ids are not node order */
	pb_builder_tensor(b, "unused");
	int x = pb_builder_tensor(b, "x");
	pb_builder_input(b, x);
	int64_t xd[4] = {PB_DIM_UNKNOWN, 3, 224, 224};
	char *xp[4] = {"batch", NULL, NULL, NULL};
	pb_builder_set_shape(b, x, PB_DT_FLOAT, 4, xd, xp);
	int w = pb_builder_tensor(b, "w");
	int64_t wd[4] = {8, 3, 3, 3};
	pb_builder_set_shape(b, w, PB_DT_FLOAT, 4, wd, NULL);
	pb_builder_initializer(b, w, 1);
	int s = pb_builder_tensor(b, "shape_const");
	int64_t sd[1] = {3};
	pb_builder_set_shape(b, s, PB_DT_INT64, 1, sd, NULL);
	pb_builder_initializer(b, s, 0);
	pb_value *v = pb_value_new(PB_DT_INT64, 1, sd);
	v->i[0] = -1;
	v->i[1] = INT64_MAX;
	v->i[2] = 7;
	for (int k = 0; k < 3; k++)
		v->f[k] = (double)v->i[k];
	pb_builder_value(b, s, v);
	/* a float constant with awkward values: non-finite, negative zero, float32 */
	int fc = pb_builder_tensor(b, "fconst");
	int64_t fd[2] = {2, 3};
	pb_builder_set_shape(b, fc, PB_DT_FLOAT, 2, fd, NULL);
	pb_builder_initializer(b, fc, 0);
	pb_value *fv = pb_value_new(PB_DT_FLOAT, 2, fd);
	double fvals[6] = {0.1, (float)1e-5, -0.0, NAN, INFINITY, -1e300};
	for (int k = 0; k < 6; k++) {
		fv->f[k] = fvals[k];
		fv->i[k] = isfinite(fvals[k]) ? (int64_t)fvals[k] : 0;
	}
	fv->i[5] = 42; /* an integer view that is not the truncation */
	pb_builder_value(b, fc, fv);

	const char *ci[] = {"x", "w", ""}, *co[] = {"y"};
	int conv = pb_builder_node(b, "conv/\xff\xfe", "Conv", "", ci, 3, co, 1);
	pb_attr a = {0};
	a.name = "kernel_shape";
	a.type = PB_ATTR_INTS;
	int64_t ks[2] = {3, 3};
	a.ints = ks;
	a.n = 2;
	pb_builder_attr(b, conv, &a);
	a = (pb_attr){.name = "eps", .type = PB_ATTR_FLOAT, .f = (float)1e-5};
	pb_builder_attr(b, conv, &a);
	a = (pb_attr){.name = "auto_pad", .type = PB_ATTR_STRING, .s = "SAME_\x80UPPER"};
	pb_builder_attr(b, conv, &a);
	double fl[3] = {0.5, NAN, -2};
	a = (pb_attr){.name = "scales", .type = PB_ATTR_FLOATS, .floats = fl, .n = 3};
	pb_builder_attr(b, conv, &a);
	char *strs[2] = {"a", "\xc3\xa9t\xc3\xa9"};
	a = (pb_attr){.name = "names", .type = PB_ATTR_STRINGS, .strings = strs, .n = 2};
	pb_builder_attr(b, conv, &a);
	a = (pb_attr){.name = "empty", .type = PB_ATTR_INTS, .n = 0};
	pb_builder_attr(b, conv, &a);
	a = (pb_attr){.name = "value", .type = PB_ATTR_TENSOR, .t = v};
	pb_builder_attr(b, conv, &a);
	a = (pb_attr){.name = "body", .type = PB_ATTR_GRAPH, .subgraph_nodes = 12};
	pb_builder_attr(b, conv, &a);
	a = (pb_attr){.name = "big", .type = PB_ATTR_INT, .i = INT64_MIN};
	pb_builder_attr(b, conv, &a);
	pb_cost cc = {1.5e9, NAN, 216, NAN, 0.1, NAN};
	pb_builder_node_cost(b, conv, &cc);
	int64_t yd[4] = {PB_DIM_UNKNOWN, 8, 222, 222};
	char *yp[4] = {"batch", NULL, NULL, NULL};
	pb_builder_set_shape(b, pb_builder_tensor(b, "y"), PB_DT_FLOAT16, 4, yd, yp);

	/* declared before its producer: file order differs from topological order
	 * (an op without a shape rule: the int64 extremes are not valid dims) */
	const char *ri[] = {"z", "shape_const"}, *ro[] = {"out", "aux"};
	int r = pb_builder_node(b, "reshape", "ReshapeLike", "ai.onnx", ri, 2, ro, 2);
	const char *mi[] = {"y", "fconst"}, *mo[] = {"z"};
	int f = pb_builder_node(b, "", "FusedMul", "com.microsoft", mi, 2, mo, 1);
	int mids[3] = {3, 9, -1};
	const char *mnames[3] = {"mul_1", "add_2", NULL};
	pb_builder_node_members(b, f, mids, mnames, 3);
	(void)r;
	pb_builder_output(b, pb_builder_tensor(b, "out"));
	pb_builder_output(b, pb_builder_tensor(b, "aux"));

	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts opts = {0};
	if (pb_graph_build(b, &opts, &g, &err) != PB_OK)
		fail_msg("%s", err.msg);
	assert_string_equal(g->nodes[2].name, "reshape");
	assert_int_equal(g->nodes[2].file_order, 1);
	round_trip(g, "rich graph");
	pb_graph_free(g);
}

static void test_dot_models_round_trip(void **state)
{
	const char *files[] = {"models/tiny_branches.dot"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		pb_graph *g = NULL;
		pb_error err = {0};
		if (pb_graph_load(files[i], NULL, &g, &err) != PB_OK)
			fail_msg("%s", err.msg);
		round_trip(g, files[i]);
		pb_graph_free(g);
	}
	/* edge tensors, unknown shapes, extra attributes, parallel edges */
	const char *text = "digraph edgy { a [op=MatMul macs=\"2.5G\" kernel=3 ratio=0.25];"
	                   " b [shape=\"?x768\"]; c; a -> b [bytes=10]; a -> b [bytes=3];"
	                   " a -> c; b -> c [bytes=0]; }";
	pb_graph *g = NULL;
	pb_error err = {0};
	if (pb_dot_load_buffer(text, strlen(text), "edgy.dot", NULL, &g, &err) != PB_OK)
		fail_msg("%s", err.msg);
	round_trip(g, "edgy.dot");
	pb_graph_free(g);
}

/* Every bundled ONNX model. */
static void test_onnx_models_round_trip(void **state)
{
	DIR *d = opendir("models");
	assert_non_null(d);
	struct dirent *e;
	char *names[64];
	int n = 0;
	while ((e = readdir(d)) && n < 64) {
		size_t l = strlen(e->d_name);
		if (l > 5 && strcmp(e->d_name + l - 5, ".onnx") == 0)
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		char path[512];
		snprintf(path, sizeof path, "models/%s", names[i]);
		pb_graph *g = NULL;
		pb_error err = {0};
		if (pb_graph_load(path, NULL, &g, &err) != PB_OK)
			fail_msg("%s", err.msg);
		round_trip(g, path);
		printf("round trip ok: %s (%d nodes, %d tensors)\n", path, g->n_nodes,
		       g->n_tensors);
		pb_graph_free(g);
		free(names[i]);
	}
}

/* A JSON graph without shapes and costs (as a hand-made or foreign file would
 * be) is shape-inferred on loading and gets the same shapes and costs. */
static void test_reinfer_from_stripped_json(void **state)
{
	pb_graph *g = NULL, *h = NULL;
	pb_error err = {0};
	char path[512];
	snprintf(path, sizeof path, "%s/stripped.json", tmpdir);
	if (pb_graph_load("models/resnet18.onnx", NULL, &g, &err) != PB_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(pb_json_graph_save(g, path, &err), PB_OK);
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	assert_non_null(j);
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(j, "nodes"), i, o)
	{
		json_object_del(o, "shape_known");
		json_object_del(o, "cost");
		json_object_del(o, "shape");
	}
	int stripped = 0;
	json_array_foreach(json_object_get(j, "tensors"), i, o)
	{
		if (!json_is_true(json_object_get(o, "initializer")) &&
		    g->tensors[i].producer >= 0) {
			json_object_set_new(o, "shape", json_null());
			json_object_del(o, "dim_params");
			json_object_del(o, "value");
			stripped++;
		}
	}
	assert_true(stripped > 50);
	assert_int_equal(json_dump_file(j, path, 0), 0);
	json_decref(j);
	if (pb_graph_load(path, NULL, &h, &err) != PB_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(g->n_nodes, h->n_nodes);
	char s1[128], s2[128];
	for (int k = 0; k < g->n_nodes; k++) {
		const pb_node *x = &g->nodes[k], *y = &h->nodes[k];
		assert_string_equal(x->name, y->name);
		if (!same_cost(&x->cost, &y->cost))
			fail_msg("node %s: cost differs after re-inference", x->name);
		pb_tensor_shape_str(&g->tensors[x->outputs[0]], s1, sizeof s1);
		pb_tensor_shape_str(&h->tensors[y->outputs[0]], s2, sizeof s2);
		assert_string_equal(s1, s2);
	}
	assert_true(same_cost(&g->total, &h->total));
	assert_int_equal(g->n_unknown_shapes, h->n_unknown_shapes);
	pb_graph_free(g);
	pb_graph_free(h);
	unlink(path);
}

/* The command itself, as the CLI, the TUI and Lua run it. */
static void test_convert_command(void **state)
{
	pb_session *s = pb_session_new();
	char out[512], line[1024];
	snprintf(out, sizeof out, "%s/cmd.json", tmpdir);
	FILE *sink = fopen("/dev/null", "w");
	pb_cmd_ctx ctx = {.s = s, .out = sink, .log = sink};
	pb_error err = {0};
	snprintf(line, sizeof line, "convert models/tiny_branches.dot -o %s", out);
	if (pb_cmd_run_line(&ctx, line, &err) != PB_OK)
		fail_msg("%s", err.msg);
	pb_graph *direct = NULL, *conv = NULL;
	assert_int_equal(pb_graph_load("models/tiny_branches.dot", NULL, &direct, &err), PB_OK);
	assert_int_equal(pb_graph_load(out, NULL, &conv, &err), PB_OK);
	if (!graph_equal(direct, conv))
		fail_msg("convert differs: %s", diff);
	pb_graph_free(direct);
	pb_graph_free(conv);
	/* with the model already open, MODEL may be omitted */
	unlink(out);
	snprintf(line, sizeof line, "convert -o %s", out);
	assert_int_equal(pb_cmd_run_line(&ctx, line, &err), PB_OK);
	assert_int_equal(access(out, R_OK), 0);
	/* -o is required; a bad output directory is bad input naming the file */
	assert_int_equal(pb_cmd_run_line(&ctx, "convert", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "-o"));
	assert_int_equal(pb_cmd_run_line(&ctx, "convert -o /nonexistent/dir/x.json", &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, "/nonexistent/dir/x.json"));
	fclose(sink);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_equality_detects_changes),
	    cmocka_unit_test(test_rich_graph_round_trip),
	    cmocka_unit_test(test_dot_models_round_trip),
	    cmocka_unit_test(test_onnx_models_round_trip),
	    cmocka_unit_test(test_reinfer_from_stripped_json),
	    cmocka_unit_test(test_convert_command),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
