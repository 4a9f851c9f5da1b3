/*
 * test_shard_share.c — the compressed build of a strategy problem
 * (shard/strategy/strategy_share.c, strategy_prune.c): a middle block's nodes, groups
 * and edges take their representative's tables instead of computing them,
 * and the problem must be the one the full build gives, bit for bit (every
 * node's strategies and costs, every group's costs, memory and picks, every
 * edge's spec maps and cost matrix, the ties), on generated GPT decoders,
 * inference and training, every recomputation choice, two and three mesh
 * axes, level 2 groups, forced parameter sharding and a pipeline chunk.
 */
#include "gpt_fixture.h"

#include "load.h"
#include "shard/strategy/strategy_problem.h"
#include "shard/strategy/strategy_milp.h"

static void tensor(pb_builder *b, const char *name, int64_t d0, int64_t d1, int init)
{
	int64_t d[2] = {d0, d1};
	int t = pb_builder_tensor(b, name);
	pb_builder_set_shape(b, t, PB_DT_FLOAT, 2, d, NULL);
	if (init)
		pb_builder_initializer(b, t, 1);
}

static void node2(pb_builder *b, const char *op, const char *x, const char *y, const char *out)
{
	const char *in[2] = {x, y};
	const char *o[1] = {out};
	pb_builder_node(b, out, op, "", in, y ? 2 : 1, o, 1);
}

/* h0 = sigmoid(x), six blocks h' = h + (relu(h W) V), and after them y = h6 + (h3 W3): a
 * middle block's inner tensor leaves the run, so its group meets one more
 * edge than its representative's (its pruning may differ: its own tables). */
static pb_graph *chain_with_skip(void)
{
	pb_builder *b = pb_builder_new("skip.test", "test");
	char n[6][32];
	tensor(b, "x", 64, 256, 0);
	pb_builder_input(b, pb_builder_tensor(b, "x"));
	tensor(b, "h0", 64, 256, 0);
	node2(b, "Sigmoid", "x", NULL, "h0");
	for (int j = 0; j < 6; j++) {
		snprintf(n[0], 32, "h%d", j);
		snprintf(n[1], 32, "W%d", j);
		snprintf(n[2], 32, "m%d", j);
		snprintf(n[3], 32, "r%d", j);
		snprintf(n[4], 32, "V%d", j);
		snprintf(n[5], 32, "u%d", j);
		tensor(b, n[1], 256, 512, 1);
		tensor(b, n[4], 512, 256, 1);
		tensor(b, n[2], 64, 512, 0);
		tensor(b, n[3], 64, 512, 0);
		tensor(b, n[5], 64, 256, 0);
		node2(b, "MatMul", n[0], n[1], n[2]);
		node2(b, "Relu", n[2], NULL, n[3]);
		node2(b, "MatMul", n[3], n[4], n[5]);
		char h1[32];
		snprintf(h1, 32, "h%d", j + 1);
		tensor(b, h1, 64, 256, 0);
		node2(b, "Add", n[5], n[0], h1);
	}
	tensor(b, "s", 64, 256, 0);
	node2(b, "MatMul", "m3", "V3", "s");
	tensor(b, "y", 64, 256, 0);
	node2(b, "Add", "h6", "s", "y");
	pb_builder_output(b, pb_builder_tensor(b, "y"));
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts lo = {0};
	if (pb_graph_build(b, &lo, &g, &err))
		fprintf(stderr, "%s\n", err.msg);
	assert_non_null(g);
	return g;
}

static void same_doubles(const double *a, const double *b, int n)
{
	assert_memory_equal(a, b, (size_t)n * sizeof *a);
}

/* p: the full build, q: the compressed one */
static void same_problem(const pb_shard_problem *p, const pb_shard_problem *q)
{
	assert_int_equal(p->n_groups, q->n_groups);
	assert_int_equal(p->n_edges, q->n_edges);
	assert_int_equal(p->n_active, q->n_active);
	assert_int_equal(p->n_node_strats, q->n_node_strats);
	assert_int_equal(p->layer_tied, q->layer_tied);
	for (int i = 0; i < p->g->n_nodes; i++) {
		const pb_shard_node *a = &p->nodes[i], *b = &q->nodes[i];
		assert_int_equal(a->active, b->active);
		if (!a->active)
			continue;
		assert_int_equal(a->group, b->group);
		assert_int_equal(a->n_strat, b->n_strat);
		assert_memory_equal(a->strat, b->strat, (size_t)a->n_strat * sizeof *a->strat);
		same_doubles(a->cost, b->cost, a->n_strat);
		same_doubles(a->flops_part, b->flops_part, a->n_strat);
		same_doubles(a->mem_param, b->mem_param, a->n_strat);
		same_doubles(a->mem_act, b->mem_act, a->n_strat);
		if (a->group >= 0)
			assert_memory_equal(a->pick, b->pick,
			                    (size_t)p->groups[a->group].n_strat * sizeof(int));
	}
	for (int G = 0; G < p->n_groups; G++) {
		const pb_shard_group *a = &p->groups[G], *b = &q->groups[G];
		assert_int_equal(a->leader, b->leader);
		assert_int_equal(a->n_members, b->n_members);
		assert_memory_equal(a->members, b->members, (size_t)a->n_members * sizeof(int));
		assert_int_equal(a->n_strat, b->n_strat);
		assert_int_equal(a->tie, b->tie);
		same_doubles(a->cost, b->cost, a->n_strat);
		same_doubles(a->mem_param, b->mem_param, a->n_strat);
		same_doubles(a->mem_act, b->mem_act, a->n_strat);
	}
	for (int e = 0; e < p->n_edges; e++) {
		const pb_shard_edge *a = &p->edges[e], *b = &q->edges[e];
		assert_int_equal(a->from, b->from);
		assert_int_equal(a->to, b->to);
		assert_int_equal(a->prod, b->prod);
		assert_int_equal(a->cons, b->cons);
		assert_int_equal(a->slot, b->slot);
		assert_int_equal(a->na, b->na);
		assert_int_equal(a->nb, b->nb);
		assert_int_equal(a->twin, b->twin);
		assert_memory_equal(a->a_of, b->a_of,
		                    (size_t)p->groups[a->from].n_strat * sizeof(int));
		assert_memory_equal(a->b_of, b->b_of,
		                    (size_t)p->groups[a->to].n_strat * sizeof(int));
		same_doubles(a->cost, b->cost, a->na * a->nb);
	}
}

typedef struct share_case {
	const char *scheme;
	int train, recompute, opt_level;
	double force;        /* force_fraction (0: the default) */
	const char *m0, *m1; /* a pipeline chunk: nodes m0..m1 (NULL: all) */
} share_case;

static void check_case(const pb_graph *g, const pb_cluster *c, const share_case *k)
{
	pb_mesh m;
	pb_error err = {0};
	assert_int_equal(pb_cluster_mesh_parse(&m, c, k->scheme, &err), PB_OK);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	o.train = k->train;
	o.recompute = k->recompute;
	o.optimizer = k->train ? PB_OPTIM_ADAM : PB_OPTIM_NONE;
	o.opt_level = k->opt_level;
	o.layers = 1;
	if (k->force > 0)
		o.force_fraction = k->force;
	unsigned char *mask = NULL;
	if (k->m0) {
		int a = pb_graph_find_node(g, k->m0), b = pb_graph_find_node(g, k->m1);
		assert_true(a >= 0 && b > a);
		mask = calloc((size_t)g->n_nodes, 1);
		assert_non_null(mask);
		memset(mask + a, 1, (size_t)(b - a + 1));
		o.mask = mask;
	}
	pb_shard_problem *full = NULL, *comp = NULL;
	o.no_share = 1;
	assert_int_equal(pb_strategy_problem_build(g, c, &m, &o, &full, &err), PB_OK);
	o.no_share = 0;
	assert_int_equal(pb_strategy_problem_build(g, c, &m, &o, &comp, &err), PB_OK);
	/* the full build shares nothing; the compressed one shares the middle
	 * blocks' tables (pointers, not copies) */
	assert_int_equal(full->n_shared_nodes + full->n_shared_groups + full->n_shared_edges, 0);
	assert_true(comp->n_shared_nodes > 0);
	assert_true(comp->n_shared_groups > 0);
	assert_true(comp->n_shared_edges > 0);
	int seen = 0;
	for (int i = 0; i < g->n_nodes; i++) {
		const pb_shard_node *n = &comp->nodes[i];
		if (n->active && n->same_as >= 0) {
			assert_ptr_equal(n->cost, comp->nodes[n->same_as].cost);
			assert_ptr_equal(n->strat, comp->nodes[n->same_as].strat);
			seen++;
		}
	}
	assert_int_equal(seen, comp->n_shared_nodes);
	assert_true(full->layer_tied > 0);
	same_problem(full, comp);
	/* and so the same plan */
	pb_shard_result a, b;
	assert_int_equal(pb_strategy_milp_solve(full, NULL, NULL, NULL, &a, &err), PB_OK);
	assert_int_equal(pb_strategy_milp_solve(comp, NULL, NULL, NULL, &b, &err), PB_OK);
	assert_memory_equal(a.choice, b.choice, (size_t)full->n_groups * sizeof(int));
	assert_memory_equal(&a.objective, &b.objective, sizeof a.objective);
	pb_strategy_problem_result_free(&a);
	pb_strategy_problem_result_free(&b);
	pb_strategy_problem_free(full);
	pb_strategy_problem_free(comp);
	free(mask);
}

static void test_compressed_equals_full(void **state)
{
	(void)state;
	pb_cluster c;
	pb_test_cluster_file("layouts/cluster-2x8.lua", &c);
	pb_graph *g = pb_test_gpt(6, 64, 4, 16, 100, 4);
	const share_case cases[] = {
	    {"2x8", 0, PB_RECOMP_NONE, 0, 0, NULL, NULL},
	    {"2x2x4", 0, PB_RECOMP_NONE, 0, 0, NULL, NULL},
	    {"4x4", 1, PB_RECOMP_NONE, 0, 0, NULL, NULL},
	    {"2x2x4", 1, PB_RECOMP_SELECTIVE, 0, 0, NULL, NULL},
	    {"2x4x2", 1, PB_RECOMP_FULL, 0, 0, NULL, NULL},
	    {"2x8", 1, PB_RECOMP_FULL, 2, 0, NULL, NULL},
	    {"4x4", 1, PB_RECOMP_NONE, 0, 1e-9, NULL, NULL},
	    {"2x2x4", 1, PB_RECOMP_FULL, 0, 0, "h1.ln_1", "h5.residual_2"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		check_case(g, &c, &cases[i]);
	pb_graph_free(g);
	pb_cluster_free(&c);
}

static void test_chain_with_skip(void **state)
{
	(void)state;
	pb_cluster c;
	pb_test_cluster_file("layouts/cluster-2x8.lua", &c);
	pb_graph *g = chain_with_skip();
	const share_case cases[] = {
	    {"2x8", 0, PB_RECOMP_NONE, 0, 0, NULL, NULL},
	    {"4x4", 0, PB_RECOMP_NONE, 0, 0, NULL, NULL},
	    {"2x2x4", 0, PB_RECOMP_NONE, 0, 0, NULL, NULL},
	    {"16", 1, PB_RECOMP_NONE, 0, 0, NULL, NULL},
	    {"2x8", 1, PB_RECOMP_NONE, 0, 0, NULL, NULL},
	    {"2x2x4", 1, PB_RECOMP_FULL, 0, 0, NULL, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		check_case(g, &c, &cases[i]);
	pb_graph_free(g);
	pb_cluster_free(&c);
}

/* Without sharing (a rule filter, or no repeated layers asked for) nothing
 * is shared. */
static void test_layers_off_shares_nothing(void **state)
{
	(void)state;
	pb_cluster c;
	pb_test_cluster_file("layouts/cluster-2x8.lua", &c);
	pb_graph *g = pb_test_gpt(5, 64, 4, 16, 100, 4);
	pb_mesh m;
	pb_error err = {0};
	assert_int_equal(pb_cluster_mesh_parse(&m, &c, "4x4", &err), PB_OK);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	pb_shard_problem *p = NULL;
	assert_int_equal(pb_strategy_problem_build(g, &c, &m, &o, &p, &err), PB_OK);
	assert_int_equal(p->n_shared_nodes + p->n_shared_groups + p->n_shared_edges, 0);
	pb_strategy_problem_free(p);
	pb_graph_free(g);
	pb_cluster_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_compressed_equals_full),
	    cmocka_unit_test(test_chain_with_skip),
	    cmocka_unit_test(test_layers_off_shares_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
