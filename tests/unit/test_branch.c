/* test_branch.c — parallel branch groups: every kind on hand-built graphs,
 * and the independence invariant (checked with igraph, not with the code's
 * own closure) on every bundled model. */
#include "pb_test.h"
#include "load.h"

#include <igraph.h>

#include "transform/branch.h"
#include "transform/folded.h"
#include "transform/reach.h"

/* Graph from "a>b c>b ..." with node i named n{i}, op ops[i] (or "Relu"). */
static pb_graph *build(int n, const char *edges)
{
	return pb_test_chain_graph(n, NULL, edges);
}

static int node(const pb_graph *g, int i)
{
	char name[16];
	snprintf(name, sizeof name, "n%d", i);
	return pb_graph_find_node(g, name);
}

static const pb_branch_group *group_with_anchor(const pb_branch_set *s, int anchor)
{
	for (int i = 0; i < s->n; i++)
		if (s->groups[i].anchor == anchor)
			return &s->groups[i];
	return NULL;
}

/* Branch b of group gr equals the named nodes (by original index). */
static void assert_branch(const pb_graph *g, const pb_branch_group *gr, int b, const int *idx,
                          int n)
{
	assert_true(b < gr->n_branches);
	assert_int_equal(gr->start[b + 1] - gr->start[b], n);
	for (int i = 0; i < n; i++)
		assert_int_equal(gr->nodes[gr->start[b] + i], node(g, idx[i]));
}

static pb_branch_set *extract(const pb_graph *g)
{
	pb_branch_set *s = NULL;
	pb_error err = {0};
	assert_int_equal(pb_branch_extract(g, NULL, NULL, &s, &err), PB_OK);
	return s;
}

static void test_parent_kind(void **state)
{
	/* p=0 forks into 1->2->4 and 3->5: outputs go to different nodes. */
	pb_graph *g = build(6, "0>1 1>2 0>3 2>4 3>5");
	pb_branch_set *s = extract(g);
	const pb_branch_group *gr = group_with_anchor(s, node(g, 0));
	assert_non_null(gr);
	assert_int_equal(gr->kind, PB_BRANCH_PARENT);
	assert_int_equal(gr->n_branches, 2);
	assert_branch(g, gr, 0, (int[]){1, 2, 4}, 3);
	assert_branch(g, gr, 1, (int[]){3, 5}, 2);
	assert_int_equal(s->per_kind[PB_BRANCH_PARENT], 1);
	pb_branch_set_free(s);
	pb_graph_free(g);
}

static void test_parent_child_kind(void **state)
{
	/* 0 forks into 1->2 and 3->4, both join in 5; each branch has 2 nodes. */
	pb_graph *g = build(6, "0>1 1>2 0>3 3>4 2>5 4>5");
	pb_branch_set *s = extract(g);
	const pb_branch_group *gr = group_with_anchor(s, node(g, 0));
	assert_non_null(gr);
	assert_int_equal(gr->kind, PB_BRANCH_PARENT_CHILD);
	assert_branch(g, gr, 0, (int[]){1, 2}, 2);
	assert_branch(g, gr, 1, (int[]){3, 4}, 2);
	pb_branch_set_free(s);
	pb_graph_free(g);

	/* Same shape with one-node branches is the plain parent kind. */
	g = build(4, "0>1 0>2 1>3 2>3");
	s = extract(g);
	gr = group_with_anchor(s, node(g, 0));
	assert_non_null(gr);
	assert_int_equal(gr->kind, PB_BRANCH_PARENT);
	pb_branch_set_free(s);
	pb_graph_free(g);
}

static void test_child_kind(void **state)
{
	/* Joins 4 (from 0,1) and 5 (from 2,3) continue into 6 and 7, which
	 * join in 8: upward from 8 the chains are 4->6 and 5->7. */
	pb_graph *g = build(9, "0>4 1>4 2>5 3>5 4>6 5>7 6>8 7>8");
	pb_branch_set *s = extract(g);
	const pb_branch_group *gr = group_with_anchor(s, node(g, 8));
	assert_non_null(gr);
	assert_int_equal(gr->kind, PB_BRANCH_CHILD);
	assert_branch(g, gr, 0, (int[]){4, 6}, 2);
	assert_branch(g, gr, 1, (int[]){5, 7}, 2);
	assert_int_equal(s->per_kind[PB_BRANCH_CHILD], 3);
	pb_branch_set_free(s);
	pb_graph_free(g);
}

static void test_source_and_sink_kinds(void **state)
{
	/* Two unconnected chains: first nodes without parents. */
	pb_graph *g = build(4, "0>1 2>3");
	pb_branch_set *s = extract(g);
	assert_int_equal(s->per_kind[PB_BRANCH_SOURCE], 1);
	assert_int_equal(s->groups[0].kind, PB_BRANCH_SOURCE);
	assert_int_equal(s->groups[0].anchor, -1);
	assert_branch(g, &s->groups[0], 0, (int[]){0, 1}, 2);
	assert_branch(g, &s->groups[0], 1, (int[]){2, 3}, 2);
	pb_branch_set_free(s);
	pb_graph_free(g);

	/* Joins 4 and 5 lead to sinks 6 and 7: last nodes without children. */
	g = build(8, "0>4 1>4 2>5 3>5 4>6 5>7");
	s = extract(g);
	assert_int_equal(s->per_kind[PB_BRANCH_SINK], 1);
	const pb_branch_group *gr = NULL;
	for (int i = 0; i < s->n; i++)
		if (s->groups[i].kind == PB_BRANCH_SINK)
			gr = &s->groups[i];
	assert_non_null(gr);
	assert_branch(g, gr, 0, (int[]){4, 6}, 2);
	assert_branch(g, gr, 1, (int[]){5, 7}, 2);
	pb_branch_set_free(s);
	pb_graph_free(g);
}

static void test_local_kind(void **state)
{
	/* 2 and 3 both read 0 and 1 and both feed 4 and 5: no chain passes
	 * through them (each is a fork and a join), so only the local kind
	 * groups them. */
	pb_graph *g = build(6, "0>2 1>2 0>3 1>3 2>4 2>5 3>4 3>5");
	pb_branch_set *s = extract(g);
	assert_int_equal(s->per_kind[PB_BRANCH_LOCAL], 1);
	const pb_branch_group *gr = group_with_anchor(s, node(g, 2));
	assert_non_null(gr);
	assert_int_equal(gr->kind, PB_BRANCH_LOCAL);
	assert_branch(g, gr, 0, (int[]){2}, 1);
	assert_branch(g, gr, 1, (int[]){3}, 1);
	pb_branch_set_free(s);

	/* Not fusable -> no local group around it. */
	unsigned char fusable[6] = {1, 1, 0, 0, 1, 1};
	pb_error err = {0};
	assert_int_equal(pb_branch_extract(g, fusable, NULL, &s, &err), PB_OK);
	assert_int_equal(s->per_kind[PB_BRANCH_LOCAL], 0);
	pb_branch_set_free(s);
	pb_graph_free(g);
}

/* The invariant of every group on a real graph: nodes of different branches
 * do not reach each other (igraph_subcomponent), and each node is in at most
 * one group. */
static void check_groups_igraph(const pb_graph *g, const pb_branch_set *s)
{
	igraph_vector_int_t edges;
	int ne = 0;
	for (int v = 0; v < g->n_nodes; v++)
		ne += g->nodes[v].n_succs;
	igraph_vector_int_init(&edges, 2 * ne);
	int k = 0;
	for (int v = 0; v < g->n_nodes; v++)
		for (int j = 0; j < g->nodes[v].n_succs; j++) {
			VECTOR(edges)[k++] = v;
			VECTOR(edges)[k++] = g->nodes[v].succs[j];
		}
	igraph_t ig;
	igraph_create(&ig, &edges, g->n_nodes, IGRAPH_DIRECTED);
	int *branch_of = malloc((size_t)g->n_nodes * sizeof *branch_of);
	int *seen = calloc((size_t)g->n_nodes, sizeof *seen);
	igraph_vector_int_t reach;
	igraph_vector_int_init(&reach, 0);
	for (int gi = 0; gi < s->n; gi++) {
		const pb_branch_group *gr = &s->groups[gi];
		assert_true(gr->n_branches >= 2);
		for (int b = 0; b < gr->n_branches; b++) {
			assert_true(gr->start[b + 1] > gr->start[b]);
			for (int i = gr->start[b]; i < gr->start[b + 1]; i++) {
				int v = gr->nodes[i];
				assert_int_equal(seen[v], 0);
				seen[v] = 1;
				assert_int_equal(s->group_of[v], gi);
				branch_of[v] = b;
			}
		}
		for (int i = 0; i < gr->start[gr->n_branches]; i++) {
			int v = gr->nodes[i];
			igraph_subcomponent(&ig, &reach, v, IGRAPH_OUT);
			for (igraph_integer_t r = 0; r < igraph_vector_int_size(&reach); r++) {
				int w = (int)VECTOR(reach)[r];
				if (w != v && s->group_of[w] == gi)
					assert_int_equal(branch_of[w], branch_of[v]);
			}
		}
	}
	igraph_vector_int_destroy(&reach);
	igraph_destroy(&ig);
	igraph_vector_int_destroy(&edges);
	free(branch_of);
	free(seen);
}

static void test_local_requires_independence(void **state)
{
	/* 2 -> 3 directly, both fork and join: siblings through 0 but dependent. */
	pb_graph *g = build(6, "0>2 1>2 0>3 2>3 1>3 2>4 3>4 2>5 3>5");
	pb_branch_set *s = extract(g);
	int a = s->group_of[node(g, 2)], b = s->group_of[node(g, 3)];
	assert_true(a < 0 || a != b);
	check_groups_igraph(g, s);
	pb_branch_set_free(s);
	pb_graph_free(g);
}

static void test_groups_independent_on_models(void **state)
{
	/* every bundled model (models/) */
	const char *models[] = {"resnet18.onnx",     "googlenet.onnx",
	                        "mobilenet_v2.onnx", "squeezenet1_1.onnx",
	                        "densenet121.onnx",  "bert_base_like.onnx",
	                        "swin_t.onnx",       "squeezenet1_1-weights.onnx",
	                        "tiny_branches.dot"};
	int total_groups = 0;
	for (size_t m = 0; m < sizeof models / sizeof *models; m++) {
		char path[128];
		snprintf(path, sizeof path, "models/%s", models[m]);
		pb_graph *g = NULL;
		pb_error err = {0};
		if (pb_graph_load(path, NULL, &g, &err) != PB_OK)
			fail_msg("%s", err.msg);
		unsigned char *folded = calloc((size_t)g->n_nodes + 1, 1);
		pb_transform_folded(g, folded);
		pb_branch_set *s = NULL;
		assert_int_equal(pb_branch_extract(g, NULL, folded, &s, &err), PB_OK);
		check_groups_igraph(g, s);
		for (int v = 0; v < g->n_nodes; v++)
			if (folded[v])
				assert_int_equal(s->group_of[v], -1);
		total_groups += s->n;
		pb_branch_set_free(s);
		/* Without folding the structure includes the constants. */
		assert_int_equal(pb_branch_extract(g, NULL, NULL, &s, &err), PB_OK);
		check_groups_igraph(g, s);
		pb_branch_set_free(s);
		free(folded);
		pb_graph_free(g);
	}
	assert_true(total_groups > 20);
}

static void test_reach_matches_definition(void **state)
{
	pb_graph *g = build(5, "0>1 1>2 0>3");
	/* Bit-set mode and search mode answer the same. */
	for (int mode = 0; mode < 2; mode++) {
		pb_reach *r = pb_reach_new(g, mode ? 0 : PB_REACH_MAX_BITSET);
		assert_true(mode ? r->bits == NULL : r->bits != NULL);
		assert_true(pb_reach_path(r, node(g, 0), node(g, 2)));
		assert_false(pb_reach_path(r, node(g, 2), node(g, 0)));
		assert_true(pb_reach_independent(r, node(g, 1), node(g, 3)));
		assert_false(pb_reach_independent(r, node(g, 1), node(g, 1)));
		assert_true(pb_reach_independent(r, node(g, 4), node(g, 0)));
		assert_false(pb_reach_independent(r, node(g, 3), node(g, 0)));
		pb_reach_free(r);
	}
	pb_graph_free(g);
	/* On a real model every pair agrees. */
	pb_error err = {0};
	if (pb_graph_load("models/squeezenet1_1.onnx", NULL, &g, &err) != PB_OK)
		fail_msg("%s", err.msg);
	pb_reach *bits = pb_reach_new(g, PB_REACH_MAX_BITSET), *srch = pb_reach_new(g, 0);
	for (int a = 0; a < g->n_nodes; a++)
		for (int b = 0; b < g->n_nodes; b++)
			assert_int_equal(pb_reach_path(bits, a, b), pb_reach_path(srch, a, b));
	pb_reach_free(bits);
	pb_reach_free(srch);
	pb_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parent_kind),
	    cmocka_unit_test(test_parent_child_kind),
	    cmocka_unit_test(test_child_kind),
	    cmocka_unit_test(test_source_and_sink_kinds),
	    cmocka_unit_test(test_local_kind),
	    cmocka_unit_test(test_local_requires_independence),
	    cmocka_unit_test(test_reach_matches_definition),
	    cmocka_unit_test(test_groups_independent_on_models),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
