/*
 * partition/mesh/mesh_route.h — dimension-ordered routes on a 2-D mesh of cores.
 *
 * Cores are numbered row by row (core = row * cols + col). Every core has up
 * to four outgoing links, one per direction; link id = core * 4 + direction
 * (PB_MESH_E, W, S, N), so a mesh of n cores has 4n link ids, of which the
 * ones leaving the grid are never used. An XY route moves along its row
 * (column index) to the destination column first, then along the column;
 * YX the other way round. Both are deterministic, minimal (Manhattan
 * length) and deadlock-free on a mesh, the routing of Tenstorrent's NoCs and
 * of most mesh NoCs (docs/mesh.md).
 */
#ifndef PB_MESH_ROUTE_H
#define PB_MESH_ROUTE_H

enum { PB_MESH_E = 0, PB_MESH_W = 1, PB_MESH_S = 2, PB_MESH_N = 3 };

typedef struct pb_mesh_grid {
	int rows, cols;
	int yx; /* 0: XY, 1: YX */
} pb_mesh_grid;

/* Hops of the route from core a to core b (Manhattan distance). */
int pb_mesh_route_hops(const pb_mesh_grid *g, int a, int b);
/* Writes the link ids of the route from a to b into links (capacity
 * rows + cols) and returns their number (= hops). */
int pb_mesh_route_links(const pb_mesh_grid *g, int a, int b, int *links);
/* The core a link leaves from and the core it enters. */
void pb_mesh_route_ends(const pb_mesh_grid *g, int link, int *from, int *to);

#endif
