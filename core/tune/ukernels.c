/*
 * tune/ukernels.c — instantiates the micro-kernel template (ukernels_tmpl.h)
 * for every legal (vector width, register tile, unroll) triple, once for
 * the baseline ISA, once for AVX2+FMA and once for AVX-512F (x86-64 only, via
 * #pragma GCC target), and picks the set at run time with
 * __builtin_cpu_supports. Only the AVX-512F set has vec 16 (zmm) kernels and
 * the tall tiles (mr 12, 14) they allow with 32 registers.
 *
 * The lists below are the legal register tiles: at most 32 accumulators for
 * GEMM (mr * nr / vec) and 16 for convolution (kb * owv), nr a multiple of
 * vec. Anything else has no micro-kernel and is an illegal configuration.
 * The vec 4 tiles 4 columns wide are not in the search space (nr is 8, 16
 * or 32): they are edge kernels, for the last columns of a matrix whose N
 * leaves 4 or fewer (pb_gemm_ukr_edge).
 */
#include "tune/ukernels.h"

#include <string.h>

typedef float pb_v4 __attribute__((vector_size(16)));
typedef float pb_v8 __attribute__((vector_size(32)));
typedef float pb_v16 __attribute__((vector_size(64)));

#define PB_STR_(x) #x
#define PB_UNROLL(n) _Pragma(PB_STR_(GCC unroll n))

/* A scalar in every lane. Not (VT){0} + x: adding +0.0 is not an identity
 * for -0.0, so the compiler must keep the add (a dependent vaddss before the
 * broadcast, on the critical path of every row of the register tile); an
 * initialiser list lets it broadcast straight from memory (vbroadcastss m32). */
#define PB_SPLAT_1(x) (x)
#define PB_SPLAT_4(x) ((pb_v4){(x), (x), (x), (x)})
#define PB_SPLAT_8(x) ((pb_v8){(x), (x), (x), (x), (x), (x), (x), (x)})
#define PB_SPLAT_16(x)                                                                             \
	((pb_v16){(x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x)})

struct gemm_entry {
	int vec, mr, nr, unroll;
	pb_gemm_ukr fn;
};
struct conv_entry {
	int vec, kb, owv, unroll;
	pb_conv_ukr fn;
};

/* The kernel lists, one instantiation per line; clang-format 14 re-wraps
 * these macro bodies differently on every pass (never a fixed point). */
// clang-format off
#define PB_GEMM_U(X, VT, VW, MR, NR) X(VT, VW, MR, NR, 1) X(VT, VW, MR, NR, 4)
#define PB_GEMM_LIST(X)                                                                            \
	PB_GEMM_U(X, float, 1, 2, 8)                                                               \
	PB_GEMM_U(X, float, 1, 2, 16)                                                              \
	PB_GEMM_U(X, float, 1, 4, 8)                                                               \
	PB_GEMM_U(X, pb_v4, 4, 2, 4)                                                               \
	PB_GEMM_U(X, pb_v4, 4, 4, 4)                                                               \
	PB_GEMM_U(X, pb_v4, 4, 6, 4)                                                               \
	PB_GEMM_U(X, pb_v4, 4, 8, 4)                                                               \
	PB_GEMM_U(X, pb_v4, 4, 2, 8)                                                               \
	PB_GEMM_U(X, pb_v4, 4, 2, 16)                                                              \
	PB_GEMM_U(X, pb_v4, 4, 2, 32)                                                              \
	PB_GEMM_U(X, pb_v4, 4, 4, 8)                                                               \
	PB_GEMM_U(X, pb_v4, 4, 4, 16)                                                              \
	PB_GEMM_U(X, pb_v4, 4, 4, 32)                                                              \
	PB_GEMM_U(X, pb_v4, 4, 6, 8)                                                               \
	PB_GEMM_U(X, pb_v4, 4, 6, 16)                                                              \
	PB_GEMM_U(X, pb_v4, 4, 8, 8)                                                               \
	PB_GEMM_U(X, pb_v4, 4, 8, 16)                                                              \
	PB_GEMM_U(X, pb_v8, 8, 2, 8)                                                               \
	PB_GEMM_U(X, pb_v8, 8, 2, 16)                                                              \
	PB_GEMM_U(X, pb_v8, 8, 2, 32)                                                              \
	PB_GEMM_U(X, pb_v8, 8, 4, 8)                                                               \
	PB_GEMM_U(X, pb_v8, 8, 4, 16)                                                              \
	PB_GEMM_U(X, pb_v8, 8, 4, 32)                                                              \
	PB_GEMM_U(X, pb_v8, 8, 6, 8)                                                               \
	PB_GEMM_U(X, pb_v8, 8, 6, 16)                                                              \
	PB_GEMM_U(X, pb_v8, 8, 6, 32)                                                              \
	PB_GEMM_U(X, pb_v8, 8, 8, 8)                                                               \
	PB_GEMM_U(X, pb_v8, 8, 8, 16)                                                              \
	PB_GEMM_U(X, pb_v8, 8, 8, 32)
/* AVX-512 only (32 zmm registers): up to 14x32 = 28 accumulators + 2 B vectors
 * + 1 broadcast. */
#define PB_GEMM_LIST16(X)                                                                          \
	PB_GEMM_U(X, pb_v16, 16, 2, 16)                                                            \
	PB_GEMM_U(X, pb_v16, 16, 2, 32)                                                            \
	PB_GEMM_U(X, pb_v16, 16, 4, 16)                                                            \
	PB_GEMM_U(X, pb_v16, 16, 4, 32)                                                            \
	PB_GEMM_U(X, pb_v16, 16, 6, 16)                                                            \
	PB_GEMM_U(X, pb_v16, 16, 6, 32)                                                            \
	PB_GEMM_U(X, pb_v16, 16, 8, 16)                                                            \
	PB_GEMM_U(X, pb_v16, 16, 8, 32)                                                            \
	PB_GEMM_U(X, pb_v16, 16, 12, 16)                                                           \
	PB_GEMM_U(X, pb_v16, 16, 12, 32)                                                           \
	PB_GEMM_U(X, pb_v16, 16, 14, 16)                                                           \
	PB_GEMM_U(X, pb_v16, 16, 14, 32)
#define PB_GEMM_LIST512(X) PB_GEMM_LIST(X) PB_GEMM_LIST16(X)

#define PB_CONV_U(X, VT, VW, KB, OWV) X(VT, VW, KB, OWV, 1) X(VT, VW, KB, OWV, 4)
#define PB_CONV_KB(X, VT, VW)                                                                      \
	PB_CONV_U(X, VT, VW, 1, 1)                                                                 \
	PB_CONV_U(X, VT, VW, 1, 2)                                                                 \
	PB_CONV_U(X, VT, VW, 1, 4)                                                                 \
	PB_CONV_U(X, VT, VW, 2, 1)                                                                 \
	PB_CONV_U(X, VT, VW, 2, 2)                                                                 \
	PB_CONV_U(X, VT, VW, 2, 4)                                                                 \
	PB_CONV_U(X, VT, VW, 4, 1)                                                                 \
	PB_CONV_U(X, VT, VW, 4, 2)                                                                 \
	PB_CONV_U(X, VT, VW, 4, 4)                                                                 \
	PB_CONV_U(X, VT, VW, 8, 1)                                                                 \
	PB_CONV_U(X, VT, VW, 8, 2)
#define PB_CONV_LIST(X) PB_CONV_KB(X, float, 1) PB_CONV_KB(X, pb_v4, 4) PB_CONV_KB(X, pb_v8, 8)
// clang-format on

#define PB_GEMM_SET PB_GEMM_LIST
#define PB_ISA base
#include "tune/ukernels_tmpl.h"
#undef PB_ISA

#if defined(__x86_64__) && defined(__GNUC__)
#define PB_HAVE_AVX2_SET 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define PB_ISA avx2
#include "tune/ukernels_tmpl.h"
#undef PB_ISA
#pragma GCC pop_options

/* AVX-512F: the AVX2 list again with 512-bit registers available, plus vec 16. */
#undef PB_GEMM_SET
#define PB_GEMM_SET PB_GEMM_LIST512
#pragma GCC push_options
#pragma GCC target("avx512f,fma")
#define PB_ISA avx512
#include "tune/ukernels_tmpl.h"
#undef PB_ISA
#pragma GCC pop_options
#endif

static int forced_baseline;

void pb_ukr_force_baseline(int on)
{
	forced_baseline = on;
}

enum { ISA_BASE, ISA_AVX2, ISA_AVX512 };

static int cpu_isa(void)
{
#ifdef PB_HAVE_AVX2_SET
	static int cached = -1;
	if (cached < 0) {
		__builtin_cpu_init();
		int fma = __builtin_cpu_supports("fma");
		cached = fma && __builtin_cpu_supports("avx512f") ? ISA_AVX512
		         : fma && __builtin_cpu_supports("avx2")  ? ISA_AVX2
		                                                  : ISA_BASE;
	}
	return cached;
#else
	return ISA_BASE;
#endif
}

static int use_isa(void)
{
	return forced_baseline ? ISA_BASE : cpu_isa();
}

const char *pb_ukr_isa(void)
{
	static const char *const names[] = {"baseline", "avx2+fma", "avx512f+fma"};
	return names[use_isa()];
}

int pb_ukr_has_vec16(void)
{
	return use_isa() == ISA_AVX512;
}

pb_gemm_ukr pb_gemm_ukr_find(int vec, int mr, int nr, int unroll)
{
	const struct gemm_entry *t = gemm_table_base;
#ifdef PB_HAVE_AVX2_SET
	if (use_isa() == ISA_AVX2)
		t = gemm_table_avx2;
	else if (use_isa() == ISA_AVX512)
		t = gemm_table_avx512;
#endif
	for (; t->fn; t++)
		if (t->vec == vec && t->mr == mr && t->nr == nr && t->unroll == unroll)
			return t->fn;
	return NULL;
}

pb_gemm_ukr pb_gemm_ukr_edge(int vec, int mr, int nr, int unroll, int mi, int nj, int *mr_out,
                             int *nr_out)
{
	const struct gemm_entry *t = gemm_table_base, *best = NULL;
#ifdef PB_HAVE_AVX2_SET
	if (use_isa() == ISA_AVX2)
		t = gemm_table_avx2;
	else if (use_isa() == ISA_AVX512)
		t = gemm_table_avx512;
#endif
	for (; t->fn; t++) {
		if (t->unroll != unroll || t->vec > vec || t->mr < mi || t->nr < nj || t->mr > mr ||
		    t->nr > nr)
			continue;
		long area = (long)t->mr * t->nr, b = best ? (long)best->mr * best->nr : 0;
		if (!best || area < b || (area == b && t->vec > best->vec))
			best = t;
	}
	if (!best)
		return NULL;
	*mr_out = best->mr;
	*nr_out = best->nr;
	return best->fn;
}

pb_conv_ukr pb_conv_ukr_find(int vec, int kb, int owv, int unroll)
{
	const struct conv_entry *t = conv_table_base;
#ifdef PB_HAVE_AVX2_SET
	if (use_isa() == ISA_AVX2)
		t = conv_table_avx2;
	else if (use_isa() == ISA_AVX512)
		t = conv_table_avx512;
#endif
	for (; t->fn; t++)
		if (t->vec == vec && t->kb == kb && t->owv == owv && t->unroll == unroll)
			return t->fn;
	return NULL;
}
