/*
 * plot_load.c — per-group load bars from a plan: time split into compute,
 * routing and the rest (bottleneck outlined in red), and storage against the
 * memory limit (bars over the limit in red).
 *
 * An interleaved pipeline's groups are its model chunks, several on one
 * device group: max(t) is then the slowest device group's summed time.
 *
 * Memory limit: the --mem-limit option, else the plan's metric
 * "memory_limit" or "memory" (partition plans), else detail.memory_limit; without one no limit is
 * drawn.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/chart.h"
#include "util/fmt.h"
#include "render/plot.h"

static void group_axis_labels(const pb_chart *c, const pb_plan *p)
{
	double bw = c->pw / p->n_groups;
	int rot = bw < 60;
	fputs("<g class=\"group-labels\">\n", c->f);
	for (int i = 0; i < p->n_groups; i++) {
		double x = c->px + (i + 0.5) * bw;
		const char *l = p->groups[i].label[0] ? p->groups[i].label : "?";
		char buf[64];
		if (!p->groups[i].label[0])
			snprintf(buf, sizeof buf, "%d", i), l = buf;
		if (rot)
			pb_svg_text_rot(c->f, x + 3, c->py + c->ph + 10, -45, "end", 9, l);
		else
			pb_svg_text(c->f, x, c->py + c->ph + 14, "middle", 10, "#333333", l);
	}
	fputs("</g>\n", c->f);
}

/* The largest summed time of the groups on the same devices (an interleaved
 * pipeline's chunks of one device group). */
static double device_group_max(const pb_plan *p)
{
	double worst = 0;
	for (int i = 0; i < p->n_groups; i++) {
		double t = 0;
		for (int j = 0; j < p->n_groups; j++)
			if (p->groups[j].first_unit == p->groups[i].first_unit &&
			    p->groups[j].n_units == p->groups[i].n_units &&
			    isfinite(p->groups[j].time))
				t += p->groups[j].time;
		worst = fmax(worst, t);
	}
	return worst;
}

int pb_plot_load(const pb_plan *p, const char *src, const pb_plot_opts *o, FILE *f, pb_error *err)
{
	if (p->n_groups == 0)
		return pb_err(err, PB_EINPUT, "%s: the plan has no groups to plot (field 'groups')",
		              src);
	double lim = o->mem_limit;
	if (!(lim > 0))
		lim = pb_plan_metric(p, "memory_limit", NAN);
	if (!(lim > 0)) /* the partition module's name for it */
		lim = pb_plan_metric(p, "memory", NAN);
	if (!(lim > 0)) {
		const json_t *d = json_object_get(p->detail, "memory_limit");
		lim = json_is_number(d) ? json_number_value(d) : NAN;
	}
	double tmax = 0, smax = 0;
	int over = 0;
	for (int i = 0; i < p->n_groups; i++) {
		const pb_plan_group *g = &p->groups[i];
		if (isfinite(g->time))
			tmax = fmax(tmax, g->time);
		if (isfinite(g->storage))
			smax = fmax(smax, g->storage);
		over += g->over_memory || (lim > 0 && g->storage > lim);
	}
	if (lim > 0)
		smax = fmax(smax, lim * 1.05);
	int W = o->width, panel = 200, H = 60 + 2 * (panel + 80);
	char title[512], sub[512], a[32], b[32];
	snprintf(title, sizeof title, "%s", o->title ? o->title : "load per group");
	int V = (int)json_integer_value(json_object_get(p->detail, "chunks_per_device"));
	int len =
	    V > 1 /* interleaved: a device group runs V chunks; its time is what counts */
	        ? snprintf(sub, sizeof sub,
	                   "%s: %s plan by %s, %d groups, max(t) %s per device group (%d chunks "
	                   "each)",
	                   src, p->kind, p->method, p->n_groups,
	                   pb_fmt_time(device_group_max(p), a, sizeof a), V)
	        : snprintf(sub, sizeof sub, "%s: %s plan by %s, %d groups, max(t) %s", src, p->kind,
	                   p->method, p->n_groups, pb_fmt_time(tmax, a, sizeof a));
	if (lim > 0)
		snprintf(sub + len, sizeof sub - (size_t)len, ", memory limit %s, %d over",
		         pb_fmt_bytes(lim, b, sizeof b), over);
	pb_svgdoc_open(f, W, H, title, sub);
	double y0 = 0, y1 = tmax;
	double ys = pb_nice_range(&y0, &y1, 5);
	pb_chart c;
	pb_chart_init(&c, f, 80, 60, W - 250, panel, 0, p->n_groups, y0, y1);
	pb_chart_axes(&c, 0, ys, NULL, "time", NULL, pb_fmt_time);
	group_axis_labels(&c, p);
	char tip[512], t1[32], t2[32], t3[32];
	fputs("<g class=\"bars\" id=\"time\">\n", f);
	for (int i = 0; i < p->n_groups; i++) {
		const pb_plan_group *g = &p->groups[i];
		double comp = isfinite(g->compute) ? g->compute : 0;
		double rout = isfinite(g->routing) ? g->routing : 0;
		double tot = isfinite(g->time) ? g->time : comp + rout;
		double rest = tot - comp - rout;
		snprintf(tip, sizeof tip, "%s: time %s (compute %s, routing %s)%s", g->label,
		         pb_fmt_time(tot, t1, sizeof t1), pb_fmt_time(comp, t2, sizeof t2),
		         pb_fmt_time(rout, t3, sizeof t3), g->bottleneck ? ", BOTTLENECK" : "");
		double xa = i + 0.15, xb = i + 0.85;
		pb_chart_rect(&c, "bar compute", xa, 0, xb, comp, "#80b1d3", NULL, 0, tip);
		pb_chart_rect(&c, "bar routing", xa, comp, xb, comp + rout, "#fdb462", NULL, 0,
		              tip);
		if (rest > tot * 0.005)
			pb_chart_rect(&c, "bar other", xa, comp + rout, xb, tot, "#d9d9d9", NULL, 0,
			              tip);
		if (g->bottleneck)
			pb_chart_rect(&c, "bar bottleneck", xa, 0, xb, tot, "none", "#d00000", 2.5,
			              tip);
	}
	fputs("</g>\n", f);
	const char *lab[] = {"compute", "routing", "other", "bottleneck"};
	const char *col[] = {"#80b1d3", "#fdb462", "#d9d9d9", "#d00000"};
	pb_svg_legend(f, W - 150, 66, lab, col, 4);

	y0 = 0, y1 = smax;
	ys = pb_nice_range(&y0, &y1, 5);
	pb_chart_init(&c, f, 80, 60 + panel + 80, W - 250, panel, 0, p->n_groups, y0, y1);
	pb_chart_axes(&c, 0, ys, NULL, "storage per unit", NULL, pb_fmt_bytes);
	group_axis_labels(&c, p);
	fputs("<g class=\"bars\" id=\"storage\">\n", f);
	for (int i = 0; i < p->n_groups; i++) {
		const pb_plan_group *g = &p->groups[i];
		double s = isfinite(g->storage) ? g->storage : 0;
		int ov = g->over_memory || (lim > 0 && s > lim);
		snprintf(tip, sizeof tip, "%s: storage %s%s", g->label,
		         pb_fmt_bytes(s, t1, sizeof t1), ov ? ", OVER MEMORY" : "");
		pb_chart_rect(&c, ov ? "bar storage over" : "bar storage", i + 0.15, 0, i + 0.85, s,
		              ov ? "#fb8072" : "#b3de69", NULL, 0, tip);
	}
	fputs("</g>\n", f);
	if (lim > 0) {
		snprintf(tip, sizeof tip, "memory limit %s", pb_fmt_bytes(lim, t1, sizeof t1));
		pb_chart_hline(&c, "limit", lim, "#d00000", "6,3", tip);
	}
	const char *lab2[] = {"storage", "over the limit"};
	const char *col2[] = {"#b3de69", "#fb8072"};
	pb_svg_legend(f, W - 150, 66 + panel + 80, lab2, col2, 2);
	pb_svgdoc_close(f);
	return PB_OK;
}
