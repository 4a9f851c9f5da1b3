/*
 * tune/blas_baseline.h — the OpenBLAS baseline of `tune --baselines`: what it
 * measured, on the best kernels this CPU supports.
 *
 * OpenBLAS picks its kernels (a "core type") once, when it loads: from
 * OPENBLAS_CORETYPE, else from its own CPU detection, which falls back to its
 * oldest kernels (Prescott, SSE3) on processors it does not know (OpenBLAS
 * 0.3.21 on a newer AVX-512 CPU: 33 GFLOP/s on GEMM 128x768x768 where its
 * SkylakeX kernels reach 151). So the baseline runs in child processes, each
 * loading the library afresh:
 *   1. the library's own choice (its detection, or OPENBLAS_CORETYPE from the
 *      environment): core type and GFLOP/s;
 *   2. when that core type is weaker than the CPU's flags allow (AVX-512 F, BW,
 *      VL, DQ, CD -> SkylakeX; AVX2 + FMA -> Haswell; AVX -> Sandybridge;
 *      otherwise the library decides), once more with OPENBLAS_CORETYPE set to
 *      the flags' choice. A child that dies (an illegal instruction: flags the
 *      OS does not enable) leaves the first measurement, with a note.
 * The baseline reported is the flags' choice when it ran, else the library's
 * own; both core types are named (openblas_get_corename of each run), so the
 * report says what ran and what the library would have run by itself.
 */
#ifndef PB_TUNE_BLAS_BASELINE_H
#define PB_TUNE_BLAS_BASELINE_H

#include "tune/measure.h"

typedef struct pb_blas_baseline {
	int ran;                /* 1: OpenBLAS was measured (0: not available) */
	double gflops;          /* GFLOP/s of the kernels reported (`core`) */
	char core[32];          /* the core type those kernels are: "Haswell" */
	char detected[32];      /* the library's own choice in a fresh process */
	double detected_gflops; /* its GFLOP/s (= gflops when core is detected) */
	char cpu_best[32];      /* the core type the CPU's flags allow; "" to let the library
	                         * decide (no AVX, or not x86) */
	char env[32];           /* OPENBLAS_CORETYPE of partbench's environment, "" if unset */
	int forced;             /* 1: core ran in a child with OPENBLAS_CORETYPE = cpu_best */
	char note[160];         /* why cpu_best did not run when it should have; "" otherwise */
} pb_blas_baseline;

/* Measures the baseline on the shape (GEMM, or a convolution's implicit GEMM). */
void pb_blas_baseline_run(const pb_tune_shape *shape, const pb_tune_measure_opts *o,
                          pb_blas_baseline *b);

/* The core type this CPU's flags allow (see above), or NULL to let OpenBLAS decide. */
const char *pb_blas_baseline_cpu_core(void);

/* The vector width class of an OpenBLAS core type name: 3 AVX-512, 2 AVX2, 1 AVX,
 * 0 older (SSE) or unknown. */
int pb_blas_baseline_rank(const char *core);

#endif
