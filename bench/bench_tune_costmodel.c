/*
 * bench_tune_costmodel.c — cost-model refit time and prediction quality on
 * real measurements from a tuning log.
 *
 * Usage: bench_tune_costmodel OP SHAPE LOG [SAMPLES]
 *   e.g. bench_tune_costmodel gemm 128,768,768 g.jsonl 2000
 * Reads the measurements of that shape from LOG, builds SAMPLES training rows
 * (cycling through the records when the log has fewer), and reports the
 * median wall time of 5 refits (one thread). Then a 5-fold cross-validation
 * on the distinct records, with and without the kernel-smoothed sample
 * weights: R^2, mean relative error on the fastest 10% of configurations,
 * and how often the predicted best of the held-out fold is within 5% of that
 * fold's true best.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune/costmodel.h"
#include "tune/log.h"
#include "tune/space.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s OP SHAPE LOG [SAMPLES]\n", argv[0]);
		return 1;
	}
	int samples = argc > 4 ? atoi(argv[4]) : 2000;
	pb_tune_shape sh;
	pb_error err = {0};
	if (pb_tune_shape_parse(argv[1], argv[2], &sh, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	pb_tune_space sp;
	pb_tune_space_init(&sp, &sh);
	pb_tune_record *recs;
	int n;
	if (pb_tune_log_load(argv[3], &sp, &recs, &n, &err) || n < 10) {
		fprintf(stderr, "%s\n", n < 10 ? "too few records in the log" : err.msg);
		return 2;
	}
	float f[PB_TUNE_MAX_FEATURES];
	int nf = pb_tune_space_features(&sp, recs[0].idx, f);
	float *x = malloc(sizeof(float) * (size_t)samples * nf),
	      *y = malloc(sizeof(float) * samples);
	for (int i = 0; i < samples; i++) {
		pb_tune_space_features(&sp, recs[i % n].idx, x + (size_t)i * nf);
		y[i] = (float)recs[i % n].r.gflops;
	}
	pb_tune_costmodel *m = pb_tune_costmodel_new(nf, NULL);
	double t[5];
	for (int r = 0; r < 5; r++) {
		double t0 = now();
		if (pb_tune_costmodel_fit(m, x, y, samples, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		t[r] = now() - t0;
	}
	qsort(t, 5, sizeof t[0], cmp_double);
	float *pred = malloc(sizeof(float) * samples);
	double t0 = now();
	pb_tune_costmodel_predict(m, x, samples, pred, &err);
	double tp = now() - t0;
	printf("refit on %d samples (%d distinct records, %d features): median %.3f s "
	       "(min %.3f, max %.3f) over 5 fits; predict %d rows: %.4f s\n",
	       samples, n, nf, t[2], t[0], t[4], samples, tp);
	pb_tune_costmodel_free(m);

	/* 5-fold cross-validation on the distinct records */
	for (int weighted = 1; weighted >= 0; weighted--) {
		pb_tune_costmodel_opts o = {0};
		o.weighted = weighted;
		double ss_res = 0, ss_tot = 0, mean = 0, top_err = 0;
		int top_n = 0, hits = 0;
		double *sorted = malloc(sizeof(double) * n);
		for (int i = 0; i < n; i++)
			sorted[i] = recs[i].r.gflops, mean += recs[i].r.gflops / n;
		qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
		double p90 = sorted[(int)(0.9 * (n - 1))];
		free(sorted);
		for (int fold = 0; fold < 5; fold++) {
			int ntr = 0, nte = 0;
			float *xtr = malloc(sizeof(float) * n * nf),
			      *ytr = malloc(sizeof(float) * n);
			float *xte = malloc(sizeof(float) * n * nf),
			      *yte = malloc(sizeof(float) * n);
			for (int i = 0; i < n; i++) {
				int test = i % 5 == fold;
				float *dst = test ? xte + (size_t)nte * nf : xtr + (size_t)ntr * nf;
				pb_tune_space_features(&sp, recs[i].idx, dst);
				if (test)
					yte[nte++] = (float)recs[i].r.gflops;
				else
					ytr[ntr++] = (float)recs[i].r.gflops;
			}
			pb_tune_costmodel *cm = pb_tune_costmodel_new(nf, &o);
			float *p = malloc(sizeof(float) * nte);
			pb_tune_costmodel_fit(cm, xtr, ytr, ntr, &err);
			pb_tune_costmodel_predict(cm, xte, nte, p, &err);
			int bp = 0;
			double best = 0;
			for (int i = 0; i < nte; i++) {
				ss_res += (yte[i] - p[i]) * (yte[i] - p[i]);
				ss_tot += (yte[i] - mean) * (yte[i] - mean);
				if (yte[i] >= p90 && yte[i] > 0) {
					top_err += fabs(p[i] - yte[i]) / yte[i];
					top_n++;
				}
				if (p[i] > p[bp])
					bp = i;
				if (yte[i] > best)
					best = yte[i];
			}
			hits += yte[bp] >= 0.95 * best;
			pb_tune_costmodel_free(cm);
			free(p);
			free(xtr);
			free(ytr);
			free(xte);
			free(yte);
		}
		printf("5-fold CV, %s weights: R^2 %.3f, mean rel. error on fastest 10%% %.3f, "
		       "predicted best within 5%% of fold best in %d/5 folds\n",
		       weighted ? "kernel-smoothed" : "uniform", 1 - ss_res / ss_tot,
		       top_n ? top_err / top_n : 0, hits);
	}
	free(pred);
	free(x);
	free(y);
	free(recs);
	return 0;
}
