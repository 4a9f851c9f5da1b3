/*
 * mesh_route.c — dimension-ordered (XY / YX) routes on a mesh (mesh_route.h).
 * A route is walked one hop at a time: the link leaving the current core
 * towards the destination in the dimension being corrected.
 */
#include "partition/mesh/mesh_route.h"

#include <stdlib.h>

int pb_mesh_route_hops(const pb_mesh_grid *g, int a, int b)
{
	return abs(a / g->cols - b / g->cols) + abs(a % g->cols - b % g->cols);
}

/* Appends the hops that move core *cur along one dimension to target. */
static int walk(const pb_mesh_grid *g, int *cur, int target, int cols_dim, int *links, int k)
{
	for (;;) {
		int r = *cur / g->cols, c = *cur % g->cols;
		int pos = cols_dim ? c : r;
		if (pos == target)
			return k;
		int dir = cols_dim ? (target > pos ? PB_MESH_E : PB_MESH_W)
		                   : (target > pos ? PB_MESH_S : PB_MESH_N);
		links[k++] = *cur * 4 + dir;
		*cur += cols_dim ? (target > pos ? 1 : -1) : (target > pos ? g->cols : -g->cols);
	}
}

int pb_mesh_route_links(const pb_mesh_grid *g, int a, int b, int *links)
{
	int cur = a, k = 0;
	int first_cols = !g->yx; /* XY: the column (x) first */
	k = walk(g, &cur, first_cols ? b % g->cols : b / g->cols, first_cols, links, k);
	k = walk(g, &cur, first_cols ? b / g->cols : b % g->cols, !first_cols, links, k);
	return k;
}

void pb_mesh_route_ends(const pb_mesh_grid *g, int link, int *from, int *to)
{
	int core = link / 4, dir = link % 4;
	*from = core;
	*to = core + (dir == PB_MESH_E   ? 1
	              : dir == PB_MESH_W ? -1
	              : dir == PB_MESH_S ? g->cols
	                                 : -g->cols);
}
