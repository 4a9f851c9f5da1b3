/* test_tune_costmodel.c — the gradient-boosted-tree cost model on synthetic
 * data: fit quality on held-out points, kernel-smoothed weights favour rare
 * labels and do reach xgboost, non-finite labels are refused, and prediction
 * before fit is an error, not a crash. */
#include "pb_test.h"

#include "tune/costmodel.h"
#include "tune/rng.h"

#define NF 4

static float target(const float *x)
{
	/* a step-and-interaction landscape like tile-size effects */
	return (float)((x[0] > 0.5 ? 20 : 5) + 10 * x[1] * x[2] + (x[3] > 0.8 ? 30 : 0));
}

static void make(int n, uint64_t seed, float *x, float *y)
{
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < NF; k++)
			x[i * NF + k] = (float)pb_rng_unif(&seed);
		y[i] = target(x + i * NF);
	}
}

static void test_fit_quality(void **state)
{
	enum { N = 400, M = 200 };
	float *x = malloc(sizeof(float) * N * NF), *y = malloc(sizeof(float) * N);
	float *tx = malloc(sizeof(float) * M * NF), *ty = malloc(sizeof(float) * M);
	float *pred = malloc(sizeof(float) * M);
	make(N, 1, x, y);
	make(M, 2, tx, ty);
	pb_tune_costmodel *m = pb_tune_costmodel_new(NF, NULL);
	pb_error err = {0};
	assert_false(pb_tune_costmodel_fitted(m));
	assert_int_equal(pb_tune_costmodel_predict(m, tx, M, pred, &err), PB_EINTERNAL);
	assert_int_equal(pb_tune_costmodel_fit(m, x, y, 1, &err), PB_EINPUT);
	assert_int_equal(pb_tune_costmodel_fit(m, x, y, N, &err), PB_OK);
	assert_true(pb_tune_costmodel_fitted(m));
	assert_int_equal(pb_tune_costmodel_predict(m, tx, M, pred, &err), PB_OK);
	double mean = 0, ss_tot = 0, ss_res = 0;
	for (int i = 0; i < M; i++)
		mean += ty[i] / M;
	for (int i = 0; i < M; i++) {
		ss_tot += (ty[i] - mean) * (ty[i] - mean);
		ss_res += (ty[i] - pred[i]) * (ty[i] - pred[i]);
	}
	double r2 = 1 - ss_res / ss_tot;
	if (r2 < 0.9)
		fail_msg("held-out R^2 %.3f", r2);
	/* a refit replaces the model */
	assert_int_equal(pb_tune_costmodel_fit(m, x, y, N / 2, &err), PB_OK);
	pb_tune_costmodel_free(m);
	free(x);
	free(y);
	free(tx);
	free(ty);
	free(pred);
}

static void test_rare_labels_weigh_more(void **state)
{
	enum { N = 100 };
	float y[N], w[N];
	for (int i = 0; i < N; i++)
		y[i] = i < 95 ? 1.0f + 0.01f * (float)i : 50.0f; /* 5 rare fast samples */
	pb_tune_costmodel_weights(NULL, y, N, w);
	double s = 0;
	for (int i = 0; i < N; i++)
		s += w[i];
	assert_true(w[99] > 3 * w[0]);
	assert_true(s / N > 0.5 && s / N < 1.5);
	/* constant labels: uniform weights */
	for (int i = 0; i < N; i++)
		y[i] = 3;
	pb_tune_costmodel_weights(NULL, y, N, w);
	for (int i = 0; i < N; i++)
		assert_true(w[i] == 1.0f);
}

/* Non-finite labels neither crash the weights nor reach xgboost. */
static void test_non_finite_labels(void **state)
{
	enum { N = 20 };
	float y[N], w[N], x[N * 2];
	for (int i = 0; i < N; i++) {
		y[i] = (float)i;
		x[2 * i] = (float)i;
		x[2 * i + 1] = 1;
	}
	y[7] = INFINITY;
	pb_tune_costmodel_weights(NULL, y, N, w);
	for (int i = 0; i < N; i++)
		assert_true(isfinite(w[i]) && w[i] > 0);
	y[7] = NAN;
	pb_tune_costmodel_weights(NULL, y, N, w);
	for (int i = 0; i < N; i++)
		assert_true(isfinite(w[i]) && w[i] > 0);
	pb_tune_costmodel *m = pb_tune_costmodel_new(2, NULL);
	pb_error err = {0};
	assert_int_equal(pb_tune_costmodel_fit(m, x, y, N, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "not finite"));
	pb_tune_costmodel_free(m);
}

/* The weights reach xgboost: on skewed labels the weighted and the uniform
 * fit differ, and the weighted one is closer on the rare fast samples. */
static void test_weights_change_the_fit(void **state)
{
	enum { N = 200 };
	float x[N], y[N], pw[N], pu[N];
	for (int i = 0; i < N; i++) {
		x[i] = (float)(i % 40);
		/* x = 39 holds five samples, one of them rare-fast (label 40): one leaf
		 * predicts them all, so the weights decide where it lands */
		y[i] = (i % 40 == 39 && i % 200 == 199) ? 40.0f : 1.0f + 0.01f * (float)(i % 40);
	}
	pb_tune_costmodel_opts o = {0};
	o.rounds = 30;
	o.weighted = 1;
	pb_tune_costmodel *mw = pb_tune_costmodel_new(1, &o);
	o.weighted = 0;
	pb_tune_costmodel *mu = pb_tune_costmodel_new(1, &o);
	pb_error err = {0};
	assert_int_equal(pb_tune_costmodel_fit(mw, x, y, N, &err), PB_OK);
	assert_int_equal(pb_tune_costmodel_fit(mu, x, y, N, &err), PB_OK);
	assert_int_equal(pb_tune_costmodel_predict(mw, x, N, pw, &err), PB_OK);
	assert_int_equal(pb_tune_costmodel_predict(mu, x, N, pu, &err), PB_OK);
	assert_true(fabsf(pw[N - 1] - pu[N - 1]) > 0.1f);
	assert_true(fabsf(pw[N - 1] - y[N - 1]) < fabsf(pu[N - 1] - y[N - 1]));
	pb_tune_costmodel_free(mw);
	pb_tune_costmodel_free(mu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fit_quality),
	    cmocka_unit_test(test_rare_labels_weigh_more),
	    cmocka_unit_test(test_non_finite_labels),
	    cmocka_unit_test(test_weights_change_the_fit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
