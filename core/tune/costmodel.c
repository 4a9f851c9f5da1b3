/*
 * tune/costmodel.c — gradient-boosted trees via libxgboost with
 * kernel-smoothed label-density sample weights (see costmodel.h).
 *
 * Each fit builds a new booster from scratch on all samples (the data is
 * small: thousands of rows); single-threaded so that it does not disturb
 * measurements on a shared machine.
 */
#include "tune/costmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tune/lazy_xgboost.h"

struct pb_tune_costmodel {
	int nf;
	pb_tune_costmodel_opts o;
	BoosterHandle booster;
};

static char last_log[512];

static void xgb_log(const char *msg)
{
	snprintf(last_log, sizeof last_log, "%s", msg);
}

const char *pb_tune_costmodel_last_log(void)
{
	return last_log;
}

static void defaults(pb_tune_costmodel_opts *o)
{
	if (o->rounds <= 0)
		o->rounds = 60;
	if (o->max_depth <= 0)
		o->max_depth = 6;
	if (o->eta <= 0)
		o->eta = 0.2;
	if (o->bins <= 0)
		o->bins = 32;
	if (o->bandwidth <= 0)
		o->bandwidth = 2;
}

pb_tune_costmodel *pb_tune_costmodel_new(int n_features, const pb_tune_costmodel_opts *o)
{
	pb_tune_costmodel *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->nf = n_features;
	if (o)
		m->o = *o;
	else
		m->o.weighted = 1;
	defaults(&m->o);
	XGBRegisterLogCallback(xgb_log);
	return m;
}

void pb_tune_costmodel_free(pb_tune_costmodel *m)
{
	if (!m)
		return;
	if (m->booster)
		XGBoosterFree(m->booster);
	free(m);
}

int pb_tune_costmodel_fitted(const pb_tune_costmodel *m)
{
	return m->booster != NULL;
}

/* Histogram bin of label v, clamped to [0, B-1] (never indexes outside). */
static int label_bin(double v, double lo, double width, int B)
{
	double b = (v - lo) / width;
	if (!(b >= 0))
		return 0;
	return b >= B ? B - 1 : (int)b;
}

void pb_tune_costmodel_weights(const pb_tune_costmodel_opts *oin, const float *y, int n, float *w)
{
	pb_tune_costmodel_opts o = {0};
	if (oin)
		o = *oin;
	defaults(&o);
	int B = o.bins;
	double lo = 1e300, hi = -1e300;
	for (int i = 0; i < n; i++) {
		lo = fmin(lo, y[i]);
		hi = fmax(hi, y[i]);
	}
	if (n == 0)
		return;
	if (!(hi > lo) || !isfinite(hi - lo)) {
		for (int i = 0; i < n; i++)
			w[i] = 1;
		return;
	}
	double *hist = calloc((size_t)B, sizeof *hist), *dens = calloc((size_t)B, sizeof *dens);
	if (!hist || !dens) {
		for (int i = 0; i < n; i++)
			w[i] = 1;
		free(hist);
		free(dens);
		return;
	}
	double width = (hi - lo) / B;
	for (int i = 0; i < n; i++)
		hist[label_bin(y[i], lo, width, B)] += 1;
	/* Gaussian kernel smoothing of the label histogram. */
	for (int b = 0; b < B; b++) {
		double s = 0, norm = 0;
		for (int k = 0; k < B; k++) {
			double d = (b - k) / o.bandwidth, g = exp(-0.5 * d * d);
			s += g * hist[k];
			norm += g;
		}
		dens[b] = s / norm;
	}
	double sum = 0;
	for (int i = 0; i < n; i++) {
		int b = label_bin(y[i], lo, width, B);
		w[i] = (float)(1.0 / (dens[b] > 1e-12 ? dens[b] : 1e-12));
		sum += w[i];
	}
	/* normalise to mean 1, clip to [0.1, 10] so no sample dominates */
	for (int i = 0; i < n; i++) {
		double v = w[i] * n / sum;
		w[i] = (float)(v < 0.1 ? 0.1 : v > 10 ? 10 : v);
	}
	free(hist);
	free(dens);
}

static int xgb_fail(pb_error *err, const char *what)
{
	return pb_err(err, PB_EINTERNAL, "cost model: xgboost %s failed: %s", what,
	              XGBGetLastError());
}

int pb_tune_costmodel_fit(pb_tune_costmodel *m, const float *x, const float *y, int n,
                          pb_error *err)
{
	if (n < 2)
		return pb_err(err, PB_EINPUT, "cost model: need at least 2 samples, got %d", n);
	for (int i = 0; i < n; i++)
		if (!isfinite(y[i]))
			return pb_err(err, PB_EINPUT, "cost model: label %d (%g) is not finite", i,
			              (double)y[i]);
	DMatrixHandle d = NULL;
	BoosterHandle b = NULL;
	float *w = malloc((size_t)n * sizeof *w);
	if (!w)
		return pb_err(err, PB_ENOMEM, "cost model: out of memory");
	if (m->o.weighted)
		pb_tune_costmodel_weights(&m->o, y, n, w);
	else
		for (int i = 0; i < n; i++)
			w[i] = 1;
	int rc = PB_OK;
	char buf[32];
	if (XGDMatrixCreateFromMat(x, (bst_ulong)n, (bst_ulong)m->nf, NAN, &d)) {
		rc = xgb_fail(err, "DMatrix");
		goto out;
	}
	if (XGDMatrixSetFloatInfo(d, "label", y, (bst_ulong)n) ||
	    XGDMatrixSetFloatInfo(d, "weight", w, (bst_ulong)n)) {
		rc = xgb_fail(err, "set labels");
		goto out;
	}
	if (XGBoosterCreate(&d, 1, &b)) {
		rc = xgb_fail(err, "booster");
		goto out;
	}
	snprintf(buf, sizeof buf, "%d", m->o.max_depth);
	XGBoosterSetParam(b, "max_depth", buf);
	snprintf(buf, sizeof buf, "%g", m->o.eta);
	XGBoosterSetParam(b, "eta", buf);
	XGBoosterSetParam(b, "objective", "reg:squarederror");
	XGBoosterSetParam(b, "nthread", "1");
	XGBoosterSetParam(b, "verbosity", "0");
	XGBoosterSetParam(b, "min_child_weight", "1");
	XGBoosterSetParam(b, "tree_method", "exact");
	for (int it = 0; it < m->o.rounds; it++)
		if (XGBoosterUpdateOneIter(b, it, d)) {
			rc = xgb_fail(err, "training");
			goto out;
		}
	if (m->booster)
		XGBoosterFree(m->booster);
	m->booster = b;
	b = NULL;
out:
	if (b)
		XGBoosterFree(b);
	if (d)
		XGDMatrixFree(d);
	free(w);
	return rc;
}

int pb_tune_costmodel_predict(pb_tune_costmodel *m, const float *x, int n, float *out,
                              pb_error *err)
{
	if (!m->booster)
		return pb_err(err, PB_EINTERNAL, "cost model: predict before fit");
	if (n == 0)
		return PB_OK;
	DMatrixHandle d = NULL;
	if (XGDMatrixCreateFromMat(x, (bst_ulong)n, (bst_ulong)m->nf, NAN, &d))
		return xgb_fail(err, "DMatrix");
	bst_ulong len = 0;
	const float *res = NULL;
	int rc = PB_OK;
	if (XGBoosterPredict(m->booster, d, 0, 0, 0, &len, &res) || len != (bst_ulong)n)
		rc = xgb_fail(err, "predict");
	else
		memcpy(out, res, (size_t)n * sizeof *out);
	XGDMatrixFree(d);
	return rc;
}
