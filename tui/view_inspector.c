/*
 * view_inspector.c — the selected node: op, name, plan group, the block it
 * is drawn in, costs, input and output shapes, attributes.
 */
#include <stdio.h>

#include "util/fmt.h"
#include "view_def.h"

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

const tui_view_def tui_view_inspector = {.name = "inspector",
                                         .at = TUI_AT_SIDE,
                                         .redraw =
                                             PB_REDRAW_TABLE | PB_REDRAW_CANVAS | PB_REDRAW_STATUS,
                                         .draw = inspector_draw};
