/*
 * tune/layout_calibrate.c — a many-core layout's mac_rate fitted to an ONNX
 * Runtime profile (see layout_calibrate.h).
 */
#include "tune/layout_calibrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/ort_profile.h"
#include "util/fmt.h"

void pb_calib_report_free(pb_calib_report *r)
{
	free(r->ops);
	r->ops = NULL;
	r->n_ops = 0;
}

static int by_measured(const void *a, const void *b)
{
	const pb_calib_op *x = a, *y = b;
	return (x->measured < y->measured) - (x->measured > y->measured);
}

static pb_calib_op *op_slot(pb_calib_report *r, const char *op)
{
	for (int i = 0; i < r->n_ops; i++)
		if (strcmp(r->ops[i].op, op) == 0)
			return &r->ops[i];
	pb_calib_op *a = realloc(r->ops, ((size_t)r->n_ops + 1) * sizeof *a);
	if (!a)
		return NULL;
	r->ops = a;
	pb_calib_op *o = &r->ops[r->n_ops++];
	memset(o, 0, sizeof *o);
	snprintf(o->op, sizeof o->op, "%s", op);
	return o;
}

int pb_layout_calibrate(const pb_graph *g, const pb_hw *hw, const char *profile, pb_calib_report *r,
                        pb_error *err)
{
	memset(r, 0, sizeof *r);
	r->profile = profile;
	r->layout = hw->path;
	r->model = g->path;
	int rc = pb_hw_expect_kind(hw, "manycore", err);
	if (rc)
		return rc;
	if ((rc = pb_hw_num(hw, hw->root, "", "mac_rate", 1, 0, 1e-300, INFINITY, &r->rate, err)))
		return rc;
	double *t = malloc(((size_t)g->n_nodes + 1) * sizeof *t);
	if (!t)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", profile);
	int found = 0;
	if ((rc = pb_ort_profile_times(g, profile, t, &found, err)) != PB_OK) {
		free(t);
		return rc;
	}
	double smt = 0, smm = 0, st = 0, stt = 0;
	for (int i = 0; i < g->n_nodes; i++) {
		if (isnan(t[i]))
			continue;
		double m = g->nodes[i].cost.macs;
		r->n_measured++;
		r->measured += t[i];
		if (m > 0) {
			r->n_mac_nodes++;
			smt += m * t[i];
			smm += m * m;
			st += t[i];
			stt += t[i] * t[i];
		}
	}
	double s = smm > 0 ? smt / smm : 0;
	r->rate_fit = s > 0 ? 1 / s : 0;
	for (int i = 0; i < g->n_nodes && !rc; i++) {
		if (isnan(t[i]))
			continue;
		double m = g->nodes[i].cost.macs;
		pb_calib_op *o = op_slot(r, g->nodes[i].op ? g->nodes[i].op : "?");
		if (!o) {
			rc = pb_err(err, PB_ENOMEM, "%s: out of memory", profile);
			break;
		}
		o->n++;
		o->macs += m;
		o->measured += t[i];
		o->predicted += m / r->rate;
		o->fitted += m * s;
		r->predicted += m / r->rate;
		r->fitted += m * s;
	}
	/* R^2 over the nodes with MACs: 1 - SS_res / SS_tot */
	if (r->n_mac_nodes > 1) {
		double res = 0;
		for (int i = 0; i < g->n_nodes; i++)
			if (!isnan(t[i]) && g->nodes[i].cost.macs > 0) {
				double e = t[i] - g->nodes[i].cost.macs * s;
				res += e * e;
			}
		double tot = stt - st * st / r->n_mac_nodes;
		r->r2 = tot > 0 ? 1 - res / tot : 0;
	}
	free(t);
	if (!rc && r->n_mac_nodes == 0)
		rc = pb_err(err, PB_EINPUT,
		            "%s: no node with multiply-accumulates was measured: nothing to fit "
		            "mac_rate to",
		            profile);
	if (rc) {
		pb_calib_report_free(r);
		return rc;
	}
	qsort(r->ops, (size_t)r->n_ops, sizeof *r->ops, by_measured);
	return PB_OK;
}

static double rel_err(double predicted, double measured)
{
	return measured > 0 ? (predicted - measured) / measured : 0;
}

json_t *pb_calib_report_json(const pb_calib_report *r)
{
	json_t *ops = json_array();
	for (int i = 0; i < r->n_ops; i++) {
		const pb_calib_op *o = &r->ops[i];
		json_array_append_new(
		    ops,
		    json_pack("{s:s,s:i,s:f,s:f,s:f,s:f,s:f,s:f}", "op", o->op, "nodes", o->n,
		              "macs", o->macs, "measured", o->measured, "predicted", o->predicted,
		              "fitted", o->fitted, "error", rel_err(o->predicted, o->measured),
		              "fitted_error", rel_err(o->fitted, o->measured)));
	}
	return json_pack("{s:s,s:s,s:s,s:f,s:f,s:f,s:i,s:i,s:f,s:f,s:f,s:f,s:f,s:o}", "profile",
	                 r->profile, "layout", r->layout ? r->layout : "", "model",
	                 r->model ? r->model : "", "mac_rate", r->rate, "mac_rate_fit", r->rate_fit,
	                 "r2", r->r2, "measured_nodes", r->n_measured, "mac_nodes", r->n_mac_nodes,
	                 "measured", r->measured, "predicted", r->predicted, "fitted", r->fitted,
	                 "error", rel_err(r->predicted, r->measured), "fitted_error",
	                 rel_err(r->fitted, r->measured), "ops", ops);
}

void pb_calib_report_print(const pb_calib_report *r, FILE *out)
{
	char a[32], b[32], c[32], d[32];
	fprintf(out, "%s against %s (%s): %d measured nodes, %d with MACs\n", r->layout, r->profile,
	        r->model, r->n_measured, r->n_mac_nodes);
	fprintf(out, "mac_rate %s MAC/s -> fitted %s MAC/s (R^2 %.3f over the nodes with MACs)\n",
	        pb_fmt_si(r->rate, a, sizeof a), pb_fmt_si(r->rate_fit, b, sizeof b), r->r2);
	fprintf(out, "%-22s %5s %12s %12s %8s %12s %8s\n", "op", "nodes", "measured", "predicted",
	        "error", "fitted", "error");
	for (int i = 0; i < r->n_ops; i++) {
		const pb_calib_op *o = &r->ops[i];
		fprintf(out, "%-22s %5d %12s %12s %+7.0f%% %12s %+7.0f%%\n", o->op, o->n,
		        pb_fmt_time(o->measured, a, sizeof a),
		        pb_fmt_time(o->predicted, b, sizeof b),
		        100 * rel_err(o->predicted, o->measured),
		        pb_fmt_time(o->fitted, c, sizeof c), 100 * rel_err(o->fitted, o->measured));
	}
	fprintf(out, "%-22s %5d %12s %12s %+7.0f%% %12s %+7.0f%%\n", "total", r->n_measured,
	        pb_fmt_time(r->measured, a, sizeof a), pb_fmt_time(r->predicted, b, sizeof b),
	        100 * rel_err(r->predicted, r->measured), pb_fmt_time(r->fitted, d, sizeof d),
	        100 * rel_err(r->fitted, r->measured));
	fprintf(out,
	        "operators without MACs cost 0 in the many-core model; set mac_rate = %.4g in "
	        "the layout to use the fit\n",
	        r->rate_fit);
}
