/*
 * collapse.c — runs of consecutive nodes with the same (group, module path
 * prefix) become boxes (see collapse.h).
 *
 * Algorithm: split each node name once into module-path components (offsets
 * of the component ends), then for depth = 0, 1, ..., max depth count the
 * runs in one pass over the topological order; the count grows with depth, so
 * the last depth within budget is the finest that fits. O(n * depth).
 * Graphs without module paths use the structural levels of render/blocks.h
 * the same way.
 */
#include "render/collapse.h"

#include <stdlib.h>
#include <string.h>

#include "render/blocks.h"

#define MAX_DEPTH 16

typedef struct {
	const char *name; /* without the leading '/' */
	int n_comp;       /* module-path components (the last name part excluded) */
	int end[MAX_DEPTH];
} split_name;

static void split(const char *name, split_name *s)
{
	while (*name == '/')
		name++;
	s->name = name;
	s->n_comp = 0;
	for (const char *p = name; *p; p++)
		if (*p == '/' && s->n_comp < MAX_DEPTH)
			s->end[s->n_comp++] = (int)(p - name);
}

static int same_key(const split_name *a, const split_name *b, int ga, int gb, int depth)
{
	if (ga != gb)
		return 0;
	int da = a->n_comp < depth ? a->n_comp : depth;
	int db = b->n_comp < depth ? b->n_comp : depth;
	if (da != db)
		return 0;
	if (da == 0)
		return 1;
	int la = a->end[da - 1], lb = b->end[db - 1];
	return la == lb && memcmp(a->name, b->name, (size_t)la) == 0;
}

/* A node without a module path (exporters leave Constant_12, Identity_3 at
 * the top level, interleaved with the modules that use them) joins the box
 * of the node before it when the group allows; so does the next node after
 * it, compared with the last node that had a path. chunk > 0 also cuts runs
 * into pieces of at most chunk nodes (graphs without module paths). */
static int count_runs(const split_name *s, const int *group, int n, int depth, int chunk,
                      int *box_of)
{
	int boxes = 0, key = 0, len = 0;
	for (int i = 0; i < n; i++) {
		int gi = group ? group[i] : 0;
		int g0 = group && i ? group[i - 1] : 0;
		int fresh = i == 0 || gi != g0;
		if (!fresh && s[i].n_comp > 0 && depth > 0)
			fresh = s[key].n_comp > 0 && !same_key(&s[key], &s[i], gi, gi, depth);
		if (!fresh && chunk > 0 && len >= chunk)
			fresh = 1;
		if (fresh) {
			boxes++;
			len = 0;
		}
		len++;
		if (s[i].n_comp > 0 || fresh)
			key = i;
		if (box_of)
			box_of[i] = boxes - 1;
	}
	return boxes;
}

/* Runs of consecutive nodes in one group and one structural block of level
 * d (a node in a smaller leaf block compares at its own level). */
static int count_block_runs(const pb_blocks *b, const int *group, int n, int d, int *box_of)
{
	int boxes = 0;
	for (int i = 0; i < n; i++) {
		int fresh = i == 0 || (group && group[i] != group[i - 1]);
		if (!fresh) {
			int di = b->depth[i] < d ? b->depth[i] : d;
			int dj = b->depth[i - 1] < d ? b->depth[i - 1] : d;
			fresh = di != dj || (di > 0 && !pb_blocks_same(b, i, i - 1, di));
		}
		boxes += fresh;
		if (box_of)
			box_of[i] = boxes - 1;
	}
	return boxes;
}

/* Structural collapse of a graph without module paths: the deepest block
 * level within budget. Returns 1 when done, 0 when no level fits (or the
 * graph has no blocks), -1 when out of memory. */
static int collapse_structural(const pb_graph *g, const int *group, int max_boxes, pb_collapse *c)
{
	pb_error err = {0};
	c->is_const = pb_graph_constant_nodes(g);
	if (!c->is_const || pb_blocks_compute(g, c->is_const, &c->blocks, &err) != PB_OK)
		return -1;
	int depth = 0;
	for (int d = 1; d <= c->blocks->max_depth; d++) {
		if (count_block_runs(c->blocks, group, g->n_nodes, d, NULL) > max_boxes)
			break;
		depth = d;
	}
	if (depth == 0)
		return 0;
	c->depth = depth;
	c->n_boxes = count_block_runs(c->blocks, group, g->n_nodes, depth, c->box_of);
	return 1;
}

static int fill_starts(pb_collapse *c)
{
	c->start = malloc((size_t)(c->n_boxes + 1) * sizeof *c->start);
	if (!c->start)
		return -1;
	int b = -1;
	for (int i = 0; i < c->n_nodes; i++)
		if (c->box_of[i] != b)
			c->start[++b] = i;
	c->start[c->n_boxes] = c->n_nodes;
	return 0;
}

int pb_collapse_compute(const pb_graph *g, const int *group, int max_boxes, int force,
                        pb_collapse **out, pb_error *err)
{
	*out = NULL;
	int n = g->n_nodes;
	pb_collapse *c = calloc(1, sizeof *c);
	split_name *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
	if (!c || !s) {
		free(c);
		free(s);
		return pb_err(err, PB_ENOMEM, "collapse: out of memory (%d nodes)", n);
	}
	c->n_nodes = n;
	c->box_of = malloc((size_t)(n > 0 ? n : 1) * sizeof *c->box_of);
	if (!c->box_of) {
		free(s);
		pb_collapse_free(c);
		return pb_err(err, PB_ENOMEM, "collapse: out of memory (%d nodes)", n);
	}
	int max_depth = 0;
	for (int i = 0; i < n; i++) {
		split(g->nodes[i].name ? g->nodes[i].name : "", &s[i]);
		if (s[i].n_comp > max_depth)
			max_depth = s[i].n_comp;
	}
	if (max_boxes <= 0 || (n <= max_boxes && !force)) {
		c->depth = PB_COLLAPSE_NONE;
		c->n_boxes = n;
		for (int i = 0; i < n; i++)
			c->box_of[i] = i;
	} else {
		int depth = 0, chunk = 0;
		for (int d = 1; d <= max_depth; d++) {
			if (count_runs(s, group, n, d, 0, NULL) > max_boxes)
				break;
			depth = d;
		}
		int done = 0;
		if (max_depth == 0) {
			/* No module paths at all: structural blocks, or else the
			 * group ranges cut into equal pieces within budget. */
			done = collapse_structural(g, group, max_boxes, c);
			if (done < 0) {
				free(s);
				pb_collapse_free(c);
				return pb_err(err, PB_ENOMEM, "collapse: out of memory (%d nodes)",
				              n);
			}
			int ranges = count_runs(s, group, n, 0, 0, NULL);
			int room = max_boxes - ranges > 1 ? max_boxes - ranges : 1;
			chunk = (n + room - 1) / room;
		}
		if (!done) {
			c->depth = depth;
			c->n_boxes = count_runs(s, group, n, depth, chunk, c->box_of);
		}
	}
	free(s);
	if (fill_starts(c) != 0) {
		pb_collapse_free(c);
		return pb_err(err, PB_ENOMEM, "collapse: out of memory");
	}
	*out = c;
	return PB_OK;
}

void pb_collapse_free(pb_collapse *c)
{
	if (!c)
		return;
	free(c->box_of);
	free(c->start);
	pb_blocks_free(c->blocks);
	free(c->is_const);
	free(c);
}

int pb_collapse_size(const pb_collapse *c, int b)
{
	return c->start[b + 1] - c->start[b];
}

char *pb_collapse_prefix(const pb_graph *g, const pb_collapse *c, int b, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (c->depth == PB_COLLAPSE_NONE || c->depth == 0)
		return buf;
	if (c->blocks) /* structural or dotted-path blocks */
		return pb_blocks_label(g, c->blocks, c->is_const, c->start[b], c->start[b + 1] - 1,
		                       c->depth, (int)len - 1, buf, len);
	split_name s = {"", 0, {0}};
	for (int i = c->start[b]; i < c->start[b + 1] && s.n_comp == 0; i++)
		split(g->nodes[i].name ? g->nodes[i].name : "", &s);
	int d = s.n_comp < c->depth ? s.n_comp : c->depth;
	if (d == 0)
		return buf;
	int l = s.end[d - 1];
	if ((size_t)l >= len)
		l = (int)len - 1;
	memcpy(buf, s.name, (size_t)l);
	buf[l] = '\0';
	return buf;
}

int pb_collapse_expand(pb_collapse *c, int b, pb_error *err)
{
	if (b < 0 || b >= c->n_boxes)
		return pb_err(err, PB_EUSAGE, "collapse: no box %d (there are %d)", b, c->n_boxes);
	int extra = pb_collapse_size(c, b) - 1;
	if (extra == 0)
		return PB_OK;
	int *ns = realloc(c->start, (size_t)(c->n_boxes + extra + 1) * sizeof *ns);
	if (!ns)
		return pb_err(err, PB_ENOMEM, "collapse: out of memory");
	c->start = ns;
	memmove(&c->start[b + 1 + extra], &c->start[b + 1],
	        (size_t)(c->n_boxes - b) * sizeof *c->start);
	for (int k = 1; k <= extra; k++)
		c->start[b + k] = c->start[b] + k;
	c->n_boxes += extra;
	for (int bb = b; bb < c->n_boxes; bb++)
		for (int i = c->start[bb]; i < c->start[bb + 1]; i++)
			c->box_of[i] = bb;
	return PB_OK;
}
