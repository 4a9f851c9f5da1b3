/*
 * view_solver.c — the running solver's objective per step as a sparkline,
 * with the last and best incumbent and, for solvers that prove one (MILP,
 * exact), the bound.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/fmt.h"
#include "view_def.h"

static void solver_draw(tui_app *a, WINDOW *w)
{
	int y = 1;
	werase(w);
	static const char *bars_u[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
	static const char *bars_a[] = {"_", ".", ":", "-", "=", "+", "*", "#"};
	const pb_solver *sv = a->s->solver;
	tui_hrule(a, w, y - 1, 0, a->side_w);
	if (!sv && a->s->solver_detached[0]) {
		tui_line(w, y, A_DIM, "objective: no solver (%s)", a->s->solver_detached);
		return;
	}
	if (!sv || sv->n_history == 0) {
		tui_line(w, y, A_DIM, "objective: %s", sv ? "no steps yet" : "no solver running");
		return;
	}
	int n = sv->n_history, width = a->side_w - 2;
	int from = n > width ? n - width : 0;
	double lo = 1e300, hi = -1e300, best = 1e300;
	for (int i = 0; i < n; i++)
		if (isfinite(sv->history[i]))
			best = fmin(best, sv->history[i]);
	for (int i = from; i < n; i++)
		if (isfinite(sv->history[i])) {
			lo = fmin(lo, sv->history[i]);
			hi = fmax(hi, sv->history[i]);
		}
	tui_line(w, y, A_DIM, "objective (%s, %d steps)",
	         a->s->solver_name ? a->s->solver_name : "solver", n);
	/* the incumbent, the best so far and (MILP, exact) the proven bound */
	/* one unit per kind: the objectives of partition and cluster solvers are
	 * times, shown as the tables show them (ms, us); an unknown bound is "—" */
	const char *sn = a->s->solver_name ? a->s->solver_name : "";
	int is_time = strncmp(sn, "partition", 9) == 0 || strncmp(sn, "shard", 5) == 0 ||
	              strncmp(sn, "pipeline", 8) == 0;
	char last[32], bst[32], bnd[32];
	double vals[3] = {sv->history[n - 1], best, sv->bound};
	char *outs[3] = {last, bst, bnd};
	for (int i = 0; i < 3; i++) {
		if (!isfinite(vals[i]) || fabs(vals[i]) > 1e300)
			snprintf(outs[i], 32, "%s", a->utf8 ? "—" : "-");
		else if (is_time)
			pb_fmt_time_fixed(vals[i], outs[i], 32);
		else
			snprintf(outs[i], 32, "%.4g", vals[i]);
	}
	tui_line(w, y + 1, 0, "last %s  best %s  bound %s", last, bst, bnd);
	wmove(w, y + 2, 0);
	wclrtoeol(w);
	for (int i = from; i < n; i++) {
		double v = sv->history[i];
		int k = !isfinite(v) || hi <= lo ? 0 : (int)((v - lo) / (hi - lo) * 7.999);
		mvwaddstr(w, y + 2, i - from, a->utf8 ? bars_u[k] : bars_a[k]);
	}
}

static int solver_rows(const tui_app *a, int avail)
{
	(void)a;
	(void)avail;
	return 4; /* a rule, the title, the figures, the sparkline */
}

const tui_view_def tui_view_solver = {.name = "solver",
                                      .at = TUI_AT_SIDE,
                                      .redraw =
                                          PB_REDRAW_TABLE | PB_REDRAW_CANVAS | PB_REDRAW_STATUS,
                                      .rows = solver_rows,
                                      .draw = solver_draw};
