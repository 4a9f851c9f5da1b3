/* test_tune_policy.c — the LSTM policy: analytic gradient of log pi against
 * central finite differences, normalised step distributions, and mini-batch
 * REINFORCE learning a known best configuration on a synthetic reward. */
#include "pb_test.h"

#include "tune/lstm_policy.h"
#include "tune/rng.h"

static void test_gradient_matches_finite_differences(void **state)
{
	const int sizes[] = {3, 4, 2, 5};
	pb_tune_policy *p = pb_tune_policy_new(sizes, 4, 6, 5, 11);
	assert_non_null(p);
	int nw = pb_tune_policy_n_weights(p);
	if (nw <= 0 || nw > 1000000)
		fail_msg("weights %d", nw);
	double *w = pb_tune_policy_weights(p);
	/* random weights of a realistic size, not the near-uniform init */
	uint64_t rng = 99;
	for (int i = 0; i < nw; i++)
		w[i] = (2 * pb_rng_unif(&rng) - 1) * 0.8;
	const int acts[] = {2, 1, 0, 4};
	assert_true(nw > 0);
	double *g = calloc((unsigned)nw, sizeof *g);
	const double scale = 0.7;
	pb_tune_policy_logprob(p, acts, scale, g);
	double max_rel = 0;
	int checked = 0;
	for (int i = 0; i < nw; i++) {
		double old = w[i], h = 1e-5;
		w[i] = old + h;
		double up = pb_tune_policy_logprob(p, acts, 0, NULL);
		w[i] = old - h;
		double dn = pb_tune_policy_logprob(p, acts, 0, NULL);
		w[i] = old;
		double num = scale * (up - dn) / (2 * h);
		double rel = fabs(num - g[i]) / fmax(1e-4, fabs(num) + fabs(g[i]));
		if (rel > max_rel)
			max_rel = rel;
		checked += fabs(num) > 1e-6;
	}
	/* most weights matter (only the unused input columns have zero gradient) */
	assert_true(checked > nw / 2);
	if (max_rel > 1e-5)
		fail_msg("max relative gradient error %g", max_rel);
	free(g);
	pb_tune_policy_free(p);
}

static void test_distributions_and_sampling(void **state)
{
	const int sizes[] = {3, 8, 2};
	pb_tune_policy *p = pb_tune_policy_new(sizes, 3, 8, 4, 3);
	int acts[3] = {1, 5, 0};
	for (int t = 0; t < 3; t++) {
		double s = 0;
		for (int v = 0; v < sizes[t]; v++)
			s += pb_tune_policy_prob(p, acts, t, v);
		assert_true(fabs(s - 1) < 1e-12);
	}
	/* log pi of a sample equals the sum of its step log-probabilities */
	uint64_t rng = 1;
	double lp;
	pb_tune_policy_sample(p, &rng, acts, &lp);
	double sum = 0;
	for (int t = 0; t < 3; t++) {
		assert_true(acts[t] >= 0 && acts[t] < sizes[t]);
		sum += log(pb_tune_policy_prob(p, acts, t, acts[t]));
	}
	assert_true(fabs(sum - lp) < 1e-9);
	assert_true(fabs(pb_tune_policy_logprob(p, acts, 0, NULL) - lp) < 1e-9);
	assert_null(pb_tune_policy_new(sizes, 0, 8, 4, 1));
	pb_tune_policy_free(p);
}

/* Reward = number of steps that chose the target value; the target depends on
 * the previous choice, so the LSTM has to carry information. */
static void test_reinforce_learns(void **state)
{
	const int n = 5, sizes[] = {4, 4, 4, 4, 4};
	pb_tune_policy *p = pb_tune_policy_new(sizes, n, 16, 8, 7);
	int nw = pb_tune_policy_n_weights(p);
	if (nw <= 0 || nw > 1000000)
		fail_msg("weights %d", nw);
	assert_true(nw > 0);
	double *g = calloc((unsigned)nw, sizeof *g);
	uint64_t rng = 42;
	enum { B = 16 };
	int acts[B][5];
	double R[B], first_mean = 0, last_mean = 0;
	for (int it = 0; it < 150; it++) {
		double mean = 0;
		for (int i = 0; i < B; i++) {
			pb_tune_policy_sample(p, &rng, acts[i], NULL);
			R[i] = 0;
			for (int t = 0; t < n; t++)
				R[i] += acts[i][t] == (t ? (acts[i][t - 1] + 1) % 4 : 2);
			mean += R[i] / B;
		}
		if (it < 10)
			first_mean += mean / 10;
		if (it >= 140)
			last_mean += mean / 10;
		memset(g, 0, (size_t)nw * sizeof *g);
		for (int i = 0; i < B; i++)
			pb_tune_policy_logprob(p, acts[i], (R[i] - mean) / (n * B), g);
		pb_tune_policy_ascend(p, g, 0.05);
	}
	/* uniform policy scores 1.25 on average; the target chain scores 5 */
	assert_true(first_mean < 2.5);
	if (last_mean < 4.0)
		fail_msg("REINFORCE did not learn: mean reward %.2f -> %.2f", first_mean,
		         last_mean);
	free(g);
	pb_tune_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gradient_matches_finite_differences),
	    cmocka_unit_test(test_distributions_and_sampling),
	    cmocka_unit_test(test_reinforce_learns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
