/*
 * view_groups.c — the groups table of the plan (any kind: cores, stages,
 * backends, fusion groups, a shard plan's operator classes): nodes, MACs,
 * time, storage per unit, routing time, * bottleneck, ! over memory. A click
 * on a row selects the group's first node.
 */
#include <string.h>

#include "util/fmt.h"
#include "view_def.h"

static int groups_hit(const tui_app *a, int y)
{
	const pb_plan *p = a->s->plan;
	if (!p || y < 2)
		return -1;
	int g = a->table_first + y - 2;
	return g < p->n_groups ? g : -1;
}

/* Rows of the table part of the side pane. */
static int groups_rows(const tui_app *a, int H)
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

static void groups_draw(tui_app *a, WINDOW *w)
{
	const pb_plan *p = a->s->plan;
	int rows = getmaxy(w);
	werase(w);
	int wide = a->side_w >= 44;
	if (!p) {
		tui_line(w, 0, A_BOLD, "Groups");
		tui_line(w, 1, 0, "no plan yet: run a solver,");
		tui_line(w, 2, 0, "e.g. :partition --method exact");
		return;
	}
	tui_line(w, 0, A_BOLD, "Groups (%s, %s)", p->kind, p->method);
	/* the nodes column takes the widest range ("10175-10899" on a model of
	 * more than 10,000 nodes), so the marks at the end of a row stay on the
	 * pane: the label column gives way (down to 4), a narrow pane drops MACs */
	int nw = table_nodes_width(p), lw = 9 - (nw - 9) < 4 ? 4 : 9 - (nw - 9);
	int macs_col = wide || nw == 9;
	if (wide)
		tui_line(w, 1, A_UNDERLINE, "%-2s %-*s %*s %6s %7s %5s %5s", "#", lw, "label", nw,
		         "nodes", "MACs", "time ms", "stor", "route");
	else if (macs_col)
		tui_line(w, 1, A_UNDERLINE, "%-2s %9s %6s %7s %5s %2s", "#", "nodes", "MACs",
		         "time ms", "stor", "");
	else
		tui_line(w, 1, A_UNDERLINE, "%-2s %*s %7s %5s %2s", "#", nw, "nodes", "time ms",
		         "stor", "");
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
			tui_line(w, 2 + r, at, "%-2d %-*.*s %*s %6s %7.3f %5s %5.3f%s", gi, lw, lw,
			         table_label(g->label, abbrev, lab, sizeof lab), nw, nodes, macs,
			         g->time * 1e3, stor, g->routing * 1e3, mark);
		else if (macs_col)
			tui_line(w, 2 + r, at, "%-2d %9s %6s %7.3f %5s %s", gi, nodes, macs,
			         g->time * 1e3, stor, mark);
		else
			tui_line(w, 2 + r, at, "%-2d %*s %7.3f %5s %s", gi, nw, nodes,
			         g->time * 1e3, stor, mark);
	}
	/* a map plan's times are a backend's busy time per input (the title's
	 * figure is a whole stream's) */
	int map = !strcmp(p->kind, "map");
	if (p->n_groups > nvis)
		tui_line(w, rows - 1, A_DIM, "(%d-%d of %d; %s* bottleneck, ! over memory)", first,
		         first + nvis - 1, p->n_groups, map ? "time per input; " : "");
	else
		tui_line(w, rows - 1, A_DIM, "%s* bottleneck  ! over memory",
		         map ? "time per input  " : "");
}

static void group_first(const pb_plan *p, int g, int *first)
{
	*first = p->groups[g].first_node;
	if (*first >= 0)
		return;
	for (int i = 0; i < p->n_nodes; i++)
		if (p->group[i] == g) {
			*first = i;
			return;
		}
}

static int groups_mouse(tui_app *a, WINDOW *w, const MEVENT *ev, int y, int x, char *line, size_t n)
{
	(void)w, (void)x;
	int g = groups_hit(a, y), f;
	if (!(ev->bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) || g < 0)
		return 0;
	group_first(a->s->plan, g, &f);
	if (f >= 0)
		snprintf(line, n, "view select %d", f);
	return 0;
}

const tui_view_def tui_view_groups = {.name = "groups",
                                      .at = TUI_AT_SIDE,
                                      .redraw =
                                          PB_REDRAW_TABLE | PB_REDRAW_CANVAS | PB_REDRAW_STATUS,
                                      .rows = groups_rows,
                                      .draw = groups_draw,
                                      .mouse = groups_mouse};
