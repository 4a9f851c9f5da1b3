/* test_map_aggregate.c — map's aggregation (out-edge lists per aggregate)
 * against a plain reference that searches every member's successors (the
 * method as stated: a merge is refused when a path leaves the merged set
 * and comes back, over nodes 0..v), on random DAGs with random backends and
 * folded nodes (white box: includes map.c). */
#include "pb_test.h"
#include "load.h"

#include "transform/map.c"

/* The reference: node-level search over the members' successors. */
static int ref_cycles(const pb_graph *g, const unsigned char *folded, const int *cls, int h0,
                      int h1, int v)
{
	int n = g->n_nodes, *in = calloc((size_t)n, sizeof *in),
	    *seen = calloc((size_t)n, sizeof *seen), *q = malloc((size_t)n * sizeof *q), qt = 0,
	    hit = 0;
	for (int y = 0; y < n; y++)
		in[y] = y <= v && !folded[y] && (cls[y] == h0 || cls[y] == h1);
	for (int y = 0; y < n; y++)
		if (in[y])
			for (int j = 0; j < g->nodes[y].n_succs; j++) {
				int z = g->nodes[y].succs[j];
				if (z <= v && !folded[z] && !in[z] && !seen[z]) {
					seen[z] = 1;
					q[qt++] = z;
				}
			}
	for (int qh = 0; qh < qt && !hit; qh++) {
		int x = q[qh];
		/* the whole aggregate of x is one vertex */
		for (int y = 0; y < n && !hit; y++) {
			if (y > v || folded[y] || cls[y] != cls[x])
				continue;
			for (int j = 0; j < g->nodes[y].n_succs; j++) {
				int z = g->nodes[y].succs[j];
				if (z > v || folded[z] || seen[z])
					continue;
				if (in[z]) {
					hit = 1;
					break;
				}
				seen[z] = 1;
				q[qt++] = z;
			}
		}
	}
	free(in);
	free(seen);
	free(q);
	return hit;
}

/* Reference aggregation into agg[] (aggregate ids by first node). */
static void ref_aggregate(const pb_graph *g, const unsigned char *folded, const int *backend,
                          int *agg)
{
	int n = g->n_nodes, *cls = malloc((size_t)n * sizeof *cls);
	for (int v = 0; v < n; v++) {
		cls[v] = v;
		if (folded[v])
			continue;
		for (int j = 0; j < g->nodes[v].n_preds; j++) {
			int p = g->nodes[v].preds[j];
			if (folded[p] || backend[p] != backend[v] || cls[p] == cls[v])
				continue;
			if (!ref_cycles(g, folded, cls, cls[v], cls[p], v)) {
				int from = cls[p], to = cls[v];
				for (int y = 0; y <= v; y++)
					if (cls[y] == from)
						cls[y] = to;
			}
		}
	}
	int *id = malloc((size_t)n * sizeof *id), na = 0;
	for (int v = 0; v < n; v++)
		id[v] = -1;
	for (int v = 0; v < n; v++) {
		if (folded[v]) {
			agg[v] = -1;
			continue;
		}
		if (id[cls[v]] < 0)
			id[cls[v]] = na++;
		agg[v] = id[cls[v]];
	}
	free(id);
	free(cls);
}

static void test_aggregate_matches_reference(void **state)
{
	(void)state;
	unsigned seed = 4711;
	int merged_total = 0;
	for (int trial = 0; trial < 60; trial++) {
		int n = 8 + (int)(pb_test_rnd(&seed) % 60), nb = 2 + (int)(pb_test_rnd(&seed) % 2);
		char *edges = malloc((size_t)n * (size_t)n * 12 + 1);
		size_t len = 0;
		edges[0] = 0;
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++)
				if (pb_test_rnd(&seed) % 100 < 10)
					len += (size_t)sprintf(edges + len, "%s%d>%d",
					                       len ? " " : "", i, j);
		pb_graph *g = pb_test_ops_graph("agg.test", n, NULL, edges, 16, 0, 0);
		pb_map_result r = {0};
		r.folded = calloc((size_t)n + 1, 1);
		r.backend = malloc(((size_t)n + 1) * sizeof(int));
		r.agg = malloc(((size_t)n + 1) * sizeof(int));
		int *ref = malloc((size_t)n * sizeof *ref);
		for (int v = 0; v < n; v++) {
			r.folded[v] = pb_test_rnd(&seed) % 20 == 0;
			r.backend[v] = r.folded[v] ? -1 : (int)(pb_test_rnd(&seed) % (unsigned)nb);
		}
		pb_error err = {0};
		assert_int_equal(aggregate(g, &r, &err), PB_OK);
		ref_aggregate(g, r.folded, r.backend, ref);
		for (int v = 0; v < n; v++)
			if (r.agg[v] != ref[v])
				fail_msg("trial %d node %d: aggregate %d, reference %d", trial, v,
				         r.agg[v], ref[v]);
		for (int v = 0; v < n; v++)
			merged_total += !r.folded[v];
		merged_total -= r.n_agg;
		free(r.folded);
		free(r.backend);
		free(r.agg);
		free(ref);
		free(edges);
		pb_graph_free(g);
	}
	print_message("%d nodes joined an aggregate over all trials\n", merged_total);
	assert_true(merged_total > 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aggregate_matches_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
