/*
 * fit.c — the camera (fit.h). The loop calls it after every command, a new
 * layout and a resize: it turns the view's one-shot requests (fit, top,
 * center) and the follow setting into `view set x=.. y=..` commands, so the
 * offset stays in the session's view like every other view setting.
 */
#include <math.h>
#include <stdlib.h>

#include "fit.h"
#include "run.h"
#include "view.h"
#include "viewgraph.h"

static int view_at(tui_app *a, int x, int y, const char *extra)
{
	char line[128];
	snprintf(line, sizeof line, "view set x=%d y=%d %s", x, y, extra);
	return tui_run(a, line, NULL);
}

int tui_fit(tui_app *a, int recentre)
{
	const pb_layout *l = a->vg.layout;
	int flags = 0;
	if (!a->s->graph || !l || a->too_small)
		return 0;
	int cw = a->canvas_w, ch = a->canvas_h;
	if (a->vg.start_pending) {
		a->vg.start_pending = 0;
		flags |= tui_view_start(a);
	}
	if (a->s->view.fit) {
		if ((l->width > cw || l->height > ch) && a->vg.zoom < 2) {
			char line[32];
			snprintf(line, sizeof line, "view zoom %d", a->vg.zoom + 1);
			flags |= tui_run(a, line, NULL);
			flags |= tui_vg_update(a);
			l = a->vg.layout;
			if (!l)
				return flags & ~TUI_FIT;
		}
		int x = (int)lround((l->width - cw) / 2), y = (int)lround((l->height - ch) / 2);
		if (l->height > ch)
			y = 0;
		flags |= view_at(a, x, y, a->vg.job ? "" : "fit=");
		return flags & ~TUI_FIT;
	}
	int sel = tui_selected(a);
	if (sel < 0)
		return flags & ~TUI_FIT;
	if (a->s->view.top && tui_vg_item_near(a, sel) >= 0) {
		/* the model's inputs at the top: the selection's box in the first
		 * rows, centred across; kept until dot's layout arrives */
		int bx, by, i = tui_vg_item_near(a, sel);
		tui_vg_item_rect(a, i, &bx, &by);
		int x = bx + a->vg.items[i].w / 2 - cw / 2;
		if (l->width <= cw)
			x = (int)lround((l->width - cw) / 2);
		a->last_sel = sel;
		flags |= view_at(a, x, by > 1 ? by - 1 : 0, a->vg.job ? "" : "top=");
		return flags & ~TUI_FIT;
	}
	int center = (int)a->s->view.center;
	int follow = (int)a->s->view.follow;
	if (!center && !recentre && !(follow && sel != a->last_sel))
		return flags & ~TUI_FIT;
	a->last_sel = sel;
	int i = tui_vg_item_near(a, sel), bx, by;
	if (i < 0)
		return flags & ~TUI_FIT;
	tui_vg_item_rect(a, i, &bx, &by);
	const tui_item *it = &a->vg.items[i];
	int ox = (int)a->s->view.x;
	int oy = (int)a->s->view.y;
	if (!center && bx >= ox && by >= oy && bx + it->w <= ox + cw && by + it->h <= oy + ch)
		return flags & ~TUI_FIT;
	flags |=
	    view_at(a, bx + it->w / 2 - cw / 2, by + it->h / 2 - ch / 2, center ? "center=" : "");
	return flags & ~TUI_FIT;
}

int tui_view_start(tui_app *a)
{
	const pb_graph *g = a->s->graph;
	int first = 0;
	unsigned char *cst = g ? pb_graph_constant_nodes(g) : NULL;
	while (cst && first < g->n_nodes - 1 && cst[first])
		first++;
	free(cst);
	char line[64];
	snprintf(line, sizeof line, "view select %d", first);
	int flags = tui_run(a, line, NULL);
	return flags | tui_run(a, "view set top=1", NULL);
}
