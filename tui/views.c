/*
 * views.c — the registry of views and their windows (views.h).
 *
 * Layout: row 0 the title; below it the canvas on the left and, right of a
 * divider, the side column (side_w wide: 52 from 120 columns, else 36), in
 * which the side views stack in table order (each takes the rows its rows()
 * asks for, the one without rows() the rest); then the bottom pane (7 rows
 * from 40 rows, else 4), the status row and the modes' line. Side heights
 * may change with the plan (the groups table grows), so they are placed
 * again before each draw of the side column.
 */
#include <string.h>

#include "views.h"

#define MIN_ROWS 24
#define MIN_COLS 80

/* Drawing order; a new view is one line here. */
static const tui_view_def *const VIEWS[] = {
    &tui_view_title,     &tui_view_graph,  &tui_view_chip,   &tui_view_groups,
    &tui_view_inspector, &tui_view_solver, &tui_view_output, &tui_view_status,
};
enum { N_VIEWS = sizeof VIEWS / sizeof VIEWS[0] };

void tui_views_free(tui_app *a)
{
	for (int i = 0; i < TUI_VIEWS_MAX; i++)
		if (a->win[i]) {
			delwin(a->win[i]);
			a->win[i] = NULL;
		}
	if (a->wcmd)
		delwin(a->wcmd);
	a->wcmd = NULL;
}

/* Places the side views: y0 and h of each, in the column of height H. */
static void side_place(const tui_app *a, int H, int *y0, int *h)
{
	int used = 0, rest = -1;
	for (int i = 0; i < N_VIEWS; i++) {
		if (VIEWS[i]->at != TUI_AT_SIDE)
			continue;
		if (VIEWS[i]->rows) {
			h[i] = VIEWS[i]->rows(a, H);
			used += h[i];
		} else {
			rest = i;
		}
	}
	if (rest >= 0)
		h[rest] = H - used > 0 ? H - used : 0;
	int y = 0;
	for (int i = 0; i < N_VIEWS; i++) {
		if (VIEWS[i]->at != TUI_AT_SIDE)
			continue;
		y0[i] = y;
		y += h[i];
	}
}

static void side_apply(tui_app *a)
{
	int y0[N_VIEWS] = {0}, h[N_VIEWS] = {0};
	side_place(a, a->canvas_h, y0, h);
	for (int i = 0; i < N_VIEWS; i++) {
		if (VIEWS[i]->at != TUI_AT_SIDE)
			continue;
		int hh = h[i] > 0 ? h[i] : 1, yy = 1 + y0[i];
		if (yy + hh > 1 + a->canvas_h)
			yy = 1 + a->canvas_h - hh;
		if (!a->win[i]) {
			a->win[i] = newwin(hh, a->side_w, yy, a->cols - a->side_w);
			continue;
		}
		int cy, cx, ch, cw;
		getbegyx(a->win[i], cy, cx);
		getmaxyx(a->win[i], ch, cw);
		(void)cx, (void)cw;
		if (ch != hh || cy != yy) {
			/* move without leaving the window off the screen meanwhile */
			if (hh < ch)
				wresize(a->win[i], hh, a->side_w);
			mvwin(a->win[i], yy, a->cols - a->side_w);
			if (hh > ch)
				wresize(a->win[i], hh, a->side_w);
		}
	}
}

void tui_views_layout(tui_app *a)
{
	tui_views_free(a);
	getmaxyx(stdscr, a->rows, a->cols);
	a->too_small = a->rows < MIN_ROWS || a->cols < MIN_COLS;
	if (a->too_small)
		return;
	a->side_w = a->cols >= 120 ? 52 : 36;
	a->out_h = a->rows >= 40 ? 7 : 4;
	a->canvas_h = a->rows - 1 - a->out_h - 2;
	a->canvas_w = a->cols - a->side_w - 1;
	for (int i = 0; i < N_VIEWS; i++) {
		switch (VIEWS[i]->at) {
		case TUI_AT_TITLE:
			a->win[i] = newwin(1, a->cols, 0, 0);
			break;
		case TUI_AT_CANVAS:
			a->win[i] = newwin(a->canvas_h, a->canvas_w, 1, 0);
			break;
		case TUI_AT_BOTTOM:
			a->win[i] = newwin(a->out_h, a->cols, 1 + a->canvas_h, 0);
			break;
		case TUI_AT_STATUS:
			a->win[i] = newwin(1, a->cols, a->rows - 2, 0);
			break;
		default:
			break;
		}
	}
	side_apply(a);
	a->wcmd = newwin(1, a->cols, a->rows - 1, 0);
	keypad(a->wcmd, TRUE);
	a->redraw |= PB_REDRAW_ALL;
}

void tui_views_draw(tui_app *a, int flags)
{
	if (a->too_small) {
		erase();
		mvprintw(a->rows / 2, 0, "partbench needs at least %dx%d; this terminal is %dx%d.",
		         MIN_COLS, MIN_ROWS, a->cols, a->rows);
		mvprintw(a->rows / 2 + 1, 0, "Enlarge it, or press q to quit.");
		wnoutrefresh(stdscr);
		return;
	}
	if (flags & (PB_REDRAW_CANVAS | PB_REDRAW_TABLE | PB_REDRAW_STATUS))
		side_apply(a);
	if (flags & PB_REDRAW_CANVAS) {
		/* the divider between canvas and side column */
		tui_vrule(a, stdscr, 1, a->canvas_w, a->canvas_h);
		wnoutrefresh(stdscr);
	}
	for (int i = 0; i < N_VIEWS; i++) {
		if (!a->win[i] || (VIEWS[i]->redraw && !(flags & VIEWS[i]->redraw)))
			continue;
		VIEWS[i]->draw(a, a->win[i]);
		wnoutrefresh(a->win[i]);
	}
}

int tui_views_mouse(tui_app *a, const MEVENT *ev, char *cmd, size_t n)
{
	cmd[0] = 0;
	if (a->too_small)
		return 0;
	for (int i = 0; i < N_VIEWS; i++) {
		WINDOW *w = a->win[i];
		if (!w || !VIEWS[i]->mouse || !wenclose(w, ev->y, ev->x))
			continue;
		int by, bx;
		getbegyx(w, by, bx);
		return VIEWS[i]->mouse(a, w, ev, ev->y - by, ev->x - bx, cmd, n);
	}
	return 0;
}
