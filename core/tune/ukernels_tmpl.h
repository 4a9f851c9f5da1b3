/*
 * tune/ukernels_tmpl.h — micro-kernel template, included by ukernels.c once
 * per instruction set with PB_ISA set to a suffix. Every instantiation has
 * its vector type, register tile and unroll factor as constants, so the
 * compiler keeps the accumulators in registers and unrolls fully.
 * No include guard on purpose.
 */
#define PB_CAT_(a, b) a##_##b
#define PB_CAT(a, b) PB_CAT_(a, b)
#define PB_FN(name) PB_CAT(name, PB_ISA)

#define PB_GEMM_UKR(VT, VW, MR, NR, U)                                                             \
	static void PB_FN(gukr_##VW##_##MR##_##NR##_##U)(                                          \
	    int kc, const float *restrict a, long ars, long acs, const float *restrict b,          \
	    long ldb, float *restrict c, long ldc, int first)                                      \
	{                                                                                          \
		VT acc[MR][NR / VW];                                                               \
		PB_UNROLL(16)                                                                      \
		for (int i = 0; i < MR; i++)                                                       \
			PB_UNROLL(32) for (int j = 0; j < NR / VW; j++) acc[i][j] = (VT){0};       \
		PB_UNROLL(U) for (int k = 0; k < kc; k++)                                          \
		{                                                                                  \
			VT bv[NR / VW];                                                            \
			PB_UNROLL(32)                                                              \
			for (int j = 0; j < NR / VW; j++)                                          \
				memcpy(&bv[j], b + k * ldb + j * VW, sizeof(VT));                  \
			PB_UNROLL(16) for (int i = 0; i < MR; i++)                                 \
			{                                                                          \
				VT av = PB_SPLAT_##VW(a[i * ars + k * acs]);                       \
				PB_UNROLL(32)                                                      \
				for (int j = 0; j < NR / VW; j++)                                  \
					acc[i][j] += av * bv[j];                                   \
			}                                                                          \
		}                                                                                  \
		PB_UNROLL(16)                                                                      \
		for (int i = 0; i < MR; i++)                                                       \
			PB_UNROLL(32) for (int j = 0; j < NR / VW; j++)                            \
			{                                                                          \
				float *cp = c + i * ldc + j * VW;                                  \
				VT t = acc[i][j];                                                  \
				if (!first) {                                                      \
					VT old;                                                    \
					memcpy(&old, cp, sizeof(VT));                              \
					t += old;                                                  \
				}                                                                  \
				memcpy(cp, &t, sizeof(VT));                                        \
			}                                                                          \
	}

#define PB_CONV_UKR(VT, VW, KB, OWV, U)                                                            \
	static void PB_FN(cukr_##VW##_##KB##_##OWV##_##U)(                                         \
	    int nc, int R, int S, const float *restrict x, long xcs, long xrs, long xss,           \
	    const float *restrict w, long wks, long wcs, long wss, float *restrict o, long oks,    \
	    int first)                                                                             \
	{                                                                                          \
		VT acc[KB][OWV];                                                                   \
		PB_UNROLL(8)                                                                       \
		for (int kk = 0; kk < KB; kk++)                                                    \
			PB_UNROLL(4) for (int v = 0; v < OWV; v++) acc[kk][v] = (VT){0};           \
		PB_UNROLL(U) for (int c = 0; c < nc; c++)                                          \
		{                                                                                  \
			for (int r = 0; r < R; r++)                                                \
				for (int s = 0; s < S; s++) {                                      \
					const float *xp = x + c * xcs + r * xrs + s * xss;         \
					const float *wp = w + c * wcs + (r * S + s) * wss;         \
					VT xv[OWV];                                                \
					PB_UNROLL(4)                                               \
					for (int v = 0; v < OWV; v++)                              \
						memcpy(&xv[v], xp + v * VW, sizeof(VT));           \
					PB_UNROLL(8) for (int kk = 0; kk < KB; kk++)               \
					{                                                          \
						VT wv = PB_SPLAT_##VW(wp[kk * wks]);               \
						PB_UNROLL(4)                                       \
						for (int v = 0; v < OWV; v++)                      \
							acc[kk][v] += wv * xv[v];                  \
					}                                                          \
				}                                                                  \
		}                                                                                  \
		PB_UNROLL(8)                                                                       \
		for (int kk = 0; kk < KB; kk++)                                                    \
			PB_UNROLL(4) for (int v = 0; v < OWV; v++)                                 \
			{                                                                          \
				float *op = o + kk * oks + v * VW;                                 \
				VT t = acc[kk][v];                                                 \
				if (!first) {                                                      \
					VT old;                                                    \
					memcpy(&old, op, sizeof(VT));                              \
					t += old;                                                  \
				}                                                                  \
				memcpy(op, &t, sizeof(VT));                                        \
			}                                                                          \
	}

PB_GEMM_SET(PB_GEMM_UKR)
PB_CONV_LIST(PB_CONV_UKR)

#define PB_GEMM_ENTRY(VT, VW, MR, NR, U) {VW, MR, NR, U, PB_FN(gukr_##VW##_##MR##_##NR##_##U)},
#define PB_CONV_ENTRY(VT, VW, KB, OWV, U) {VW, KB, OWV, U, PB_FN(cukr_##VW##_##KB##_##OWV##_##U)},
static const struct gemm_entry PB_FN(gemm_table)[] = {PB_GEMM_SET(PB_GEMM_ENTRY){0}};
static const struct conv_entry PB_FN(conv_table)[] = {PB_CONV_LIST(PB_CONV_ENTRY){0}};

#undef PB_GEMM_UKR
#undef PB_CONV_UKR
#undef PB_GEMM_ENTRY
#undef PB_CONV_ENTRY
#undef PB_FN
#undef PB_CAT
#undef PB_CAT_
