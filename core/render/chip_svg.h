/*
 * render/chip_svg.h — the floorplan of a placed partition plan (detail.mesh,
 * partition/mesh/mesh_plan.h) as SVG: one cell per core coloured by its group,
 * every loaded directed link drawn between its two cells as a heat-coloured
 * arrow (the bytes it carries, legend in MB = 1e6 bytes), the I/O corner
 * marked, and a legend of the groups with their core counts and times.
 */
#ifndef PB_RENDER_CHIP_SVG_H
#define PB_RENDER_CHIP_SVG_H

#include "plan.h"
#include "util/error.h"

typedef struct pb_chip_svg_stats {
	int rows, cols, cells, links;
	double max_load; /* bytes on the most loaded link */
} pb_chip_svg_stats;

/* PB_EINPUT (bad input) when plan has no placement (not a partition plan on
 * a routed mesh) or one that names no group of the plan; else PB_OK. */
int pb_chip_svg_check(const pb_plan *plan, pb_error *err);
/* Writes the floorplan of plan to path (atomically); checks it first
 * (pb_chip_svg_check). */
int pb_chip_svg_write(const pb_plan *plan, const char *title, const char *path,
                      pb_chip_svg_stats *st, pb_error *err);

#endif
