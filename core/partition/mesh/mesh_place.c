/*
 * mesh_place.c — snake placements and region checks (mesh_place.h).
 * Connectivity is a breadth-first search over the 4-neighbours that belong
 * to the same group.
 */
#include "partition/mesh/mesh_place.h"

#include <stdlib.h>

void pb_mesh_place_snake_order(const pb_mesh_grid *g, int io_row, int io_col, int *order)
{
	int k = 0;
	for (int i = 0; i < g->rows; i++) {
		int r = io_row == 0 ? i : g->rows - 1 - i;
		int left_first = (io_col == 0) == (i % 2 == 0);
		for (int j = 0; j < g->cols; j++)
			order[k++] = r * g->cols + (left_first ? j : g->cols - 1 - j);
	}
}

void pb_mesh_place_snake(int n_groups, const int *sizes, const int *order, int *owner)
{
	int k = 0;
	for (int grp = 0; grp < n_groups; grp++)
		for (int i = 0; i < sizes[grp]; i++, k++)
			owner[order[k]] = grp;
}

int pb_mesh_place_connected(const pb_mesh_grid *g, const int *owner, int grp, int skip, int *seen,
                            int *queue)
{
	int n = g->rows * g->cols, start = -1, total = 0;
	for (int c = 0; c < n; c++) {
		seen[c] = 0;
		if (owner[c] == grp && c != skip) {
			total++;
			if (start < 0)
				start = c;
		}
	}
	if (start < 0)
		return 0;
	int head = 0, tail = 0, reached = 1;
	queue[tail++] = start;
	seen[start] = 1;
	while (head < tail) {
		int c = queue[head++], r = c / g->cols, col = c % g->cols;
		int nb[4] = {col + 1 < g->cols ? c + 1 : -1, col > 0 ? c - 1 : -1,
		             r + 1 < g->rows ? c + g->cols : -1, r > 0 ? c - g->cols : -1};
		for (int d = 0; d < 4; d++) {
			int x = nb[d];
			if (x >= 0 && !seen[x] && x != skip && owner[x] == grp) {
				seen[x] = 1;
				queue[tail++] = x;
				reached++;
			}
		}
	}
	return reached == total;
}

int pb_mesh_place_check(const pb_mesh_grid *g, int n_groups, const int *sizes, const int *owner,
                        pb_error *err)
{
	int n = g->rows * g->cols;
	int *cnt = calloc((size_t)n_groups + 1, sizeof *cnt);
	int *seen = malloc((size_t)n * sizeof *seen), *queue = malloc((size_t)n * sizeof *queue);
	int rc = PB_OK;
	if (!cnt || !seen || !queue) {
		rc = pb_err(err, PB_ENOMEM, "placement check: out of memory");
		goto out;
	}
	for (int c = 0; c < n && !rc; c++) {
		if (owner[c] < 0 || owner[c] >= n_groups)
			rc = pb_err(err, PB_EINPUT,
			            "placement: core (%d, %d) belongs to group %d; the plan has %d "
			            "groups",
			            c / g->cols, c % g->cols, owner[c], n_groups);
		else
			cnt[owner[c]]++;
	}
	for (int k = 0; k < n_groups && !rc; k++) {
		if (cnt[k] != sizes[k])
			rc =
			    pb_err(err, PB_EINPUT,
			           "placement: group %d owns %d core(s) on the mesh, its partition "
			           "gives it %d",
			           k, cnt[k], sizes[k]);
		else if (!pb_mesh_place_connected(g, owner, k, -1, seen, queue))
			rc = pb_err(err, PB_EINPUT,
			            "placement: the cores of group %d are not one connected region",
			            k);
	}
out:
	free(cnt);
	free(seen);
	free(queue);
	return rc;
}
