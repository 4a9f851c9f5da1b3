/*
 * plot_training.c — the RL training curve: reward per episode (raw and a
 * moving average); when the log has it, the gap to the optimum with its
 * best-so-far line; and when the log has the agent's start (start_time and
 * best_time), what the agent added: its best so far relative to its start,
 * with the episode at which it first beat the start.
 *
 * Log fields per line (docs/export.md): episode (default: running count),
 * reward, gap (fraction: 0.05 = 5 %) or max_time + optimum (gap derived),
 * best_time and start_time (seconds). Lines with none of reward/gap/max_time
 * are skipped (headers, notes).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/chart.h"
#include "render/plot.h"

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static char *fmt_pct(double v, char *buf, size_t len)
{
	snprintf(buf, len, "%g%%", v);
	return buf;
}

int pb_plot_training(const json_t *records, const char *src, const pb_plot_opts *o, FILE *f,
                     pb_error *err)
{
	size_t n = json_array_size(records);
	double *ep = malloc((n + 1) * sizeof *ep), *rw = malloc((n + 1) * sizeof *rw);
	double *gp = malloc((n + 1) * sizeof *gp), *avg = malloc((n + 1) * sizeof *avg);
	double *best = malloc((n + 1) * sizeof *best), *vs = malloc((n + 1) * sizeof *vs);
	if (!ep || !rw || !gp || !avg || !best || !vs) {
		free(ep), free(rw), free(gp), free(avg), free(best), free(vs);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", src);
	}
	int m = 0, n_rw = 0, n_gap = 0, n_vs = 0;
	double beat = NAN; /* first episode whose best beat the start */
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(records, i);
		double e = num(r, "episode"), re = num(r, "reward"), g = num(r, "gap");
		double mt = num(r, "max_time"), opt = num(r, "optimum");
		if (!isfinite(g) && isfinite(mt) && isfinite(opt) && opt > 0)
			g = mt / opt - 1;
		if (!isfinite(re) && !isfinite(g))
			continue;
		ep[m] = isfinite(e) ? e : (m ? ep[m - 1] + 1 : 1);
		rw[m] = re;
		gp[m] = isfinite(g) ? g * 100 : NAN;
		double bt = num(r, "best_time"), st = num(r, "start_time");
		vs[m] = isfinite(bt) && isfinite(st) && st > 0 ? 100 * (bt / st - 1) : NAN;
		n_vs += isfinite(vs[m]);
		if (isnan(beat) && isfinite(vs[m]) && bt < st * (1 - 1e-12))
			beat = ep[m];
		n_rw += isfinite(re);
		n_gap += isfinite(g);
		m++;
	}
	if (m == 0) {
		free(ep), free(rw), free(gp), free(avg), free(best), free(vs);
		return pb_err(
		    err, PB_EINPUT,
		    "%s: no training records (each line needs a numeric 'reward', 'gap' or "
		    "'max_time' with 'optimum'; see docs/export.md)",
		    src);
	}
	/* Moving average over a window of ~1/20 of the run. */
	int win = m / 20 > 1 ? m / 20 : 1;
	double sum = 0;
	int cnt = 0;
	for (int i = 0; i < m; i++) {
		if (isfinite(rw[i]))
			sum += rw[i], cnt++;
		if (i >= win && isfinite(rw[i - win]))
			sum -= rw[i - win], cnt--;
		avg[i] = cnt ? sum / cnt : NAN;
	}
	double bg = INFINITY;
	for (int i = 0; i < m; i++) {
		if (isfinite(gp[i]) && gp[i] < bg)
			bg = gp[i];
		best[i] = isfinite(bg) ? bg : NAN;
	}
	double x0 = ep[0], x1 = ep[0];
	double r0 = INFINITY, r1 = -INFINITY, g0 = 0, g1 = -INFINITY, v0 = 0, v1 = 0;
	for (int i = 0; i < m; i++) {
		x0 = fmin(x0, ep[i]), x1 = fmax(x1, ep[i]);
		if (isfinite(rw[i]))
			r0 = fmin(r0, rw[i]), r1 = fmax(r1, rw[i]);
		if (isfinite(gp[i]))
			g0 = fmin(g0, gp[i]), g1 = fmax(g1, gp[i]);
		if (isfinite(vs[i]))
			v0 = fmin(v0, vs[i]), v1 = fmax(v1, vs[i]);
	}
	int W = o->width, panel = 220,
	    H = 70 + (n_rw ? panel + 50 : 0) + (n_gap ? panel + 50 : 0) + (n_vs ? panel + 50 : 0);
	char title[512], sub[512], a[32];
	snprintf(title, sizeof title, "%s", o->title ? o->title : "RL training curve");
	int len = snprintf(sub, sizeof sub, "%s: %d episodes", src, m);
	if (n_rw)
		len +=
		    snprintf(sub + len, sizeof sub - (size_t)len, ", last reward %.4g", avg[m - 1]);
	if (n_gap && len < (int)sizeof sub)
		len += snprintf(sub + len, sizeof sub - (size_t)len, ", best gap %s",
		                fmt_pct(round(best[m - 1] * 100) / 100, a, sizeof a));
	if (n_vs && len < (int)sizeof sub) {
		if (isfinite(beat))
			snprintf(sub + len, sizeof sub - (size_t)len,
			         ", first beat its start at episode %g", beat);
		else
			snprintf(sub + len, sizeof sub - (size_t)len, ", never beat its start");
	}
	pb_svgdoc_open(f, W, H, title, sub);
	double xs = pb_nice_range(&x0, &x1, 8);
	double top = 60;
	pb_chart c;
	if (n_rw) {
		double ys = pb_nice_range(&r0, &r1, 5);
		pb_chart_init(&c, f, 80, top, W - 110, panel, x0, x1, r0, r1);
		pb_chart_axes(&c, xs, ys, "episode", "reward", NULL, NULL);
		pb_chart_line(&c, "reward", ep, rw, m, "#9ecae1", 1, NULL);
		pb_chart_line(&c, "reward_avg", ep, avg, m, "#08519c", 2, NULL);
		const char *lab[] = {"reward", "moving average"};
		const char *col[] = {"#9ecae1", "#08519c"};
		pb_svg_legend(f, W - 170, top + 8, lab, col, 2);
		top += panel + 50;
	}
	if (n_gap) {
		double ys = pb_nice_range(&g0, &g1, 5);
		pb_chart_init(&c, f, 80, top, W - 110, panel, x0, x1, g0, g1);
		pb_chart_axes(&c, xs, ys, "episode", "gap to optimum (%)", NULL, fmt_pct);
		pb_chart_line(&c, "gap", ep, gp, m, "#fdae6b", 1, NULL);
		pb_chart_line(&c, "gap_best", ep, best, m, "#a63603", 2, NULL);
		const char *lab[] = {"gap", "best so far"};
		const char *col[] = {"#fdae6b", "#a63603"};
		pb_svg_legend(f, W - 170, top + 8, lab, col, 2);
		top += panel + 50;
	}
	if (n_vs) {
		double ys = pb_nice_range(&v0, &v1, 5);
		pb_chart_init(&c, f, 80, top, W - 110, panel, x0, x1, v0, v1);
		pb_chart_axes(&c, xs, ys, "episode", "best vs start (%)", NULL, fmt_pct);
		double zx[2] = {x0, x1}, zy[2] = {0, 0};
		pb_chart_line(&c, "start", zx, zy, 2, "#969696", 1, NULL);
		pb_chart_line(&c, "best_vs_start", ep, vs, m, "#31a354", 2, NULL);
		const char *lab[] = {"start", "agent's best"};
		const char *col[] = {"#969696", "#31a354"};
		pb_svg_legend(f, W - 170, top + 8, lab, col, 2);
	}
	pb_svgdoc_close(f);
	free(ep), free(rw), free(gp), free(avg), free(best), free(vs);
	return PB_OK;
}
