/*
 * panes.c — title bar, partition table + inspector + sparkline (side pane),
 * output pane and status line.
 *
 * Everything is read from the generic session data: the plan's groups and
 * metrics (so any problem kind — cores, stages, backends, fusion groups —
 * shows the same way), the graph's per-node costs and shapes, and the active
 * solver's objective history.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "shape/shape.h"
#include "util/fmt.h"
#include "view.h"

static void line(WINDOW *w, int y, attr_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void line(WINDOW *w, int y, attr_t at, const char *fmt, ...)
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

void tui_title_draw(tui_app *a)
{
	WINDOW *w = a->wtitle;
	pb_session *s = a->s;
	werase(w);
	wbkgd(w, A_REVERSE);
	char buf[512], macs[16], mt[32];
	int k = 0;
	buf[0] = 0;
	/* most useful first: the title is cut at the terminal's width */
	if (s->dirty)
		k += snprintf(buf + k, sizeof buf - k, " [+] unsaved |");
	if (s->plan) {
		k +=
		    snprintf(buf + k, sizeof buf - k, " plan %s/%s, %d group%s", s->plan->kind,
		             s->plan->method, s->plan->n_groups, s->plan->n_groups == 1 ? "" : "s");
		/* the plan's headline figure: max(t) of partition and map plans,
		 * the step time of shard and pipeline plans, the modelled time
		 * after fusion */
		static const char *head[] = {"max_time", "step_time", "time_after"};
		for (int i = 0; i < 3; i++)
			if (pb_plan_has_metric(s->plan, head[i])) {
				k += snprintf(buf + k, sizeof buf - k, ", %s %s", head[i],
				              pb_fmt_time_fixed(pb_plan_metric(s->plan, head[i], 0),
				                                mt, sizeof mt));
				break;
			}
		k += snprintf(buf + k, sizeof buf - k, " |");
	}
	if (s->graph) {
		const char *base = strrchr(s->graph->path, '/');
		pb_fmt_si(s->graph->total.macs, macs, sizeof macs);
		/* symbolic input dims leave costs unknown: say so while they do */
		char in[8];
		int needs = s->graph->n_unknown_shapes &&
		            pb_shape_unresolved_inputs(s->graph, in, sizeof in) > 0;
		k += snprintf(buf + k, sizeof buf - k, " %s: %d nodes, %s MACs%s |",
		              base ? base + 1 : s->graph->path, s->graph->n_nodes, macs,
		              needs ? " (needs --input)" : "");
	}
	if (s->hw)
		k += snprintf(buf + k, sizeof buf - k, " %s %s |", s->hw->kind, s->hw->name);
	snprintf(buf + k, sizeof buf - k, " partbench");
	line(w, 0, A_REVERSE, "%s", buf);
}

int tui_side_hit(const tui_app *a, int y)
{
	const pb_plan *p = a->s->plan;
	if (!p || y < 2)
		return -1;
	int g = a->table_first + y - 2;
	return g < p->n_groups ? g : -1;
}

/* Rows of the table part of the side pane. */
static int table_rows(const tui_app *a, int H)
{
	const pb_plan *p = a->s->plan;
	int want = (p ? p->n_groups : 1) + 3;
	int max = H / 2;
	return want < max ? want : max;
}

/* The table's 9-character label column: when a label such as
 * "cores 48-63" would be cut, every "cores " label of the plan reads "c "
 * ("c 48-63") and every "stage S chunk K" (interleaved pipelines) "sS chK",
 * so the column stays uniform and nothing is cut; a shard plan's
 * "tensor-parallel" reads "tensor" (was cut to "tensor-pa"), a fusion group
 * "fused_0 (parent_child)" its name "fused_0" (was "fused_0 ("). */
static int table_abbrev(const pb_plan *p)
{
	for (int i = 0; i < p->n_groups; i++)
		if (p->groups[i].label && strlen(p->groups[i].label) > 9)
			return 1;
	return 0;
}

static const char *table_label(const char *label, int abbrev, char *buf, size_t len)
{
	if (!label)
		return "";
	if (abbrev && strncmp(label, "cores ", 6) == 0) {
		snprintf(buf, len, "c %s", label + 6);
		return buf;
	}
	/* a shard plan's classes: "tensor-parallel" reads "tensor" */
	const char *par = strstr(label, "-parallel");
	if (par && !par[9] && strlen(label) > 9) {
		snprintf(buf, len, "%.*s", (int)(par - label), label);
		return buf;
	}
	int st, ch;
	if (abbrev && sscanf(label, "stage %d chunk %d", &st, &ch) == 2) {
		snprintf(buf, len, "s%d ch%d", st, ch);
		return buf;
	}
	/* a fusion group "fused_0 (parent_child)": the name, not "fused_0 (" */
	const char *paren = strstr(label, " (");
	if (paren && strlen(label) > 9) {
		snprintf(buf, len, "%.*s", (int)(paren - label), label);
		return buf;
	}
	return label;
}

/* Width of the nodes column: its widest "first-last", at least 9. */
static int table_nodes_width(const pb_plan *p)
{
	int nw = 9;
	for (int i = 0; i < p->n_groups; i++) {
		char b[24];
		int k = p->groups[i].first_node >= 0
		            ? snprintf(b, sizeof b, "%d-%d", p->groups[i].first_node,
		                       p->groups[i].last_node)
		            : 1;
		if (k > nw)
			nw = k;
	}
	return nw;
}

static void draw_table(tui_app *a, int H)
{
	WINDOW *w = a->wside;
	const pb_plan *p = a->s->plan;
	int rows = table_rows(a, H);
	int wide = a->side_w >= 44;
	if (!p) {
		line(w, 0, A_BOLD, "Groups");
		line(w, 1, 0, "no plan yet: run a solver,");
		line(w, 2, 0, "e.g. :partition --method exact");
		return;
	}
	line(w, 0, A_BOLD, "Groups (%s, %s)", p->kind, p->method);
	/* the nodes column takes the widest range ("10175-10899" on a model of
	 * more than 10,000 nodes), so the marks at the end of a row stay on the
	 * pane: the label column gives way (down to 4), a narrow pane drops MACs */
	int nw = table_nodes_width(p), lw = 9 - (nw - 9) < 4 ? 4 : 9 - (nw - 9);
	int macs_col = wide || nw == 9;
	if (wide)
		line(w, 1, A_UNDERLINE, "%-2s %-*s %*s %6s %7s %5s %5s", "#", lw, "label", nw,
		     "nodes", "MACs", "time ms", "stor", "route");
	else if (macs_col)
		line(w, 1, A_UNDERLINE, "%-2s %9s %6s %7s %5s %2s", "#", "nodes", "MACs", "time ms",
		     "stor", "");
	else
		line(w, 1, A_UNDERLINE, "%-2s %*s %7s %5s %2s", "#", nw, "nodes", "time ms", "stor",
		     "");
	int sel = tui_selected(a), sg = sel >= 0 ? tui_group_of(a, sel) : -1;
	int nvis = rows - 3, abbrev = table_abbrev(p);
	int first = 0;
	if (sg >= nvis)
		first = sg - nvis + 1;
	a->table_first = first;
	for (int r = 0; r < nvis && first + r < p->n_groups; r++) {
		int gi = first + r;
		const pb_plan_group *g = &p->groups[gi];
		char nodes[24], macs[16], stor[16], lab[32];
		if (g->first_node >= 0)
			snprintf(nodes, sizeof nodes, "%d-%d", g->first_node, g->last_node);
		else
			snprintf(nodes, sizeof nodes, "-");
		/* narrow columns: "1.23M", "12.3M", "123M" */
		pb_fmt_num(g->macs, PB_FMT_COUNT, PB_FMT_SIG3, PB_FMT_TIGHT, macs, sizeof macs);
		pb_fmt_num(g->storage, PB_FMT_COUNT, PB_FMT_SIG3, PB_FMT_TIGHT, stor, sizeof stor);
		attr_t at = gi == sg ? A_REVERSE : 0;
		if (g->bottleneck)
			at |= A_BOLD | (a->color ? COLOR_PAIR(7) : 0);
		else if (a->color)
			at |= COLOR_PAIR(1 + gi % 6);
		char mark[4] = {g->bottleneck ? '*' : ' ', g->over_memory ? '!' : ' ', 0};
		if (wide)
			line(w, 2 + r, at, "%-2d %-*.*s %*s %6s %7.3f %5s %5.3f%s", gi, lw, lw,
			     table_label(g->label, abbrev, lab, sizeof lab), nw, nodes, macs,
			     g->time * 1e3, stor, g->routing * 1e3, mark);
		else if (macs_col)
			line(w, 2 + r, at, "%-2d %9s %6s %7.3f %5s %s", gi, nodes, macs,
			     g->time * 1e3, stor, mark);
		else
			line(w, 2 + r, at, "%-2d %*s %7.3f %5s %s", gi, nw, nodes, g->time * 1e3,
			     stor, mark);
	}
	if (p->n_groups > nvis)
		line(w, rows - 1, A_DIM, "(%d-%d of %d; * bottleneck, ! over memory)", first,
		     first + nvis - 1, p->n_groups);
	else
		line(w, rows - 1, A_DIM, "* bottleneck  ! over memory");
}

static void draw_inspector(tui_app *a, int y0, int y1)
{
	WINDOW *w = a->wside;
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
		line(w, y++, A_BOLD, "Node %d/%d: %s", sel, g->n_nodes, n->op);
	if (y < y1)
		line(w, y++, 0, "%s", n->name);
	int grp = tui_group_of(a, sel);
	if (grp >= 0 && a->s->plan && y < y1)
		line(w, y++, 0, "group %d: %s", grp,
		     a->s->plan->groups[grp].label ? a->s->plan->groups[grp].label : "");
	const tui_item *it =
	    a->vg.item_of && a->vg.item_of[sel] >= 0 ? &a->vg.items[a->vg.item_of[sel]] : NULL;
	if (a->vg.item_of && a->vg.item_of[sel] < 0 && y < y1)
		line(w, y++, A_DIM, "a constant, not drawn (C shows constants)");
	if (it && it->block && y < y1)
		line(w, y++, A_DIM, "in block %s (nodes %d-%d)", it->label, it->first, it->last);
	if (y < y1)
		line(w, y++, 0, "MACs %s  FLOPs %s", pb_fmt_si(n->cost.macs, b1, sizeof b1),
		     pb_fmt_si(n->cost.flops, b2, sizeof b2));
	if (y < y1)
		line(w, y++, 0, "params %s (%s)  out %s", pb_fmt_si(n->cost.params, b3, sizeof b3),
		     pb_fmt_bytes(n->cost.param_bytes, b1, sizeof b1),
		     pb_fmt_bytes(n->cost.out_bytes, b2, sizeof b2));
	for (int k = 0; k < n->n_inputs && y < y1 - 3; k++) {
		if (n->inputs[k] < 0)
			continue;
		const pb_tensor *t = &g->tensors[n->inputs[k]];
		line(w, y++, 0, "in  %s%s %s", pb_tensor_shape_str(t, shape, sizeof shape),
		     t->is_initializer ? " [w]" : "", pb_dtype_name(t->dtype));
	}
	for (int k = 0; k < n->n_outputs && y < y1 - 2; k++) {
		const pb_tensor *t = &g->tensors[n->outputs[k]];
		line(w, y++, 0, "out %s %s", pb_tensor_shape_str(t, shape, sizeof shape),
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
		line(w, y++, A_DIM, "%s=%s", at->name, val);
	}
	if (y < y1)
		line(w, y++, A_DIM, "preds %d  succs %d", n->n_preds, n->n_succs);
}

static void draw_spark(tui_app *a, int y)
{
	WINDOW *w = a->wside;
	static const char *bars_u[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
	static const char *bars_a[] = {"_", ".", ":", "-", "=", "+", "*", "#"};
	const pb_solver *sv = a->s->solver;
	tui_hrule(a, w, y - 1, 0, a->side_w);
	if (!sv || sv->n_history == 0) {
		line(w, y, A_DIM, "objective: %s", sv ? "no steps yet" : "no solver running");
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
	line(w, y, A_DIM, "objective (%s, %d steps)",
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
	line(w, y + 1, 0, "last %s  best %s  bound %s", last, bst, bnd);
	wmove(w, y + 2, 0);
	wclrtoeol(w);
	for (int i = from; i < n; i++) {
		double v = sv->history[i];
		int k = !isfinite(v) || hi <= lo ? 0 : (int)((v - lo) / (hi - lo) * 7.999);
		mvwaddstr(w, y + 2, i - from, a->utf8 ? bars_u[k] : bars_a[k]);
	}
}

void tui_side_draw(tui_app *a)
{
	WINDOW *w = a->wside;
	int H, W;
	getmaxyx(w, H, W);
	(void)W;
	werase(w);
	int rows = table_rows(a, H);
	draw_table(a, H);
	draw_inspector(a, rows, H - 4);
	draw_spark(a, H - 3);
}

void tui_out_draw(tui_app *a)
{
	WINDOW *w = a->wout;
	int H, W;
	getmaxyx(w, H, W);
	(void)W;
	werase(w);
	tui_hrule(a, w, 0, 0, a->cols);
	mvwaddstr(w, 0, 2, " output (o: all) ");
	int n = a->n_out < H - 1 ? a->n_out : H - 1;
	for (int r = 0; r < n; r++) {
		int idx = (a->out_head - n + r + TUI_OUT_LINES) % TUI_OUT_LINES;
		/* lines written before the last plan change are dimmed: their
		 * figures are not of the current plan */
		attr_t at = a->out_err[idx] ? (A_BOLD | (a->color ? COLOR_PAIR(7) : 0))
		            : a->out_gen[idx] != a->plan_gen ? A_DIM
		                                             : 0;
		line(w, 1 + r, at, "%s", a->out[idx] ? a->out[idx] : "");
	}
}

/* The edit keys of the current plan's kind: merge and split change
 * partition plans only, boundary partition and plain pipeline plans (not
 * the dp x tp x pp ones of shard --pipeline); map and
 * fuse plans are edited by dragging a box (or 'backend', 'fuse-in/out'),
 * shard plans by 'pin'. */
static const char *plan_hints(const pb_plan *p)
{
	if (!strcmp(p->kind, "partition"))
		return " </>:move m:merge v:split u:undo";
	if (!strcmp(p->kind, "pipeline") && !pb_plan_has_metric(p, "dp"))
		return " </>:move u:undo ?:help";
	if (!strcmp(p->kind, "map"))
		return " drag:backend u:undo ?:help";
	if (!strcmp(p->kind, "fuse"))
		return " drag:fuse-in/out u:undo ?:help";
	if (!strcmp(p->kind, "shard"))
		return " :pin u:undo ?:help";
	return " u:undo ?:help";
}

void tui_status_draw(tui_app *a)
{
	WINDOW *w = a->wstatus;
	werase(w);
	if (a->job) {
		char buf[400];
		tui_job_status(a, buf, sizeof buf);
		line(w, 0, A_REVERSE | A_BOLD, "%s", buf);
		return;
	}
	char colour[16], dir[8];
	pb_view_get(a->s->view, "color", "group", colour, sizeof colour);
	pb_view_get(a->s->view, "dir", "TB", dir, sizeof dir);
	int sel = tui_selected(a);
	char selbuf[80] = "";
	if (sel >= 0)
		snprintf(selbuf, sizeof selbuf, "sel %d %.60s", sel, a->s->graph->nodes[sel].name);
	/* the keys that matter now: on a plan group, with a solver attached,
	 * else the general ones */
	const char *hints = " ?:help ::cmd /:find q:quit";
	if (a->s->solver)
		hints = " s/S:step T:train u:undo ?:help";
	else if (sel >= 0 && tui_group_of(a, sel) >= 0)
		hints = plan_hints(a->s->plan);
	else if (!a->s->plan && a->s->graph && a->s->hw)
		/* E/P/I partition, which needs a many-core chip */
		hints = !strcmp(a->s->hw->kind, "cluster")  ? " ::shard ::pipeline ?:help"
		        : !strcmp(a->s->hw->kind, "hetero") ? " ::map ::fuse ?:help"
		                                            : " E:exact P:pack I:milp ?:help";
	if (tui_branch_mode(a) && a->s->graph) { /* the legend replaces the hints */
		char legend[200];
		tui_branch_legend(a, legend, sizeof legend);
		line(w, 0, A_REVERSE, " branch: %s | zoom %ld %s | %s", legend,
		     pb_view_get_int(a->s->view, "zoom", 0), dir, selbuf);
		return;
	}
	line(w, 0, A_REVERSE, "%s | zoom %ld %s %s | mouse %s | %d boxes, %s | %s", hints,
	     pb_view_get_int(a->s->view, "zoom", 0), dir, colour, a->mouse_on ? "on" : "off",
	     a->vg.n_items, a->vg.layout_note[0] ? a->vg.layout_note : "no layout", selbuf);
}
