/* test_shape_batch.c — the batch rewrite (core/shape/shape_batch.c, issue
 * 35.2) and the ONNX constraints shape inference checks, on small models
 * built in code:
 *  - a ViT-style export at batch 1 (patch Conv, Reshape to the constant
 *    [1, 16, 16]) opened at batch 4: the Reshape is 4x16x16 (it was
 *    1x16x16, silently), its constant is listed as rewritten 1 -> 4, and a
 *    run at the exported batch rewrites nothing;
 *  - sequence-first attention whose Reshapes merge the batch with the heads
 *    ([8, 1, 16] -> [8, 4, 4]: 8 x 4B x 4 or 8B x 4 x 4? ambiguous at batch
 *    1): the reading that keeps the samples apart is found (the other one
 *    mixes them in the scores MatMul and is undone), the scores are 12x8x8
 *    at batch 3 and the output 8x3x16;
 *  - a constant read by a batch Reshape and a weight Reshape is refused;
 *  - Reshape, Split, Concat, Tile and Gemm constraints are refused, naming the
 *    node, the shapes and the rule. */
#include "pb_test.h"

#include "pb_onnx_build.h"

static pb_graph *load_at(mb *b, const char *input, int rank, const int64_t *dims, pb_error *err)
{
	pb_input_override ov = {(char *)input, rank, {0}};
	if (dims)
		memcpy(ov.dims, dims, (size_t)rank * sizeof *dims);
	pb_load_opts o = {&ov, 1, 0};
	return mb_load(b, input ? &o : NULL, err);
}

static const char *shape_of(const pb_graph *g, const char *tensor, char *buf, size_t len)
{
	int t = pb_graph_find_tensor(g, tensor);
	assert_true(t >= 0);
	return pb_tensor_shape_str(&g->tensors[t], buf, len);
}

static void vit(mb *b)
{
	mb_init(b, 13);
	mb_input(b, "x", PB_DT_FLOAT, 4, (int64_t[]){1, 3, 32, 32}, NULL);
	mb_weight(b, "w", 4, (int64_t[]){16, 3, 8, 8});
	mb_ints(b, "s", 3, (int64_t[]){1, 16, 16});
	mb_node(b, "Conv", "x,w", "p");
	mb_attr_ints(b, "strides", 2, (int64_t[]){8, 8});
	mb_node(b, "Reshape", "p,s", "y");
	mb_output(b, "y");
}

static void test_vit_batch4(void **state)
{
	(void)state;
	mb b;
	pb_error err = {0};
	char buf[64];
	vit(&b);
	pb_graph *g = load_at(&b, "x", 4, (int64_t[]){4, 3, 32, 32}, &err);
	if (!g)
		fail_msg("%s", err.msg);
	assert_string_equal(shape_of(g, "p", buf, sizeof buf), "4x16x4x4");
	assert_string_equal(shape_of(g, "y", buf, sizeof buf), "4x16x16");
	assert_int_equal(g->batch_exported, 1);
	assert_int_equal(g->batch_new, 4);
	assert_int_equal(g->n_rewrites, 1);
	assert_string_equal(g->tensors[g->rewrites[0].tensor].name, "s");
	assert_string_equal(g->nodes[g->rewrites[0].node].op, "Reshape");
	assert_int_equal(g->rewrites[0].entry, 0);
	assert_int_equal(g->rewrites[0].from, 1);
	assert_int_equal(g->rewrites[0].to, 4);
	pb_graph_free(g);
	mb_free(&b);

	vit(&b); /* at the exported batch: nothing to rewrite */
	g = load_at(&b, "x", 4, (int64_t[]){1, 3, 32, 32}, &err);
	assert_non_null(g);
	assert_string_equal(shape_of(g, "y", buf, sizeof buf), "1x16x16");
	assert_int_equal(g->n_rewrites, 0);
	assert_int_equal(g->batch_exported, 0);
	pb_graph_free(g);
	mb_free(&b);
}

/* x [1, 8, 16] batch-first, attention run sequence-first as PyTorch's
 * MultiheadAttention exports it at batch 1. */
static void attention(mb *b)
{
	mb_init(b, 13);
	mb_input(b, "x", PB_DT_FLOAT, 3, (int64_t[]){1, 8, 16}, NULL);
	mb_ints(b, "split_q", 3, (int64_t[]){8, 4, 4});
	mb_ints(b, "split_k", 3, (int64_t[]){8, 4, 4});
	mb_ints(b, "merge", 2, (int64_t[]){8, 16});
	mb_ints(b, "back", 3, (int64_t[]){8, 1, 16});
	mb_weight(b, "wo", 2, (int64_t[]){16, 16});
	mb_node(b, "Transpose", "x", "xs"); /* [8, B, 16] */
	mb_attr_ints(b, "perm", 3, (int64_t[]){1, 0, 2});
	mb_node(b, "Reshape", "xs,split_q", "q"); /* [8, 4B, 4] */
	mb_node(b, "Reshape", "xs,split_k", "k");
	mb_node(b, "Transpose", "q", "qt"); /* [4B, 8, 4] */
	mb_attr_ints(b, "perm", 3, (int64_t[]){1, 0, 2});
	mb_node(b, "Transpose", "k", "kt"); /* [4B, 4, 8] */
	mb_attr_ints(b, "perm", 3, (int64_t[]){1, 2, 0});
	mb_node(b, "MatMul", "qt,kt", "scores");  /* [4B, 8, 8] */
	mb_node(b, "MatMul", "scores,qt", "ctx"); /* [4B, 8, 4] */
	mb_node(b, "Transpose", "ctx", "ctxt");   /* [8, 4B, 4] */
	mb_attr_ints(b, "perm", 3, (int64_t[]){1, 0, 2});
	mb_node(b, "Reshape", "ctxt,merge", "m"); /* [8B, 16] */
	mb_node(b, "MatMul", "m,wo", "o");
	mb_node(b, "Reshape", "o,back", "y"); /* [8, B, 16] */
	mb_output(b, "y");
}

static void test_heads_merged(void **state)
{
	(void)state;
	mb b;
	pb_error err = {0};
	char buf[64];
	attention(&b);
	pb_graph *g = load_at(&b, "x", 3, (int64_t[]){3, 8, 16}, &err);
	if (!g)
		fail_msg("%s", err.msg);
	assert_string_equal(shape_of(g, "q", buf, sizeof buf), "8x12x4");
	assert_string_equal(shape_of(g, "scores", buf, sizeof buf), "12x8x8");
	assert_string_equal(shape_of(g, "m", buf, sizeof buf), "24x16");
	assert_string_equal(shape_of(g, "y", buf, sizeof buf), "8x3x16");
	/* split_q[1], split_k[1] 4 -> 12, merge[0] 8 -> 24, back[1] 1 -> 3 */
	assert_int_equal(g->n_rewrites, 4);
	int seen = 0;
	for (int i = 0; i < g->n_rewrites; i++) {
		const pb_batch_rewrite *r = &g->rewrites[i];
		const char *t = g->tensors[r->tensor].name;
		if (!strcmp(t, "merge"))
			seen += r->entry == 0 && r->from == 8 && r->to == 24;
		else if (!strcmp(t, "back"))
			seen += r->entry == 1 && r->from == 1 && r->to == 3;
		else
			seen += r->entry == 1 && r->from == 4 && r->to == 12;
	}
	assert_int_equal(seen, 4);
	pb_graph_free(g);
	mb_free(&b);
}

static void expect_refused(mb *b, const char *input, int rank, const int64_t *dims,
                           const char *want)
{
	pb_error err = {0};
	pb_graph *g = load_at(b, input, rank, dims, &err);
	if (g)
		fail_msg("loaded; expected an error containing '%s'", want);
	assert_int_equal(err.code, PB_EINPUT);
	if (!strstr(err.msg, want))
		fail_msg("error '%s' does not contain '%s'", err.msg, want);
	mb_free(b);
}

static void test_shared_constant(void **state)
{
	(void)state;
	mb b;
	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 3, (int64_t[]){1, 4, 4}, NULL);
	mb_weight(&b, "w", 1, (int64_t[]){16});
	mb_ints(&b, "s", 2, (int64_t[]){1, 16});
	mb_node(&b, "Reshape", "x,s", "xr");
	mb_node(&b, "Reshape", "w,s", "wr");
	mb_node(&b, "Add", "xr,wr", "y");
	mb_output(&b, "y");
	expect_refused(&b, "x", 3, (int64_t[]){4, 4, 4},
	               "'s' is also read by 'Reshape', which needed its batch entry rewritten to "
	               "4; here it is not the batch: no sound rewrite (--input changed the batch "
	               "from the exported 1 to 4");
}

static void test_constraints(void **state)
{
	(void)state;
	mb b;
	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 2, (int64_t[]){2, 6}, NULL);
	mb_ints(&b, "sp", 2, (int64_t[]){2, 3});
	mb_node(&b, "Split", "x,sp", "a,c");
	mb_attr_int(&b, "axis", 1);
	mb_output(&b, "a");
	expect_refused(&b, NULL, 0, NULL,
	               "node 'Split' (Split): Split sizes sum to 5, but axis 1 of 'x' (2x6) has 6");

	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 2, (int64_t[]){2, 6}, NULL);
	mb_input(&b, "z", PB_DT_FLOAT, 2, (int64_t[]){3, 6}, NULL);
	mb_node(&b, "Concat", "x,z", "y");
	mb_attr_int(&b, "axis", 1);
	mb_output(&b, "y");
	expect_refused(
	    &b, NULL, 0, NULL,
	    "Concat on axis 1 needs equal dims elsewhere: 'x' is 2x6, 'z' is 3x6 (dim 0)");

	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 2, (int64_t[]){2, 6}, NULL);
	mb_ints(&b, "r", 3, (int64_t[]){1, 2, 2});
	mb_node(&b, "Tile", "x,r", "y");
	mb_output(&b, "y");
	expect_refused(&b, NULL, 0, NULL, "Tile has 3 repeats for input 'x' of rank 2 (2x6)");

	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 3, (int64_t[]){2, 6, 4}, NULL);
	mb_weight(&b, "w", 2, (int64_t[]){4, 5});
	mb_node(&b, "Gemm", "x,w", "y");
	mb_output(&b, "y");
	expect_refused(&b, NULL, 0, NULL, "Gemm multiplies matrices: 'x' is 2x6x4, 'w' is 4x5");

	mb_init(&b, 13);
	mb_input(&b, "x", PB_DT_FLOAT, 2, (int64_t[]){2, 6}, NULL);
	mb_ints(&b, "s", 2, (int64_t[]){5, 2});
	mb_node(&b, "Reshape", "x,s", "y");
	mb_output(&b, "y");
	expect_refused(&b, NULL, 0, NULL,
	               "node 'Reshape' (Reshape): Reshape keeps the element count: input 'x' is "
	               "2x6 (12 elements), the target 5x2 has another count");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vit_batch4),
	    cmocka_unit_test(test_heads_merged),
	    cmocka_unit_test(test_shared_constant),
	    cmocka_unit_test(test_constraints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
