/*
 * view_inspector.c — the selected node: op, name, plan group, on a shard
 * plan its candidate specs (the rows a dragged box is dropped on), the block
 * it is drawn in, costs, input and output shapes, attributes.
 */
#include <stdio.h>
#include <string.h>

#include "output.h"
#include "shard/search/spec_pin.h"
#include "spec_cands.h"
#include "util/fmt.h"
#include "view_def.h"

/* The candidate specs of a shard plan's operator, from row y; returns the
 * next row. Rows scroll to keep the cursor shown; where they are drawn is
 * kept for clicks and drops (tui_cands_row_at). */
static int draw_cands(tui_app *a, WINDOW *w, int sel, int y, int y1)
{
	a->cands.n_drawn = 0;
	const tui_cands *c = tui_cands_of(a, sel);
	if (!c || y >= y1)
		return y;
	if (c->n == 0) {
		tui_line(w, y++, A_DIM, "specs: %s", c->err);
		return y;
	}
	int lw = 4;
	for (int i = 0; i < c->n; i++)
		lw = (int)strlen(c->c[i].label) > lw ? (int)strlen(c->c[i].label) : lw;
	lw = lw > 16 ? 16 : lw;
	tui_line(w, y++, A_DIM, "specs (op time, mem/dev): [ ] = drag");
	int room = y1 - y - 3 > 1 ? y1 - y - 3 : 1;
	room = room > c->n ? c->n : room;
	int first = c->cursor - room / 2;
	first = first + room > c->n ? c->n - room : first;
	first = first < 0 ? 0 : first;
	a->cands.row0 = y;
	a->cands.first = first;
	for (int i = first; i < first + room && y < y1; i++) {
		const pb_spec_cand *k = &c->c[i];
		char t[32], m[32];
		pb_fmt_time_fixed(k->time, t, sizeof t);
		pb_fmt_bytes(k->memory, m, sizeof m);
		attr_t at = (i == c->cursor ? A_REVERSE : 0) | (k->refused_by[0] ? A_DIM : 0) |
		            (k->current ? A_BOLD : 0);
		tui_line(w, y++, at, "%c%c%-*.*s %10s %8s%s", i == c->cursor ? '>' : ' ',
		         k->current ? '*' : ' ', lw, lw, k->label, t, m,
		         k->refused_by[0] ? " rule" : "");
		a->cands.n_drawn++;
	}
	return y;
}

static void inspector_draw(tui_app *a, WINDOW *w)
{
	int y0 = 0, y1 = getmaxy(w);
	werase(w);
	const pb_graph *g = a->s->graph;
	int sel = tui_selected(a);
	if (!g || sel < 0 || y0 >= y1)
		return;
	const pb_node *n = &g->nodes[sel];
	int y = y0;
	char b1[16], b2[16], b3[16], shape[96];
	/* the header lines stop at y1 too (the objective's rows are below it) */
	tui_hrule(a, w, y++, 0, a->side_w);
	if (y < y1)
		tui_line(w, y++, A_BOLD, "Node %d/%d: %s", sel, g->n_nodes, n->op);
	if (y < y1)
		tui_line(w, y++, 0, "%s", n->name);
	int grp = tui_group_of(a, sel);
	if (grp >= 0 && a->s->plan && y < y1)
		tui_line(w, y++, 0, "group %d: %s", grp,
		         a->s->plan->groups[grp].label ? a->s->plan->groups[grp].label : "");
	y = draw_cands(a, w, sel, y, y1);
	const tui_item *it =
	    a->vg.item_of && a->vg.item_of[sel] >= 0 ? &a->vg.items[a->vg.item_of[sel]] : NULL;
	if (a->vg.item_of && a->vg.item_of[sel] < 0 && y < y1)
		tui_line(w, y++, A_DIM, "a constant, not drawn (C shows constants)");
	if (it && it->block && y < y1)
		tui_line(w, y++, A_DIM, "in block %s (nodes %d-%d)", it->label, it->first,
		         it->last);
	if (y < y1)
		tui_line(w, y++, 0, "MACs %s  FLOPs %s", pb_fmt_si(n->cost.macs, b1, sizeof b1),
		         pb_fmt_si(n->cost.flops, b2, sizeof b2));
	if (y < y1)
		tui_line(w, y++, 0, "params %s (%s)  out %s",
		         pb_fmt_si(n->cost.params, b3, sizeof b3),
		         pb_fmt_bytes(n->cost.param_bytes, b1, sizeof b1),
		         pb_fmt_bytes(n->cost.out_bytes, b2, sizeof b2));
	for (int k = 0; k < n->n_inputs && y < y1 - 3; k++) {
		if (n->inputs[k] < 0)
			continue;
		const pb_tensor *t = &g->tensors[n->inputs[k]];
		tui_line(w, y++, 0, "in  %s%s %s", pb_tensor_shape_str(t, shape, sizeof shape),
		         t->is_initializer ? " [w]" : "", pb_dtype_name(t->dtype));
	}
	for (int k = 0; k < n->n_outputs && y < y1 - 2; k++) {
		const pb_tensor *t = &g->tensors[n->outputs[k]];
		tui_line(w, y++, 0, "out %s %s", pb_tensor_shape_str(t, shape, sizeof shape),
		         pb_dtype_name(t->dtype));
	}
	for (int k = 0; k < n->n_attrs && y < y1 - 1; k++) {
		const pb_attr *at = &n->attrs[k];
		char val[80] = "";
		if (at->type == PB_ATTR_INT)
			snprintf(val, sizeof val, "%lld", (long long)at->i);
		else if (at->type == PB_ATTR_FLOAT)
			snprintf(val, sizeof val, "%g", at->f);
		else if (at->type == PB_ATTR_STRING)
			snprintf(val, sizeof val, "%s", at->s ? at->s : "");
		else if (at->type == PB_ATTR_INTS) {
			size_t k2 = 0;
			for (int j = 0; j < at->n && k2 < sizeof val - 8; j++)
				k2 += (size_t)snprintf(val + k2, sizeof val - k2, "%s%lld",
				                       j ? "," : "", (long long)at->ints[j]);
		} else
			snprintf(val, sizeof val, "(type %d)", at->type);
		tui_line(w, y++, A_DIM, "%s=%s", at->name, val);
	}
	if (y < y1)
		tui_line(w, y++, A_DIM, "preds %d  succs %d", n->n_preds, n->n_succs);
}

/* A box of the graph dragged onto a candidate row pins that spec; a click
 * on a row puts the cursor there ('=' pins it). */
static int inspector_mouse(tui_app *a, WINDOW *w, const MEVENT *ev, int y, int x, char *line,
                           size_t n)
{
	(void)w;
	(void)x;
	line[0] = 0;
	int k = tui_cands_row_at(a, y), from = a->drag_node;
	if (ev->bstate & BUTTON1_RELEASED) {
		a->drag_node = -1;
		if (from < 0 || from >= a->vg.n_items)
			return 0;
		char why[300];
		int nid = a->vg.items[from].first;
		if (k < 0)
			tui_out(a, 1, "drop the box on a row of its candidate specs to pin one");
		else if (!tui_cands_pin_line(a, nid, k, line, n, why, sizeof why))
			tui_out(a, 1, "%s", why);
		return PB_REDRAW_STATUS;
	}
	if (k >= 0 && ev->bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) {
		a->drag_node = -1;
		return tui_cands_move(a, k - a->cands.cursor);
	}
	return 0;
}

const tui_view_def tui_view_inspector = {.name = "inspector",
                                         .at = TUI_AT_SIDE,
                                         .redraw =
                                             PB_REDRAW_TABLE | PB_REDRAW_CANVAS | PB_REDRAW_STATUS,
                                         .draw = inspector_draw,
                                         .mouse = inspector_mouse};
