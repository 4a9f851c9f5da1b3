/*
 * partition/mesh/mesh_place.h — a placement of a partition's groups on a mesh.
 *
 * A placement is owner[core] = the group of each core (cores numbered row
 * by row, mesh_route.h). It is valid when every group owns as many cores as
 * the 1-D state gives it and its cores form one 4-connected region. The
 * snake (boustrophedon) order walks the mesh row by row from the I/O
 * corner, reversing direction on every row, so consecutive cores of the
 * walk are neighbours: the k-th core of the 1-D model is the k-th core of the
 * snake, and every 1-D state has a valid placement (its groups as runs of
 * the snake), the default placement of every method.
 */
#ifndef PB_MESH_PLACE_H
#define PB_MESH_PLACE_H

#include "util/error.h"
#include "partition/mesh/mesh_route.h"

/* order[k] = the mesh core of snake position k (rows * cols entries),
 * starting at the corner (io_row, io_col). */
void pb_mesh_place_snake_order(const pb_mesh_grid *g, int io_row, int io_col, int *order);
/* Places n_groups groups of sizes[] cores as consecutive runs of order[]. */
void pb_mesh_place_snake(int n_groups, const int *sizes, const int *order, int *owner);
/* 1 when the cores of group grp other than core `skip` (-1: none) form one
 * non-empty connected region. seen, queue: rows * cols ints of scratch. */
int pb_mesh_place_connected(const pb_mesh_grid *g, const int *owner, int grp, int skip, int *seen,
                            int *queue);
/* Checks a placement against group sizes: every owner in [0, n_groups),
 * sizes matched, regions connected; errors say which group breaks what. */
int pb_mesh_place_check(const pb_mesh_grid *g, int n_groups, const int *sizes, const int *owner,
                        pb_error *err);

#endif
