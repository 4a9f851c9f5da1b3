/*
 * lazy_openblas.h — OpenBLAS, loaded on first use (dlopen).
 *
 * Why: linking libopenblas runs its constructor (CPU detection, buffer set-up)
 * and maps gfortran and quadmath in every partbench process: ~2 ms of the
 * ~4.5 ms start-up, although only the auto-tuner's reference measurement
 * (tune/measure.c: one-thread cblas_sgemm) uses it. The types come from
 * OpenBLAS's own <cblas.h>; the three functions are resolved once. The library
 * reads OPENBLAS_CORETYPE when it loads: it is loaded as a fresh copy in a
 * namespace of its own (lazy_openblas.c), and tune/blas_baseline.c loads it
 * only in child processes, so each can choose its kernels.
 */
#ifndef PB_LAZY_OPENBLAS_H
#define PB_LAZY_OPENBLAS_H

#include <cblas.h>

typedef struct pb_openblas_api {
	__typeof__(cblas_sgemm) *sgemm;
	__typeof__(openblas_set_num_threads) *set_num_threads;
	__typeof__(openblas_get_corename) *get_corename; /* the kernels' core type */
} pb_openblas_api;

/* The API, loaded on the first call; NULL when libopenblas cannot be loaded
 * (the caller reports OpenBLAS as not available). */
const pb_openblas_api *pb_openblas(void);

#endif
