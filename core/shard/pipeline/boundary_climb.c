/*
 * shard/pipeline/boundary_climb.c — hill climbing over single-node boundary moves
 * (boundary_climb.h).
 */
#include <stdint.h>
#include <stdlib.h>

#include "shard/pipeline/boundary_climb.h"

#define SEEN_MAX 4096

typedef struct climb {
	uint64_t seen[SEEN_MAX];
	int n_seen;
	int *cand;
} climb;

static uint64_t split_hash(const int *stage, int n)
{
	uint64_t h = 1469598103934665603ull;
	for (int v = 0; v < n; v++) {
		h ^= (uint64_t)(uint32_t)(stage[v] + 1);
		h *= 1099511628211ull;
	}
	return h;
}

/* 1 the first time a split is met. */
static int first_time(climb *c, const int *stage, int n)
{
	uint64_t h = split_hash(stage, n);
	for (int i = 0; i < c->n_seen; i++)
		if (c->seen[i] == h)
			return 0;
	if (c->n_seen < SEEN_MAX)
		c->seen[c->n_seen++] = h;
	return 1;
}

/* cand = stage with boundary k moved by dir; 0 when that would empty a
 * part. */
static int move(const int *stage, int n, int k, int dir, int *cand)
{
	int from = dir > 0 ? k + 1 : k, left = 0, pick = -1;
	for (int v = 0; v < n; v++) {
		cand[v] = stage[v];
		left += cand[v] == from;
	}
	if (left < 2)
		return 0;
	for (int i = 0; i < n && pick < 0; i++) {
		int v = dir > 0 ? i : n - 1 - i;
		if (cand[v] == from)
			pick = v;
	}
	cand[pick] = dir > 0 ? k : k + 1;
	return 1;
}

int pb_boundary_climb(int *const *stage, int n, int parts, int max_tries, pb_climb_try_fn try_move,
                      void *ud, pb_climb_stats *st, pb_error *err)
{
	st->moves = st->tries = st->converged = 0;
	climb *c = calloc(1, sizeof *c);
	if (c)
		c->cand = malloc(((size_t)n + 1) * sizeof(int));
	if (!c || !c->cand) {
		free(c);
		return pb_err(err, PB_ENOMEM, "boundary polish: out of memory");
	}
	first_time(c, *stage, n);
	int rc = PB_OK, improved = 1, cut = 0;
	while (improved && !cut && rc == PB_OK) {
		improved = 0;
		for (int k = 0; k + 1 < parts && rc == PB_OK && !cut; k++)
			for (int dir = 1; dir >= -1 && rc == PB_OK && !cut; dir -= 2) {
				int kept = 1, moved = 0;
				while (kept && rc == PB_OK) {
					if (st->tries >= max_tries) {
						cut = 1; /* the budget is spent */
						break;
					}
					kept = 0;
					if (!move(*stage, n, k, dir, c->cand) ||
					    !first_time(c, c->cand, n))
						break;
					int costed = 0;
					rc = try_move(ud, c->cand, k, dir, &costed, &kept, err);
					st->tries += costed;
					moved += kept;
				}
				st->moves += moved;
				improved |= moved > 0;
				if (moved)
					break; /* the way back is worse */
			}
	}
	st->converged = rc == PB_OK && !improved && !cut;
	free(c->cand);
	free(c);
	return rc;
}
