/*
 * viewgraph.c — what the canvas shows: nodes or collapsed blocks, and their
 * layout.
 *
 * Collapsing: the block hierarchy comes from render/blocks.h (module paths
 * of node names like "/layer1/layer1.0/conv1/Conv", or structural regions
 * for graphs whose names carry none). At collapse depth d, consecutive nodes
 * (topological order) in the same level-d block form one item; a node with
 * fewer than d levels is its own item. Ranges listed in the view's "open" key are one
 * level deeper per enclosing range, and items never straddle their ends.
 * Depth "auto" is the deepest level that gives at most VG_MAX_ITEMS items
 * (VG_MAX_STRUCT_ITEMS and at least level 1 for structural blocks, whose
 * labels say less), or no collapsing at all for small graphs. A named graph
 * with more top-level blocks than VG_MAX_ITEMS (a 200-layer GPT: embed, h0
 * .. h199, lm_head) shows at depth 0 VG_TOP_RUNS runs of consecutive
 * top-level blocks ("h15..h27"), not one box of the whole graph; Enter on a
 * run opens its blocks. Because items
 * are contiguous ranges of a topological order, the item graph is acyclic. Items of constant
 * nodes only (weight copies, folded shape math) are hidden unless the view
 * key "constants" is 1, as the SVG export hides them; their nodes map to no
 * item (item_of -1).
 *
 * Layout: when the item set, zoom or direction changes, the instant
 * fallback layout is shown at once and Graphviz dot runs in a child process
 * (render/layout.h); its result replaces the fallback when it arrives. A dot
 * run over VG_DOT_SECONDS is killed and the fallback stays, so the UI never
 * waits for dot.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "viewgraph.h"
#include "shape/shape.h"
#include "view.h"

#define VG_MAX_ITEMS 160
#define VG_MAX_STRUCT_ITEMS 40
#define VG_SMALL_GRAPH 160
#define VG_TOP_RUNS 16
#define VG_DOT_SECONDS 20.0

void tui_vg_free(tui_viewgraph *vg)
{
	if (vg->job)
		pb_layout_job_cancel(vg->job);
	pb_layout_free(vg->layout);
	free(vg->items);
	free(vg->item_of);
	free(vg->src);
	free(vg->dst);
	pb_blocks_free(vg->blocks);
	free(vg->top_cut);
	free(vg->is_const);
	memset(vg, 0, sizeof *vg);
}

/* On a new graph: a model with symbolic input dims says so, with the
 * option that fixes them (as `info` does), since its costs are unknown. */
static void model_notes(tui_app *a)
{
	const pb_graph *g = a->s->graph;
	char names[512];
	if (!g->n_unknown_shapes || pb_shape_unresolved_inputs(g, names, sizeof names) == 0)
		return;
	char first[256];
	snprintf(first, sizeof first, "%s", names);
	first[strcspn(first, " ")] = '\0';
	tui_out(a, 1, "this model needs --input: input dims without a value: %s", names);
	tui_out(a, 1, "  reopen with  :open %s --input %s  (names replaced by sizes%s)",
	        g->path ? g->path : "MODEL", first,
	        strchr(names, ' ') ? ", one --input per input" : "");
}

static int depth_of(const tui_viewgraph *vg, int i)
{
	return vg->blocks->depth[i];
}

/* The expanded ranges: the view's own (view.h). */
typedef struct open_ranges {
	int n;
	const long *a, *b;
} open_ranges;

static void parse_open(const pb_view *v, open_ranges *o)
{
	o->n = v->n_open;
	o->a = v->open_first;
	o->b = v->open_last;
}

static int extra_depth(const open_ranges *o, int i)
{
	int k = 0;
	for (int r = 0; r < o->n; r++)
		k += o->a[r] <= i && i <= o->b[r];
	return k;
}

static int range_edge_between(const open_ranges *o, int i)
{
	for (int r = 0; r < o->n; r++)
		if (o->a[r] == i || o->b[r] == i - 1)
			return 1;
	return 0;
}

/* Does node i start a new item (i > 0) at base depth d? */
static int starts_item(const tui_app *a, const open_ranges *o, int i, int d)
{
	const tui_viewgraph *vg = &a->vg;
	if (i == 0)
		return 1;
	if (range_edge_between(o, i))
		return 1;
	if (d > PB_BLOCKS_MAX_DEPTH)
		return 1; /* nothing collapsed */
	/* blocks are made by name, not by plan group, so editing the plan never
	 * changes the boxes (no relayout while moving layers) */
	/* nodes outside any module (exporters' weight copies Identity_N,
	 * Constant_N) join the box they sit in, until their range is opened */
	if (depth_of(vg, i) == 0 && !extra_depth(o, i))
		return 0;
	int j = i - 1; /* the previous node that belongs to a module */
	while (j >= 0 && depth_of(vg, j) == 0 && !extra_depth(o, j))
		j--;
	if (j < 0)
		return 1;
	int di = d + extra_depth(o, i);
	if (extra_depth(o, j) != extra_depth(o, i) || depth_of(vg, i) < di || depth_of(vg, j) < di)
		return 1;
	if (di == 0)
		return vg->top_cut && vg->top_cut[i];
	return !pb_blocks_same(vg->blocks, j, i, di);
}

static int count_items(const tui_app *a, const open_ranges *o, int d)
{
	int n = 0;
	for (int i = 0; i < a->s->graph->n_nodes; i++)
		n += starts_item(a, o, i, d);
	return n;
}

/* A named graph with more than VG_MAX_ITEMS top-level blocks: vg->top_cut
 * marks where each run of about n / VG_TOP_RUNS of them starts. */
static void top_runs(tui_app *a)
{
	tui_viewgraph *vg = &a->vg;
	open_ranges none = {0, NULL, NULL};
	int n1 = vg->blocks->structural ? 0 : count_items(a, &none, 1);
	if (n1 <= VG_MAX_ITEMS)
		return;
	int per = (n1 + VG_TOP_RUNS - 1) / VG_TOP_RUNS, ord = -1;
	const int nn = a->s->graph->n_nodes;
	if (!(vg->top_cut = calloc((size_t)nn, 1)))
		return;
	for (int i = 0; i < nn; i++)
		if (starts_item(a, &none, i, 1) && ++ord % per == 0)
			vg->top_cut[i] = i > 0;
}

static void clean_label(char *dst, size_t len, const char *src)
{
	size_t k = 0;
	for (; *src && k + 1 < len; src++)
		dst[k++] = (*src >= 32 && *src < 127) ? *src : '?';
	dst[k] = 0;
}

/* The label of a block at most max characters long. */
static void block_label(tui_app *a, const tui_item *it, int d, const open_ranges *o, int max,
                        char *tmp, size_t len)
{
	const pb_graph *g = a->s->graph;
	const pb_blocks *bl = a->vg.blocks;
	const pb_node *n = &g->nodes[it->first];
	int k = bl->depth[it->first], di = d + extra_depth(o, it->first);
	if (k == 0)
		snprintf(tmp, len, "%s x%d", n->op, it->last - it->first + 1);
	else if (di == 0 && a->vg.top_cut) { /* a run of top-level blocks: "h15..h27" */
		int last = it->last;
		while (last > it->first && bl->depth[last] == 0)
			last--;
		char b0[64], b1[64];
		pb_blocks_label(g, bl, a->vg.is_const, it->first, it->first, 1, 24, b0, sizeof b0);
		pb_blocks_label(g, bl, a->vg.is_const, last, last, 1, 24, b1, sizeof b1);
		if (strcmp(b0, b1) == 0)
			snprintf(tmp, len, "%s", b0);
		else
			snprintf(tmp, len, "%s..%s", b0, b1);
	} else if (di == 0)
		snprintf(tmp, len, "nodes %d-%d", it->first, it->last);
	else /* a node shallower than di heads a box of itself + constants */
		pb_blocks_label(g, bl, a->vg.is_const, it->first, it->last, di < k ? di : k, max,
		                tmp, len);
	if (max < (int)len)
		tmp[max] = '\0';
}

static void item_label(tui_app *a, tui_item *it, int d, const open_ranges *o)
{
	const pb_graph *g = a->s->graph;
	const pb_blocks *bl = a->vg.blocks;
	const pb_node *n = &g->nodes[it->first];
	char tmp[80];
	int i = it->first, k = bl->depth[i];
	if (!it->block) {
		/* exporters name nodes "/module/path/Op": show op + the module's
		 * qualified name (its tail when long: "Conv conv1.conv") */
		const char *sn = pb_node_short_name(n);
		int room = TUI_LABEL_MAX - (int)strlen(n->op) - 1;
		if (!bl->structural && k > 0 && room >= 8 &&
		    strncmp(sn, n->op, strlen(n->op)) == 0) {
			char mod[64];
			pb_blocks_label(g, bl, a->vg.is_const, i, i, k, room, mod, sizeof mod);
			snprintf(tmp, sizeof tmp, "%s %s", n->op, mod);
		} else if (sn != n->name && room >= 8) {
			/* "blk0/mm": the leaf alone ("MatMul mm") gave every block's
			 * node the same label; keep the path's tail, as the SVG does */
			const char *path = n->name[0] == '/' ? n->name + 1 : n->name;
			int l = (int)strlen(path);
			if (l > room)
				snprintf(tmp, sizeof tmp, "%s ..%s", n->op, path + l - (room - 2));
			else
				snprintf(tmp, sizeof tmp, "%s %s", n->op, path);
		} else {
			snprintf(tmp, sizeof tmp, "%s %s", n->op, sn);
		}
		clean_label(it->slabel, sizeof it->slabel, n->op);
		it->slabel[TUI_SLABEL_MAX] = '\0';
	} else {
		/* zoom 1 gets its own shortening, so that the index survives */
		block_label(a, it, d, o, TUI_SLABEL_MAX, tmp, sizeof tmp);
		clean_label(it->slabel, sizeof it->slabel, tmp);
		block_label(a, it, d, o, TUI_LABEL_MAX, tmp, sizeof tmp);
	}
	clean_label(it->label, sizeof it->label, tmp);
}

static void item_size(tui_item *it, int zoom)
{
	int len = (int)strlen(it->label);
	if (zoom == 0) {
		it->w = (len + 4 < 28 ? len + 4 : 28);
		it->h = 3;
	} else if (zoom == 1) {
		it->w = (int)strlen(it->slabel) + 2;
		it->h = 1;
	} else {
		it->w = 1;
		it->h = 1;
	}
}

static int cmp_pair(const void *x, const void *y)
{
	const long *a = x, *b = y;
	return (*a > *b) - (*a < *b);
}

static void start_layout(tui_app *a)
{
	tui_viewgraph *vg = &a->vg;
	if (vg->job) {
		pb_layout_job_cancel(vg->job);
		vg->job = NULL;
	}
	pb_layout_free(vg->layout);
	int *w = malloc(sizeof(int) * (size_t)(vg->n_items + 1));
	int *h = malloc(sizeof(int) * (size_t)(vg->n_items + 1));
	for (int i = 0; w && h && i < vg->n_items; i++) {
		w[i] = vg->items[i].w;
		h[i] = vg->items[i].h;
	}
	pb_layout_req req = {vg->n_items, w,       h,      vg->n_edges,
	                     vg->src,     vg->dst, vg->lr, vg->n_items > 400};
	vg->layout = w && h ? pb_layout_simple(&req) : NULL;
	pb_error err = {0};
	if (w && h && vg->n_items > 1 && pb_layout_spawn(&req, &vg->job, &err) == PB_OK) {
		vg->job_start = tui_now();
		snprintf(vg->layout_note, sizeof vg->layout_note, "simple (dot running)");
	} else {
		snprintf(vg->layout_note, sizeof vg->layout_note, "%.80s",
		         vg->n_items > 1 ? err.msg : "simple");
	}
	free(w);
	free(h);
}

/* The depth the view opens at: the view's own, or (automatic) every level
 * for a small graph, else the deepest that stays within the item budget. */
static int open_depth(tui_app *a, const open_ranges *o)
{
	int d = (int)a->s->view.depth;
	if (d >= 0)
		return d;
	if (a->s->graph->n_nodes <= VG_SMALL_GRAPH)
		return PB_BLOCKS_MAX_DEPTH + 1;
	/* structural blocks have no names to read: open at a level one can
	 * take in at a glance, Enter goes deeper */
	int structural = a->vg.blocks->structural;
	int budget = structural ? VG_MAX_STRUCT_ITEMS : VG_MAX_ITEMS;
	d = structural ? 1 : 0;
	for (int k = 1; k <= PB_BLOCKS_MAX_DEPTH; k++) {
		if (count_items(a, o, k) > budget)
			break;
		d = k;
	}
	return d;
}

/* Boxes of constants only (weight copies, folded shape math) are not
 * computation: dropped from items[0..n) unless show, their nodes mapped to
 * item -1 and counted in vg->n_hidden. Returns the items kept. */
static int hide_constants(tui_viewgraph *vg, tui_item *items, int n, int *item_of, int show)
{
	int kept = 0;
	vg->n_hidden = 0;
	for (int k = 0; k < n; k++) {
		int all = !show && vg->is_const;
		for (int v = items[k].first; all && v <= items[k].last; v++)
			all = vg->is_const[v];
		if (all) {
			for (int v = items[k].first; v <= items[k].last; v++)
				item_of[v] = -1;
			vg->n_hidden += items[k].last - items[k].first + 1;
			continue;
		}
		for (int v = items[k].first; v <= items[k].last; v++)
			item_of[v] = kept;
		items[kept++] = items[k];
	}
	return kept;
}

/* The edges between the n items (item_of: node -> item, -1 hidden),
 * deduplicated, into vg->src/dst. Edges that carry only constants are left
 * out (as in the SVG export). */
static void build_edges(tui_viewgraph *vg, const pb_graph *g, const int *item_of, int n)
{
	long *pairs = NULL;
	int np = 0, capp = 0;
	for (int u = 0; u < g->n_nodes; u++)
		for (int k = 0; k < g->nodes[u].n_succs && !(vg->is_const && vg->is_const[u]);
		     k++) {
			int iu = item_of[u], iv = item_of[g->nodes[u].succs[k]];
			if (iu == iv || iu < 0 || iv < 0)
				continue;
			if (np == capp) {
				capp = capp ? capp * 2 : 256;
				long *np2 = realloc(pairs, sizeof(long) * (size_t)capp);
				if (!np2)
					break;
				pairs = np2;
			}
			if (np < capp)
				pairs[np++] = (long)iu * n + iv;
		}
	if (pairs)
		qsort(pairs, (size_t)np, sizeof *pairs, cmp_pair);
	free(vg->src);
	free(vg->dst);
	vg->src = malloc(sizeof(int) * (size_t)(np + 1));
	vg->dst = malloc(sizeof(int) * (size_t)(np + 1));
	vg->n_edges = 0;
	for (int k = 0; vg->src && vg->dst && k < np; k++) {
		if (k && pairs[k] == pairs[k - 1])
			continue;
		vg->src[vg->n_edges] = (int)(pairs[k] / n);
		vg->dst[vg->n_edges++] = (int)(pairs[k] % n);
	}
	free(pairs);
}

int tui_vg_update(tui_app *a)
{
	tui_viewgraph *vg = &a->vg;
	const pb_graph *g = a->s->graph;
	if (!g) {
		if (vg->graph)
			tui_vg_free(vg);
		return 0;
	}
	if (vg->graph != g) {
		/* `open` keeps the view's selection, `load` brings its own: a
		 * selection the change left alone means a new model, whose view
		 * starts at its inputs (fit.c) */
		int reopened = vg->graph != NULL;
		long seen = vg->sel_seen;
		tui_vg_free(vg);
		vg->start_pending = reopened && a->s->view.sel == seen;
		vg->graph = g;
		vg->is_const = pb_graph_constant_nodes(g);
		pb_error err = {0};
		if (pb_blocks_compute(g, vg->is_const, &vg->blocks, &err) != PB_OK)
			tui_out(a, 1, "%s", err.msg);
		else
			top_runs(a);
		model_notes(a);
	}
	vg->sel_seen = a->s->view.sel;
	if (!vg->blocks)
		return 0;
	open_ranges o;
	parse_open(&a->s->view, &o);
	int zoom = (int)a->s->view.zoom;
	int lr = a->s->view.lr;
	int d = open_depth(a, &o);
	/* build the new item list */
	int cap = count_items(a, &o, d);
	tui_item *items = calloc((size_t)cap + 1, sizeof *items);
	int *item_of = malloc(sizeof(int) * (size_t)(g->n_nodes + 1));
	if (!items || !item_of) {
		free(items);
		free(item_of);
		return 0;
	}
	int n = 0;
	for (int i = 0; i < g->n_nodes; i++) {
		if (starts_item(a, &o, i, d)) {
			items[n].first = i;
			items[n].group = tui_group_of(a, i);
			n++;
		}
		items[n - 1].last = i;
		items[n - 1].group_last = tui_group_of(a, i);
		item_of[i] = n - 1;
	}
	int show = (int)a->s->view.constants != 0;
	n = hide_constants(vg, items, n, item_of, show);
	if (vg->items && show != vg->show_consts)
		tui_out(a, 0,
		        show ? "constants shown (C hides them)"
		             : "constants hidden: %d nodes in boxes of constants only (C "
		               "shows them)",
		        vg->n_hidden);
	vg->show_consts = show;
	for (int k = 0; k < n; k++) {
		items[k].block = items[k].last > items[k].first;
		item_label(a, &items[k], d, &o);
		item_size(&items[k], zoom);
	}
	int same = vg->items && vg->n_items == n && vg->zoom == zoom && vg->lr == lr;
	for (int k = 0; same && k < n; k++)
		same = vg->items[k].first == items[k].first && vg->items[k].last == items[k].last &&
		       vg->items[k].w == items[k].w;
	free(vg->items);
	free(vg->item_of);
	vg->items = items;
	vg->item_of = item_of;
	vg->n_items = n;
	vg->depth = d > PB_BLOCKS_MAX_DEPTH ? -1 : d;
	if (same)
		return 0;
	vg->zoom = zoom;
	vg->lr = lr;
	build_edges(vg, g, item_of, n);
	start_layout(a);
	return PB_REDRAW_CANVAS;
}

int tui_vg_poll(tui_app *a)
{
	tui_viewgraph *vg = &a->vg;
	if (!vg->job)
		return 0;
	pb_layout *l = NULL;
	pb_error err = {0};
	int r = pb_layout_job_poll(vg->job, &l, &err);
	if (r == 0) {
		if (tui_now() - vg->job_start > VG_DOT_SECONDS) {
			pb_layout_job_cancel(vg->job);
			vg->job = NULL;
			snprintf(vg->layout_note, sizeof vg->layout_note,
			         "simple (dot took over %.0f s)", VG_DOT_SECONDS);
			tui_out(a, 1,
			        "layout: dot took longer than %.0f s; showing the simple layout "
			        "(collapse blocks or use 'view depth' to shrink the graph)",
			        VG_DOT_SECONDS);
			return PB_REDRAW_ALL | TUI_FIT;
		}
		return 0;
	}
	vg->job = NULL;
	if (r < 0) {
		snprintf(vg->layout_note, sizeof vg->layout_note, "simple (dot failed)");
		tui_out(a, 1, "%s", err.msg);
		return PB_REDRAW_ALL | TUI_FIT;
	}
	if (l->n_boxes != vg->n_items) {
		pb_layout_free(l);
		return 0;
	}
	pb_layout_free(vg->layout);
	vg->layout = l;
	a->last_sel = -1; /* positions moved: let the view follow the selection again */
	vg->dot_seconds = tui_now() - vg->job_start;
	snprintf(vg->layout_note, sizeof vg->layout_note, "dot %.2f s", vg->dot_seconds);
	return PB_REDRAW_ALL | TUI_FIT;
}

int tui_vg_item_near(const tui_app *a, int node)
{
	const tui_viewgraph *vg = &a->vg;
	if (!vg->item_of || !vg->graph || node < 0 || node >= vg->graph->n_nodes)
		return -1;
	for (int v = node; v < vg->graph->n_nodes; v++)
		if (vg->item_of[v] >= 0)
			return vg->item_of[v];
	for (int v = node - 1; v >= 0; v--)
		if (vg->item_of[v] >= 0)
			return vg->item_of[v];
	return -1;
}

void tui_vg_item_rect(const tui_app *a, int i, int *x, int *y)
{
	const tui_item *it = &a->vg.items[i];
	*x = (int)lround(a->vg.layout->x[i] - it->w / 2.0);
	*y = (int)lround(a->vg.layout->y[i] - it->h / 2.0);
}
