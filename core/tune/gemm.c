/*
 * tune/gemm.c — blocked GEMM driver (BLIS-style) and the naive reference.
 *
 * Three cache-tile loops (jc over N by nc, pc over K by kc, ic over M by mc)
 * in one of two orders, then register tiles of mr x nr computed by a
 * micro-kernel (ukernels.c). With packing, the A block (mc x kc) and the B
 * block (kc x nc) are copied into zero-padded panels, so every register tile
 * reads whole panels; an edge tile (the last M % mr rows, N % nr columns) is
 * computed by the smallest compiled kernel covering it (edge_kernels), into
 * C when it fits exactly, else into a small buffer. Without packing the
 * micro-kernel reads A and B in place; an edge tile with no kernel of
 * exactly its size reads zero-padded copies of its rows of A and columns
 * of B instead. Invariant: every C element is written once per
 * k-block, the first k-block stores and the others accumulate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/kernels.h"
#include "tune/ukernels.h"

int pb_gemm_legal(const pb_gemm_cfg *c, char *why, size_t len)
{
	const char *r = NULL;
	char buf[160];
	if (c->vec != 1 && c->vec != 4 && c->vec != 8 && c->vec != 16)
		r = "vector width must be 1, 4, 8 or 16";
	else if (c->vec == 16 && !pb_ukr_has_vec16())
		r = "vector width 16 needs AVX-512F, which this CPU (or the forced baseline set) "
		    "lacks";
	else if (c->nr % c->vec)
		r = "nr is not a multiple of the vector width";
	else if (c->mr * c->nr / c->vec > 32) {
		snprintf(buf, sizeof buf, "register tile %dx%d needs %d accumulators (> 32)", c->mr,
		         c->nr, c->mr * c->nr / c->vec);
		r = buf;
	} else if (c->mc < c->mr || c->nc < c->nr || c->kc < 1)
		r = "cache tile smaller than the register tile";
	else if (c->order < 0 || c->order > 1 || c->pack < 0 || c->pack > 1)
		r = "loop order / packing out of range";
	else if (!pb_gemm_ukr_find(c->vec, c->mr, c->nr, c->unroll))
		r = "no micro-kernel for this vector width, register tile and unroll";
	if (r && why)
		snprintf(why, len, "%s", r);
	return r == NULL;
}

static int floor_mult(int v, int m)
{
	int r = v / m * m;
	return r < m ? m : r;
}

static int imin(int a, int b)
{
	return a < b ? a : b;
}

size_t pb_gemm_workspace(const pb_gemm_cfg *c, int M, int N, int K)
{
	size_t mc = (size_t)floor_mult(c->mc, c->mr), nc = (size_t)floor_mult(c->nc, c->nr);
	size_t kc = (size_t)c->kc;
	return mc * kc + nc * kc + (size_t)c->mr * (size_t)c->nr + 64;
}

/* Copies A[ic.., pc..] (mb x kb) into panels of mr rows: Ap[p][k][i]. */
static void pack_a(const float *A, int K, int ic, int pc, int mb, int kb, int mr, float *Ap)
{
	for (int p = 0; p < mb; p += mr)
		for (int k = 0; k < kb; k++)
			for (int i = 0; i < mr; i++)
				*Ap++ = p + i < mb ? A[(long)(ic + p + i) * K + pc + k] : 0.0f;
}

/* Copies B[pc.., jc..] (kb x nb) into panels of nr columns: Bp[q][k][j]. */
static void pack_b(const float *B, int N, int pc, int jc, int kb, int nb, int nr, float *Bp)
{
	for (int q = 0; q < nb; q += nr)
		for (int k = 0; k < kb; k++) {
			const float *src = B + (long)(pc + k) * N + jc + q;
			int w = imin(nr, nb - q);
			memcpy(Bp, src, (size_t)w * sizeof *Bp);
			for (int j = w; j < nr; j++)
				Bp[j] = 0.0f;
			Bp += nr;
		}
}

/* A tile's kernel: the configuration's own, or an edge kernel (mr x nr its tile). */
typedef struct tile_ukr {
	pb_gemm_ukr fn;
	int mr, nr;
} tile_ukr;

typedef struct gemm_run {
	const pb_gemm_cfg *c;
	tile_ukr ukr[2][2]; /* [last rows of M][last columns of N] */
	int M, N, K;
	const float *A, *B;
	float *C, *Ap, *Bp, *tmp;
} gemm_run;

/* The kernels of the full tile and of the M, N and corner edges: M % mr rows,
 * N % nr columns (cache tiles are multiples of the register tile, so only
 * the matrix's last tiles are partial). An edge kernel is narrower or
 * shorter than the full one where the compiled set has one
 * (pb_gemm_ukr_edge); packed, it reads the same zero-padded panels. */
static void edge_kernels(const pb_gemm_cfg *c, int M, int N, tile_ukr u[2][2])
{
	int rm = M % c->mr, rn = N % c->nr;
	for (int em = 0; em < 2; em++)
		for (int en = 0; en < 2; en++) {
			tile_ukr *t = &u[em][en];
			t->fn = pb_gemm_ukr_find(c->vec, c->mr, c->nr, c->unroll);
			t->mr = c->mr;
			t->nr = c->nr;
			int mi = em && rm ? rm : c->mr, nj = en && rn ? rn : c->nr, mo, no;
			pb_gemm_ukr f =
			    pb_gemm_ukr_edge(c->vec, c->mr, c->nr, c->unroll, mi, nj, &mo, &no);
			if (f) {
				t->fn = f;
				t->mr = mo;
				t->nr = no;
			}
		}
}

double pb_gemm_edge_waste(const pb_gemm_cfg *c, int M, int N)
{
	if (!pb_gemm_legal(c, NULL, 0) || M < 1 || N < 1)
		return 0;
	tile_ukr u[2][2];
	edge_kernels(c, M, N, u);
	int rm = M % c->mr, rn = N % c->nr;
	double computed = 0;
	for (int em = 0; em < 2; em++)
		for (int en = 0; en < 2; en++) {
			int mi = em ? rm : c->mr, nj = en ? rn : c->nr;
			double tiles =
			    (double)(em ? rm > 0 : M / c->mr) * (en ? rn > 0 : N / c->nr);
			if (mi && nj && tiles)
				computed += tiles * u[em][en].mr * u[em][en].nr;
		}
	return computed > 0 ? (computed - (double)M * N) / computed : 0;
}

/* All register tiles of one (ic, jc, pc) block. */
static void macro_tile(const gemm_run *g, int ic, int jc, int pc, int mb, int nb, int kb)
{
	const int mr = g->c->mr, nr = g->c->nr, N = g->N, K = g->K, first = pc == 0;
	int b_jr = -1, b_nr = 0; /* the column tile whose B edge is in g->Bp (in place) */
	for (int jr = 0; jr < nb; jr += nr)
		for (int ir = 0; ir < mb; ir += mr) {
			int mi = imin(mr, mb - ir), nj = imin(nr, nb - jr);
			const tile_ukr *u = &g->ukr[mi < mr][nj < nr];
			int exact = u->mr == mi && u->nr == nj;
			float *c = g->C + (long)(ic + ir) * N + jc + jr;
			if (g->c->pack) {
				const float *a = g->Ap + (long)ir * kb, *b = g->Bp + (long)jr * kb;
				if (exact) {
					u->fn(kb, a, 1, mr, b, nr, c, N, first);
					continue;
				}
				u->fn(kb, a, 1, mr, b, nr, g->tmp, u->nr, 1);
				for (int i = 0; i < mi; i++)
					for (int j = 0; j < nj; j++)
						c[(long)i * N + j] =
						    first ? g->tmp[i * u->nr + j]
						          : c[(long)i * N + j] +
						                g->tmp[i * u->nr + j];
				continue;
			}
			const float *a = g->A + (long)(ic + ir) * K + pc;
			const float *b = g->B + (long)pc * N + jc + jr;
			if (exact) { /* in place: a kernel of the tile's own size stays in A and B
				      */
				u->fn(kb, a, K, 1, b, N, c, N, first);
				continue;
			}
			/* In place, an edge without a kernel of its size: its columns of B
			 * and rows of A go into zero-padded copies (the packing buffers,
			 * unused in place), so the covering kernel reads nothing past A or
			 * B. The B copy serves every row tile of the column tile. */
			long ars = K, ldb = N;
			if (nj < u->nr) {
				if (b_jr != jr || b_nr != u->nr) {
					pack_b(g->B, N, pc, jc + jr, kb, nj, u->nr, g->Bp);
					b_jr = jr;
					b_nr = u->nr;
				}
				b = g->Bp;
				ldb = u->nr;
			}
			if (mi < u->mr) {
				for (int i = 0; i < u->mr; i++)
					for (int k = 0; k < kb; k++)
						g->Ap[(long)i * kb + k] =
						    i < mi ? a[(long)i * K + k] : 0.0f;
				a = g->Ap;
				ars = kb;
			}
			u->fn(kb, a, ars, 1, b, ldb, g->tmp, u->nr, 1);
			for (int i = 0; i < mi; i++)
				for (int j = 0; j < nj; j++)
					c[(long)i * N + j] =
					    first ? g->tmp[i * u->nr + j]
					          : c[(long)i * N + j] + g->tmp[i * u->nr + j];
		}
}

int pb_gemm_run(const pb_gemm_cfg *c, int M, int N, int K, const float *A, const float *B, float *C,
                float *ws)
{
	if (!pb_gemm_legal(c, NULL, 0))
		return -1;
	gemm_run g = {c, {{{0}}}, M, N, K, A, B, C};
	edge_kernels(c, M, N, g.ukr);
	int mc = floor_mult(c->mc, c->mr), nc = floor_mult(c->nc, c->nr), kc = c->kc;
	g.Ap = ws;
	g.Bp = ws + (size_t)mc * kc;
	g.tmp = g.Bp + (size_t)nc * kc;
	if (c->order == 0) {
		for (int jc = 0; jc < N; jc += nc)
			for (int pc = 0; pc < K; pc += kc) {
				int nb = imin(nc, N - jc), kb = imin(kc, K - pc);
				if (c->pack)
					pack_b(B, N, pc, jc, kb, nb, c->nr, g.Bp);
				for (int ic = 0; ic < M; ic += mc) {
					int mb = imin(mc, M - ic);
					if (c->pack)
						pack_a(A, K, ic, pc, mb, kb, c->mr, g.Ap);
					macro_tile(&g, ic, jc, pc, mb, nb, kb);
				}
			}
	} else {
		for (int ic = 0; ic < M; ic += mc)
			for (int pc = 0; pc < K; pc += kc) {
				int mb = imin(mc, M - ic), kb = imin(kc, K - pc);
				if (c->pack)
					pack_a(A, K, ic, pc, mb, kb, c->mr, g.Ap);
				for (int jc = 0; jc < N; jc += nc) {
					int nb = imin(nc, N - jc);
					if (c->pack)
						pack_b(B, N, pc, jc, kb, nb, c->nr, g.Bp);
					macro_tile(&g, ic, jc, pc, mb, nb, kb);
				}
			}
	}
	return 0;
}

void pb_gemm_ref(int M, int N, int K, const float *A, const float *B, float *C)
{
	/* i-k-j order over a double row accumulator: exact for the test data and
	 * streaming through B. Falls back to a per-element sum without memory. */
	double *row = malloc((size_t)N * sizeof *row);
	for (int i = 0; i < M; i++) {
		if (!row) {
			for (int j = 0; j < N; j++) {
				double s = 0;
				for (int k = 0; k < K; k++)
					s += (double)A[(long)i * K + k] * B[(long)k * N + j];
				C[(long)i * N + j] = (float)s;
			}
			continue;
		}
		for (int j = 0; j < N; j++)
			row[j] = 0;
		for (int k = 0; k < K; k++) {
			double a = A[(long)i * K + k];
			const float *b = B + (long)k * N;
			for (int j = 0; j < N; j++)
				row[j] += a * b[j];
		}
		for (int j = 0; j < N; j++)
			C[(long)i * N + j] = (float)row[j];
	}
	free(row);
}

const char *pb_kernels_isa(void)
{
	return pb_ukr_isa();
}
