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
	int improved = 1;
	while (improved && st->evals < max_evals) {
		improved = 0;
		for (int c = 0; c < n && st->evals < max_evals; c++) {
			int r = c / cols, k = c % cols;
			int nb[4] = {k + 1 < cols ? c + 1 : -1, k > 0 ? c - 1 : -1,
			             r + 1 < rows ? c + cols : -1, r > 0 ? c - cols : -1};
			for (int d = 0; d < 4 && st->evals < max_evals; d++) {
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
		for (int x = 0; x < n && st->evals < max_evals; x++)
			for (int y = x + 1; y < n && st->evals < max_evals; y++)
				if (owner[x] != owner[y] && touches(&C->grid, owner, x, owner[y]) &&
				    touches(&C->grid, owner, y, owner[x]) &&
				    try_exchange(C, owner, x, y, ev, seen, queue, &st->evals)) {
					st->exchanges++;
					improved = 1;
				}
		for (int p = 0; p < G && st->evals < max_evals; p++)
			for (int q = p + 1; q < G && st->evals < max_evals; q++)
				if (try_swap(C, owner, p, q, ev, &st->evals)) {
					st->swaps++;
					improved = 1;
				}
	}
	st->local_optimum = !improved;
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
	*evals = 0;
	for (;;) {
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
	return found ? PB_OK
	             : pb_err(err, PB_EINPUT,
	                      "placement enumeration: no connected placement of %d groups", G);
}
