/*
 * view_graph.c — the graph view: the laid-out graph drawn with box-drawing
 * characters, and what a click or a drag on it asks for.
 *
 * World coordinates are layout cells (render/layout.h); the view's x/y keys
 * give the world cell shown at the canvas's top-left. Edges are drawn first
 * (Bresenham between consecutive path points, with ─ │ ╱ ╲ by direction and
 * an arrow head at the end), boxes on top, so boxes stay readable. Only what
 * intersects the window is drawn, so a pan costs O(items + edge points).
 * Colour follows the plan group (or the op type, or the kind of the node's
 * parallel-branch group: branch_color.c); the bottleneck group is bold, the selection reversed;
 * without colour the group number is written into each box's border, so monochrome terminals show
 * the same information.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "branch_color.h"
#include "output.h"
#include "partition/chain/chain_layers.h"
#include "viewgraph.h"
#include "view_def.h"
#include "view.h"

typedef struct glyphs {
	const char *h, *v, *tl, *tr, *bl, *br, *dh, *dv, *dtl, *dtr, *dbl, *dbr, *d1, *d2;
	const char *up, *down, *left, *right;
} glyphs;

static const glyphs G_UTF8 = {"─", "│", "┌", "┐", "└", "┘", "═", "║", "╔",
                              "╗", "╚", "╝", "╲", "╱", "▲", "▼", "◀", "▶"};
static const glyphs G_ASCII = {"-", "|", "+", "+",  "+", "+", "=", "H", "#",
                               "#", "#", "#", "\\", "/", "^", "v", "<", ">"};

static const char GROUP_CH[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

static void put(WINDOW *w, int y, int x, const char *s)
{
	int H, W;
	getmaxyx(w, H, W);
	if (y >= 0 && y < H && x >= 0 && x < W)
		mvwaddstr(w, y, x, s);
}

/* Writes text clipped to the window and to max columns. */
static void put_text(WINDOW *w, int y, int x, const char *s, int max)
{
	int H, W;
	getmaxyx(w, H, W);
	if (y < 0 || y >= H)
		return;
	for (int i = 0; i < max && s[i]; i++)
		if (x + i >= 0 && x + i < W)
			mvwaddch(w, y, x + i, (unsigned char)s[i]);
}

static unsigned hash_str(const char *s)
{
	unsigned h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* Branch mode: the kind of the item's first node in a branch group, and
 * whether fusion takes any of its nodes. */
static int branch_of_item(const tui_app *a, const tui_item *it, int *fused)
{
	int kind = -1;
	*fused = 0;
	for (int v = it->first; v <= it->last; v++) {
		int f, k = tui_branch_kind(a, v, &f);
		*fused |= f;
		if (kind < 0)
			kind = k;
	}
	return kind;
}

static attr_t item_attr(tui_app *a, const tui_item *it, int *bottleneck)
{
	const pb_plan *p = a->s->plan;
	pb_view_color mode = a->s->view.color;
	attr_t at = 0;
	*bottleneck = 0;
	int g0 = it->group < it->group_last ? it->group : it->group_last;
	int g1 = it->group < it->group_last ? it->group_last : it->group;
	for (int g = g0 < 0 ? 0 : g0; p && g <= g1 && g < p->n_groups; g++)
		*bottleneck |= p->groups[g].bottleneck;
	if (a->color) {
		if (mode == PB_VIEW_BY_GROUP && it->group >= 0)
			at |= COLOR_PAIR(1 + it->group % 6);
		else if (mode == PB_VIEW_BY_OP)
			at |= COLOR_PAIR(1 + hash_str(a->s->graph->nodes[it->first].op) % 6);
		if (*bottleneck && mode != PB_VIEW_BY_NONE && mode != PB_VIEW_BY_BRANCH)
			at = COLOR_PAIR(7);
	}
	if (mode == PB_VIEW_BY_BRANCH) { /* kind colour, fused bold */
		int fused, kind = branch_of_item(a, it, &fused);
		*bottleneck = 0;
		if (a->color && kind >= 0)
			at = COLOR_PAIR(1 + kind % 6);
		return at | (fused ? A_BOLD : 0);
	}
	if (*bottleneck)
		at |= A_BOLD;
	return at;
}

static void draw_edge_seg(WINDOW *w, const glyphs *gl, int x0, int y0, int x1, int y1)
{
	int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
	int dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
	int e = dx + dy, steps = 0;
	for (;;) {
		int px = x0, py = y0;
		if (x0 == x1 && y0 == y1)
			break;
		int e2 = 2 * e, mx = 0, my = 0;
		if (e2 >= dy) {
			e += dy;
			x0 += sx;
			mx = 1;
		}
		if (e2 <= dx) {
			e += dx;
			y0 += sy;
			my = 1;
		}
		const char *g = mx && my ? ((sx > 0) == (sy > 0) ? gl->d1 : gl->d2)
		                : mx     ? gl->h
		                         : gl->v;
		put(w, py, px, g);
		if (++steps > 4000)
			break;
	}
}

static void draw_edges(tui_app *a, WINDOW *w, const glyphs *gl, int ox, int oy)
{
	const pb_layout *l = a->vg.layout;
	int H, W;
	getmaxyx(w, H, W);
	wattron(w, a->color ? COLOR_PAIR(8) : A_DIM);
	for (int e = 0; e < l->n_edges; e++) {
		int k0 = l->edge_first[e], k1 = l->edge_first[e + 1];
		if (k1 - k0 < 2)
			continue;
		/* skip edges whose bounding box misses the window */
		double minx = 1e18, maxx = -1e18, miny = 1e18, maxy = -1e18;
		for (int k = k0; k < k1; k++) {
			minx = fmin(minx, l->px[k]);
			maxx = fmax(maxx, l->px[k]);
			miny = fmin(miny, l->py[k]);
			maxy = fmax(maxy, l->py[k]);
		}
		if (maxx - ox < 0 || minx - ox >= W || maxy - oy < 0 || miny - oy >= H)
			continue;
		int lx = 0, ly = 0;
		for (int k = k0; k < k1; k++) {
			int x = (int)lround(l->px[k]) - ox, y = (int)lround(l->py[k]) - oy;
			if (k > k0)
				draw_edge_seg(w, gl, lx, ly, x, y);
			lx = x;
			ly = y;
		}
		int px = (int)lround(l->px[k1 - 2]) - ox, py = (int)lround(l->py[k1 - 2]) - oy;
		int ddx = lx - px, ddy = ly - py;
		const char *head = abs(ddy) >= abs(ddx) ? (ddy >= 0 ? gl->down : gl->up)
		                                        : (ddx >= 0 ? gl->right : gl->left);
		put(w, ly, lx, head);
	}
	wattroff(w, a->color ? COLOR_PAIR(8) : A_DIM);
}

static void draw_item(tui_app *a, WINDOW *w, const glyphs *gl, int i, int ox, int oy, int sel_item)
{
	const tui_item *it = &a->vg.items[i];
	int x, y, bn;
	tui_vg_item_rect(a, i, &x, &y);
	x -= ox;
	y -= oy;
	int H, W;
	getmaxyx(w, H, W);
	if (x + it->w < 0 || x >= W || y + it->h < 0 || y >= H)
		return;
	attr_t at = item_attr(a, it, &bn);
	attr_t sel = i == sel_item ? A_REVERSE : 0;
	char gch[2] = {it->group >= 0 ? GROUP_CH[it->group % 62] : '.', 0};
	if (a->vg.zoom == 2) {
		wattron(w, at | sel);
		put(w, y, x, it->block ? "#" : gch);
		wattroff(w, at | sel);
		return;
	}
	if (a->vg.zoom == 1) {
		const char *txt = it->slabel;
		wattron(w, at | sel);
		put(w, y, x, it->block ? "{" : "[");
		put_text(w, y, x + 1, txt, it->w - 2);
		for (int k = (int)strlen(txt) + 1; k < it->w - 1; k++)
			put(w, y, x + k, " ");
		put(w, y, x + it->w - 1, it->block ? "}" : "]");
		wattroff(w, at | sel);
		return;
	}
	const char *h = it->block ? gl->dh : gl->h, *v = it->block ? gl->dv : gl->v;
	wattron(w, at);
	put(w, y, x, it->block ? gl->dtl : gl->tl);
	for (int k = 1; k < it->w - 1; k++)
		put(w, y, x + k, h);
	put(w, y, x + it->w - 1, it->block ? gl->dtr : gl->tr);
	int fused = 0, kind = tui_branch_mode(a) ? branch_of_item(a, it, &fused) : -2;
	if (kind >= 0 || (kind == -1 && fused)) { /* branch mode: kind, + when fused */
		char tag[40];
		snprintf(tag, sizeof tag, "%s%s", kind >= 0 ? tui_branch_kind_name(a, kind) : "",
		         fused ? "+" : "");
		put_text(w, y, x + 1, tag, it->w - 2);
	} else if (kind == -2 && it->group >= 0) { /* group number in the top border */
		char num[16];
		if (it->group_last != it->group && it->group_last >= 0)
			snprintf(num, sizeof num, "%d-%d%s", it->group, it->group_last,
			         bn ? "*" : "");
		else
			snprintf(num, sizeof num, "%d%s", it->group, bn ? "*" : "");
		put_text(w, y, x + 1, num, it->w - 2);
	}
	put(w, y + 1, x, v);
	put(w, y + 1, x + it->w - 1, v);
	put(w, y + 2, x, it->block ? gl->dbl : gl->bl);
	for (int k = 1; k < it->w - 1; k++)
		put(w, y + 2, x + k, h);
	put(w, y + 2, x + it->w - 1, it->block ? gl->dbr : gl->br);
	wattroff(w, at);
	wattron(w, sel | (bn ? A_BOLD : 0));
	char lab[48];
	snprintf(lab, sizeof lab, "%-*.*s", it->w - 2, it->w - 2, it->label);
	put_text(w, y + 1, x + 1, lab, it->w - 2);
	wattroff(w, sel | (bn ? A_BOLD : 0));
}

static void graph_draw(tui_app *a, WINDOW *w)
{
	werase(w);
	const glyphs *gl = a->utf8 ? &G_UTF8 : &G_ASCII;
	int H, W;
	getmaxyx(w, H, W);
	if (!a->s->graph) {
		put_text(w, H / 2 - 1, 2, "No model open.", W - 4);
		put_text(w, H / 2, 2, "Type :open MODEL  (or :load SESSION), ? for help.", W - 4);
		return;
	}
	if (!a->vg.layout) {
		put_text(w, H / 2, 2, "laying out...", W - 4);
		return;
	}
	int ox = (int)a->s->view.x;
	int oy = (int)a->s->view.y;
	draw_edges(a, w, gl, ox, oy);
	int sel = tui_selected(a);
	int sel_item = tui_vg_item_near(a, sel);
	for (int i = 0; i < a->vg.n_items; i++)
		draw_item(a, w, gl, i, ox, oy, sel_item);
}

static int graph_hit(const tui_app *a, int y, int x)
{
	if (!a->vg.layout || !a->s->graph)
		return -1;
	int ox = (int)a->s->view.x;
	int oy = (int)a->s->view.y;
	for (int i = 0; i < a->vg.n_items; i++) {
		int bx, by;
		tui_vg_item_rect(a, i, &bx, &by);
		const tui_item *it = &a->vg.items[i];
		if (x + ox >= bx && x + ox < bx + it->w && y + oy >= by && y + oy < by + it->h)
			return i;
	}
	return -1;
}

static void group_range(const tui_app *a, int g, int *first, int *last)
{
	const pb_plan *p = a->s->plan;
	*first = p->groups[g].first_node;
	*last = p->groups[g].last_node;
	if (*first >= 0 && *last >= *first)
		return;
	*first = *last = -1;
	for (int i = 0; i < p->n_nodes; i++)
		if (p->group[i] == g) {
			if (*first < 0)
				*first = i;
			*last = i;
		}
}

/* Writes node v's name as one double-quoted command argument. */
static void quoted_name(const tui_app *a, int v, char *buf, size_t n)
{
	const char *s = a->s->graph->nodes[v].name;
	size_t k = 0;
	if (n < 3)
		return;
	buf[k++] = '"';
	for (; *s && k + 3 < n; s++) {
		if (*s == '"' || *s == '\\')
			buf[k++] = '\\';
		buf[k++] = *s;
	}
	buf[k++] = '"';
	buf[k] = 0;
}

/* A drop of item `from` onto item `to` (-1: empty canvas) as the edit of
 * the current plan's kind (issue 18.1): on a map plan the node moves to the
 * backend of the target's group (`backend`); on a fuse plan it joins the
 * target's fusion group (`fuse-in`) or, dropped on empty canvas, leaves its
 * own (`fuse-out`). Returns 0 for the other kinds (partition and pipeline
 * plans move a boundary, below); line = "" when there is nothing to do. The
 * command refuses an invalid edit and says why in the output pane. */
static int drop_edit(const tui_app *a, int from, int to, char *line, size_t n)
{
	const pb_plan *p = a->s->plan;
	const tui_item *src = &a->vg.items[from];
	char name[300], with[300];
	line[0] = 0;
	quoted_name(a, src->first, name, sizeof name);
	if (strcmp(p->kind, "map") == 0) {
		int H = to >= 0 ? a->vg.items[to].group : -1;
		if (H < 0 || H == src->group || H >= p->n_groups || !p->groups[H].label)
			return 1;
		snprintf(line, n, "backend --node %s --to \"%s\"", name, p->groups[H].label);
		return 1;
	}
	if (strcmp(p->kind, "fuse") == 0) {
		if (to < 0) {
			if (src->group >= 0)
				snprintf(line, n, "fuse-out --node %s", name);
			return 1;
		}
		const tui_item *dst = &a->vg.items[to];
		if (dst->group >= 0 && dst->group == src->group)
			return 1;
		quoted_name(a, dst->first, with, sizeof with);
		snprintf(line, n, "fuse-in --node %s --with %s", name, with);
		return 1;
	}
	return 0;
}

/* What a drag of item src out of group G moves across a boundary (to_next:
 * into G+1, else into G-1): the nodes from src to the end (start) of the
 * group; on a partition plan the layers, counted through the layer each of
 * src's nodes goes with (load-time constants are no layers and move with the
 * layer that reads them: partition/chain/chain_layers.h). 0: nothing to move. */
static int drag_count(const tui_app *a, const tui_item *src, int G, int to_next)
{
	const pb_plan *p = a->s->plan;
	int f, l;
	group_range(a, G, &f, &l);
	pb_part_layers L = {0};
	pb_error err = {0};
	if (strcmp(p->kind, "partition") != 0 || !a->s->graph ||
	    pb_part_layers_new(a->s->graph, &L, &err) != PB_OK)
		return to_next ? l - src->first + 1 : src->last - f + 1;
	int lo = -1, hi = -1, k = 0;
	for (int v = src->first; v <= src->last && v < L.n_nodes && v < p->n_nodes; v++)
		if (p->group[v] == G && L.node_layer[v] >= 0) {
			if (lo < 0 || L.node_layer[v] < lo)
				lo = L.node_layer[v];
			if (L.node_layer[v] > hi)
				hi = L.node_layer[v];
		}
	if (lo >= 0 && f >= 0 && f < L.n_nodes && l < L.n_nodes)
		k = to_next ? L.node_layer[l] - lo + 1 : hi - L.node_layer[f] + 1;
	pb_part_layers_free(&L);
	return k > 0 ? k : 0;
}

/* Click selects; a drag of a box onto another is the plan kind's edit. */
static int graph_mouse(tui_app *a, WINDOW *w, const MEVENT *ev, int y, int x, char *line, size_t n)
{
	(void)w;
	int item = graph_hit(a, y, x);
	line[0] = 0;
	if (ev->bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) {
		a->drag_node = item >= 0 ? item : -1;
		if (item >= 0)
			snprintf(line, n, "view select %d", a->vg.items[item].first);
		if (ev->bstate & BUTTON1_CLICKED)
			a->drag_node = -1;
		return 0;
	}
	if (!(ev->bstate & BUTTON1_RELEASED) || a->drag_node < 0)
		return 0;
	int from = a->drag_node;
	a->drag_node = -1;
	if (item == from || !a->s->plan || from >= a->vg.n_items)
		return 0;
	if (drop_edit(a, from, item, line, n) || item < 0)
		return 0;
	const tui_item *src = &a->vg.items[from], *dst = &a->vg.items[item];
	int G = src->group, H = dst->group, f, l;
	if (G < 0 || H < 0 || H == G)
		return 0;
	group_range(a, G, &f, &l);
	if (H == G + 1 && f >= 0)
		snprintf(line, n, "boundary %d %d", G, -drag_count(a, src, G, 1));
	else if (H == G - 1 && f >= 0)
		snprintf(line, n, "boundary %d %d", G - 1, drag_count(a, src, G, 0));
	else
		tui_out(a, 1, "drag a layer onto the next or previous group (from %d to %d)", G, H);
	return 0;
}

const tui_view_def tui_view_graph = {.name = "graph",
                                     .at = TUI_AT_CANVAS,
                                     .redraw = PB_REDRAW_CANVAS,
                                     .draw = graph_draw,
                                     .mouse = graph_mouse};
