/*
 * canvas.c — draws the laid-out graph with box-drawing characters.
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

#include "app.h"
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
static int branch_of_item(tui_app *a, const tui_item *it, int *fused)
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
	char mode[16];
	pb_view_get(a->s->view, "color", "group", mode, sizeof mode);
	attr_t at = 0;
	*bottleneck = 0;
	int g0 = it->group < it->group_last ? it->group : it->group_last;
	int g1 = it->group < it->group_last ? it->group_last : it->group;
	for (int g = g0 < 0 ? 0 : g0; p && g <= g1 && g < p->n_groups; g++)
		*bottleneck |= p->groups[g].bottleneck;
	if (a->color) {
		if (strcmp(mode, "group") == 0 && it->group >= 0)
			at |= COLOR_PAIR(1 + it->group % 6);
		else if (strcmp(mode, "op") == 0)
			at |= COLOR_PAIR(1 + hash_str(a->s->graph->nodes[it->first].op) % 6);
		if (*bottleneck && strcmp(mode, "none") != 0 && strcmp(mode, "branch") != 0)
			at = COLOR_PAIR(7);
	}
	if (strcmp(mode, "branch") == 0) { /* kind colour, fused bold */
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

static void draw_edge_seg(tui_app *a, const glyphs *gl, int x0, int y0, int x1, int y1)
{
	WINDOW *w = a->wcanvas;
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

static void draw_edges(tui_app *a, const glyphs *gl, int ox, int oy)
{
	const pb_layout *l = a->vg.layout;
	int H, W;
	getmaxyx(a->wcanvas, H, W);
	wattron(a->wcanvas, a->color ? COLOR_PAIR(8) : A_DIM);
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
				draw_edge_seg(a, gl, lx, ly, x, y);
			lx = x;
			ly = y;
		}
		int px = (int)lround(l->px[k1 - 2]) - ox, py = (int)lround(l->py[k1 - 2]) - oy;
		int ddx = lx - px, ddy = ly - py;
		const char *head = abs(ddy) >= abs(ddx) ? (ddy >= 0 ? gl->down : gl->up)
		                                        : (ddx >= 0 ? gl->right : gl->left);
		put(a->wcanvas, ly, lx, head);
	}
	wattroff(a->wcanvas, a->color ? COLOR_PAIR(8) : A_DIM);
}

static void item_rect(const tui_app *a, int i, int *x, int *y)
{
	const tui_item *it = &a->vg.items[i];
	*x = (int)lround(a->vg.layout->x[i] - it->w / 2.0);
	*y = (int)lround(a->vg.layout->y[i] - it->h / 2.0);
}

static void draw_item(tui_app *a, const glyphs *gl, int i, int ox, int oy, int sel_item)
{
	WINDOW *w = a->wcanvas;
	const tui_item *it = &a->vg.items[i];
	int x, y, bn;
	item_rect(a, i, &x, &y);
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

void tui_canvas_draw(tui_app *a)
{
	WINDOW *w = a->wcanvas;
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
	int ox = (int)pb_view_get_int(a->s->view, "x", 0);
	int oy = (int)pb_view_get_int(a->s->view, "y", 0);
	draw_edges(a, gl, ox, oy);
	int sel = tui_selected(a);
	int sel_item = tui_vg_item_near(a, sel);
	for (int i = 0; i < a->vg.n_items; i++)
		draw_item(a, gl, i, ox, oy, sel_item);
}

int tui_canvas_hit(const tui_app *a, int y, int x)
{
	if (!a->vg.layout || !a->s->graph)
		return -1;
	int ox = (int)pb_view_get_int(a->s->view, "x", 0);
	int oy = (int)pb_view_get_int(a->s->view, "y", 0);
	for (int i = 0; i < a->vg.n_items; i++) {
		int bx, by;
		item_rect(a, i, &bx, &by);
		const tui_item *it = &a->vg.items[i];
		if (x + ox >= bx && x + ox < bx + it->w && y + oy >= by && y + oy < by + it->h)
			return i;
	}
	return -1;
}

static void view_at(tui_app *a, int x, int y, const char *extra)
{
	char line[128];
	snprintf(line, sizeof line, "view set x=%d y=%d %s", x, y, extra);
	tui_run(a, line);
}

static void canvas_fit(tui_app *a);

void tui_canvas_fit(tui_app *a)
{
	if (a->fitting)
		return;
	a->fitting = 1;
	canvas_fit(a);
	a->fitting = 0;
}

static void canvas_fit(tui_app *a)
{
	const pb_layout *l = a->vg.layout;
	if (!a->s->graph || !l)
		return;
	int cw = a->canvas_w, ch = a->canvas_h;
	if (a->vg.start_pending) {
		a->vg.start_pending = 0;
		tui_view_start(a);
	}
	if (pb_view_get_int(a->s->view, "fit", 0)) {
		if ((l->width > cw || l->height > ch) && a->vg.zoom < 2) {
			char line[32];
			snprintf(line, sizeof line, "view zoom %d", a->vg.zoom + 1);
			tui_run(a, line);
			tui_vg_update(a);
			l = a->vg.layout;
			if (!l)
				return;
		}
		int x = (int)lround((l->width - cw) / 2), y = (int)lround((l->height - ch) / 2);
		if (l->height > ch)
			y = 0;
		view_at(a, x, y, a->vg.job ? "" : "fit=");
		return;
	}
	int sel = tui_selected(a);
	if (sel < 0)
		return;
	if (pb_view_get_int(a->s->view, "top", 0) && tui_vg_item_near(a, sel) >= 0) {
		/* the model's inputs at the top: the selection's box in the first
		 * rows, centred across; kept until dot's layout arrives */
		int bx, by, i = tui_vg_item_near(a, sel);
		item_rect(a, i, &bx, &by);
		int x = bx + a->vg.items[i].w / 2 - cw / 2;
		if (l->width <= cw)
			x = (int)lround((l->width - cw) / 2);
		a->last_sel = sel;
		view_at(a, x, by > 1 ? by - 1 : 0, a->vg.job ? "" : "top=");
		return;
	}
	int center = (int)pb_view_get_int(a->s->view, "center", 0);
	int follow = (int)pb_view_get_int(a->s->view, "follow", 1);
	if (!center && !(follow && sel != a->last_sel))
		return;
	a->last_sel = sel;
	int i = tui_vg_item_near(a, sel), bx, by;
	if (i < 0)
		return;
	item_rect(a, i, &bx, &by);
	const tui_item *it = &a->vg.items[i];
	int ox = (int)pb_view_get_int(a->s->view, "x", 0);
	int oy = (int)pb_view_get_int(a->s->view, "y", 0);
	if (!center && bx >= ox && by >= oy && bx + it->w <= ox + cw && by + it->h <= oy + ch)
		return;
	view_at(a, bx + it->w / 2 - cw / 2, by + it->h / 2 - ch / 2, center ? "center=" : "");
}

void tui_view_start(tui_app *a)
{
	const pb_graph *g = a->s->graph;
	int first = 0;
	unsigned char *cst = g ? pb_graph_constant_nodes(g) : NULL;
	while (cst && first < g->n_nodes - 1 && cst[first])
		first++;
	free(cst);
	char line[64];
	snprintf(line, sizeof line, "view select %d", first);
	tui_run(a, line);
	tui_run(a, "view set top=1");
}
