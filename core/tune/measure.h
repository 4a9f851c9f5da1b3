/*
 * tune/measure.h — runs a configuration on this CPU: correctness check
 * against the naive reference, then timing.
 *
 * Operands hold multiples of 1/4 in [-1/2, 1/2], so every product and
 * partial sum is exactly representable in float: a correct kernel matches
 * the reference bit for bit whatever its summation order, and the check is
 * exact (any wrong index shows). Timing uses the calling thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID) so that time the shared machine gives to other
 * processes is not counted; the kernels are single-threaded. The reported
 * time is the minimum over the repetitions (the checked run included).
 */
#ifndef PB_TUNE_MEASURE_H
#define PB_TUNE_MEASURE_H

#include "util/error.h"
#include "tune/space.h"

typedef struct pb_tune_bench pb_tune_bench;

typedef struct pb_tune_measure_opts {
	int min_reps;          /* at least this many timed runs (default 3) */
	int max_reps;          /* at most this many (default 10) */
	double min_seconds;    /* keep repeating until this much time is spent (default 0.05) */
	double cutoff_seconds; /* > 0: if the checked run already took longer, its time is
	                          the measurement (a clearly slow configuration is not
	                          repeated); 0: always repeat */
} pb_tune_measure_opts;

typedef struct pb_tune_result {
	int valid;      /* 1: legal and correct */
	int measured;   /* 1: it ran on the hardware (check and/or timing) */
	double gflops;  /* 0 when invalid */
	double seconds; /* best time of one call, 0 when invalid */
	char why[160];  /* reason when invalid */
} pb_tune_result;

/* Allocates operands for the shape and computes the reference output. */
int pb_tune_bench_new(const pb_tune_shape *shape, unsigned seed, pb_tune_bench **out,
                      pb_error *err);
void pb_tune_bench_free(pb_tune_bench *b);
/* Checks, then times one configuration. Illegal or wrong configurations give
 * valid = 0 (not an error); errors are only allocation failures. */
int pb_tune_bench_measure(pb_tune_bench *b, const pb_tune_space *sp, const int *idx,
                          const pb_tune_measure_opts *o, pb_tune_result *r, pb_error *err);
/* Test hook: corrupt one element of the next kernel output before the check. */
void pb_tune_bench_inject_fault(pb_tune_bench *b, int on);
/* OpenBLAS cblas_sgemm (one thread) on the GEMM shape, or on the implicit
 * GEMM of a convolution (K x OH*OW x C*R*S). Returns 0, GFLOP/s and the core
 * type whose kernels ran (openblas_get_corename, into core[len]), or -1 when
 * OpenBLAS is not linked. Loads OpenBLAS into this process: the tuner calls it
 * in a child only (tune/blas_baseline.h). */
int pb_tune_openblas_gflops(const pb_tune_shape *shape, const pb_tune_measure_opts *o,
                            double *gflops, char *core, size_t len);

#endif
