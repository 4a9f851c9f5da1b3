/*
 * test_blocks.c — the block hierarchy viewers collapse by (render/blocks.h):
 * module-path blocks and their labels (PyTorch qualified names, the
 * distinguishing tail when too long, distinct labels for the 12 encoder
 * layers of bert_base_like), and structural blocks of graphs without module
 * paths: nested intervals of the topological order, cut where one value is
 * live when the graph has such cuts (a chain of diamonds, the inception
 * modules of googlenet without names), and no blocks for small graphs; the
 * SVG export's collapse (render/collapse.h) uses the same structural blocks.
 */
#include "pb_test.h"

#include "render/blocks.h"
#include "render/collapse.h"

static pb_graph *named_graph(void)
{
	static const char *names[] = {
	    "Identity_0",
	    "/features/features.5/conv/Conv",
	    "/features/features.5/relu/Relu",
	    "Constant_3",
	    "/features/features.6/conv/Conv",
	    "/encoder/layers/layers.3/self_attention/MatMul",
	    "/encoder/layers/layers.3/self_attention/Softmax",
	    "/encoder/layers/layers.4/self_attention/MatMul",
	    "/blocks/layers.6/self_attn/Add",
	    "/features/features.1/features.1.0/attn/MatMul",
	    "/features/denseblock3/denselayer11/relu2/Relu",
	    "/encoder/layers/encoder_layer_11/self_attention/MatMul",
	};
	int n = (int)(sizeof names / sizeof names[0]);
	pb_builder *b = pb_builder_new("named", "test");
	int x = pb_builder_tensor(b, "x");
	pb_builder_input(b, x);
	const char *prev = "x";
	for (int i = 0; i < n; i++) {
		const char *ins[1] = {prev};
		const char *outs[1] = {names[i]};
		pb_builder_node(b, names[i], "Add", "", ins, 1, outs, 1);
		prev = names[i];
	}
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts lo = {.skip_shapes = 1};
	assert_int_equal(pb_graph_build(b, &lo, &g, &err), PB_OK);
	return g;
}

static int node_id(const pb_graph *g, const char *name)
{
	for (int i = 0; i < g->n_nodes; i++)
		if (strcmp(g->nodes[i].name, name) == 0)
			return i;
	fail_msg("no node %s", name);
	return -1;
}

static const char *label(const pb_graph *g, const pb_blocks *b, const char *name, int d, int max)
{
	static char buf[80];
	int i = node_id(g, name);
	return pb_blocks_label(g, b, NULL, i, i, d, max, buf, sizeof buf);
}

static void test_named_labels(void **state)
{
	(void)state;
	pb_graph *g = named_graph();
	pb_blocks *b;
	pb_error err = {0};
	assert_int_equal(pb_blocks_compute(g, NULL, &b, &err), PB_OK);
	assert_int_equal(b->structural, 0);
	assert_int_equal(b->depth[node_id(g, "Identity_0")], 0);
	assert_int_equal(b->depth[node_id(g, "/features/features.5/conv/Conv")], 3);
	assert_int_equal(b->max_depth, 4);
	/* same module, same block; siblings differ below their parent */
	int c5 = node_id(g, "/features/features.5/conv/Conv");
	int r5 = node_id(g, "/features/features.5/relu/Relu");
	int c6 = node_id(g, "/features/features.6/conv/Conv");
	assert_true(pb_blocks_same(b, c5, r5, 2));
	assert_false(pb_blocks_same(b, c5, r5, 3));
	assert_true(pb_blocks_same(b, c5, c6, 1));
	assert_false(pb_blocks_same(b, c5, c6, 2));
	assert_false(pb_blocks_same(b, c5, node_id(g, "Constant_3"), 1));
	assert_int_equal(pb_blocks_key(b, c5, 4), -1);
	/* qualified names: "features" + "features.5" merge */
	assert_string_equal(label(g, b, "/features/features.5/conv/Conv", 2, 26), "features.5");
	assert_string_equal(label(g, b, "/features/features.5/conv/Conv", 3, 26),
	                    "features.5.conv");
	assert_string_equal(label(g, b, "/features/features.1/features.1.0/attn/MatMul", 3, 26),
	                    "features.1.0");
	assert_string_equal(label(g, b, "/features/features.1/features.1.0/attn/MatMul", 4, 26),
	                    "features.1.0.attn");
	assert_string_equal(label(g, b, "/encoder/layers/layers.3/self_attention/MatMul", 3, 26),
	                    "encoder.layers.3");
	assert_string_equal(label(g, b, "/blocks/layers.6/self_attn/Add", 3, 26),
	                    "blocks.layers.6.self_attn");
	/* too long: the leading components go, the index stays */
	assert_string_equal(label(g, b, "/encoder/layers/layers.3/self_attention/MatMul", 4, 26),
	                    "..layers.3.self_attention");
	assert_string_equal(label(g, b, "/encoder/layers/layers.4/self_attention/MatMul", 4, 20),
	                    "..4.self_attention");
	/* zoom 1's short labels keep the index (all "features" before) */
	assert_string_equal(label(g, b, "/features/features.5/conv/Conv", 2, 8), "..ures.5");
	assert_string_equal(label(g, b, "/features/features.5/conv/Conv", 2, 9), "..tures.5");
	assert_string_equal(label(g, b, "/features/features.5/conv/Conv", 3, 12), "..res.5.conv");
	assert_string_equal(label(g, b, "/features/features.1/features.1.0/attn/MatMul", 4, 14),
	                    "..res.1.0.attn");
	assert_string_equal(label(g, b, "/blocks/layers.6/self_attn/Add", 3, 14), "..6.self_attn");
	assert_string_equal(label(g, b, "/blocks/layers.6/self_attn/Add", 3, 12), "..6.self_att");
	assert_string_equal(label(g, b, "/features/denseblock3/denselayer11/relu2/Relu", 3, 14),
	                    "..denselayer11");
	assert_string_equal(label(g, b, "/features/denseblock3/denselayer11/relu2/Relu", 3, 12),
	                    "..nselayer11");
	assert_string_equal(
	    label(g, b, "/encoder/layers/encoder_layer_11/self_attention/MatMul", 3, 14),
	    "..der_layer_11");
	/* no room: the index and what follows it */
	assert_string_equal(label(g, b, "/encoder/layers/layers.3/self_attention/MatMul", 4, 6),
	                    "..3.se");
	/* a range labels by its first node that has the level */
	char buf[64];
	pb_blocks_label(g, b, NULL, node_id(g, "Constant_3"), c6, 2, 26, buf, sizeof buf);
	assert_string_equal(buf, "features.6");
	pb_blocks_free(b);
	pb_graph_free(g);
}

/* A chain of Add nodes with the given names (no shapes). */
static pb_graph *chain(const char *const *names, int n)
{
	pb_builder *b = pb_builder_new("chain", "test");
	int x = pb_builder_tensor(b, "x");
	pb_builder_input(b, x);
	const char *prev = "x";
	for (int i = 0; i < n; i++) {
		const char *ins[1] = {prev};
		const char *outs[1] = {names[i]};
		pb_builder_node(b, names[i], "Add", "", ins, 1, outs, 1);
		prev = names[i];
	}
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts lo = {.skip_shapes = 1};
	assert_int_equal(pb_graph_build(b, &lo, &g, &err), PB_OK);
	return g;
}

/* Names without '/' but with dotted module paths (partbench gen gpt):
 * named blocks "h0", "h0.attn", ...; dotted names that are op type and
 * counter (Paddle's p2o.Add.3) are not modules: structural blocks. */
static void test_dotted_paths(void **state)
{
	(void)state;
	static const char *gpt[] = {
	    "embed.tokens",  "embed.positions", "h0.ln_1",       "h0.attn.q.matmul",
	    "h0.attn.q.add", "h0.attn.softmax", "h0.residual_1", "h0.mlp.fc.matmul",
	    "h0.mlp.gelu",   "h0.residual_2",   "h1.ln_1",       "h1.attn.q.matmul",
	    "h1.attn.q.add", "h1.attn.softmax", "h1.residual_1", "h1.mlp.fc.matmul",
	    "h1.mlp.gelu",   "h1.residual_2",   "ln_f",          "lm_head.matmul",
	};
	int n = (int)(sizeof gpt / sizeof gpt[0]);
	pb_graph *g = chain(gpt, n);
	pb_blocks *b;
	pb_error err = {0};
	assert_int_equal(pb_blocks_compute(g, NULL, &b, &err), PB_OK);
	assert_int_equal(b->structural, 0);
	assert_int_equal(b->sep, '.');
	assert_int_equal(b->max_depth, 3);
	int q0 = node_id(g, "h0.attn.q.matmul"), q1 = node_id(g, "h1.attn.q.matmul");
	assert_true(pb_blocks_same(b, node_id(g, "h0.ln_1"), q0, 1));
	assert_false(pb_blocks_same(b, q0, q1, 1));
	assert_int_equal(b->depth[node_id(g, "ln_f")], 0);
	assert_string_equal(label(g, b, "h1.attn.q.matmul", 1, 26), "h1");
	assert_string_equal(label(g, b, "h1.attn.q.matmul", 2, 26), "h1.attn");
	assert_string_equal(label(g, b, "h1.attn.q.matmul", 3, 26), "h1.attn.q");
	pb_blocks_free(b);
	pb_graph_free(g);
	char names[40][16];
	const char *p2o[40];
	static const char *ops[] = {"Conv", "Relu", "Add", "Concat"};
	for (int i = 0; i < 40; i++) {
		snprintf(names[i], sizeof names[i], "p2o.%s.%d", ops[i % 4], i / 4);
		p2o[i] = names[i];
	}
	g = chain(p2o, 40);
	assert_int_equal(pb_blocks_compute(g, NULL, &b, &err), PB_OK);
	assert_int_equal(b->structural, 1);
	pb_blocks_free(b);
	pb_graph_free(g);
}

/* The 12 encoder layers of bert_base_like get 12 distinct labels at every
 * level and at the widths of zoom 0 and zoom 1 (not 12 x "self_attn"). */
static void test_bert_labels(void **state)
{
	(void)state;
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_load("models/bert_base_like.onnx", NULL, &g, &err), PB_OK);
	unsigned char *cst = pb_graph_constant_nodes(g);
	pb_blocks *b;
	assert_int_equal(pb_blocks_compute(g, cst, &b, &err), PB_OK);
	for (int t = 0; t < 6; t++) {
		int d = 2 + t % 2, max = t < 2 ? 26 : t < 4 ? 14 : 12; /* zoom 0, zoom 1 */
		int n_blocks = 0, n_labels = 0;
		char seen[64][40];
		int seen_key[64];
		for (int i = 0; i < g->n_nodes; i++) {
			int k = pb_blocks_key(b, i, d);
			if (k < 0 || !strstr(g->nodes[i].name, "self_attn"))
				continue;
			int known = 0;
			for (int j = 0; j < n_blocks && !known; j++)
				known = seen_key[j] == k;
			if (known || n_blocks == 64)
				continue;
			seen_key[n_blocks] = k;
			pb_blocks_label(g, b, cst, i, i, d, max, seen[n_blocks], sizeof seen[0]);
			int dup = 0;
			for (int j = 0; j < n_blocks; j++)
				dup |= strcmp(seen[j], seen[n_blocks]) == 0;
			n_labels += !dup;
			n_blocks++;
		}
		assert_int_equal(n_blocks, 12);
		assert_int_equal(n_labels, 12);
		if (d == 3 && max == 26)
			assert_string_equal(seen[3], "blocks.layers.3.self_attn");
		if (d == 3 && max == 14)
			assert_string_equal(seen[3], "..3.self_attn");
	}
	pb_blocks_free(b);
	free(cst);
	pb_graph_free(g);
}

/* Live width of the cut before node p (computing nodes only), counted
 * directly from the edges. */
static int width_before(const pb_graph *g, const unsigned char *cst, int p)
{
	int w = 0;
	for (int u = 0; u < p; u++) {
		if (cst && cst[u])
			continue;
		int live = 0;
		for (int k = 0; k < g->nodes[u].n_succs; k++)
			live |= g->nodes[u].succs[k] >= p;
		w += live;
	}
	return w;
}

/* Every block at every level is an interval of the order, nested in its
 * parent; returns the number of level-1 blocks and checks the widths of
 * the level-1 cuts against want_width (-1: not checked). */
static int check_structure(const pb_graph *g, const unsigned char *cst, const pb_blocks *b,
                           int want_width)
{
	int n = g->n_nodes, n1 = 0;
	for (int d = 1; d <= b->max_depth; d++) {
		char *closed = calloc((size_t)b->n_ids + 1, 1);
		for (int i = 0; i < n; i++) {
			int k = pb_blocks_key(b, i, d);
			if (i > 0 && k != pb_blocks_key(b, i - 1, d) &&
			    pb_blocks_key(b, i - 1, d) >= 0)
				closed[pb_blocks_key(b, i - 1, d)] = 1;
			if (k < 0)
				continue;
			assert_false(closed[k]); /* an interval: never reopened */
			if (d > 1)               /* nested: the parent block is the same as the
			                          * previous node's when the block is */
				assert_true(i == 0 || k != pb_blocks_key(b, i - 1, d) ||
				            pb_blocks_same(b, i, i - 1, d - 1));
		}
		free(closed);
	}
	for (int i = 0; i < n; i++) {
		int k = pb_blocks_key(b, i, 1), prev = i > 0 ? pb_blocks_key(b, i - 1, 1) : -1;
		if (k >= 0 && (i == 0 || k != prev)) {
			n1++;
			/* the cut lies before the first computing node of the block */
			int p = i;
			while (p < n && cst && cst[p])
				p++;
			if (prev >= 0 && want_width >= 0 && p < n)
				assert_int_equal(width_before(g, cst, p), want_width);
		}
	}
	return n1;
}

/* x -> a -> (b, c) -> d -> a' ...: diamonds, names without paths. */
static pb_graph *diamonds(int n_diamonds)
{
	pb_builder *bl = pb_builder_new("diamonds", "test");
	int x = pb_builder_tensor(bl, "x");
	pb_builder_input(bl, x);
	char prev[32] = "x", a[32], l[32], r[32], d[32];
	for (int k = 0; k < n_diamonds; k++) {
		snprintf(a, sizeof a, "a%d", k);
		snprintf(l, sizeof l, "b%d", k);
		snprintf(r, sizeof r, "c%d", k);
		snprintf(d, sizeof d, "d%d", k);
		const char *in1[1] = {prev}, *ina[1] = {a}, *in2[2] = {l, r};
		const char *oa[1] = {a}, *ol[1] = {l}, *orr[1] = {r}, *od[1] = {d};
		pb_builder_node(bl, a, "Conv", "", in1, 1, oa, 1);
		pb_builder_node(bl, l, "Relu", "", ina, 1, ol, 1);
		pb_builder_node(bl, r, "Sigmoid", "", ina, 1, orr, 1);
		pb_builder_node(bl, d, "Add", "", in2, 2, od, 1);
		snprintf(prev, sizeof prev, "%s", d);
	}
	pb_builder_output(bl, pb_builder_tensor(bl, prev));
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts lo = {.skip_shapes = 1};
	assert_int_equal(pb_graph_build(bl, &lo, &g, &err), PB_OK);
	return g;
}

static void test_structural_diamonds(void **state)
{
	(void)state;
	pb_graph *g = diamonds(60);
	pb_blocks *b;
	pb_error err = {0};
	assert_int_equal(pb_blocks_compute(g, NULL, &b, &err), PB_OK);
	assert_int_equal(b->structural, 1);
	assert_true(b->max_depth >= 2);
	int n1 = check_structure(g, NULL, b, 1);
	assert_true(n1 >= PB_BLOCKS_FANOUT / 2 && n1 <= 2 * PB_BLOCKS_FANOUT);
	/* the label: place and first..last op */
	char buf[64];
	int last1 = 0;
	while (last1 + 1 < g->n_nodes && pb_blocks_same(b, 0, last1 + 1, 1))
		last1++;
	pb_blocks_label(g, b, NULL, 0, last1, 1, 26, buf, sizeof buf);
	assert_string_equal(buf, "1 Conv..Add");
	int second = last1 + 1;
	pb_blocks_label(g, b, NULL, second, second, 2, 26, buf, sizeof buf);
	assert_true(strncmp(buf, "2.1 ", 4) == 0);
	pb_blocks_free(b);
	pb_graph_free(g);
	/* small: 3 diamonds (12 nodes) need no blocks */
	g = diamonds(3);
	assert_int_equal(pb_blocks_compute(g, NULL, &b, &err), PB_OK);
	assert_int_equal(b->structural, 1);
	assert_int_equal(b->max_depth, 0);
	pb_blocks_free(b);
	pb_graph_free(g);
}

/* googlenet without module paths (tests/data/gen_unnamed.py): the level-1
 * cuts fall between the inception modules, where one value is live; the
 * same for densenet121 with no node names at all (tests/data/gen_noname.py). */
static void test_structural_googlenet(void **state)
{
	(void)state;
	const char *files[] = {"tests/data/googlenet_unnamed.onnx",
	                       "tests/data/densenet121_noname.onnx"};
	for (int f = 0; f < 2; f++) {
		pb_graph *g = NULL;
		pb_error err = {0};
		assert_int_equal(pb_graph_load(files[f], NULL, &g, &err), PB_OK);
		unsigned char *cst = pb_graph_constant_nodes(g);
		pb_blocks *b;
		assert_int_equal(pb_blocks_compute(g, cst, &b, &err), PB_OK);
		assert_int_equal(b->structural, 1);
		/* densenet's cuts inside a dense block have several live values */
		int n1 = check_structure(g, cst, b, f == 0 ? 1 : -1);
		assert_true(n1 >= 6 && n1 <= 2 * PB_BLOCKS_FANOUT);
		/* the weight copies before the first computing node are in no
		 * block (a box of constants only), every other node is */
		int first = 0;
		while (cst[first])
			first++;
		assert_true(first > 0);
		for (int i = 0; i < g->n_nodes; i++)
			assert_true(i < first ? b->depth[i] == 0 : b->depth[i] >= 1);
		pb_blocks_free(b);
		free(cst);
		pb_graph_free(g);
	}
}

/* The SVG export's collapse of a graph without module paths: boxes are the
 * structural blocks of the deepest level within budget, split where the
 * plan group changes, and carry the blocks' labels. */
static void test_collapse_structural(void **state)
{
	(void)state;
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_load("tests/data/googlenet_unnamed.onnx", NULL, &g, &err), PB_OK);
	pb_collapse *c;
	assert_int_equal(pb_collapse_compute(g, NULL, 30, 0, &c, &err), PB_OK);
	assert_non_null(c->blocks);
	assert_int_equal(c->depth, 1);
	assert_true(c->n_boxes >= 6 && c->n_boxes <= 30);
	char buf[64];
	/* box 0: the weight copies before the first computing node (hidden by
	 * the export as a box of constants only) */
	unsigned char *cst = pb_graph_constant_nodes(g);
	for (int i = c->start[0]; i < c->start[1]; i++)
		assert_true(cst[i]);
	assert_string_equal(pb_collapse_prefix(g, c, 0, buf, sizeof buf), "");
	free(cst);
	for (int b = 1; b < c->n_boxes; b++) {
		int f = c->start[b];
		if (b > 1) /* each further box is one level-1 block */
			assert_false(pb_blocks_same(c->blocks, f, f - 1, 1));
		assert_true(pb_blocks_same(c->blocks, f, c->start[b + 1] - 1, 1));
		pb_collapse_prefix(g, c, b, buf, sizeof buf);
		char want[8];
		snprintf(want, sizeof want, "%d ", b);
		assert_true(strncmp(buf, want, strlen(want)) == 0);
	}
	int n1 = c->n_boxes;
	pb_collapse_free(c);
	/* a plan boundary inside a block splits it */
	int *group = calloc((size_t)g->n_nodes, sizeof *group);
	int mid = g->n_nodes / 2;
	for (int i = mid; i < g->n_nodes; i++)
		group[i] = 1;
	assert_int_equal(pb_collapse_compute(g, group, 30, 0, &c, &err), PB_OK);
	assert_non_null(c->blocks);
	assert_true(c->n_boxes == n1 || c->n_boxes == n1 + 1);
	for (int b = 0; b < c->n_boxes; b++)
		assert_int_equal(group[c->start[b]], group[c->start[b + 1] - 1]);
	pb_collapse_free(c);
	/* a budget below the first level: equal runs, as before */
	assert_int_equal(pb_collapse_compute(g, NULL, 3, 0, &c, &err), PB_OK);
	assert_true(c->n_boxes <= 3);
	pb_collapse_free(c);
	free(group);
	pb_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_named_labels),        cmocka_unit_test(test_bert_labels),
	    cmocka_unit_test(test_structural_diamonds), cmocka_unit_test(test_structural_googlenet),
	    cmocka_unit_test(test_collapse_structural), cmocka_unit_test(test_dotted_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
