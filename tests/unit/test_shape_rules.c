/* test_shape_rules.c — shape rules and costs of the tricky operators, on
 * small ONNX models built with protobuf-c and loaded from bytes: Reshape with
 * 0/-1, MatMul broadcasting, Conv pads/strides/dilations/auto_pad/group,
 * ConvTranspose, Split opset 13 vs 18, Slice with negative steps, Einsum,
 * Squeeze/Unsqueeze axes as attribute vs input, evaluated shape subgraphs,
 * symbolic dims with --input overrides, initializers listed as inputs, and
 * If subgraphs. Expected shapes are worked out by hand from the ONNX spec. */
#include "pb_test.h"

#include "pb_onnx_build.h"
#include "shape/shape.h"

static pb_graph *load(mb *b, const pb_load_opts *opts)
{
	pb_error err = {0};
	pb_graph *g = mb_load(b, opts, &err);
	if (!g)
		fail_msg("load failed: %s", err.msg);
	return g;
}

static void expect_shape(const pb_graph *g, const char *tensor, const char *want)
{
	int t = pb_graph_find_tensor(g, tensor);
	assert_true(t >= 0);
	char buf[128];
	pb_tensor_shape_str(&g->tensors[t], buf, sizeof buf);
	if (strcmp(buf, want) != 0)
		fail_msg("%s: inferred %s, expected %s", tensor, buf, want);
}

static double node_macs(const pb_graph *g, const char *op)
{
	for (int i = 0; i < g->n_nodes; i++)
		if (strcmp(g->nodes[i].op, op) == 0)
			return g->nodes[i].cost.macs;
	return -1;
}

static void test_reshape_zero_and_minus_one(void **state)
{
	static const struct {
		int n;
		int64_t shape[4];
		const char *want;
	} cases[] = {
	    {2, {0, -1}, "2x12"},          {2, {-1, 4}, "6x4"}, {3, {0, 0, -1}, "2x3x4"},
	    {4, {1, -1, 2, 2}, "1x6x2x2"}, {1, {-1}, "24"},     {3, {4, 0, -1}, "4x3x2"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		mb b;
		mb_init(&b, 13);
		int64_t xd[3] = {2, 3, 4};
		mb_input(&b, "x", PB_DT_FLOAT, 3, xd, NULL);
		mb_ints(&b, "s", cases[k].n, cases[k].shape);
		mb_node(&b, "Reshape", "x,s", "y");
		mb_output(&b, "y");
		pb_graph *g = load(&b, NULL);
		expect_shape(g, "y", cases[k].want);
		pb_graph_free(g);
		mb_free(&b);
	}
	/* allowzero = 1 (opset 14): a 0 is a real zero-sized dim. */
	mb b;
	mb_init(&b, 14);
	int64_t xd[2] = {0, 4}, s[2] = {0, 4};
	mb_input(&b, "x", PB_DT_FLOAT, 2, xd, NULL);
	mb_ints(&b, "s", 2, s);
	mb_node(&b, "Reshape", "x,s", "y");
	mb_attr_int(&b, "allowzero", 1);
	mb_output(&b, "y");
	pb_graph *g = load(&b, NULL);
	expect_shape(g, "y", "0x4");
	pb_graph_free(g);
	mb_free(&b);
}

/* Shape values at the ends of int64 (INT64_MAX, INT64_MIN, -1 next to huge
 * dims) must neither overflow (UBSan runs this in `make asan`) nor give dims
 * beyond 2^40: they are clamped or become unknown, and the MAC count of a
 * MatMul on the result stays finite. */
/* Shape entries beyond 2^40 are refused naming the node (they used to be
 * clamped to 2^40: tests/unit/test_shape_refuse.c has the rest); in-range
 * extremes still load with dims inside [?, 2^40] and finite costs. */
static void test_reshape_extreme_values(void **state)
{
	static const struct {
		int n;
		int64_t shape[3];
		const char *error;
	} cases[] = {
	    {2, {INT64_MAX, INT64_MAX}, "shape[0] = 9223372036854775807 is beyond 2^40"},
	    {2, {-1, INT64_MAX}, "shape[1] = 9223372036854775807 is beyond 2^40"},
	    {2, {INT64_MIN, -1}, "shape[0] = -9223372036854775808 is beyond 2^40"},
	    {3, {0, -1, INT64_MAX}, "shape[2] = 9223372036854775807 is beyond 2^40"},
	    {2, {-1, 0}, NULL},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		mb b;
		mb_init(&b, 13);
		int64_t xd[2] = {(int64_t)1 << 40, 3};
		mb_input(&b, "x", PB_DT_FLOAT, 2, xd, NULL);
		mb_ints(&b, "s", cases[k].n, cases[k].shape);
		mb_node(&b, "Reshape", "x,s", "y");
		mb_node(&b, "Relu", "y", "z");
		mb_output(&b, "z");
		if (cases[k].error) {
			pb_error err = {0};
			pb_graph *g = mb_load(&b, NULL, &err);
			assert_null(g);
			if (!strstr(err.msg, cases[k].error) || !strstr(err.msg, "node 'Reshape'"))
				fail_msg("%s", err.msg);
			mb_free(&b);
			continue;
		}
		pb_graph *g = load(&b, NULL);
		const pb_tensor *y = &g->tensors[pb_graph_find_tensor(g, "y")];
		assert_int_equal(y->rank, cases[k].n);
		for (int i = 0; i < y->rank; i++)
			assert_true(y->dims[i] >= PB_DIM_UNKNOWN &&
			            y->dims[i] <= ((int64_t)1 << 40));
		assert_true(isfinite(g->total.macs) && g->total.macs >= 0);
		pb_graph_free(g);
		mb_free(&b);
	}
}

static void test_matmul_broadcast(void **state)
{
	static const struct {
		int ra;
		int64_t a[4];
		int rb;
		int64_t b[4];
		const char *want;
		double macs;
	} cases[] = {
	    {4, {2, 1, 3, 4}, 3, {5, 4, 6}, "2x5x3x6", 2 * 5 * 3 * 6 * 4},
	    {1, {4}, 3, {2, 4, 6}, "2x6", 2 * 6 * 4},
	    {2, {3, 4}, 1, {4}, "3", 3 * 4},
	    {1, {4}, 1, {4}, "scalar", 4},
	    {3, {8, 49, 32}, 3, {8, 32, 49}, "8x49x49", 8 * 49 * 49 * 32},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		mb b;
		mb_init(&b, 13);
		mb_input(&b, "a", PB_DT_FLOAT, cases[k].ra, cases[k].a, NULL);
		mb_input(&b, "b", PB_DT_FLOAT, cases[k].rb, cases[k].b, NULL);
		mb_node(&b, "MatMul", "a,b", "y");
		mb_output(&b, "y");
		pb_graph *g = load(&b, NULL);
		expect_shape(g, "y", cases[k].want);
		assert_true(node_macs(g, "MatMul") == cases[k].macs);
		assert_true(g->total.flops == 2 * cases[k].macs);
		pb_graph_free(g);
		mb_free(&b);
	}
}

static void test_conv_variants(void **state)
{
	static const struct {
		int64_t c_in, hw, c_out, k, group;
		int64_t pads[4], strides, dil;
		const char *auto_pad;
		const char *want;
	} cases[] = {
	    /* out = floor((in + pb + pe - dil*(k-1) - 1)/s) + 1 */
	    {3, 10, 8, 3, 1, {1, 1, 1, 1}, 2, 1, NULL, "1x8x5x5"},
	    {3, 10, 8, 3, 1, {0, 0, 0, 0}, 1, 2, NULL, "1x8x6x6"},
	    {3, 10, 8, 3, 1, {0, 0, 0, 0}, 2, 1, "SAME_UPPER", "1x8x5x5"},
	    {3, 10, 8, 3, 1, {0, 0, 0, 0}, 2, 1, "VALID", "1x8x4x4"},
	    {3, 7, 8, 3, 1, {0, 1, 2, 3}, 1, 1, NULL, "1x8x7x9"},
	    {4, 7, 4, 3, 4, {0, 0, 0, 0}, 1, 1, NULL, "1x4x5x5"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		mb b;
		mb_init(&b, 13);
		int64_t xd[4] = {1, cases[k].c_in, cases[k].hw, cases[k].hw};
		int64_t wd[4] = {cases[k].c_out, cases[k].c_in / cases[k].group, cases[k].k,
		                 cases[k].k};
		int64_t st[2] = {cases[k].strides, cases[k].strides};
		int64_t dl[2] = {cases[k].dil, cases[k].dil};
		mb_input(&b, "x", PB_DT_FLOAT, 4, xd, NULL);
		mb_weight(&b, "w", 4, wd);
		mb_node(&b, "Conv", "x,w", "y");
		mb_attr_ints(&b, "strides", 2, st);
		mb_attr_ints(&b, "dilations", 2, dl);
		mb_attr_int(&b, "group", cases[k].group);
		if (cases[k].auto_pad)
			mb_attr_str(&b, "auto_pad", cases[k].auto_pad);
		else
			mb_attr_ints(&b, "pads", 4, cases[k].pads);
		mb_output(&b, "y");
		pb_graph *g = load(&b, NULL);
		expect_shape(g, "y", cases[k].want);
		const pb_tensor *y = &g->tensors[pb_graph_find_tensor(g, "y")];
		double want_macs = (double)pb_tensor_numel(y) *
		                   (double)(cases[k].c_in / cases[k].group) *
		                   (double)(cases[k].k * cases[k].k);
		assert_true(node_macs(g, "Conv") == want_macs);
		assert_true(g->nodes[0].cost.params == (double)(wd[0] * wd[1] * wd[2] * wd[3]));
		pb_graph_free(g);
		mb_free(&b);
	}
}

static void test_conv_transpose(void **state)
{
	mb b;
	mb_init(&b, 13);
	int64_t xd[4] = {1, 2, 3, 3}, wd[4] = {2, 4, 3, 3}, st[2] = {2, 2}, op[2] = {1, 1};
	mb_input(&b, "x", PB_DT_FLOAT, 4, xd, NULL);
	mb_weight(&b, "w", 4, wd);
	mb_node(&b, "ConvTranspose", "x,w", "y");
	mb_attr_ints(&b, "strides", 2, st);
	mb_node(&b, "ConvTranspose", "x,w", "z");
	mb_attr_ints(&b, "strides", 2, st);
	mb_attr_ints(&b, "output_padding", 2, op);
	mb_output(&b, "y");
	mb_output(&b, "z");
	pb_graph *g = load(&b, NULL);
	/* 2*(3-1) + 3 = 7; + output_padding 1 = 8 */
	expect_shape(g, "y", "1x4x7x7");
	expect_shape(g, "z", "1x4x8x8");
	assert_true(g->nodes[0].cost.macs == 1.0 * 2 * 3 * 3 * 4 * 3 * 3);
	pb_graph_free(g);
	mb_free(&b);
}

static pb_graph *split_graph(mb *b, int opset, int64_t dim, int n_out, const int64_t *split,
                             int n_split, int as_attr, int num_outputs)
{
	mb_init(b, opset);
	int64_t xd[2] = {dim, 5};
	mb_input(b, "x", PB_DT_FLOAT, 2, xd, NULL);
	if (split && !as_attr)
		mb_ints(b, "sp", n_split, split);
	const char *outs[] = {"o0", "o0,o1", "o0,o1,o2", "o0,o1,o2,o3"};
	mb_node(b, "Split", split && !as_attr ? "x,sp" : "x", outs[n_out - 1]);
	if (split && as_attr)
		mb_attr_ints(b, "split", n_split, split);
	if (num_outputs)
		mb_attr_int(b, "num_outputs", num_outputs);
	for (int i = 0; i < n_out; i++)
		mb_output(b, i == 0 ? "o0" : i == 1 ? "o1" : i == 2 ? "o2" : "o3");
	return load(b, NULL);
}

static void test_split_opsets(void **state)
{
	mb b;
	int64_t sp[2] = {2, 4};
	/* opset 11: split attribute */
	pb_graph *g = split_graph(&b, 11, 6, 2, sp, 2, 1, 0);
	expect_shape(g, "o0", "2x5");
	expect_shape(g, "o1", "4x5");
	pb_graph_free(g);
	mb_free(&b);
	/* opset 13: split input */
	g = split_graph(&b, 13, 6, 2, sp, 2, 0, 0);
	expect_shape(g, "o0", "2x5");
	expect_shape(g, "o1", "4x5");
	pb_graph_free(g);
	mb_free(&b);
	/* opset 13: equal parts from the output count */
	g = split_graph(&b, 13, 6, 3, NULL, 0, 0, 0);
	expect_shape(g, "o2", "2x5");
	pb_graph_free(g);
	mb_free(&b);
	/* opset 18: num_outputs with an uneven split: ceil(7/3) = 3, 3, 1 */
	g = split_graph(&b, 18, 7, 3, NULL, 0, 0, 3);
	expect_shape(g, "o0", "3x5");
	expect_shape(g, "o1", "3x5");
	expect_shape(g, "o2", "1x5");
	pb_graph_free(g);
	mb_free(&b);
}

static void test_slice_negative_steps(void **state)
{
	static const struct {
		int64_t start, end, axis, step;
		const char *want;
	} cases[] = {
	    {-1, -1000, 0, -1, "10x6"}, /* full reverse */
	    {8, 2, 0, -2, "3x6"},       /* 8, 6, 4 */
	    {0, 100, -1, 4, "10x2"},    /* 0, 4 */
	    {-2, 0, 1, -1, "10x4"},     /* 4, 3, 2, 1 */
	    {5, 5, 0, 1, "0x6"},        /* empty */
	    {2, 7, 0, 1, "5x6"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		mb b;
		mb_init(&b, 13);
		int64_t xd[2] = {10, 6};
		mb_input(&b, "x", PB_DT_FLOAT, 2, xd, NULL);
		mb_ints(&b, "st", 1, &cases[k].start);
		mb_ints(&b, "en", 1, &cases[k].end);
		mb_ints(&b, "ax", 1, &cases[k].axis);
		mb_ints(&b, "sp", 1, &cases[k].step);
		mb_node(&b, "Slice", "x,st,en,ax,sp", "y");
		mb_output(&b, "y");
		pb_graph *g = load(&b, NULL);
		expect_shape(g, "y", cases[k].want);
		pb_graph_free(g);
		mb_free(&b);
	}
}

static void test_einsum(void **state)
{
	static const struct {
		const char *eq;
		int ra;
		int64_t a[4];
		int rb;
		int64_t b[4];
		const char *want;
		double macs;
	} cases[] = {
	    {"bij,bjk->bik", 3, {2, 3, 4}, 3, {2, 4, 5}, "2x3x5", 2 * 3 * 4 * 5},
	    {"...ij,...jk", 4, {7, 2, 3, 4}, 3, {2, 4, 5}, "7x2x3x5", 7 * 2 * 3 * 4 * 5},
	    {"bhqd,bhkd->bhqk",
	     4,
	     {1, 12, 128, 64},
	     4,
	     {1, 12, 128, 64},
	     "1x12x128x128",
	     12.0 * 128 * 128 * 64},
	    {"i,i", 1, {6}, 1, {6}, "scalar", 6},
	    {"ij,jk->ki", 2, {3, 4}, 2, {4, 5}, "5x3", 3 * 4 * 5},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		mb b;
		mb_init(&b, 13);
		mb_input(&b, "a", PB_DT_FLOAT, cases[k].ra, cases[k].a, NULL);
		mb_input(&b, "b", PB_DT_FLOAT, cases[k].rb, cases[k].b, NULL);
		mb_node(&b, "Einsum", "a,b", "y");
		mb_attr_str(&b, "equation", cases[k].eq);
		mb_output(&b, "y");
		pb_graph *g = load(&b, NULL);
		expect_shape(g, "y", cases[k].want);
		assert_true(node_macs(g, "Einsum") == cases[k].macs);
		pb_graph_free(g);
		mb_free(&b);
	}
	/* One operand: transpose, no MACs. */
	mb b;
	mb_init(&b, 13);
	int64_t ad[2] = {3, 4};
	mb_input(&b, "a", PB_DT_FLOAT, 2, ad, NULL);
	mb_node(&b, "Einsum", "a", "y");
	mb_attr_str(&b, "equation", "ij->ji");
	mb_output(&b, "y");
	pb_graph *g = load(&b, NULL);
	expect_shape(g, "y", "4x3");
	assert_true(g->total.macs == 0);
	pb_graph_free(g);
	mb_free(&b);
}

static void test_squeeze_unsqueeze_axes(void **state)
{
	int64_t xd[4] = {1, 3, 1, 5}, ax[1] = {2}, uax[2] = {0, -1};
	for (int opset = 11; opset <= 13; opset += 2) {
		mb b;
		mb_init(&b, opset);
		mb_input(&b, "x", PB_DT_FLOAT, 4, xd, NULL);
		if (opset >= 13) {
			mb_ints(&b, "ax", 1, ax);
			mb_ints(&b, "uax", 2, uax);
			mb_node(&b, "Squeeze", "x,ax", "s");
			mb_node(&b, "Unsqueeze", "s,uax", "u");
		} else {
			mb_node(&b, "Squeeze", "x", "s");
			mb_attr_ints(&b, "axes", 1, ax);
			mb_node(&b, "Unsqueeze", "s", "u");
			mb_attr_ints(&b, "axes", 2, uax);
		}
		mb_node(&b, "Squeeze", "x", "all");
		mb_output(&b, "u");
		mb_output(&b, "all");
		pb_graph *g = load(&b, NULL);
		expect_shape(g, "s", "1x3x5");
		expect_shape(g, "u", "1x1x3x5x1");
		expect_shape(g, "all", "3x5");
		pb_graph_free(g);
		mb_free(&b);
	}
}

/* Reduce* axes: an attribute up to opset 17 (ReduceSum: 12), an input from
 * 18 (ReduceSum: 13); keepdims and noop_with_empty_axes either way. */
static void test_reduce_axes_opsets(void **state)
{
	int64_t xd[4] = {2, 3, 4, 5}, ax[2] = {1, -1};
	const int opsets[] = {11, 13, 17, 18};
	for (int k = 0; k < 4; k++) {
		int opset = opsets[k];
		mb b;
		mb_init(&b, opset);
		mb_input(&b, "x", PB_DT_FLOAT, 4, xd, NULL);
		if (opset >= 18) {
			mb_ints(&b, "ax", 2, ax);
			mb_node(&b, "ReduceMean", "x,ax", "m");
		} else {
			mb_node(&b, "ReduceMean", "x", "m");
			mb_attr_ints(&b, "axes", 2, ax);
		}
		if (opset >= 13) {
			mb_ints(&b, "sax", 2, ax);
			mb_node(&b, "ReduceSum", "x,sax", "s");
		} else {
			mb_node(&b, "ReduceSum", "x", "s");
			mb_attr_ints(&b, "axes", 2, ax);
		}
		mb_attr_int(&b, "keepdims", 0);
		mb_node(&b, "ReduceMax", "x", "all"); /* no axes: all of them */
		mb_output(&b, "m");
		mb_output(&b, "s");
		mb_output(&b, "all");
		pb_graph *g = load(&b, NULL);
		expect_shape(g, "m", "2x1x4x1");
		expect_shape(g, "s", "2x4");
		expect_shape(g, "all", "1x1x1x1");
		pb_graph_free(g);
		mb_free(&b);
	}
}

/* Shape → Gather → Unsqueeze → Concat → Reshape, Range, ConstantOfShape,
 * Where/Equal/Expand: evaluated so the final shapes are concrete. */
static void test_shape_subgraph_evaluated(void **state)
{
	mb b;
	mb_init(&b, 13);
	int64_t xd[3] = {2, 3, 4}, zero = 0, minus1 = -1, ax0 = 0, one = 1, start = 0;
	mb_input(&b, "x", PB_DT_FLOAT, 3, xd, NULL);
	mb_ints(&b, "i0", -1, &zero);
	mb_ints(&b, "m1", 1, &minus1);
	mb_ints(&b, "ax0", 1, &ax0);
	mb_ints(&b, "one", -1, &one);
	mb_ints(&b, "start", -1, &start);
	mb_node(&b, "Shape", "x", "shp");
	mb_node(&b, "Gather", "shp,i0", "n");
	mb_node(&b, "Unsqueeze", "n,ax0", "n1");
	mb_node(&b, "Concat", "n1,m1", "newshape");
	mb_attr_int(&b, "axis", 0);
	mb_node(&b, "Reshape", "x,newshape", "y");
	/* Range(0, n, 1) has n = 2 elements; ConstantOfShape(shape of y) */
	mb_node(&b, "Range", "start,n,one", "r");
	mb_node(&b, "Shape", "y", "yshape");
	mb_node(&b, "ConstantOfShape", "yshape", "zeros");
	/* torch's -1 handling: Where(Equal(shape, -1), ones, shape) → Expand */
	mb_node(&b, "Equal", "newshape,m1", "isneg");
	mb_node(&b, "ConstantOfShape", "n1", "dummy");
	mb_node(&b, "Mul", "newshape,m1", "neg");
	mb_node(&b, "Where", "isneg,one,newshape", "fixed");
	mb_node(&b, "Expand", "y,fixed", "e");
	mb_output(&b, "e");
	mb_output(&b, "r");
	mb_output(&b, "zeros");
	pb_graph *g = load(&b, NULL);
	expect_shape(g, "y", "2x12");
	expect_shape(g, "r", "2");
	expect_shape(g, "zeros", "2x12");
	expect_shape(g, "e", "2x12");
	const pb_tensor *ns = &g->tensors[pb_graph_find_tensor(g, "newshape")];
	assert_non_null(ns->value);
	assert_int_equal(ns->value->i[0], 2);
	assert_int_equal(ns->value->i[1], -1);
	const pb_tensor *neg = &g->tensors[pb_graph_find_tensor(g, "neg")];
	assert_non_null(neg->value);
	assert_int_equal(neg->value->i[0], -2);
	assert_int_equal(g->n_unknown_shapes, 0);
	pb_graph_free(g);
	mb_free(&b);
}

static void test_symbolic_input_override(void **state)
{
	int64_t xd[2] = {-1, 3};
	const char *params[2] = {"batch", NULL};
	mb b;
	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 2, xd, params);
	int64_t wd[2] = {3, 4};
	mb_weight(&b, "w", 2, wd);
	mb_node(&b, "MatMul", "x,w", "y");
	mb_output(&b, "y");
	pb_graph *g = load(&b, NULL);
	char names[256];
	assert_int_equal(pb_shape_unresolved_inputs(g, names, sizeof names), 1);
	assert_non_null(strstr(names, "x"));
	assert_non_null(strstr(names, "batch"));
	assert_true(g->n_unknown_shapes > 0);
	assert_true(g->total.macs == 0);
	pb_graph_free(g);

	pb_input_override o;
	pb_error err = {0};
	assert_int_equal(pb_parse_input_override("x=5,3", &o, &err), PB_OK);
	pb_load_opts opts = {&o, 1, 0};
	g = load(&b, &opts);
	expect_shape(g, "y", "5x4");
	assert_true(g->total.macs == 5 * 3 * 4);
	assert_int_equal(pb_shape_unresolved_inputs(g, names, sizeof names), 0);
	pb_graph_free(g);
	pb_input_override_free(&o);

	/* An override naming something that is not an input is a usage error. */
	assert_int_equal(pb_parse_input_override("w=3,4", &o, &err), PB_OK);
	pb_load_opts bad = {&o, 1, 0};
	assert_null(mb_load(&b, &bad, &err));
	assert_int_equal(err.code, PB_EUSAGE);
	assert_non_null(strstr(err.msg, "not a model input"));
	pb_input_override_free(&o);

	/* A rank other than the declared one is a usage error naming both. */
	assert_int_equal(pb_parse_input_override("x=5,3,1", &o, &err), PB_OK);
	pb_load_opts rank3 = {&o, 1, 0};
	assert_null(mb_load(&b, &rank3, &err));
	assert_int_equal(err.code, PB_EUSAGE);
	assert_non_null(strstr(err.msg, "'x' 3 dims"));
	if (!strstr(err.msg, "declares rank 2"))
		fail_msg("%s", err.msg);
	pb_input_override_free(&o);
	mb_free(&b);
}

static void test_initializer_listed_as_input(void **state)
{
	mb b;
	mb_init(&b, 13);
	int64_t xd[2] = {2, 3}, wd[2] = {3, 4};
	mb_input(&b, "x", PB_DT_FLOAT, 2, xd, NULL);
	mb_input(&b, "w", PB_DT_FLOAT, 2, wd, NULL); /* IR < 4 style */
	mb_weight(&b, "w", 2, wd);
	mb_node(&b, "MatMul", "x,w", "y");
	mb_output(&b, "y");
	pb_graph *g = load(&b, NULL);
	assert_int_equal(g->n_inputs, 1);
	assert_string_equal(g->tensors[g->inputs[0]].name, "x");
	assert_true(g->nodes[0].cost.params == 12);
	pb_graph_free(g);
	mb_free(&b);
}

static void test_if_subgraph_kept_as_one_node(void **state)
{
	mb b;
	mb_init(&b, 13);
	int64_t cd[1] = {1}, xd[1] = {4};
	mb_input(&b, "c", PB_DT_BOOL, 1, cd, NULL);
	mb_input(&b, "x", PB_DT_FLOAT, 1, xd, NULL);
	mb_node(&b, "If", "c", "y");
	Onnx__GraphProto *branches[2];
	for (int k = 0; k < 2; k++) {
		Onnx__GraphProto *sg = mb_alloc(&b, sizeof *sg);
		Onnx__GraphProto gi = ONNX__GRAPH_PROTO__INIT;
		*sg = gi;
		branches[k] = sg;
	}
	/* Two nodes in the then-branch, built with the same helpers. */
	Onnx__NodeProto *saved = b.last;
	Onnx__GraphProto main_graph = b.graph;
	b.graph = *branches[0];
	mb_node(&b, "Relu", "x", "t0");
	mb_node(&b, "Neg", "t0", "t1");
	*branches[0] = b.graph;
	b.graph = main_graph;
	b.last = saved;
	Onnx__AttributeProto *a =
	    mb_attr(&b, "then_branch", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
	a->g = branches[0];
	a = mb_attr(&b, "else_branch", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
	a->g = branches[1];
	mb_node(&b, "Relu", "y", "z");
	mb_output(&b, "z");
	pb_graph *g = load(&b, NULL);
	assert_int_equal(g->n_nodes, 2);
	assert_string_equal(g->nodes[0].op, "If");
	const pb_attr *then_b = pb_node_attr(&g->nodes[0], "then_branch");
	assert_non_null(then_b);
	assert_int_equal(then_b->type, PB_ATTR_GRAPH);
	assert_int_equal(then_b->subgraph_nodes, 2);
	assert_int_equal(pb_node_attr(&g->nodes[0], "else_branch")->subgraph_nodes, 0);
	assert_false(pb_shape_op_supported("If"));
	pb_graph_free(g);
	mb_free(&b);
}

static void test_pools_and_gemm(void **state)
{
	mb b;
	mb_init(&b, 13);
	int64_t xd[4] = {1, 8, 9, 9}, k3[2] = {3, 3}, s2[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
	mb_input(&b, "x", PB_DT_FLOAT, 4, xd, NULL);
	mb_node(&b, "MaxPool", "x", "p");
	mb_attr_ints(&b, "kernel_shape", 2, k3);
	mb_attr_ints(&b, "strides", 2, s2);
	mb_attr_int(&b, "ceil_mode", 1);
	mb_node(&b, "AveragePool", "x", "q");
	mb_attr_ints(&b, "kernel_shape", 2, k3);
	mb_attr_ints(&b, "strides", 2, s2);
	mb_attr_ints(&b, "pads", 4, pads);
	mb_node(&b, "GlobalAveragePool", "q", "gp");
	mb_node(&b, "Flatten", "gp", "f");
	int64_t wd[2] = {10, 8};
	mb_weight(&b, "w", 2, wd);
	mb_node(&b, "Gemm", "f,w", "y");
	mb_attr_int(&b, "transB", 1);
	mb_output(&b, "p");
	mb_output(&b, "y");
	pb_graph *g = load(&b, NULL);
	expect_shape(g, "p", "1x8x4x4"); /* ceil((9-3)/2)+1 = 4 */
	expect_shape(g, "q", "1x8x5x5"); /* floor((9+2-3)/2)+1 = 5 */
	expect_shape(g, "gp", "1x8x1x1");
	expect_shape(g, "f", "1x8");
	expect_shape(g, "y", "1x10");
	assert_true(node_macs(g, "Gemm") == 80);
	pb_graph_free(g);
	mb_free(&b);
}

static void test_lstm_shapes_and_macs(void **state)
{
	for (int dirs = 1; dirs <= 2; dirs++) {
		mb b;
		mb_init(&b, 14);
		int64_t xd[3] = {5, 2, 3}, wd[3] = {dirs, 16, 3}, rd[3] = {dirs, 16, 4};
		mb_input(&b, "x", PB_DT_FLOAT, 3, xd, NULL);
		mb_weight(&b, "w", 3, wd);
		mb_weight(&b, "r", 3, rd);
		mb_node(&b, "LSTM", "x,w,r", "y,yh,yc");
		mb_attr_int(&b, "hidden_size", 4);
		if (dirs == 2)
			mb_attr_str(&b, "direction", "bidirectional");
		mb_output(&b, "y");
		pb_graph *g = load(&b, NULL);
		expect_shape(g, "y", dirs == 1 ? "5x1x2x4" : "5x2x2x4");
		expect_shape(g, "yh", dirs == 1 ? "1x2x4" : "2x2x4");
		expect_shape(g, "yc", dirs == 1 ? "1x2x4" : "2x2x4");
		/* seq 5 x batch 2 x dirs x 4 gates x hidden 4 x (input 3 + hidden 4) */
		assert_true(g->total.macs == 5.0 * 2 * dirs * 4 * 4 * (3 + 4));
		pb_graph_free(g);
		mb_free(&b);
	}
}

/* Known dims that contradict each other are an error naming the node and the
 * tensors, never a silently wrong shape: Conv channels against the weight
 * (with groups), Gemm and MatMul inner dims, MatMul batch dims and
 * element-wise operands that do not broadcast. */
static void expect_conflict(mb *b, const char *want)
{
	pb_error err = {0};
	pb_graph *g = mb_load(b, NULL, &err);
	if (g)
		fail_msg("loaded; expected an error containing '%s'", want);
	assert_int_equal(err.code, PB_EINPUT);
	if (!strstr(err.msg, want))
		fail_msg("error '%s' does not contain '%s'", err.msg, want);
	mb_free(b);
}

static void test_shape_conflicts(void **state)
{
	(void)state;
	mb b;
	int64_t x4[4] = {1, 6, 8, 8}, w4[4] = {8, 3, 3, 3};
	mb_init(&b, 13); /* 6 channels, weight for 3, group 1 */
	mb_input(&b, "x", PB_DT_FLOAT, 4, x4, NULL);
	mb_weight(&b, "w", 4, w4);
	mb_node(&b, "Conv", "x,w", "y");
	mb_output(&b, "y");
	expect_conflict(&b, "built.onnx: node 'Conv' (Conv): input 'x' has 6 channels but weight "
	                    "'w' expects 3 x group 1");
	mb_init(&b, 13); /* the same with group 2 is consistent */
	mb_input(&b, "x", PB_DT_FLOAT, 4, x4, NULL);
	mb_weight(&b, "w", 4, w4);
	mb_node(&b, "Conv", "x,w", "y");
	mb_attr_int(&b, "group", 2);
	mb_output(&b, "y");
	pb_graph *g = load(&b, NULL);
	expect_shape(g, "y", "1x8x6x6");
	pb_graph_free(g);
	mb_free(&b);

	int64_t a2[2] = {4, 16}, b2[2] = {12, 5};
	mb_init(&b, 13);
	mb_input(&b, "a", PB_DT_FLOAT, 2, a2, NULL);
	mb_weight(&b, "b", 2, b2);
	mb_node(&b, "Gemm", "a,b", "y");
	mb_output(&b, "y");
	expect_conflict(&b, "inner dims differ: 'a' has 16, 'b' has 12");
	mb_init(&b, 13); /* transB makes b 5x12: still 16 vs 5 */
	mb_input(&b, "a", PB_DT_FLOAT, 2, a2, NULL);
	mb_weight(&b, "b", 2, b2);
	mb_node(&b, "Gemm", "a,b", "y");
	mb_attr_int(&b, "transB", 1);
	mb_output(&b, "y");
	expect_conflict(&b, "'a' has 16, 'b' has 5");

	int64_t a3[3] = {2, 4, 16}, b3[3] = {3, 16, 5};
	mb_init(&b, 13);
	mb_input(&b, "a", PB_DT_FLOAT, 3, a3, NULL);
	mb_weight(&b, "b", 2, b2);
	mb_node(&b, "MatMul", "a,b", "y");
	mb_output(&b, "y");
	expect_conflict(&b, "(MatMul): inner dims differ: 'a' has 16, 'b' has 12");
	mb_init(&b, 13);
	mb_input(&b, "a", PB_DT_FLOAT, 3, a3, NULL);
	mb_weight(&b, "b", 3, b3);
	mb_node(&b, "MatMul", "a,b", "y");
	mb_output(&b, "y");
	expect_conflict(&b, "batch dims of 'a' and 'b' do not broadcast");

	int64_t p[2] = {4, 3}, q[2] = {4, 2};
	mb_init(&b, 13);
	mb_input(&b, "p", PB_DT_FLOAT, 2, p, NULL);
	mb_input(&b, "q", PB_DT_FLOAT, 2, q, NULL);
	mb_node(&b, "Add", "p,q", "y");
	mb_output(&b, "y");
	expect_conflict(&b, "(Add): input 'q' does not broadcast");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reshape_zero_and_minus_one),
	    cmocka_unit_test(test_reshape_extreme_values),
	    cmocka_unit_test(test_matmul_broadcast),
	    cmocka_unit_test(test_conv_variants),
	    cmocka_unit_test(test_shape_conflicts),
	    cmocka_unit_test(test_conv_transpose),
	    cmocka_unit_test(test_split_opsets),
	    cmocka_unit_test(test_slice_negative_steps),
	    cmocka_unit_test(test_einsum),
	    cmocka_unit_test(test_squeeze_unsqueeze_axes),
	    cmocka_unit_test(test_reduce_axes_opsets),
	    cmocka_unit_test(test_shape_subgraph_evaluated),
	    cmocka_unit_test(test_symbolic_input_override),
	    cmocka_unit_test(test_initializer_listed_as_input),
	    cmocka_unit_test(test_if_subgraph_kept_as_one_node),
	    cmocka_unit_test(test_pools_and_gemm),
	    cmocka_unit_test(test_lstm_shapes_and_macs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
