/*
 * collapse.h — shrink a big graph to at most N boxes for drawing.
 *
 * A box is a run of consecutive node ids (topological order) whose nodes
 * share a key: their plan group and the first `depth` components of their
 * module path (the ONNX name without its last component, e.g.
 * "/features/features.1/features.1.0/attn" for ".../attn/MatMul_2").
 * Because every box is an interval of a topological order, the collapsed
 * graph is still acyclic, and no box ever spans two groups, so a box sits in
 * exactly one cluster. The depth chosen is the largest whose box count fits
 * the budget (finer boxes for wider budgets); depth 0 keys on the group
 * alone, i.e. each contiguous range of one group becomes one box. Nodes
 * without a module path (top-level Constant_12, Identity_3) join the box
 * before them. A graph whose names carry no module path at all is collapsed
 * by its structure instead (render/blocks.h: intervals cut where the fewest
 * values are live, nested), at the deepest level that fits; when even the
 * first level does not fit, its group ranges are cut into equal runs. A
 * graph within budget is not collapsed at all (one box per node).
 */
#ifndef PB_COLLAPSE_H
#define PB_COLLAPSE_H

#include "util/error.h"
#include "model/graph.h"

#define PB_COLLAPSE_NONE (-1) /* depth value: one box per node */

typedef struct pb_collapse {
	int n_nodes;
	int n_boxes;
	int depth;                /* module-path depth used; PB_COLLAPSE_NONE if uncollapsed */
	int *box_of;              /* n_nodes: box of each node */
	int *start;               /* n_boxes+1: box b holds nodes start[b] .. start[b+1]-1 */
	struct pb_blocks *blocks; /* structural blocks (depth is their level), or NULL */
	unsigned char *is_const;  /* with blocks: constant nodes (for labels) */
} pb_collapse;

/* group may be NULL (all nodes in one group). max_boxes <= 0 means no limit
 * (no collapse); force collapses at the chosen depth even when the graph
 * fits. */
int pb_collapse_compute(const pb_graph *g, const int *group, int max_boxes, int force,
                        pb_collapse **out, pb_error *err);
void pb_collapse_free(pb_collapse *c);
/* Number of member nodes of box b. */
int pb_collapse_size(const pb_collapse *c, int b);
/* The box's shared module path (depth components, "/"-joined, no leading
 * slash) into buf; "" when the members share none. Structural blocks: the
 * block's label ("3.2 Conv..Concat", pb_blocks_label). */
char *pb_collapse_prefix(const pb_graph *g, const pb_collapse *c, int b, char *buf, size_t len);
/* Splits box b into one box per node (the TUI's "expand"). */
int pb_collapse_expand(pb_collapse *c, int b, pb_error *err);

#endif
