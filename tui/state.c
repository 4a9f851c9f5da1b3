/*
 * state.c — the helpers every layer of tui/ may call: the clock, the
 * selection and its plan group as the session has them, rules and lines
 * drawn into a window, the timing log.
 */
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "state.h"
#include "view.h"

double tui_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tui_selected(const tui_app *a)
{
	const pb_graph *g = a->s->graph;
	if (!g || g->n_nodes == 0)
		return -1;
	long sel = a->s->view.sel;
	return (int)(sel < 0 ? 0 : sel >= g->n_nodes ? g->n_nodes - 1 : sel);
}

int tui_group_of(const tui_app *a, int node)
{
	const pb_plan *p = a->s->plan;
	if (!p || node < 0 || node >= p->n_nodes || !a->s->graph ||
	    p->n_nodes != a->s->graph->n_nodes)
		return -1;
	int g = p->group[node];
	return g >= 0 && g < p->n_groups ? g : -1;
}

void tui_timing_log(tui_app *a, const char *fmt, ...)
{
	if (!a->timing)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(a->timing, fmt, ap);
	va_end(ap);
	fflush(a->timing);
}

void tui_hrule(const tui_app *a, WINDOW *w, int y, int x, int n)
{
	int W = getmaxx(w);
	for (int i = 0; i < n && x + i < W; i++)
		mvwaddstr(w, y, x + i, a->utf8 ? "─" : "-");
}

void tui_vrule(const tui_app *a, WINDOW *w, int y, int x, int n)
{
	int H = getmaxy(w);
	for (int i = 0; i < n && y + i < H; i++)
		mvwaddstr(w, y + i, x, a->utf8 ? "│" : "|");
}

void tui_line(WINDOW *w, int y, attr_t at, const char *fmt, ...)
{
	int H, W;
	getmaxyx(w, H, W);
	if (y < 0 || y >= H)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 32)
			*p = ' ';
	wattron(w, at);
	mvwaddnstr(w, y, 0, buf, W);
	wattroff(w, at);
	if (getcury(w) == y) /* nothing of an earlier, longer line stays after it */
		wclrtoeol(w);
}
