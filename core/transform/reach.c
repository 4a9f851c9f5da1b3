/*
 * reach.c — bit-set transitive closure (reach.h).
 *
 * Node ids of a pb_graph are topological, so every successor has a larger id
 * and one backward sweep fills all rows: row(v) = OR_s (row(s) | bit(s)).
 */
#include "transform/reach.h"

#include <stdlib.h>
#include <string.h>

pb_reach *pb_reach_new(const pb_graph *g)
{
	pb_reach *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->n = g->n_nodes;
	r->words = (g->n_nodes + 63) / 64;
	if (r->words == 0)
		r->words = 1;
	r->bits = calloc((size_t)r->n * (size_t)r->words + 1, sizeof *r->bits);
	if (!r->bits) {
		free(r);
		return NULL;
	}
	for (int v = g->n_nodes - 1; v >= 0; v--) {
		uint64_t *row = r->bits + (size_t)v * (size_t)r->words;
		const pb_node *nd = &g->nodes[v];
		for (int k = 0; k < nd->n_succs; k++) {
			int s = nd->succs[k];
			const uint64_t *srow = r->bits + (size_t)s * (size_t)r->words;
			for (int w = 0; w < r->words; w++)
				row[w] |= srow[w];
			row[s >> 6] |= (uint64_t)1 << (s & 63);
		}
	}
	return r;
}

void pb_reach_free(pb_reach *r)
{
	if (!r)
		return;
	free(r->bits);
	free(r);
}

int pb_reach_path(const pb_reach *r, int a, int b)
{
	if (a < 0 || b < 0 || a >= r->n || b >= r->n)
		return 0;
	const uint64_t *row = r->bits + (size_t)a * (size_t)r->words;
	return (row[b >> 6] >> (b & 63)) & 1;
}

int pb_reach_independent(const pb_reach *r, int a, int b)
{
	return a != b && !pb_reach_path(r, a, b) && !pb_reach_path(r, b, a);
}
