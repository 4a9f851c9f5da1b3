/* test_blas_baseline.c — the OpenBLAS baseline names the kernels that ran and runs the
 * best ones the CPU's flags allow: with the library's choice forced down to Prescott
 * (OPENBLAS_CORETYPE, as OpenBLAS 0.3.21 falls back to on a CPU it does not know), a CPU
 * with AVX2 still gets AVX2 (or wider) kernels, run in a child process, and both core
 * types are reported; `tune --baselines` prints them and the tuned kernel against them.
 * No timing is asserted (the GFLOP/s are only required to be positive). */
#include "pb_test.h"

#include "tune/blas_baseline.h"

static const pb_tune_shape gemm = {.op = PB_TUNE_GEMM, .m = 32, .n = 48, .k = 40, .batch = 1};
static const pb_tune_measure_opts quick = {1, 1, 0, 0};

static int have_avx2(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	return 0;
#endif
}

static void test_rank(void **state)
{
	(void)state;
	assert_int_equal(pb_blas_baseline_rank("Prescott"), 0);
	assert_int_equal(pb_blas_baseline_rank("Core2"), 0);
	assert_int_equal(pb_blas_baseline_rank("Sandybridge"), 1);
	assert_int_equal(pb_blas_baseline_rank("Haswell"), 2);
	assert_int_equal(pb_blas_baseline_rank("Zen"), 2);
	assert_int_equal(pb_blas_baseline_rank("SkylakeX"), 3);
	assert_int_equal(pb_blas_baseline_rank(NULL), 0);
	const char *best = pb_blas_baseline_cpu_core();
	if (have_avx2())
		assert_true(best && pb_blas_baseline_rank(best) >= 2);
}

/* The library's own choice: a core type is named; with AVX2, not an SSE one. */
static void test_own_choice(void **state)
{
	(void)state;
	unsetenv("OPENBLAS_CORETYPE");
	pb_blas_baseline b;
	pb_blas_baseline_run(&gemm, &quick, &b);
	if (!b.ran) {
		if (b.note[0])
			fail_msg("OpenBLAS did not run: %s", b.note);
		skip(); /* built without OpenBLAS */
	}
	assert_true(b.gflops > 0);
	assert_true(b.core[0] != '\0');
	assert_true(b.detected[0] != '\0');
	if (have_avx2() && pb_blas_baseline_rank(b.core) < 2)
		fail_msg("an AVX2 CPU ran %s kernels (detected %s, note '%s')", b.core, b.detected,
		         b.note);
}

/* The library's choice forced down: the baseline runs the CPU's best in a child and
 * reports both. */
static void test_forced_up(void **state)
{
	(void)state;
	setenv("OPENBLAS_CORETYPE", "Prescott", 1);
	pb_blas_baseline b;
	pb_blas_baseline_run(&gemm, &quick, &b);
	unsetenv("OPENBLAS_CORETYPE");
	if (!b.ran) {
		if (b.note[0])
			fail_msg("OpenBLAS did not run: %s", b.note);
		skip();
	}
	assert_string_equal(b.env, "Prescott");
	assert_string_equal(b.detected, "Prescott");
	assert_true(b.detected_gflops > 0 && b.gflops > 0);
	if (have_avx2()) {
		if (!b.forced || pb_blas_baseline_rank(b.core) < 2)
			fail_msg("ran %s (forced %d, note '%s')", b.core, b.forced, b.note);
		assert_string_equal(b.core, b.cpu_best);
	}
}

/* The command's report names the core type and compares the tuned kernel with it. */
static void test_command(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	int rc;
	char *o = pb_test_run_cmd(s,
	                          "tune --op gemm --shape 16,24,8 --trials 2 --reps 1 --baselines "
	                          "--exhaustive-max 1",
	                          &rc);
	assert_int_equal(rc, PB_OK);
	const char *line = strstr(o, "OpenBLAS sgemm: ");
	assert_non_null(line);
	if (!strstr(line, "not measured")) {
		if (!strstr(line, " kernels") || !strstr(o, "tuned / OpenBLAS ("))
			fail_msg("the baseline names no core type:\n%s", o);
		if (have_avx2() && strstr(line, "(1 thread; Prescott kernels"))
			fail_msg("an AVX2 CPU's baseline ran Prescott kernels:\n%s", o);
	}
	free(o);
	json_t *j = pb_test_run_json(s, "tune --op gemm --shape 16,24,8 --trials 2 --reps 1 "
	                                "--baselines --exhaustive-max 1 --json");
	if (json_is_number(json_object_get(j, "openblas_gflops"))) {
		assert_true(json_is_string(json_object_get(j, "openblas_core")));
		assert_true(json_is_string(json_object_get(j, "openblas_detected")));
		double ratio = json_number_value(json_object_get(j, "tuned_vs_openblas"));
		double want = json_number_value(json_object_get(j, "best_gflops")) /
		              json_number_value(json_object_get(j, "openblas_gflops"));
		assert_true(fabs(ratio - want) <= 1e-9 * want);
	}
	json_decref(j);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rank),
	    cmocka_unit_test(test_own_choice),
	    cmocka_unit_test(test_forced_up),
	    cmocka_unit_test(test_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
