/*
 * reach.c — reachability queries (reach.h): a bit-set transitive closure for
 * graphs up to PB_REACH_MAX_BITSET nodes, a pruned search beyond.
 *
 * Node ids of a pb_graph are topological, so every successor has a larger id:
 * one backward sweep fills all rows, row(v) = OR_s (row(s) | bit(s)), and a
 * search for b from a never needs to visit ids above b.
 */
#include "transform/reach.h"

#include <stdlib.h>
#include <string.h>

pb_reach *pb_reach_new(const pb_graph *g, int max_bitset)
{
	pb_reach *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->g = g;
	r->n = g->n_nodes;
	if (g->n_nodes > max_bitset) {
		r->stamp = calloc((size_t)r->n + 1, sizeof *r->stamp);
		r->queue = malloc(((size_t)r->n + 1) * sizeof *r->queue);
		if (!r->stamp || !r->queue) {
			pb_reach_free(r);
			return NULL;
		}
		return r;
	}
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
	free(r->stamp);
	free(r->queue);
	free(r);
}

static int search(pb_reach *r, int a, int b)
{
	int mark = ++r->mark, qh = 0, qt = 0;
	r->queue[qt++] = a;
	r->stamp[a] = mark;
	while (qh < qt) {
		const pb_node *nd = &r->g->nodes[r->queue[qh++]];
		for (int k = 0; k < nd->n_succs; k++) {
			int s = nd->succs[k];
			if (s == b)
				return 1;
			if (s < b && r->stamp[s] != mark) {
				r->stamp[s] = mark;
				r->queue[qt++] = s;
			}
		}
	}
	return 0;
}

int pb_reach_path(pb_reach *r, int a, int b)
{
	if (a < 0 || b < 0 || a >= r->n || b >= r->n || a >= b)
		return 0;
	if (!r->bits)
		return search(r, a, b);
	const uint64_t *row = r->bits + (size_t)a * (size_t)r->words;
	return (row[b >> 6] >> (b & 63)) & 1;
}

int pb_reach_independent(pb_reach *r, int a, int b)
{
	return a != b && !pb_reach_path(r, a, b) && !pb_reach_path(r, b, a);
}
