/*
 * plot_timeline.c — the pipeline schedule as a Gantt chart: one row per
 * stage, one box per forward (F) or backward (B) micro-batch.
 *
 * Input: plan detail.schedule, an array of {stage, mb, kind, start, end}
 * (docs/export.md). When a "pipeline" plan has no schedule, a 1F1B schedule
 * is synthesized from the stage times (forward = the group's time per
 * micro-batch, backward = 2 x forward unless detail.backward_ratio says
 * otherwise; micro-batches from detail.micro_batches, default 2 x stages) and
 * the chart says so. The bubble is 1 - busy / (stages x makespan).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/chart.h"
#include "util/fmt.h"
#include "render/plot.h"

typedef struct {
	int stage, mb;
	int fwd; /* 1 = F, 0 = B, -1 = other */
	double start, end;
	char kind[8];
} op_t;

json_t *pb_schedule_1f1b(int S, int M, const double *fwd, const double *bwd)
{
	json_t *out = json_array();
	if (S <= 0 || M <= 0)
		return out;
	/* Per stage: its op order; done times of F and B per (stage, mb). */
	double *fend = malloc((size_t)S * M * sizeof *fend);
	double *bend = malloc((size_t)S * M * sizeof *bend);
	int *pos = calloc((size_t)S, sizeof *pos);
	double *free_at = calloc((size_t)S, sizeof *free_at);
	if (!fend || !bend || !pos || !free_at) {
		free(fend), free(bend), free(pos), free(free_at);
		return out;
	}
	for (int i = 0; i < S * M; i++)
		fend[i] = bend[i] = NAN;
	int remaining = 2 * S * M;
	while (remaining > 0) {
		int progress = 0;
		for (int s = 0; s < S; s++) {
			for (;;) {
				int k = pos[s];
				if (k >= 2 * M)
					break;
				int warm = S - 1 - s < M ? S - 1 - s : M;
				/* op k of stage s: warm-up forwards, then F/B pairs, then Bs */
				int is_f, mb;
				if (k < warm) {
					is_f = 1, mb = k;
				} else if (k < warm + 2 * (M - warm)) {
					int j = k - warm;
					is_f = j % 2 == 0;
					mb = is_f ? warm + j / 2 : j / 2;
				} else {
					is_f = 0, mb = k - warm - (M - warm);
				}
				double ready;
				if (is_f)
					ready = s == 0 ? 0 : fend[(s - 1) * M + mb];
				else
					ready =
					    s == S - 1 ? fend[s * M + mb] : bend[(s + 1) * M + mb];
				if (!isfinite(ready))
					break;
				double st = fmax(ready, free_at[s]);
				double en = st + (is_f ? fwd[s] : bwd[s]);
				(is_f ? fend : bend)[s * M + mb] = en;
				free_at[s] = en;
				json_array_append_new(out,
				                      json_pack("{s:i,s:i,s:s,s:f,s:f}", "stage", s,
				                                "mb", mb, "kind", is_f ? "F" : "B",
				                                "start", st, "end", en));
				pos[s]++;
				remaining--;
				progress = 1;
			}
		}
		if (!progress)
			break; /* cannot happen for 1F1B; guards against a bad order */
	}
	free(fend), free(bend), free(pos), free(free_at);
	return out;
}

static int parse_schedule(const json_t *sched, const char *src, op_t **ops, int *n_ops,
                          pb_error *err)
{
	size_t n = json_array_size(sched);
	*ops = calloc(n + 1, sizeof **ops);
	if (!*ops)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", src);
	for (size_t i = 0; i < n; i++) {
		const json_t *e = json_array_get(sched, i);
		const json_t *st = json_object_get(e, "stage"), *a = json_object_get(e, "start"),
		             *b = json_object_get(e, "end"), *mb = json_object_get(e, "mb");
		const char *kind = json_string_value(json_object_get(e, "kind"));
		if (!kind)
			kind = json_string_value(json_object_get(e, "pass"));
		if (!json_is_integer(st) || json_integer_value(st) < 0 ||
		    json_integer_value(st) > 100000 || !json_is_number(a) || !json_is_number(b) ||
		    json_number_value(b) < json_number_value(a)) {
			free(*ops);
			*ops = NULL;
			return pb_err(
			    err, PB_EINPUT,
			    "%s: detail.schedule[%zu] needs integer 'stage' >= 0 and numbers "
			    "'start' <= 'end'",
			    src, i);
		}
		op_t *o = &(*ops)[i];
		o->stage = (int)json_integer_value(st);
		o->mb = json_is_integer(mb) ? (int)json_integer_value(mb) : -1;
		o->start = json_number_value(a);
		o->end = json_number_value(b);
		snprintf(o->kind, sizeof o->kind, "%s", kind ? kind : "");
		o->fwd = kind && (kind[0] == 'F' || kind[0] == 'f')   ? 1
		         : kind && (kind[0] == 'B' || kind[0] == 'b') ? 0
		                                                      : -1;
	}
	*n_ops = (int)n;
	return PB_OK;
}

/* `partbench pipeline` writes detail.schedule as named schedules,
 * {"gpipe": {"kind", "makespan", "stages": [[{mb, pass, start, end}, ...],
 * ...]}, "1f1b": {...}}: pick one (want, else 1f1b, else the first) and
 * flatten it into the array form. NULL when it has no such entry. */
static json_t *pick_named(const json_t *sched, const char *want, const char **name)
{
	const json_t *one = want ? json_object_get(sched, want) : NULL;
	*name = want;
	if (!one && !want) {
		one = json_object_get(sched, "1f1b");
		*name = "1f1b";
	}
	if (!one && !want) {
		const char *k;
		const json_t *v;
		json_object_foreach((json_t *)sched, k, v)
		{
			one = v;
			*name = k;
			break;
		}
	}
	const json_t *stages = json_object_get(one, "stages");
	if (!json_is_array(stages))
		return NULL;
	json_t *out = json_array();
	size_t si, k;
	const json_t *row, *e;
	json_array_foreach(stages, si, row)
	{
		json_array_foreach(row, k, e)
		{
			json_t *c = json_deep_copy(e);
			if (!c)
				continue;
			json_object_set_new(c, "stage", json_integer((json_int_t)si));
			json_array_append_new(out, c);
		}
	}
	return out;
}

int pb_plot_timeline(const pb_plan *p, const char *src, const pb_plot_opts *o, FILE *f,
                     pb_error *err)
{
	const json_t *sched = json_object_get(p->detail, "schedule");
	json_t *synth = NULL;
	const char *how = json_string_value(json_object_get(p->detail, "schedule_name"));
	if (json_is_object(sched)) {
		synth = pick_named(sched, o->schedule, &how);
		if (!synth) {
			if (o->schedule)
				return pb_err(
				    err, PB_EINPUT,
				    "%s: detail.schedule has no schedule '%s' with stages", src,
				    o->schedule);
			return pb_err(err, PB_EINPUT,
			              "%s: detail.schedule is an object without named schedules "
			              "({\"1f1b\": {\"stages\": [[...]]}})",
			              src);
		}
		sched = synth;
	} else if (!sched) {
		if (strcmp(p->kind, "pipeline") != 0 || p->n_groups == 0)
			return pb_err(
			    err, PB_EINPUT,
			    "%s: no detail.schedule to draw (and not a pipeline plan with stage "
			    "groups to synthesize one from)",
			    src);
		/* an interleaved plan's groups are model chunks, V per device group */
		const char *ps = json_string_value(json_object_get(p->detail, "pipeline_schedule"));
		if (ps && strncmp(ps, "interleaved", 11) == 0)
			return pb_err(
			    err, PB_EINPUT,
			    "%s: the plan's schedule is %s: timeline draws 1F1B and GPipe "
			    "schedules only (its %d model chunks are not pipeline stages)",
			    src, ps, p->n_groups);
		int S = p->n_groups;
		const json_t *jm = json_object_get(p->detail, "micro_batches");
		if (!jm)
			jm = json_object_get(p->detail, "microbatches");
		int M = json_is_integer(jm) && json_integer_value(jm) > 0 &&
		                json_integer_value(jm) <= 4096
		            ? (int)json_integer_value(jm)
		            : 2 * S;
		const json_t *jr = json_object_get(p->detail, "backward_ratio");
		double ratio =
		    json_is_number(jr) && json_number_value(jr) >= 0 ? json_number_value(jr) : 2;
		double *fw = malloc((size_t)S * sizeof *fw), *bw = malloc((size_t)S * sizeof *bw);
		if (!fw || !bw) {
			free(fw), free(bw);
			return pb_err(err, PB_ENOMEM, "%s: out of memory", src);
		}
		for (int s = 0; s < S; s++) {
			fw[s] = isfinite(p->groups[s].time) ? p->groups[s].time : 0;
			bw[s] = fw[s] * ratio;
		}
		synth = pb_schedule_1f1b(S, M, fw, bw);
		free(fw), free(bw);
		sched = synth;
		how = "1F1B, synthesized from stage times";
	}
	if (!json_is_array(sched) || json_array_size(sched) == 0) {
		json_decref(synth);
		return pb_err(err, PB_EINPUT, "%s: detail.schedule must be a non-empty array", src);
	}
	op_t *ops;
	int n = 0, rc = parse_schedule(sched, src, &ops, &n, err);
	json_decref(synth);
	if (rc)
		return rc;
	int S = 0, M = 0;
	double t1 = 0, busy = 0;
	for (int i = 0; i < n; i++) {
		if (ops[i].stage + 1 > S)
			S = ops[i].stage + 1;
		if (ops[i].mb + 1 > M)
			M = ops[i].mb + 1;
		t1 = fmax(t1, ops[i].end);
		busy += ops[i].end - ops[i].start;
	}
	double t0 = 0;
	for (int i = 0; i < n; i++)
		t0 = fmin(t0, ops[i].start);
	double span = t1 - t0;
	double bubble = span > 0 ? 1 - busy / (S * span) : 0;
	int row = S > 24 ? 16 : 28;
	int W = o->width, H = 80 + S * row + 60;
	char title[512], sub[512], a[32];
	snprintf(title, sizeof title, "%s", o->title ? o->title : "pipeline schedule");
	snprintf(sub, sizeof sub, "%s: %s%s%d stages, %d micro-batches, makespan %s, bubble %.1f%%",
	         src, how ? how : "", how ? "; " : "", S, M, pb_fmt_time(span, a, sizeof a),
	         bubble * 100);
	pb_svgdoc_open(f, W, H, title, sub);
	double x0 = t0, x1 = t1;
	double xs = pb_nice_range(&x0, &x1, 8);
	pb_chart c;
	pb_chart_init(&c, f, 100, 80, W - 130, S * row, x0, x1, S, 0);
	pb_chart_axes(&c, xs, 0, "time", NULL, pb_fmt_time, NULL);
	fputs("<g class=\"stage-labels\">\n", f);
	for (int s = 0; s < S; s++) {
		char lab[64];
		if (s < p->n_groups && p->groups[s].label[0])
			snprintf(lab, sizeof lab, "%.20s", p->groups[s].label);
		else
			snprintf(lab, sizeof lab, "stage %d", s);
		pb_svg_text(f, c.px - 6, pb_chart_sy(&c, s + 0.5) + 4, "end", 10, "black", lab);
	}
	fputs("</g>\n<g class=\"ops\">\n", f);
	for (int i = 0; i < n; i++) {
		const op_t *op = &ops[i];
		char tip[160], t2[32], t3[32], fill[16];
		if (op->fwd == 1)
			snprintf(fill, sizeof fill, "%s", op->mb % 2 ? "#6baed6" : "#9ecae1");
		else if (op->fwd == 0)
			snprintf(fill, sizeof fill, "%s", op->mb % 2 ? "#fd8d3c" : "#fdae6b");
		else
			snprintf(fill, sizeof fill, "#d9d9d9");
		snprintf(tip, sizeof tip, "stage %d, %s micro-batch %d: %s - %s", op->stage,
		         op->fwd == 1   ? "forward"
		         : op->fwd == 0 ? "backward"
		                        : op->kind,
		         op->mb, pb_fmt_time(op->start, t2, sizeof t2),
		         pb_fmt_time(op->end, t3, sizeof t3));
		pb_chart_rect(&c,
		              op->fwd == 1   ? "op fwd"
		              : op->fwd == 0 ? "op bwd"
		                             : "op other",
		              op->start, op->stage + 0.1, op->end, op->stage + 0.9, fill, "white",
		              0.5, tip);
		double w = pb_chart_sx(&c, op->end) - pb_chart_sx(&c, op->start);
		if (w >= 18 && row >= 20 && op->mb >= 0) {
			char lab[24];
			snprintf(lab, sizeof lab, "%s%d",
			         op->fwd == 1   ? "F"
			         : op->fwd == 0 ? "B"
			                        : op->kind,
			         op->mb);
			pb_svg_text(f, (pb_chart_sx(&c, op->start) + pb_chart_sx(&c, op->end)) / 2,
			            pb_chart_sy(&c, op->stage + 0.5) + 3.5, "middle", 9, "black",
			            lab);
		}
	}
	fputs("</g>\n", f);
	const char *lab[] = {"forward", "backward"};
	const char *col[] = {"#6baed6", "#fd8d3c"};
	pb_svg_legend(f, W - 130, 28, lab, col, 2);
	pb_svgdoc_close(f);
	free(ops);
	return PB_OK;
}
