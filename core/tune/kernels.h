/*
 * tune/kernels.h — the tunable CPU kernels: a blocked GEMM and a direct NCHW
 * 2-D convolution, plus their naive references.
 *
 * Choice (docs/tune.md): run-time parameterisation. Parameters that change
 * the generated instructions (vector width, register tile, unroll factor) are
 * compile-time constants of a finite set of micro-kernels instantiated from
 * one template at build time (twice: AVX2+FMA and baseline ISA, chosen at run
 * time with __builtin_cpu_supports); cache tiles, loop order and packing are
 * run-time values of the drivers. A configuration whose micro-kernel is not
 * instantiated (too many accumulator registers, register tile not a multiple
 * of the vector width) is illegal: the *_legal() functions say why.
 *
 * Layouts: GEMM is row-major C[M][N] = A[M][K] * B[K][N]. Convolution is
 * NCHW input, K x (C/group) x R x S weights, NKHW output, no bias, dilation 1.
 * A grouped convolution (depthwise: group == C == K) runs the direct kernel
 * once per group on that group's channels.
 */
#ifndef PB_TUNE_KERNELS_H
#define PB_TUNE_KERNELS_H

#include <stddef.h>

typedef struct pb_gemm_cfg {
	int vec;        /* floats per vector: 1, 4, 8, 16 (AVX-512F only) */
	int mr, nr;     /* register tile (rows of A x columns of B) */
	int unroll;     /* k-loop unroll of the micro-kernel */
	int mc, kc, nc; /* cache tiles of the three loops */
	int pack;       /* 1: copy A and B blocks into contiguous zero-padded panels */
	int order;      /* 0: jc-pc-ic (B block outermost), 1: ic-pc-jc (A block outermost) */
} pb_gemm_cfg;

typedef struct pb_conv_cfg {
	int vec;    /* floats per vector along the output width: 1, 4, 8 */
	int kb;     /* output channels per register tile */
	int owv;    /* vectors per register tile along the output width */
	int unroll; /* unroll of the input-channel loop */
	int ct;     /* input-channel cache tile */
	int pack;   /* 1: repack weights as [K/kb][C][R][S][kb] */
	int order;  /* 0: k-block, c-tile, row; 1: c-tile, row, k-block */
} pb_conv_cfg;

typedef struct pb_conv_shape {
	int n, c, h, w, k, r, s, stride, pad;
	int group; /* channel groups (C and K divisible by it); 0 or 1: ungrouped */
} pb_conv_shape;

/* Number of groups of a shape (1 when group is 0). */
int pb_conv_groups(const pb_conv_shape *s);

/* Output size of a convolution (<= 0 if the shape is impossible). */
int pb_conv_out_h(const pb_conv_shape *s);
int pb_conv_out_w(const pb_conv_shape *s);

/* 1 if the configuration can run; otherwise 0 and a reason in why. */
int pb_gemm_legal(const pb_gemm_cfg *c, char *why, size_t len);
int pb_conv_legal(const pb_conv_cfg *c, char *why, size_t len);

/* Workspace in floats that pb_*_run needs for this configuration and shape. */
/* The fraction of the C elements the register tiles compute that are
 * padding: the matrix's edge tiles (M % mr rows, N % nr columns) run the
 * smallest compiled kernel covering them. */
double pb_gemm_edge_waste(const pb_gemm_cfg *c, int M, int N);
size_t pb_gemm_workspace(const pb_gemm_cfg *c, int M, int N, int K);
size_t pb_conv_workspace(const pb_conv_cfg *c, const pb_conv_shape *s);

/* Run a legal configuration; ws has at least the workspace size. Return 0,
 * or -1 if the configuration is illegal. */
int pb_gemm_run(const pb_gemm_cfg *c, int M, int N, int K, const float *A, const float *B, float *C,
                float *ws);
int pb_conv_run(const pb_conv_cfg *c, const pb_conv_shape *s, const float *in, const float *w,
                float *out, float *ws);

/* Naive references (double accumulation). */
void pb_gemm_ref(int M, int N, int K, const float *A, const float *B, float *C);
void pb_conv_ref(const pb_conv_shape *s, const float *in, const float *w, float *out);

/* "avx2+fma" or "baseline": which micro-kernel set runs on this CPU. */
const char *pb_kernels_isa(void);

#endif
