/*
 * blocks.h — the block hierarchy a viewer collapses a graph by, and the
 * labels of its blocks.
 *
 * Each node gets a path of block ids, outermost first: key(i, 0) is its
 * level-1 block, key(i, 1) the level-2 block inside it, and so on; two nodes
 * are in the same level-d block when their first d ids agree (ids are unique
 * across the whole hierarchy, so comparing the id at level d alone is
 * enough).
 *
 * Named graphs: the blocks are the module path of the node name (the ONNX
 * name without its last part: "/features/features.5/conv/Conv" is in
 * "features", then "features/features.5", then ".../conv"). Nodes without a
 * module path (Identity_3, Constant_12) have depth 0. When no computing node's
 * name has a '/', dotted names are module paths too ("h5.attn.q.matmul" is in
 * "h5", then "h5.attn", then "h5.attn.q", as `partbench gen gpt` and many
 * hand-written graphs name them), provided each of their blocks is nearly an
 * interval of the order (Paddle's "p2o.Conv.12", op type and counter, is not).
 *
 * Structural graphs (no computing node has a module path, e.g. exports of
 * Paddle or hand-made graphs): the blocks are intervals of the topological
 * order cut where the fewest values are live. The live width of the cut
 * before position p is the number of computing nodes u < p with a consumer at
 * or after p (constant nodes are not counted, and join the block of the next
 * computing node; those before the first one are in none). Where the width is 1 the
 * interval between two cuts is a single-entry single-exit region of the DAG.
 * Level 1 cuts the graph into about PB_BLOCKS_FANOUT intervals, choosing in
 * each window of half to one and a half times the target length the cut of
 * least width (ties: nearest to the target); each interval is cut again the
 * same way at the next level, down to intervals of at most
 * PB_BLOCKS_FANOUT computing nodes. Every block is an interval of the topological order,
 * so a graph of collapsed blocks stays acyclic, and expanding a block shows
 * at most about PB_BLOCKS_FANOUT sub-blocks.
 */
#ifndef PB_RENDER_BLOCKS_H
#define PB_RENDER_BLOCKS_H

#include <stddef.h>

#include "model/graph.h"
#include "util/error.h"

#define PB_BLOCKS_MAX_DEPTH 12
#define PB_BLOCKS_FANOUT 12

typedef struct pb_blocks {
	int n_nodes;
	int structural; /* 1: blocks from the structure (names carry no module path) */
	char sep;       /* named graphs: '/' or, when no name has one, '.' */
	int max_depth;  /* deepest level any node has */
	int *depth;     /* per node: number of levels (0..PB_BLOCKS_MAX_DEPTH) */
	int *key;       /* n_nodes * PB_BLOCKS_MAX_DEPTH block ids */
	/* named graphs: offset in the node name just past the level's component */
	int *cend; /* n_nodes * PB_BLOCKS_MAX_DEPTH, NULL for structural graphs */
	int n_ids; /* block ids are 0 .. n_ids-1 */
	int *ord;  /* structural graphs: per block id, its 1-based place in its parent */
} pb_blocks;

/* is_const (per node, from pb_graph_constant_nodes) may be NULL. */
int pb_blocks_compute(const pb_graph *g, const unsigned char *is_const, pb_blocks **out,
                      pb_error *err);
void pb_blocks_free(pb_blocks *b);
/* Block id of node i at level d (1-based), or -1 when the node is shallower. */
int pb_blocks_key(const pb_blocks *b, int i, int d);
/* 1 when nodes i and j are both in the same level-d block (d >= 1). */
int pb_blocks_same(const pb_blocks *b, int i, int j, int d);
/*
 * Label of the level-d block holding the nodes first..last, at most max
 * characters (max < len):
 * - named: the module's qualified name, the path components joined by '.'
 *   with PyTorch's repeated prefixes merged ("/features/features.5" ->
 *   "features.5", "/encoder/layers/layers.3" -> "encoder.layers.3"); when
 *   longer than max, whole leading '.'-separated tokens are dropped
 *   ("..layers.3.attn") but never the last one holding a digit (the index
 *   that tells sibling blocks apart: "..6.self_att" at max 12, not
 *   "..self_attn");
 * - structural: the block's position in the hierarchy and its first and
 *   last computing ops ("3.2 Conv..Add").
 */
char *pb_blocks_label(const pb_graph *g, const pb_blocks *b, const unsigned char *is_const,
                      int first, int last, int d, int max, char *buf, size_t len);

#endif
