/*
 * svg_export.h — the annotated SVG of a graph and its plan (Graphviz dot).
 *
 * Shared by `partbench export` and the TUI's `:export`. The drawing has one
 * cluster per plan group (core group, stage, backend aggregate or fusion
 * group: all are pb_plan groups), node fills by group or by MACs with a
 * legend, node labels (op, short name, output shape, MACs), byte labels on
 * edges that cross groups, a title block (model, hardware, method and the
 * plan's metrics: max(t), reward, optimum, gap, step time, ...), and per
 * node an SVG <title> (plus Graphviz's tooltip) with its full details.
 * Graphs above a box budget are collapsed (collapse.h); docs/export.md says
 * what the reader loses. The output is deterministic: Graphviz's comments
 * are stripped and the text layout uses built-in font metrics (gv.h).
 * Main thread only (Graphviz).
 */
#ifndef PB_SVG_EXPORT_H
#define PB_SVG_EXPORT_H

#include <stddef.h>

#include "util/error.h"
#include "model/graph.h"
#include "hw.h"
#include "plan.h"

typedef enum {
	PB_COLOR_AUTO = 0, /* from the plan's kind; MACs without a plan */
	PB_COLOR_GROUP,
	PB_COLOR_STAGE,
	PB_COLOR_BACKEND,
	PB_COLOR_FUSION,
	PB_COLOR_MACS,
	PB_COLOR_BRANCH /* parallel branch groups (a "branch" plan), kinds in the legend */
} pb_color_by;

enum { PB_SVG_COLLAPSE_AUTO = 0, PB_SVG_COLLAPSE_NEVER, PB_SVG_COLLAPSE_ALWAYS };

#define PB_SVG_DEFAULT_BOXES 250

typedef struct pb_svg_opts {
	int color_by;       /* pb_color_by */
	int rankdir_lr;     /* 0: top to bottom, 1: left to right */
	int collapse;       /* PB_SVG_COLLAPSE_* */
	int max_boxes;      /* budget for collapsing; 0 = PB_SVG_DEFAULT_BOXES */
	const char *title;  /* first line of the title block; NULL = model file name */
	int show_constants; /* draw boxes holding only constants (hidden by default) */
} pb_svg_opts;

typedef struct pb_svg_stats {
	int n_nodes;        /* graph nodes */
	int n_boxes;        /* drawn boxes */
	int n_hidden_boxes; /* boxes of constants only, not drawn (show_constants = 0) */
	int depth;          /* collapse depth, -1 when not collapsed */
	int n_edges;        /* drawn edges (between drawn boxes) */
	int n_cross_edges;  /* edges between different groups (labelled) */
	int n_static_edges; /* edges carrying only constants (dashed, unlabelled) */
	int n_clusters;
	int n_fused_boxes;         /* --color-by branch: boxes holding a fused node */
	double layout_s, render_s; /* Graphviz time */
} pb_svg_stats;

/* "group", "stage", "backend", "fusion", "macs", "branch", "auto". */
int pb_color_by_parse(const char *s, int *out, pb_error *err);
const char *pb_color_by_name(int color_by);

/* Plan metric `name` = v of plan p with its unit, as the title block writes
 * it ("max_storage = 31.2 MB": buf gets "31.2 MB"); the `plan` command's
 * listing uses it too. A partition's objective and optimum are seconds,
 * unless its reward mode is weighted (a score). */
char *pb_plan_metric_text(const pb_plan *p, const char *name, double v, char *buf, size_t len);

/* Renders to a malloc'ed NUL-terminated string (*svg, *len). plan and hw
 * may be NULL; opts may be NULL (defaults); stats may be NULL. */
int pb_svg_export_data(const pb_graph *g, const pb_plan *plan, const pb_hw *hw,
                       const pb_svg_opts *opts, char **svg, size_t *len, pb_svg_stats *stats,
                       pb_error *err);
/* Renders and writes path atomically. */
int pb_svg_export_file(const pb_graph *g, const pb_plan *plan, const pb_hw *hw,
                       const pb_svg_opts *opts, const char *path, pb_svg_stats *stats,
                       pb_error *err);

#endif
