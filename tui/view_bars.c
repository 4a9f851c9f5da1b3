/*
 * view_bars.c — the title bar (the plan and its headline figure, the model,
 * the layout) and the status bar (the keys that matter now, the view's
 * settings, the selection; a running job's spinner and progress; in branch
 * colour mode the legend).
 */
#include <string.h>

#include "branch_color.h"
#include "jobs.h"
#include "shape/shape.h"
#include "util/fmt.h"
#include "view.h"
#include "view_def.h"

static void title_draw(tui_app *a, WINDOW *w)
{
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
		if (!strcmp(s->plan->kind, "map") && pb_plan_has_metric(s->plan, "stream")) {
			/* a map plan's max_time is a whole stream's pipelined time,
			 * the groups table's times are per input: say which */
			int n = (int)pb_plan_metric(s->plan, "stream", 0);
			k += snprintf(buf + k, sizeof buf - k,
			              ", %s pipelined for a stream of %d input%s",
			              pb_fmt_time_fixed(pb_plan_metric(s->plan, "max_time", 0), mt,
			                                sizeof mt),
			              n, n == 1 ? "" : "s");
		} else
			for (int i = 0; i < 3; i++)
				if (pb_plan_has_metric(s->plan, head[i])) {
					k += snprintf(
					    buf + k, sizeof buf - k, ", %s %s", head[i],
					    pb_fmt_time_fixed(pb_plan_metric(s->plan, head[i], 0),
					                      mt, sizeof mt));
					break;
				}
		/* its label (util/proof_label.h), as the reports and the SVG say it */
		if (pb_plan_has_metric(s->plan, "optimal") &&
		    !pb_plan_has_metric(s->plan, "optimum"))
			k += pb_plan_metric(s->plan, "optimal", 0) == 1
			         ? snprintf(buf + k, sizeof buf - k, ", optimal")
			     : pb_plan_has_metric(s->plan, "bound")
			         ? snprintf(buf + k, sizeof buf - k, ", best found (gap %.3g%%%s)",
			                    pb_plan_metric(s->plan, "gap", 0) * 100,
			                    /* a map plan's bound is one input's serial time */
			                    strcmp(s->plan->kind, "map") ? "" : " on one input")
			         : snprintf(buf + k, sizeof buf - k, ", best found");
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
	tui_line(w, 0, A_REVERSE, "%s", buf);
}

/* The edit keys of the current plan's kind: merge and split change
 * partition plans only, boundary partition and plain pipeline plans (not
 * the dp x tp x pp ones of shard --pipeline); map and
 * fuse plans are edited by dragging a box (or 'backend', 'fuse-in/out'),
 * shard plans by 'pin' (drag onto a candidate spec, or '[' ']' '='). */
static const char *plan_hints(const pb_plan *p)
{
	if (!strcmp(p->kind, "partition"))
		return " </>:move m:merge v:split u:undo";
	if (!strcmp(p->kind, "pipeline") && !pb_plan_has_metric(p, "dp"))
		return " </>:move u:undo ?:help";
	if (!strcmp(p->kind, "pipeline")) /* dp x tp x pp: chunk boundaries, pins */
		return " </>:move chunk :pin u:undo ?:help";
	if (!strcmp(p->kind, "map"))
		return " drag:backend u:undo ?:help";
	if (!strcmp(p->kind, "fuse"))
		return " drag:fuse-in/out u:undo ?:help";
	if (!strcmp(p->kind, "shard"))
		return " []=:pin drag:pin u:undo ?:help";
	return " u:undo ?:help";
}

static void status_draw(tui_app *a, WINDOW *w)
{
	werase(w);
	if (a->job) {
		char buf[400];
		tui_job_status(a, buf, sizeof buf);
		tui_line(w, 0, A_REVERSE | A_BOLD, "%s", buf);
		return;
	}
	const char *colour = pb_view_color_name(a->s->view.color);
	const char *dir = a->s->view.lr ? "LR" : "TB";
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
		tui_line(w, 0, A_REVERSE, " branch: %s | zoom %ld %s | %s", tui_branch_legend(a),
		         (long)a->s->view.zoom, dir, selbuf);
		return;
	}
	tui_line(w, 0, A_REVERSE, "%s | zoom %ld %s %s | mouse %s | %d boxes, %s | %s", hints,
	         (long)a->s->view.zoom, dir, colour, a->mouse_on ? "on" : "off", a->vg.n_items,
	         a->vg.layout_note[0] ? a->vg.layout_note : "no layout", selbuf);
}

const tui_view_def tui_view_title = {.name = "title", .at = TUI_AT_TITLE, .draw = title_draw};
const tui_view_def tui_view_status = {.name = "status", .at = TUI_AT_STATUS, .draw = status_draw};
