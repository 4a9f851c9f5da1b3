/*
 * mesh_search.c — local search and enumeration of placements (mesh_search.h).
 */
#include "partition/mesh/mesh_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition/mesh/mesh_place.h"

/* Tries moving core c to group to; keeps it when it improves *ev. */
static int try_move(pb_mesh_cost *C, int *owner, int c, int to, pb_mesh_eval *ev, int *seen,
                    int *queue, long *evals)
{
	int from = owner[c];
	if (!pb_mesh_place_connected(&C->grid, owner, from, c, seen, queue))
		return 0;
	owner[c] = to;
	pb_mesh_eval e;
	pb_mesh_cost_eval(C, owner, &e);
	(*evals)++;
	if (pb_mesh_cost_better(&e, ev)) {
		*ev = e;
		return 1;
	}
	owner[c] = from;
	return 0;
}

/* Exchanges core x (of group a) with core y (of group b): sizes stay, both
 * regions must stay connected; keeps it when it improves *ev. */
static int try_exchange(pb_mesh_cost *C, int *owner, int x, int y, pb_mesh_eval *ev, int *seen,
                        int *queue, long *evals)
{
	int a = owner[x], b = owner[y];
	owner[x] = b;
	owner[y] = a;
	if (pb_mesh_place_connected(&C->grid, owner, a, -1, seen, queue) &&
	    pb_mesh_place_connected(&C->grid, owner, b, -1, seen, queue)) {
		pb_mesh_eval e;
		pb_mesh_cost_eval(C, owner, &e);
		(*evals)++;
		if (pb_mesh_cost_better(&e, ev)) {
			*ev = e;
			return 1;
		}
	}
	owner[x] = a;
	owner[y] = b;
	return 0;
}

/* 1 when core c has a 4-neighbour in group grp. */
static int touches(const pb_mesh_grid *g, const int *owner, int c, int grp)
{
	int r = c / g->cols, k = c % g->cols;
	return (k + 1 < g->cols && owner[c + 1] == grp) || (k > 0 && owner[c - 1] == grp) ||
	       (r + 1 < g->rows && owner[c + g->cols] == grp) ||
	       (r > 0 && owner[c - g->cols] == grp);
}

static int try_swap(pb_mesh_cost *C, int *owner, int p, int q, pb_mesh_eval *ev, long *evals)
{
	int n = C->n;
	for (int c = 0; c < n; c++)
		owner[c] = owner[c] == p ? q : owner[c] == q ? p : owner[c];
	pb_mesh_eval e;
	pb_mesh_cost_eval(C, owner, &e);
	(*evals)++;
	if (pb_mesh_cost_better(&e, ev)) {
		*ev = e;
		return 1;
	}
	for (int c = 0; c < n; c++)
		owner[c] = owner[c] == p ? q : owner[c] == q ? p : owner[c];
	return 0;
}

/* 1 while the search may evaluate more: under its budget and not stopped
 * (C->stop is asked every PB_MESH_STOP_EVERY evaluations, from the first). */
static int go(pb_mesh_cost *C, const pb_mesh_search_stats *st, long max_evals, long *ask_at)
{
	if (C->stopped || st->evals >= max_evals)
		return 0;
	if (st->evals >= *ask_at) {
		*ask_at = st->evals + PB_MESH_STOP_EVERY;
		return !pb_mesh_cost_stop(C);
	}
	return 1;
}

int pb_mesh_search_local(pb_mesh_cost *C, int *owner, long max_evals, pb_mesh_eval *ev,
                         pb_mesh_search_stats *st, pb_error *err)
{
	memset(st, 0, sizeof *st);
	int n = C->n, G = C->n_groups, cols = C->grid.cols, rows = C->grid.rows;
	int *seen = malloc((size_t)n * sizeof *seen), *queue = malloc((size_t)n * sizeof *queue);
	if (!seen || !queue) {
		free(seen);
		free(queue);
		return pb_err(err, PB_ENOMEM, "placement search: out of memory");
	}
	pb_mesh_cost_eval(C, owner, ev);
	st->evals = 1;
	long ask = 0;
	int improved = 1;
	while (improved && go(C, st, max_evals, &ask)) {
		improved = 0;
		for (int c = 0; c < n && go(C, st, max_evals, &ask); c++) {
			int r = c / cols, k = c % cols;
			int nb[4] = {k + 1 < cols ? c + 1 : -1, k > 0 ? c - 1 : -1,
			             r + 1 < rows ? c + cols : -1, r > 0 ? c - cols : -1};
			for (int d = 0; d < 4 && go(C, st, max_evals, &ask); d++) {
				if (nb[d] < 0 || owner[nb[d]] == owner[c])
					continue;
				if (try_move(C, owner, c, owner[nb[d]], ev, seen, queue,
				             &st->evals)) {
					st->moves++;
					improved = 1;
					break;
				}
			}
		}
		/* exchanges of two border cores between neighbouring groups */
		for (int x = 0; x < n && go(C, st, max_evals, &ask); x++)
			for (int y = x + 1; y < n && go(C, st, max_evals, &ask); y++)
				if (owner[x] != owner[y] && touches(&C->grid, owner, x, owner[y]) &&
				    touches(&C->grid, owner, y, owner[x]) &&
				    try_exchange(C, owner, x, y, ev, seen, queue, &st->evals)) {
					st->exchanges++;
					improved = 1;
				}
		for (int p = 0; p < G && go(C, st, max_evals, &ask); p++)
			for (int q = p + 1; q < G && go(C, st, max_evals, &ask); q++)
				if (try_swap(C, owner, p, q, ev, &st->evals)) {
					st->swaps++;
					improved = 1;
				}
	}
	st->local_optimum = !improved && !C->stopped;
	free(seen);
	free(queue);
	return PB_OK;
}

/* Every group non-empty and connected. */
static int valid(const pb_mesh_cost *C, const int *owner, int *seen, int *queue)
{
	for (int q = 0; q < C->n_groups; q++)
		if (!pb_mesh_place_connected(&C->grid, owner, q, -1, seen, queue))
			return 0;
	return 1;
}

int pb_mesh_search_enumerate(pb_mesh_cost *C, int *owner, pb_mesh_eval *ev, long *evals,
                             pb_error *err)
{
	int n = C->n, G = C->n_groups;
	if (G < 1 || pow(G, n) > PB_MESH_ENUM_MAX)
		return pb_err(err, PB_EUSAGE,
		              "placement enumeration: %d groups on %d cores is %.3g assignments "
		              "(at most %.3g)",
		              G, n, pow(G, n), PB_MESH_ENUM_MAX);
	int *cur = calloc((size_t)n, sizeof *cur);
	int *seen = malloc((size_t)n * sizeof *seen), *queue = malloc((size_t)n * sizeof *queue);
	if (!cur || !seen || !queue) {
		free(cur);
		free(seen);
		free(queue);
		return pb_err(err, PB_ENOMEM, "placement enumeration: out of memory");
	}
	int found = 0;
	long tried = 0;
	*evals = 0;
	for (;;) {
		/* most assignments are not connected: ask every 4096 of them */
		if (tried++ % 4096 == 0 && pb_mesh_cost_stop(C))
			break;
		if (valid(C, cur, seen, queue)) {
			pb_mesh_eval e;
			pb_mesh_cost_eval(C, cur, &e);
			(*evals)++;
			if (!found || pb_mesh_cost_better(&e, ev)) {
				*ev = e;
				memcpy(owner, cur, (size_t)n * sizeof *cur);
				found = 1;
			}
		}
		int i = 0;
		while (i < n && ++cur[i] == G)
			cur[i++] = 0;
		if (i == n)
			break;
	}
	free(cur);
	free(seen);
	free(queue);
	if (C->stopped && !found) /* the caller's placement stays */
		return PB_OK;
	return found ? PB_OK
	             : pb_err(err, PB_EINPUT,
	                      "placement enumeration: no connected placement of %d groups", G);
}
