/* test_shape_refuse.c — shapes that cannot exist are refused with an error
 * naming the node (issue 23.6), on small ONNX models built in code: element
 * counts beyond 2^48 or int64 (a Reshape of 4 elements to [2^31, 2^31],
 * ConstantOfShape), shape entries beyond 2^40 (once clamped: [2^62, 4]
 * became 1099511627776x4), TopK's k beyond its axis, zero strides, kernels,
 * dilations and groups, negative pads, windows that do not fit, and Tile or
 * Expand that cannot be done, Range with delta 0 or 2^50 elements, OneHot
 * depth 0, blocksize 0. Sound neighbours still load. */
#include "pb_test.h"

#include "pb_onnx_build.h"

#define P62 ((int64_t)1 << 62)
#define P31 ((int64_t)1 << 31)

static void expect_refused(mb *b, const char *node, const char *want)
{
	pb_error err = {0};
	pb_graph *g = mb_load(b, NULL, &err);
	if (g)
		fail_msg("loaded; expected an error containing '%s'", want);
	assert_int_equal(err.code, PB_EINPUT);
	char named[128];
	snprintf(named, sizeof named, "node '%s'", node);
	if (!strstr(err.msg, want) || !strstr(err.msg, named))
		fail_msg("error '%s' does not contain '%s' and '%s'", err.msg, named, want);
	mb_free(b);
}

static void expect_loads(mb *b, const char *tensor, const char *shape)
{
	pb_error err = {0};
	pb_graph *g = mb_load(b, NULL, &err);
	if (!g)
		fail_msg("load failed: %s", err.msg);
	char buf[128];
	int t = pb_graph_find_tensor(g, tensor);
	assert_true(t >= 0);
	pb_tensor_shape_str(&g->tensors[t], buf, sizeof buf);
	if (strcmp(buf, shape) != 0)
		fail_msg("%s: %s, expected %s", tensor, buf, shape);
	pb_graph_free(g);
	mb_free(b);
}

/* x of 4 floats reshaped to shape s */
static void reshape4(mb *b, int n, const int64_t *s)
{
	int64_t xd[1] = {4};
	mb_init(b, 13);
	mb_input(b, "x", PB_DT_FLOAT, 1, xd, NULL);
	mb_ints(b, "s", n, s);
	mb_node(b, "Reshape", "x,s", "y");
	mb_output(b, "y");
}

static void test_reshape(void **state)
{
	mb b;
	reshape4(&b, 2, (int64_t[]){P31, P31});
	expect_refused(&b, "Reshape", "would hold 4611686018427387904 elements (more than 2^48)");
	reshape4(&b, 2, (int64_t[]){P62, 4});
	expect_refused(&b, "Reshape", "shape[0] = 4611686018427387904 is beyond 2^40");
	reshape4(&b, 2, (int64_t[]){-7, 4});
	expect_refused(&b, "Reshape", "shape[0] = -7 (only -1 may be negative)");
	reshape4(&b, 3, (int64_t[]){-1, 2, -1});
	expect_refused(&b, "Reshape", "two -1 entries");
	reshape4(&b, 4, (int64_t[]){1 << 20, 1 << 20, 1 << 20, 1 << 20});
	expect_refused(&b, "Reshape", "overflows int64");
	reshape4(&b, 2, (int64_t[]){2, -1});
	expect_loads(&b, "y", "2x2");
	reshape4(&b, 2, (int64_t[]){3, -1}); /* does not divide: ONNX refuses it */
	expect_refused(&b, "Reshape", "the target 3x? has no whole -1 for it");
}

static void test_constant_of_shape_and_tile(void **state)
{
	mb b;
	mb_init(&b, 13);
	mb_ints(&b, "s", 2, (int64_t[]){P31, P31});
	mb_node(&b, "ConstantOfShape", "s", "y");
	mb_output(&b, "y");
	expect_refused(&b, "ConstantOfShape", "more than 2^48");
	mb_init(&b, 13);
	mb_ints(&b, "s", 3, (int64_t[]){1 << 30, 1 << 30, 1 << 30});
	mb_node(&b, "ConstantOfShape", "s", "y");
	mb_output(&b, "y");
	expect_refused(&b, "ConstantOfShape", "overflows int64");
	mb_init(&b, 13);
	mb_ints(&b, "s", 2, (int64_t[]){3, -2});
	mb_node(&b, "ConstantOfShape", "s", "y");
	mb_output(&b, "y");
	expect_refused(&b, "ConstantOfShape", "shape[1] = -2 is negative");

	int64_t xd[2] = {1 << 30, 2};
	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 2, xd, NULL);
	mb_ints(&b, "r", 2, (int64_t[]){1 << 20, 1});
	mb_node(&b, "Tile", "x,r", "y");
	mb_output(&b, "y");
	expect_refused(&b, "Tile", "dim 0: 1073741824 x 1048576 repeats is beyond 2^40");
	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 2, xd, NULL);
	mb_ints(&b, "r", 2, (int64_t[]){1, -3});
	mb_node(&b, "Tile", "x,r", "y");
	mb_output(&b, "y");
	expect_refused(&b, "Tile", "repeats[1] = -3 is negative");

	int64_t ed[2] = {3, 4};
	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 2, ed, NULL);
	mb_ints(&b, "s", 2, (int64_t[]){5, 4});
	mb_node(&b, "Expand", "x,s", "y");
	mb_output(&b, "y");
	expect_refused(&b, "Expand", "does not broadcast");
	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 2, ed, NULL);
	mb_ints(&b, "s", 3, (int64_t[]){2, 1, 4});
	mb_node(&b, "Expand", "x,s", "y");
	mb_output(&b, "y");
	expect_loads(&b, "y", "2x3x4");
}

static void topk(mb *b, int64_t k)
{
	int64_t xd[2] = {3, 4};
	mb_init(b, 13);
	mb_input(b, "x", PB_DT_FLOAT, 2, xd, NULL);
	mb_ints(b, "k", 1, &k);
	mb_node(b, "TopK", "x,k", "v,i");
	mb_output(b, "v");
}

static void test_topk(void **state)
{
	mb b;
	topk(&b, P62);
	expect_refused(&b, "TopK", "k[0] = 4611686018427387904 is beyond 2^40");
	topk(&b, 5);
	expect_refused(&b, "TopK", "k = 5 but axis 1 of 'x' has 4 elements");
	topk(&b, -1);
	expect_refused(&b, "TopK", "k = -1");
	topk(&b, 4);
	expect_loads(&b, "v", "3x4");
}

/* Conv of a 1x4x8x8 input with a 4x4x3x3 weight and one attribute list. */
static void conv(mb *b, const char *op, const char *attr, int n, const int64_t *v)
{
	int64_t xd[4] = {1, 4, 8, 8}, wd[4] = {4, 4, 3, 3};
	mb_init(b, 13);
	mb_input(b, "x", PB_DT_FLOAT, 4, xd, NULL);
	if (strcmp(op, "MaxPool") != 0) {
		mb_weight(b, "w", 4, wd);
		mb_node(b, op, "x,w", "y");
	} else {
		mb_node(b, op, "x", "y");
		if (strcmp(attr, "kernel_shape") != 0)
			mb_attr_ints(b, "kernel_shape", 2, (int64_t[]){3, 3});
	}
	if (n == 1)
		mb_attr_int(b, attr, v[0]);
	else if (n > 1)
		mb_attr_ints(b, attr, n, v);
	mb_output(b, "y");
}

static void test_windows(void **state)
{
	mb b;
	conv(&b, "Conv", "strides", 2, (int64_t[]){0, 1});
	expect_refused(&b, "Conv", "strides[0] = 0 (must be at least 1)");
	conv(&b, "Conv", "dilations", 2, (int64_t[]){1, 0});
	expect_refused(&b, "Conv", "dilations[1] = 0 (must be at least 1)");
	conv(&b, "Conv", "pads", 4, (int64_t[]){-3, -3, -3, -3});
	expect_refused(&b, "Conv", "pads[0] = -3 (must be at least 0)");
	conv(&b, "Conv", "group", 1, (int64_t[]){0});
	expect_refused(&b, "Conv", "group = 0 (must be at least 1)");
	conv(&b, "Conv", "kernel_shape", 2, (int64_t[]){9, 9});
	expect_refused(&b, "Conv", "does not fit the input of 8");
	conv(&b, "MaxPool", "kernel_shape", 2, (int64_t[]){0, 0});
	expect_refused(&b, "MaxPool", "kernel_shape[0] = 0 (must be at least 1)");
	conv(&b, "MaxPool", "strides", 2, (int64_t[]){0, 0});
	expect_refused(&b, "MaxPool", "strides[0] = 0");
	conv(&b, "MaxPool", "pads", 4, (int64_t[]){0, 0, -1, -1});
	expect_refused(&b, "MaxPool", "pads[2] = -1");
	conv(&b, "ConvTranspose", "strides", 2, (int64_t[]){0, 0});
	expect_refused(&b, "ConvTranspose", "strides[0] = 0");
	conv(&b, "ConvTranspose", "group", 1, (int64_t[]){0});
	expect_refused(&b, "ConvTranspose", "group = 0");
	conv(&b, "ConvTranspose", "pads", 4, (int64_t[]){9, 9, 9, 9});
	expect_refused(&b, "ConvTranspose", "leave an output of");
	conv(&b, "Conv", "pads", 4, (int64_t[]){1, 1, 1, 1});
	expect_loads(&b, "y", "1x4x8x8");
	conv(&b, "MaxPool", "strides", 2, (int64_t[]){2, 2});
	expect_loads(&b, "y", "1x4x3x3");
}

static void range(mb *b, int64_t start, int64_t limit, int64_t delta)
{
	mb_init(b, 13);
	mb_ints(b, "s", -1, &start);
	mb_ints(b, "l", -1, &limit);
	mb_ints(b, "d", -1, &delta);
	mb_node(b, "Range", "s,l,d", "y");
	mb_output(b, "y");
}

static void test_range_onehot_blocks(void **state)
{
	mb b;
	range(&b, 0, 10, 0);
	expect_refused(&b, "Range", "delta is 0");
	range(&b, 0, (int64_t)1 << 50, 1);
	expect_refused(&b, "Range", "a range of 1125899906842624 elements is beyond 2^40");
	range(&b, 0, 10, 3);
	expect_loads(&b, "y", "4");

	int64_t id[1] = {5};
	mb_init(&b, 13);
	mb_input(&b, "i", PB_DT_INT64, 1, id, NULL);
	mb_ints(&b, "depth", -1, (int64_t[]){0});
	mb_ints(&b, "v", 2, (int64_t[]){0, 1});
	mb_node(&b, "OneHot", "i,depth,v", "y");
	mb_output(&b, "y");
	expect_refused(&b, "OneHot", "depth = 0 is not a dimension");

	int64_t xd[4] = {1, 8, 2, 2};
	const char *ops[] = {"DepthToSpace", "SpaceToDepth"};
	for (int k = 0; k < 2; k++) {
		mb_init(&b, 13);
		mb_input(&b, "x", PB_DT_FLOAT, 4, xd, NULL);
		mb_node(&b, ops[k], "x", "y");
		mb_attr_int(&b, "blocksize", 0);
		mb_output(&b, "y");
		expect_refused(&b, ops[k], "blocksize = 0");
	}
}

/* A dim stated by the file beyond 2^40 (an input of 2^50) is read as
 * unknown by the loader, never as a number; what follows stays unknown. */
static void test_stated_dims(void **state)
{
	mb b;
	int64_t xd[2] = {(int64_t)1 << 50, 2};
	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 2, xd, NULL);
	mb_node(&b, "Relu", "x", "y");
	mb_output(&b, "y");
	expect_loads(&b, "y", "?x2");
}

static void test_random_and_unpool(void **state)
{
	mb b;
	mb_init(&b, 13);
	mb_node(&b, "RandomNormal", "", "y");
	mb_attr_ints(&b, "shape", 2, (int64_t[]){P62, 2});
	mb_output(&b, "y");
	expect_refused(&b, "RandomNormal", "shape[0] = 4611686018427387904 is beyond 2^40");
	mb_init(&b, 13);
	mb_node(&b, "RandomUniform", "", "y");
	mb_attr_ints(&b, "shape", 2, (int64_t[]){3, -2});
	mb_output(&b, "y");
	expect_refused(&b, "RandomUniform", "shape[1] = -2 is negative");

	int64_t xd[4] = {1, 2, 3, 3};
	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 4, xd, NULL);
	mb_input(&b, "i", PB_DT_INT64, 4, xd, NULL);
	mb_node(&b, "MaxUnpool", "x,i", "y");
	mb_attr_ints(&b, "kernel_shape", 2, (int64_t[]){2, 2});
	mb_attr_ints(&b, "strides", 2, (int64_t[]){0, 2});
	mb_output(&b, "y");
	expect_refused(&b, "MaxUnpool", "kernel_shape and strides must be at least 1 (axis 0)");
	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 4, xd, NULL);
	mb_input(&b, "i", PB_DT_INT64, 4, xd, NULL);
	mb_ints(&b, "s", 4, (int64_t[]){1, 2, P62, 6});
	mb_node(&b, "MaxUnpool", "x,i,s", "y");
	mb_attr_ints(&b, "kernel_shape", 2, (int64_t[]){2, 2});
	mb_output(&b, "y");
	expect_refused(&b, "MaxUnpool", "output_shape[2] = 4611686018427387904 is beyond 2^40");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reshape),
	    cmocka_unit_test(test_constant_of_shape_and_tile),
	    cmocka_unit_test(test_topk),
	    cmocka_unit_test(test_windows),
	    cmocka_unit_test(test_range_onehot_blocks),
	    cmocka_unit_test(test_stated_dims),
	    cmocka_unit_test(test_random_and_unpool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
