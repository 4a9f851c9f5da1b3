/*
 * test_grad_overlap.c — the gradient all-reduce in buckets behind the
 * backward pass (shard/grad_overlap.h): the closed form against an
 * event-by-event replay of the buckets (bucket i ready at i T / n, the
 * all-reduces one after another, each G / n), bucket counts from DDP's
 * 25 MiB default, and the backward pass's share of a training step.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>

#include "shard/grad_overlap.h"

/* The replay: the communication stream takes bucket i when it is ready
 * and the previous one is done; exposed = its end - T. */
static double replay(double G, double T, long n)
{
	double end = 0;
	for (long i = 1; i <= n; i++) {
		double ready = T * (double)i / (double)n;
		double start = ready > end ? ready : end;
		end = start + G / (double)n;
	}
	return end - T;
}

static void test_closed_form_equals_replay(void **st)
{
	(void)st;
	const double G[] = {1e-6, 2e-4, 0.1, 3.0};
	const double T[] = {1e-7, 5e-5, 0.2, 0.05, 10.0};
	const long N[] = {1, 2, 3, 4, 7, 25, 1000};
	for (size_t a = 0; a < sizeof G / sizeof *G; a++)
		for (size_t b = 0; b < sizeof T / sizeof *T; b++)
			for (size_t c = 0; c < sizeof N / sizeof *N; c++) {
				double want = replay(G[a], T[b], N[c]);
				double got = pb_grad_overlap_exposed(G[a], T[b], N[c]);
				assert_true(fabs(got - want) <= 1e-12 * (G[a] + T[b]));
			}
}

static void test_hand_figures(void **st)
{
	(void)st;
	/* G 4 s in 4 buckets behind an 8 s backward pass: only the last
	 * bucket (1 s) is exposed */
	assert_true(fabs(pb_grad_overlap_exposed(4, 8, 4) - 1) < 1e-12);
	/* behind a 2 s backward pass: buckets ready at 0.5, 1, 1.5, 2 s; the
	 * stream runs 0.5 - 4.5 s: 2.5 s after the pass */
	assert_true(fabs(pb_grad_overlap_exposed(4, 2, 4) - 2.5) < 1e-12);
	/* one bucket, or no backward pass: nothing hidden */
	assert_true(pb_grad_overlap_exposed(4, 8, 1) == 4);
	assert_true(pb_grad_overlap_exposed(4, 0, 4) == 4);
	assert_true(pb_grad_overlap_exposed(0, 8, 4) == 0);
}

static void test_buckets(void **st)
{
	(void)st;
	double mib = 1048576.0, cap = PB_GRAD_BUCKET_MB * mib;
	assert_int_equal(pb_grad_overlap_buckets(100 * mib, cap), 4);
	assert_int_equal(pb_grad_overlap_buckets(100 * mib + 1, cap), 5);
	assert_int_equal(pb_grad_overlap_buckets(25 * mib, cap), 1);
	assert_int_equal(pb_grad_overlap_buckets(3737600, cap), 1);
	assert_int_equal(pb_grad_overlap_buckets(3737600, mib), 4);
	assert_int_equal(pb_grad_overlap_buckets(100 * mib, 0), 1); /* overlap off */
}

static void test_backward_share(void **st)
{
	(void)st;
	/* forward F, backward 2F: 2/3 of 3F; full recomputation: F + (F + 2F) */
	assert_true(fabs(pb_grad_overlap_backward_share(0) - 2.0 / 3.0) < 1e-15);
	assert_true(fabs(pb_grad_overlap_backward_share(1) - 3.0 / 4.0) < 1e-15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_closed_form_equals_replay),
	    cmocka_unit_test(test_hand_figures),
	    cmocka_unit_test(test_buckets),
	    cmocka_unit_test(test_backward_share),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
