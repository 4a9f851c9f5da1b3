/*
 * view_chip.c — the mesh of a placed plan (detail.mesh, docs/mesh.md) at the
 * top of the side column while `view chip` is on: one cell per core with
 * its group's number and colour (the selected node's group reversed, the
 * bottleneck bold), the links between neighbouring cores as heat marks
 * (the larger of the two directions' loads over the most loaded link:
 * . < 1/4, : < 1/2, * < 3/4, # above, in red), the I/O corner underlined.
 * A click on a cell selects its group's first node (and so its layers in
 * the graph); selecting a node in the graph reverses its group here.
 * Dragging a cell onto a cell of another group asks `move-core ROW COL G`
 * (the command refuses what it cannot do: G not next to the core, a donor
 * left empty or cut in two).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view_def.h"

static const json_t *chip_mesh(const tui_app *a)
{
	const pb_plan *p = a->s->plan;
	const json_t *m = p ? json_object_get(p->detail, "mesh") : NULL;
	const json_t *pl = json_object_get(m, "placement");
	int R = (int)json_integer_value(json_object_get(m, "rows"));
	int C = (int)json_integer_value(json_object_get(m, "cols"));
	if (!json_is_array(pl) || R < 1 || C < 1 || (long)json_array_size(pl) != (long)R * C)
		return NULL;
	return m;
}

static int chip_rows(const tui_app *a, int avail)
{
	if (!a->s->view.chip)
		return 0;
	const json_t *m = chip_mesh(a);
	int want = m ? 2 * (int)json_integer_value(json_object_get(m, "rows")) + 2 : 3;
	return want < avail / 2 ? want : avail / 2;
}

static int group_at(const json_t *m, int r, int c)
{
	int C = (int)json_integer_value(json_object_get(m, "cols"));
	return (int)json_integer_value(
	    json_array_get(json_object_get(m, "placement"), (size_t)(r * C + c)));
}

/* Load of the link between cores (r0, c0) and (r1, c1), either direction. */
static double link_load(const json_t *m, int r0, int c0, int r1, int c1)
{
	const json_t *l;
	size_t i;
	double best = 0;
	json_array_foreach(json_object_get(m, "links"), i, l)
	{
		const json_t *f = json_object_get(l, "from"), *t = json_object_get(l, "to");
		int fr = (int)json_integer_value(json_array_get(f, 0));
		int fc = (int)json_integer_value(json_array_get(f, 1));
		int tr = (int)json_integer_value(json_array_get(t, 0));
		int tc = (int)json_integer_value(json_array_get(t, 1));
		if ((fr == r0 && fc == c0 && tr == r1 && tc == c1) ||
		    (fr == r1 && fc == c1 && tr == r0 && tc == c0))
			best = fmax(best, json_real_value(json_object_get(l, "bytes")));
	}
	return best;
}

static void heat_mark(tui_app *a, WINDOW *w, int y, int x, double load, double max)
{
	if (load <= 0 || max <= 0)
		return;
	double t = load / max;
	char ch = t < 0.25 ? '.' : t < 0.5 ? ':' : t < 0.75 ? '*' : '#';
	attr_t at = ch == '#' ? A_BOLD | (a->color ? COLOR_PAIR(7) : 0) : 0;
	wattron(w, at);
	mvwaddch(w, y, x, (chtype)ch);
	wattroff(w, at);
}

static void chip_draw(tui_app *a, WINDOW *w)
{
	if (!a->s->view.chip)
		return;
	werase(w);
	const json_t *m = chip_mesh(a);
	if (!m) {
		tui_line(w, 0, A_BOLD, "Chip");
		tui_line(w, 1, A_DIM, "no placed plan: partition on a layout");
		tui_line(w, 2, A_DIM, "with a routed mesh (docs/mesh.md)");
		return;
	}
	int R = (int)json_integer_value(json_object_get(m, "rows"));
	int C = (int)json_integer_value(json_object_get(m, "cols"));
	const json_t *io = json_object_get(m, "io");
	int ior = (int)json_integer_value(json_array_get(io, 0));
	int ioc = (int)json_integer_value(json_array_get(io, 1));
	const json_t *hot = json_object_get(m, "most_loaded_link");
	double max = json_is_object(hot) ? json_real_value(json_object_get(hot, "bytes")) : 0;
	int sel = tui_selected(a), sg = sel >= 0 ? tui_group_of(a, sel) : -1;
	const pb_plan *p = a->s->plan;
	tui_line(w, 0, A_BOLD, "Chip %dx%d %s, I/O (%d,%d) underlined", R, C,
	         json_string_value(json_object_get(m, "routing")), ior, ioc);
	int rows = getmaxy(w), cw = getmaxx(w);
	for (int r = 0; r < R && 2 + 2 * r < rows - 1; r++)
		for (int c = 0; c < C && 3 * c + 2 < cw; c++) {
			int g = group_at(m, r, c), y = 1 + 2 * r, x = 3 * c;
			attr_t at = a->color ? COLOR_PAIR(1 + g % 6) : 0;
			if (g == sg)
				at |= A_REVERSE;
			if (g >= 0 && g < p->n_groups && p->groups[g].bottleneck)
				at |= A_BOLD;
			if (r == ior && c == ioc)
				at |= A_UNDERLINE;
			wattron(w, at);
			mvwprintw(w, y, x, "%2d", g % 100);
			wattroff(w, at);
			if (c + 1 < C)
				heat_mark(a, w, y, x + 2, link_load(m, r, c, r, c + 1), max);
			if (r + 1 < R)
				heat_mark(a, w, y + 1, x + 1, link_load(m, r, c, r + 1, c), max);
		}
	tui_line(w, rows - 1, A_DIM, "links . : * # of max %.3f MB", max / 1e6);
}

/* The core a drag started on (row * cols + col), -1 for none: one pointer,
 * one drag at a time, like the graph's drag_node. */
static int chip_drag = -1;

static int chip_mouse(tui_app *a, WINDOW *w, const MEVENT *ev, int y, int x, char *line, size_t n)
{
	(void)w;
	const json_t *m = a->s->view.chip ? chip_mesh(a) : NULL;
	int press = (ev->bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) != 0;
	int release = (ev->bstate & BUTTON1_RELEASED) != 0;
	int r = (y - 1) / 2, c = x / 3;
	int R = m ? (int)json_integer_value(json_object_get(m, "rows")) : 0;
	int C = m ? (int)json_integer_value(json_object_get(m, "cols")) : 0;
	int on_cell = m && y >= 1 && (y - 1) % 2 == 0 && r < R && c < C && x % 3 < 2;
	if (release) {
		int from = chip_drag;
		chip_drag = -1;
		if (!on_cell || from < 0 || from >= R * C || from == r * C + c)
			return 0;
		int g = group_at(m, r, c);
		if (g != group_at(m, from / C, from % C))
			snprintf(line, n, "move-core %d %d %d", from / C, from % C, g);
		return 0;
	}
	if (!on_cell || !press)
		return 0;
	chip_drag = ev->bstate & BUTTON1_CLICKED ? -1 : r * C + c;
	const pb_plan *p = a->s->plan;
	int g = group_at(m, r, c);
	if (g < 0 || g >= p->n_groups)
		return 0;
	int f = p->groups[g].first_node;
	for (int i = 0; f < 0 && i < p->n_nodes; i++)
		if (p->group[i] == g)
			f = i;
	if (f >= 0)
		snprintf(line, n, "view select %d", f);
	return 0;
}

/* Drawn with the groups table (same flags), just before it: when off, its
 * one-row window lies under the table's title and the table draws over it. */
const tui_view_def tui_view_chip = {.name = "chip",
                                    .at = TUI_AT_SIDE,
                                    .redraw = PB_REDRAW_TABLE | PB_REDRAW_CANVAS | PB_REDRAW_STATUS,
                                    .rows = chip_rows,
                                    .draw = chip_draw,
                                    .mouse = chip_mouse};
