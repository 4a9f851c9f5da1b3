/*
 * tune/costmodel.h — the tuner's cost model: gradient-boosted regression
 * trees (libxgboost C API) from configuration features to GFLOP/s.
 *
 * Training uses per-sample weights from a kernel-smoothed estimate of the
 * label distribution: labels are binned, the histogram is convolved with a
 * Gaussian kernel, and each sample weighs 1 / (smoothed frequency of its
 * label), normalised to mean 1 and clipped, so rare labels (the few fast
 * configurations the tuner cares about) weigh more than the common slow ones.
 * xgboost's own log output is routed away from the terminal
 * (XGBRegisterLogCallback) into pb_tune_costmodel_last_log().
 */
#ifndef PB_TUNE_COSTMODEL_H
#define PB_TUNE_COSTMODEL_H

#include "util/error.h"

typedef struct pb_tune_costmodel pb_tune_costmodel;

typedef struct pb_tune_costmodel_opts {
	int rounds;       /* boosting rounds (default 60) */
	int max_depth;    /* default 6 */
	double eta;       /* learning rate (default 0.2) */
	int bins;         /* label histogram bins (default 32) */
	double bandwidth; /* Gaussian kernel width in bins (default 2) */
	int weighted;     /* 1: kernel-smoothed sample weights (default), 0: uniform */
} pb_tune_costmodel_opts;

pb_tune_costmodel *pb_tune_costmodel_new(int n_features, const pb_tune_costmodel_opts *o);
void pb_tune_costmodel_free(pb_tune_costmodel *m);
/* Fits on x[n][n_features], y[n] (replaces the previous model). */
int pb_tune_costmodel_fit(pb_tune_costmodel *m, const float *x, const float *y, int n,
                          pb_error *err);
int pb_tune_costmodel_fitted(const pb_tune_costmodel *m);
/* Predictions for x[n][n_features] into out[n]. */
int pb_tune_costmodel_predict(pb_tune_costmodel *m, const float *x, int n, float *out,
                              pb_error *err);
/* The sample weights the kernel-smoothed label density gives (w[n]). */
void pb_tune_costmodel_weights(const pb_tune_costmodel_opts *o, const float *y, int n, float *w);
/* Last message xgboost logged (empty if none). */
const char *pb_tune_costmodel_last_log(void);

#endif
