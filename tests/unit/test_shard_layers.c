/*
 * test_shard_layers.c — repeated layers solved once (shard/layer_classes.c
 * and the tied MILP of strategy_problem.c / strategy_milp.c): the runs found
 * in generated GPT decoders and in bert_base_like, the MILP size that does
 * not grow with the layer count, and the same optimum as the uncompressed
 * MILP (every scheme, training and inference) where both run.
 */
#include "gpt_fixture.h"

#include "shard/layer_classes.h"
#include "shard/strategy/strategy_problem.h"
#include "shard/strategy/strategy_milp.h"

static void test_runs_in_gpt(void **state)
{
	(void)state;
	pb_graph *g = pb_test_gpt(6, 64, 4, 16, 100, 2);
	pb_layer_classes lc;
	pb_error err = {0};
	assert_int_equal(pb_layer_classes_find(g, &lc, &err), PB_OK);
	assert_int_equal(lc.n_runs, 1);
	assert_int_equal(lc.runs[0].period, 29);
	assert_int_equal(lc.runs[0].count, 6);
	assert_string_equal(g->nodes[lc.runs[0].start].name, "h0.ln_1");
	int a = pb_graph_find_node(g, "h3.mlp.fc.matmul"),
	    b = pb_graph_find_node(g, "h1.mlp.fc.matmul");
	assert_int_equal(lc.rep[a], b);
	a = pb_graph_find_node(g, "h4.attn.softmax");
	assert_int_equal(lc.rep[a], pb_graph_find_node(g, "h1.attn.softmax"));
	/* first and last blocks are their own classes, and so is the head */
	const char *own[] = {"h0.attn.q.matmul", "h5.residual_2", "h1.ln_2", "lm_head"};
	for (int i = 0; i < 4; i++) {
		int v = pb_graph_find_node(g, own[i]);
		assert_int_equal(lc.rep[v], v);
	}
	pb_layer_classes_free(&lc);
	pb_graph_free(g);
	/* two layers: no middle block, nothing tied, still a run */
	g = pb_test_gpt(2, 64, 4, 16, 100, 2);
	assert_int_equal(pb_layer_classes_find(g, &lc, &err), PB_OK);
	assert_int_equal(lc.n_runs, 1);
	for (int i = 0; i < g->n_nodes; i++)
		assert_int_equal(lc.rep[i], i);
	pb_layer_classes_free(&lc);
	pb_graph_free(g);
}

/* swin_t: 16 runs among 3,748 computing nodes, found over 46 searches
 * (failed wirings take their nodes and search again). Each search after the
 * first tries only the periods whose cover at the search before (a bound:
 * taking nodes only shortens runs) can still win, so the whole find scans
 * about one search's periods, not 46 x 1,874 as when every search tried
 * every period (0.16 s of `pipeline swin_t`'s 0.6 s CPU, issue 40.7). */
static void test_swin_search_work(void **state)
{
	(void)state;
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_load("models/swin_t.onnx", NULL, &g, &err), PB_OK);
	pb_layer_classes lc;
	assert_int_equal(pb_layer_classes_find(g, &lc, &err), PB_OK);
	assert_int_equal(lc.n_runs, 16);
	assert_true(lc.periods > 1000);
	assert_true(lc.tried >= lc.periods); /* the first search tries them all */
	assert_true(lc.tried < 2 * lc.periods);
	pb_layer_classes_free(&lc);
	pb_graph_free(g);
}

static void test_runs_in_bert(void **state)
{
	(void)state;
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_load("models/bert_base_like.onnx", NULL, &g, &err), PB_OK);
	pb_layer_classes lc;
	assert_int_equal(pb_layer_classes_find(g, &lc, &err), PB_OK);
	assert_true(lc.n_runs >= 1);
	/* 12 encoder layers; the run starts inside layer 0 (its first nodes take
	 * the embedding's output), so 11 whole periods of one layer's nodes */
	assert_int_equal(lc.runs[0].count, 11);
	int tied = 0;
	for (int i = 0; i < g->n_nodes; i++)
		tied += lc.rep[i] != i;
	assert_int_equal(tied, 8 * lc.runs[0].period);
	pb_layer_classes_free(&lc);
	pb_graph_free(g);
}

typedef struct solved {
	double objective, memory;
	long cols;
	int feasible;
} solved;

static solved solve(const pb_graph *g, const pb_cluster *c, const char *scheme, int train,
                    int layers)
{
	pb_mesh m;
	pb_error err = {0};
	assert_int_equal(pb_cluster_mesh_parse(&m, c, scheme, &err), PB_OK);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	o.train = train;
	o.layers = layers;
	pb_shard_problem *p = NULL;
	assert_int_equal(pb_strategy_problem_build(g, c, &m, &o, &p, &err), PB_OK);
	pb_shard_result r;
	assert_int_equal(pb_strategy_milp_solve(p, NULL, NULL, NULL, &r, &err), PB_OK);
	pb_milp_size sz;
	pb_strategy_milp_size(p, &sz);
	solved s = {r.objective, r.memory, sz.cols, r.feasible};
	if (layers) {
		/* the tied choice, costed by the uncompressed problem, is what the
		 * compressed MILP said */
		pb_shard_problem *q = NULL;
		o.layers = 0;
		assert_int_equal(pb_strategy_problem_build(g, c, &m, &o, &q, &err), PB_OK);
		assert_int_equal(q->n_groups, p->n_groups);
		pb_shard_result e;
		memset(&e, 0, sizeof e);
		pb_strategy_problem_evaluate(q, r.choice, &e);
		assert_true(fabs(e.objective - r.objective) <= 1e-9 * r.objective);
		assert_true(fabs(e.memory - r.memory) <= 1e-6 * r.memory);
		pb_strategy_problem_free(q);
		assert_true(p->layer_tied > 0);
	}
	pb_strategy_problem_result_free(&r);
	pb_strategy_problem_free(p);
	return s;
}

static void same_optimum(const pb_graph *g, const pb_cluster *c, const char *scheme, int train)
{
	solved a = solve(g, c, scheme, train, 0), b = solve(g, c, scheme, train, 1);
	if (fabs(a.objective - b.objective) > 1e-9 * a.objective)
		fprintf(stderr, "%s train=%d: uncompressed %.9g compressed %.9g\n", scheme, train,
		        a.objective, b.objective);
	assert_true(fabs(a.objective - b.objective) <= 1e-9 * a.objective);
	assert_int_equal(a.feasible, b.feasible);
	assert_true(b.cols < a.cols);
}

static void test_same_optimum_gpt(void **state)
{
	(void)state;
	pb_cluster c1, c2;
	pb_test_cluster_file("layouts/cluster-1x8.lua", &c1);
	pb_test_cluster_file("layouts/cluster-2x8.lua", &c2);
	pb_graph *g = pb_test_gpt(6, 128, 8, 64, 1000, 8);
	const char *s1[] = {"8", "2x4"}, *s2[] = {"16", "2x8", "4x4", "8x2"};
	for (int train = 0; train < 2; train++) {
		for (int i = 0; i < 2; i++)
			same_optimum(g, &c1, s1[i], train);
		for (int i = 0; i < 4; i++)
			same_optimum(g, &c2, s2[i], train);
	}
	pb_graph_free(g);
	pb_cluster_free(&c1);
	pb_cluster_free(&c2);
}

static void test_same_optimum_bert(void **state)
{
	(void)state;
	pb_cluster c;
	pb_test_cluster_file("layouts/cluster-2x8.lua", &c);
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_load("models/bert_base_like.onnx", NULL, &g, &err), PB_OK);
	same_optimum(g, &c, "16", 1);
	same_optimum(g, &c, "16", 0);
	pb_graph_free(g);
	pb_cluster_free(&c);
}

/* The MILP does not grow with the layer count: 4, 8 and 16 layers give the
 * same columns (one first, one middle, one last block and the glue). */
static void test_size_independent_of_layers(void **state)
{
	(void)state;
	pb_cluster c;
	pb_test_cluster_file("layouts/cluster-1x8.lua", &c);
	long cols[3];
	long n_layers[3] = {4, 8, 16};
	for (int i = 0; i < 3; i++) {
		pb_graph *g = pb_test_gpt(n_layers[i], 64, 4, 32, 200, 4);
		solved s = solve(g, &c, "2x4", 1, 1);
		cols[i] = s.cols;
		solved u = solve(g, &c, "2x4", 1, 0);
		assert_true(fabs(u.objective - s.objective) <= 1e-9 * u.objective);
		if (i > 0)
			assert_true(u.cols > 2 * cols[0]);
		pb_graph_free(g);
	}
	assert_int_equal(cols[0], cols[1]);
	assert_int_equal(cols[1], cols[2]);
	pb_cluster_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_runs_in_gpt),
	    cmocka_unit_test(test_runs_in_bert),
	    cmocka_unit_test(test_swin_search_work),
	    cmocka_unit_test(test_same_optimum_gpt),
	    cmocka_unit_test(test_same_optimum_bert),
	    cmocka_unit_test(test_size_independent_of_layers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
