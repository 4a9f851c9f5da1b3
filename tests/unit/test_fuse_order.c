/* test_fuse_order.c — fuse's cycle search bounded by the kept topological
 * order gives the same answers as the unbounded search, and the order stays
 * a topological order of the contracted graph, over random DAGs and random
 * fusions (white box: includes fuse.c). */
#include "pb_test.h"
#include "load.h"

#include "transform/fuse.h"

#include "transform/fuse.c"

static int node_id(const pb_graph *g, int i)
{
	char name[16];
	snprintf(name, sizeof name, "n%d", i);
	return pb_graph_find_node(g, name);
}

/* Every edge between two classes runs from a lower to a higher ord. */
static void check_order(const fstate *s)
{
	for (int u = 0; u < s->n; u++)
		for (int j = 0; j < s->g->nodes[u].n_succs; j++) {
			int a = s->cls[u], b = s->cls[s->g->nodes[u].succs[j]];
			if (a != b && s->ord[a] >= s->ord[b])
				fail_msg("edge %d -> %d: class ord %d >= %d", u,
				         s->g->nodes[u].succs[j], s->ord[a], s->ord[b]);
		}
}

static void test_bounded_search_matches(void **state)
{
	(void)state;
	unsigned seed = 777;
	int fused = 0, refused = 0;
	for (int trial = 0; trial < 40; trial++) {
		int n = 10 + (int)(pb_test_rnd(&seed) % 50);
		char *edges = malloc((size_t)n * (size_t)n * 12 + 1);
		size_t len = 0;
		edges[0] = 0;
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++)
				if (pb_test_rnd(&seed) % 100 < 8)
					len += (size_t)sprintf(edges + len, "%s%d>%d",
					                       len ? " " : "", i, j);
		pb_graph *g = pb_test_ops_graph("order.test", n, NULL, edges, 16, 0, 0);
		pb_fuse_model m;
		pb_fuse_model_default(&m);
		fstate s = {g, &m, n};
		size_t sz = (size_t)n + 1;
		s.cls = malloc(sz * sizeof(int));
		s.next = malloc(sz * sizeof(int));
		s.stamp = calloc(sz, sizeof(int));
		s.in_set = calloc(sz, sizeof(int));
		s.queue = malloc(sz * sizeof(int));
		s.ord = malloc(sz * sizeof(int));
		s.fwd = malloc(sz * sizeof(int));
		s.bwd = malloc(sz * sizeof(int));
		s.keys = malloc(2 * sz * sizeof(long long));
		for (int v = 0; v < n; v++) {
			s.cls[v] = v;
			s.next[v] = -1;
			s.ord[v] = v;
		}
		check_order(&s);
		for (int attempt = 0; attempt < 3 * n; attempt++) {
			int k = 2 + (int)(pb_test_rnd(&seed) % 3), set[4], ok = 1;
			for (int i = 0; i < k && ok; i++) {
				set[i] = node_id(g, (int)(pb_test_rnd(&seed) % (unsigned)n));
				ok = s.cls[set[i]] == set[i] && s.next[set[i]] < 0; /* singletons */
				for (int j = 0; j < i; j++)
					ok &= set[j] != set[i];
			}
			if (!ok)
				continue;
			int *ord = s.ord;
			s.ord = NULL;
			int slow = would_cycle(&s, set, k);
			s.ord = ord;
			int fast = would_cycle(&s, set, k);
			assert_int_equal(fast, slow);
			if (fast) {
				refused++;
				continue;
			}
			int pos = reorder_for_merge(&s, set, k);
			merge(&s, set, k);
			s.ord[s.cls[set[0]]] = pos;
			fused++;
			check_order(&s);
			int dag = 0;
			pb_error err = {0};
			assert_int_equal(pb_quotient_is_dag(g, s.cls, 0, &dag, &err), PB_OK);
			assert_int_equal(dag, 1);
		}
		free(s.cls);
		free(s.next);
		free(s.stamp);
		free(s.in_set);
		free(s.queue);
		free(s.ord);
		free(s.fwd);
		free(s.bwd);
		free(s.keys);
		free(edges);
		pb_graph_free(g);
	}
	print_message("%d fusions, %d refused for a cycle\n", fused, refused);
	assert_true(fused > 100 && refused > 20); /* both branches exercised */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bounded_search_matches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
