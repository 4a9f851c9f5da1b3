/*
 * tune/ukernels.h — lookup of the compiled micro-kernels (internal to tune/).
 *
 * gemm micro-kernel: C[mr][nr] (+)= A[mr][kc] * B[kc][nr] where
 *   A(i,k) = a[i*ars + k*acs], B(k,j) = b[k*ldb + j], C(i,j) = c[i*ldc + j];
 *   first != 0 stores, otherwise accumulates into C.
 * conv micro-kernel: O[kb][vec*owv] (+)= sum over c < nc, r < R, s < S of
 *   W(kk,c,r,s) * X(c,r,s)[x], with W(kk,c,r,s) = w[kk*wks + c*wcs + (r*S+s)*wss]
 *   and X(c,r,s)[x] = x[c*xcs + r*xrs + s*xss + x] (x contiguous along the
 *   output width), O(kk,x) = o[kk*oks + x].
 */
#ifndef PB_TUNE_UKERNELS_H
#define PB_TUNE_UKERNELS_H

typedef void (*pb_gemm_ukr)(int kc, const float *a, long ars, long acs, const float *b, long ldb,
                            float *c, long ldc, int first);
typedef void (*pb_conv_ukr)(int nc, int R, int S, const float *x, long xcs, long xrs, long xss,
                            const float *w, long wks, long wcs, long wss, float *o, long oks,
                            int first);

/* NULL when no micro-kernel exists for these parameters (illegal config). */
pb_gemm_ukr pb_gemm_ukr_find(int vec, int mr, int nr, int unroll);
pb_conv_ukr pb_conv_ukr_find(int vec, int kb, int owv, int unroll);
/* The edge kernel of a configuration (vec, mr, nr, unroll) for a tile of mi
 * rows and nj columns (mi <= mr, nj <= nr): the compiled kernel with the same
 * unroll, vector width <= vec and mr' x nr' the smallest tile with
 * mi <= mr' <= mr, nj <= nr' <= nr (ties: the wider vector); its tile in
 * *mr_out, *nr_out. NULL if none (then the full tile covers it). */
pb_gemm_ukr pb_gemm_ukr_edge(int vec, int mr, int nr, int unroll, int mi, int nj, int *mr_out,
                             int *nr_out);
const char *pb_ukr_isa(void);
/* 1 when the AVX-512F set runs (vec 16 kernels exist on this CPU). */
int pb_ukr_has_vec16(void);
/* Tests: use the baseline-ISA set even when AVX2+FMA is available. */
void pb_ukr_force_baseline(int on);

#endif
