/*
 * plot_tune.c — the auto-tuner's progress: the GFLOP/s of every trial (dots)
 * and the best so far (a step line), one colour per task.
 *
 * Log fields per line (docs/export.md; `partbench tune --log` writes them):
 * gflops (a measured trial), valid false or an "error" field (a failed
 * trial, drawn as a red mark on the axis), trial (default: running count per
 * series). A series is the line's "task", else its "key" (the tuned shape,
 * e.g. "gemm:128,768,768"), else "op", else "all"; with a "method" field it
 * is split per method ("gemm:128,768,768 rl"). Lines with neither gflops
 * nor a failure mark are skipped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/chart.h"
#include "util/fmt.h"
#include "render/palette.h"
#include "render/plot.h"

#define MAX_TASKS 10

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

int pb_plot_tune(const json_t *records, const char *src, const pb_plot_opts *o, FILE *f,
                 pb_error *err)
{
	size_t n = json_array_size(records);
	char *tasks[MAX_TASKS + 1];
	int n_tasks = 0;
	double *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
	/* the best-so-far step line has up to two points per trial */
	double *bx = malloc((2 * n + 2) * sizeof *bx), *by = malloc((2 * n + 2) * sizeof *by);
	int *task = malloc((n + 1) * sizeof *task), *count = calloc(MAX_TASKS + 1, sizeof *count);
	if (!x || !y || !bx || !by || !task || !count) {
		free(x), free(y), free(bx), free(by), free(task), free(count);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", src);
	}
	int m = 0, failed = 0;
	double x0 = INFINITY, x1 = -INFINITY, y1 = 0, best_all = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(records, i);
		double g = num(r, "gflops");
		int is_err = json_object_get(r, "error") != NULL ||
		             json_is_false(json_object_get(r, "valid"));
		if (is_err)
			g = NAN;
		if (!isfinite(g) && !is_err)
			continue;
		const char *t = json_string_value(json_object_get(r, "task"));
		if (!t)
			t = json_string_value(json_object_get(r, "key"));
		if (!t)
			t = json_string_value(json_object_get(r, "op"));
		const char *meth = json_string_value(json_object_get(r, "method"));
		char tname[160];
		snprintf(tname, sizeof tname, "%s%s%s", t ? t : "all", meth ? " " : "",
		         meth ? meth : "");
		int k;
		for (k = 0; k < n_tasks; k++)
			if (strcmp(tasks[k], tname) == 0)
				break;
		if (k == n_tasks) {
			if (n_tasks < MAX_TASKS)
				tasks[n_tasks++] = strdup(tname);
			else
				k = MAX_TASKS; /* "other tasks" */
		}
		if (k == MAX_TASKS)
			tasks[MAX_TASKS] = NULL; /* labelled "other tasks" */
		count[k]++;
		double tr = num(r, "trial");
		x[m] = isfinite(tr) ? tr : count[k];
		y[m] = isfinite(g) ? g : NAN;
		task[m] = k;
		failed += !isfinite(g);
		x0 = fmin(x0, x[m]), x1 = fmax(x1, x[m]);
		if (isfinite(g))
			y1 = fmax(y1, g), best_all = fmax(best_all, g);
		m++;
	}
	if (m == 0) {
		free(x), free(y), free(bx), free(by), free(task), free(count);
		for (int k = 0; k < n_tasks; k++)
			free(tasks[k]);
		return pb_err(err, PB_EINPUT,
		              "%s: no tuning records (each line needs 'gflops' or 'error'; see "
		              "docs/export.md)",
		              src);
	}
	int W = o->width, H = 420;
	char title[512], sub[512], a[32];
	snprintf(title, sizeof title, "%s", o->title ? o->title : "tuner progress");
	snprintf(sub, sizeof sub, "%s: %d trials, %d series, %d failed, best %s GFLOP/s", src, m,
	         n_tasks + (count[MAX_TASKS] > 0), failed, pb_fmt_si(best_all, a, sizeof a));
	pb_svgdoc_open(f, W, H, title, sub);
	double y0 = 0;
	double xs = pb_nice_range(&x0, &x1, 8), ys = pb_nice_range(&y0, &y1, 5);
	pb_chart c;
	pb_chart_init(&c, f, 80, 60, W - 260, H - 110, x0, x1, y0, y1);
	pb_chart_axes(&c, xs, ys, "trial", "GFLOP/s", NULL, NULL);
	const char *labels[MAX_TASKS + 2], *colors[MAX_TASKS + 2];
	char cols[MAX_TASKS + 1][16], dark[MAX_TASKS + 1][16], id[64];
	int nl = 0;
	for (int k = 0; k <= MAX_TASKS; k++) {
		if (!count[k])
			continue;
		if (k == MAX_TASKS)
			snprintf(cols[k], 16, "#bbbbbb"), snprintf(dark[k], 16, "#666666");
		else
			pb_palette_dark(k, dark[k], 16), pb_palette(k, cols[k], 16);
		int q = 0, bq = 0;
		double best = -INFINITY;
		double *px = malloc((size_t)count[k] * sizeof *px),
		       *py = malloc((size_t)count[k] * sizeof *py);
		if (!px || !py) {
			free(px), free(py);
			continue;
		}
		for (int i = 0; i < m; i++) {
			if (task[i] != k)
				continue;
			px[q] = x[i], py[q++] = y[i];
			if (isfinite(y[i]) && y[i] > best)
				best = y[i];
			if (isfinite(best)) {
				/* step line: hold the previous best until this trial */
				if (bq)
					bx[bq] = x[i], by[bq] = by[bq - 1], bq++;
				bx[bq] = x[i], by[bq++] = best;
			}
		}
		snprintf(id, sizeof id, "trials_%d", k);
		pb_chart_points(&c, id, px, py, q, dark[k], 2.2);
		snprintf(id, sizeof id, "best_%d", k);
		pb_chart_line(&c, id, bx, by, bq, dark[k], 1.8, NULL);
		free(px), free(py);
		labels[nl] = k == MAX_TASKS ? "other tasks" : tasks[k];
		colors[nl++] = dark[k];
	}
	if (failed) {
		fputs("<g class=\"series\" id=\"failed\" stroke=\"#d00000\">\n", f);
		for (int i = 0; i < m; i++)
			if (!isfinite(y[i])) {
				double sx = pb_chart_sx(&c, x[i]), sy = pb_chart_sy(&c, y0);
				fprintf(f,
				        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
				        sx, sy - 6, sx, sy);
			}
		fputs("</g>\n", f);
		labels[nl] = "failed trial";
		colors[nl++] = "#d00000";
	}
	pb_svg_legend(f, W - 165, 66, labels, colors, nl);
	pb_svgdoc_close(f);
	free(x), free(y), free(bx), free(by), free(task), free(count);
	for (int k = 0; k < n_tasks; k++)
		free(tasks[k]);
	return PB_OK;
}
