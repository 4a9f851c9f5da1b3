/* test_tune_grouped.c — grouped and depthwise convolution in the tuner: the
 * naive reference against values worked out by hand and against per-group
 * ungrouped references, every configuration of the grouped spaces against
 * the reference on small odd shapes, the spaces themselves, and node shapes
 * (a depthwise Conv keeps its group, a 1x1 stride-1 Conv becomes a GEMM).
 * No timing assertions. */
#include "pb_test.h"
#include "load.h"

#include "tune/kernels.h"
#include "tune/measure.h"
#include "tune/space.h"

static const pb_tune_measure_opts FAST = {1, 1, 0};

/* Depthwise, 2 channels, 3x3 input, 3x3 kernel, pad 1. Channel 0 weights are
 * all 1 (each output is the sum of its 3x3 neighbourhood), channel 1 has only
 * a centre weight 2 (output = 2 x input). */
static void test_ref_depthwise_by_hand(void **state)
{
	pb_conv_shape s = {1, 2, 3, 3, 2, 3, 3, 1, 1, 2};
	float in[18], w[18] = {0}, out[18];
	for (int i = 0; i < 9; i++)
		in[i] = (float)(i + 1), in[9 + i] = (float)(10 * (i + 1)), w[i] = 1;
	w[9 + 4] = 2;
	pb_conv_ref(&s, in, w, out);
	/* 1 2 3 / 4 5 6 / 7 8 9: corner 1+2+4+5, edge 1+2+3+4+5+6, centre 45 */
	assert_float_equal(out[0], 12, 0);
	assert_float_equal(out[1], 21, 0);
	assert_float_equal(out[4], 45, 0);
	assert_float_equal(out[8], 5 + 6 + 8 + 9, 0);
	for (int i = 0; i < 9; i++)
		assert_float_equal(out[9 + i], 20 * (i + 1), 0);
	assert_true(pb_tune_shape_flops(&(pb_tune_shape){.op = PB_TUNE_CONV2D, .conv = s}) ==
	            2.0 * 2 * 9 * 9);
}

/* A grouped reference equals the ungrouped references of its groups, each on
 * its own slice of input channels, weights and outputs. */
static void test_ref_grouped_equals_groups(void **state)
{
	pb_conv_shape s = {2, 6, 5, 7, 9, 3, 2, 2, 1, 3}; /* batch 2, 3 groups of 2 -> 3 */
	pb_conv_shape g = {1, 2, 5, 7, 3, 3, 2, 2, 1, 1};
	const int OH = pb_conv_out_h(&s), OW = pb_conv_out_w(&s);
	float in[2 * 6 * 35], w[9 * 2 * 6], out[2 * 9 * 12], part[3 * 12];
	assert_int_equal(OH * OW, 12); /* 3 x 4 */
	for (size_t i = 0; i < sizeof in / sizeof *in; i++)
		in[i] = (float)((i * 7) % 5) - 2;
	for (size_t i = 0; i < sizeof w / sizeof *w; i++)
		w[i] = (float)((i * 3) % 7) - 3;
	pb_conv_ref(&s, in, w, out);
	for (int n = 0; n < 2; n++)
		for (int gi = 0; gi < 3; gi++) {
			pb_conv_ref(&g, in + (n * 6 + gi * 2) * 35, w + gi * 3 * 2 * 6, part);
			for (int i = 0; i < 3 * 12; i++)
				assert_float_equal(out[(n * 9 + gi * 3) * 12 + i], part[i], 0);
		}
}

/* Every configuration of the shape's space: legal ones reproduce the
 * reference exactly (pb_tune_bench_measure compares), illegal ones are
 * refused without running. */
static void check_all(const char *spec, int64_t want_size)
{
	pb_tune_shape sh;
	pb_error err = {0};
	assert_int_equal(pb_tune_shape_parse("conv2d", spec, &sh, &err), PB_OK);
	pb_tune_space sp;
	pb_tune_space_init(&sp, &sh);
	int64_t n = (int64_t)pb_tune_space_size(&sp), legal = 0;
	if (want_size)
		assert_int_equal(n, want_size);
	pb_tune_bench *b;
	assert_int_equal(pb_tune_bench_new(&sh, 5, &b, &err), PB_OK);
	for (int64_t id = 0; id < n; id++) {
		int idx[PB_TUNE_MAX_PARAMS];
		pb_tune_space_decode(&sp, id, idx);
		pb_tune_result r;
		assert_int_equal(pb_tune_bench_measure(b, &sp, idx, &FAST, &r, &err), PB_OK);
		if (!pb_tune_space_legal(&sp, idx, NULL, 0)) {
			assert_int_equal(r.measured, 0);
			continue;
		}
		legal++;
		if (!r.valid)
			fail_msg("conv2d %s id %lld: %s", spec, (long long)id, r.why);
	}
	assert_true(legal > 0);
	pb_tune_bench_free(b);
}

static void test_grouped_all_configs(void **state)
{
	/* depthwise: vec 3 x kb 1 x owv 3 x unroll 1 x ct 1 x pack 1 x order 2 */
	check_all("1,5,9,11,5,3,3,1,1,5", 18);
	check_all("2,3,7,13,3,3,3,2,1,3", 18); /* batch 2, stride 2 */
	check_all("1,3,6,10,6,3,3,1,1,3", 72); /* depth multiplier 2 */
	check_all("2,6,7,9,10,3,1,1,1,2", 0);  /* 2 groups of 3 -> 5, 3x1 */
	check_all("1,18,5,6,4,1,1,1,0,2", 0);  /* grouped 1x1: 9 channels per group */
	check_all("1,4,5,5,4,3,3,1,1,1", 864); /* group 1: the ungrouped space */
}

static void test_grouped_spaces(void **state)
{
	pb_tune_shape sh;
	pb_error err = {0};
	pb_tune_space sp;
	assert_int_equal(pb_tune_shape_parse("conv2d", "1,3,6,10,6,3,3,1,1,3", &sh, &err), PB_OK);
	pb_tune_space_init(&sp, &sh);
	assert_string_equal(sp.params[1].name, "kb");
	assert_int_equal(sp.params[1].n_values, 2); /* 2 outputs per group: kb 1, 2 */
	assert_int_equal(sp.params[5].n_values, 2); /* packing helps kb 2 */
	assert_int_equal(sp.params[3].n_values, 1); /* one input channel: no unroll */
	assert_int_equal(sp.params[4].n_values, 1);
	char key[128];
	pb_tune_shape_key(&sh, key, sizeof key);
	assert_string_equal(key, "conv2d:1,3,6,10,6,3,3,1,1,3");
	assert_int_equal(pb_tune_shape_parse("conv2d", "1,4,6,6,6,3,3,1,1,1", &sh, &err), PB_OK);
	pb_tune_shape_key(&sh, key, sizeof key);
	assert_string_equal(key, "conv2d:1,4,6,6,6,3,3,1,1"); /* group 1: the old key */
	assert_int_equal(pb_tune_shape_parse("conv2d", "1,4,6,6,6,3,3,1,1,3", &sh, &err),
	                 PB_EUSAGE);
	assert_non_null(strstr(err.msg, "group 3 does not divide"));
	assert_int_equal(pb_tune_shape_parse("conv2d", "1,4,6,6,6,3,3,1,1,0", &sh, &err),
	                 PB_EUSAGE);
}

/* x[2,8,6,6] -dw(w[8,1,3,3], group 8, pad 1)-> y -pw(p[4,8,1,1])-> z */
static pb_graph *mobile_graph(int64_t dw_group)
{
	pb_builder *b = pb_builder_new("mobile.onnx", "onnx");
	const char *names[] = {"x", "w", "y", "p", "z"};
	int t[5];
	for (int i = 0; i < 5; i++)
		t[i] = pb_builder_tensor(b, names[i]);
	int64_t dx[] = {2, 8, 6, 6}, dw[] = {8, 8 / dw_group, 3, 3}, dp[] = {4, 8, 1, 1},
	        dz[] = {2, 4, 6, 6};
	pb_builder_set_shape(b, t[0], PB_DT_FLOAT, 4, dx, NULL);
	pb_builder_set_shape(b, t[1], PB_DT_FLOAT, 4, dw, NULL);
	pb_builder_set_shape(b, t[2], PB_DT_FLOAT, 4, dx, NULL);
	pb_builder_set_shape(b, t[3], PB_DT_FLOAT, 4, dp, NULL);
	pb_builder_set_shape(b, t[4], PB_DT_FLOAT, 4, dz, NULL);
	pb_builder_input(b, t[0]);
	pb_builder_initializer(b, t[1], 0);
	pb_builder_initializer(b, t[3], 0);
	const char *di[] = {"x", "w"}, *dout[] = {"y"}, *pi[] = {"y", "p"}, *po[] = {"z"};
	int dwn = pb_builder_node(b, "dw", "Conv", "", di, 2, dout, 1);
	int64_t pd[] = {1, 1, 1, 1};
	pb_attr a1 = {.name = "group", .type = PB_ATTR_INT, .i = dw_group};
	pb_attr a2 = {.name = "pads", .type = PB_ATTR_INTS, .n = 4, .ints = pd};
	pb_builder_attr(b, dwn, &a1);
	pb_builder_attr(b, dwn, &a2);
	pb_builder_node(b, "pw", "Conv", "", pi, 2, po, 1);
	pb_builder_output(b, t[4]);
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts opts = {.skip_shapes = 1};
	if (pb_graph_build(b, &opts, &g, &err))
		fail_msg("%s", err.msg);
	return g;
}

static void test_node_shapes(void **state)
{
	pb_graph *g = mobile_graph(8);
	pb_tune_shape s;
	pb_error err = {0};
	char key[128];
	assert_int_equal(pb_tune_shape_from_node(g, pb_graph_find_node(g, "dw"), &s, &err), PB_OK);
	assert_int_equal(s.op, PB_TUNE_CONV2D);
	assert_int_equal(s.conv.group, 8);
	pb_tune_shape_key(&s, key, sizeof key);
	assert_string_equal(key, "conv2d:2,8,6,6,8,3,3,1,1,8");
	/* 1x1, stride 1, no pad: per image out[4][36] = p[4][8] x y[8][36] */
	assert_int_equal(pb_tune_shape_from_node(g, pb_graph_find_node(g, "pw"), &s, &err), PB_OK);
	assert_int_equal(s.op, PB_TUNE_GEMM);
	assert_int_equal(s.m, 4);
	assert_int_equal(s.n, 36);
	assert_int_equal(s.k, 8);
	assert_int_equal(s.batch, 2);
	pb_graph_free(g);
	g = mobile_graph(3); /* 3 does not divide 8 channels */
	assert_int_equal(pb_tune_shape_from_node(g, pb_graph_find_node(g, "dw"), &s, &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, "'dw'"));
	assert_non_null(strstr(err.msg, "group 3"));
	pb_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ref_depthwise_by_hand),
	    cmocka_unit_test(test_ref_grouped_equals_groups),
	    cmocka_unit_test(test_grouped_all_configs),
	    cmocka_unit_test(test_grouped_spaces),
	    cmocka_unit_test(test_node_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
