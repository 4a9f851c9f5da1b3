/*
 * exact.c — exact min-max partition: bisection on the bottleneck time T with
 * a near-linear feasibility check per T (exact.h).
 *
 * Monotonicity. Costs of a segment [a, b) (chain_problem.h): MACs M(a, b),
 * routing bytes R(a, b) = in + own, storage bytes S(a, b) = params +
 * outputs + in. In + own together are
 *   R(a, b) = sum of ob[u] over the layers u with a successor in [a, b)
 * (u < a: it enters; u >= a: it is exchanged inside), so R only grows when
 * the segment grows at either end. `in` alone does not: a layer that joins
 * at the left leaves it. But S does: that layer's output leaves `in` and
 * comes back in params + outputs, with its parameters and possibly new
 * entering bytes. M is a prefix difference. So all three terms are monotone
 * under inclusion, and so are the cores a segment needs at bottleneck T,
 *   c(a, b) = max(1, ceil(M / (rate (T - R / bw))), ceil(S / memory))
 * (infinite when R / bw >= T with M > 0 or when more than n are needed; a
 * group with more cores is never slower nor fuller): non-decreasing in b,
 * non-increasing in a. No term is non-monotone, which is what makes the
 * furthest-reach argument below and the galloping searches valid.
 *
 * The check. reach[k] = the furthest prefix [0, reach[k]) that k cores
 * cover with every group's time <= T (and storage <= memory). A longer
 * prefix is never worse: whatever c more cores cover from a start a, they
 * cover at least as far from a later start (c(., b) non-increasing), so
 *   reach[k] = max(reach[k-1], max over j < k of f(reach[j], k - j)),
 * f(a, c) = the largest b with c(a, b) <= c, and T needs min{k : reach[k]
 * = m} cores. Levels go in order: when level k is computed every lower one
 * is final. A level is a start only if reach[k] > reach[k-1] (else it is
 * the same prefix with a core more), and a dead one when its remaining MACs
 * exceed (n - k) rate T (no grouping of the rest fits in the remaining
 * cores). Each start keeps its search state: the furthest end found so far
 * (an f(a, c') for the last c' searched) with its routing and entering
 * bytes, and c(a, end + 1), the cores needed to pass it. check_pull
 * computes level k + 1 from the live starts, newest first: a start that
 * cannot pass its end with k + 1 - j cores offers nothing new; one whose
 * capacity bound (below) cannot pass the best end so far is skipped in
 * O(1); only the others are searched, from their furthest end on. A later
 * start usually covers more with the same total cores (a longer group pays
 * routing on every core), so most of the O(n^2) (start, level) pairs end at
 * the O(1) test. Ties go to the later start (the shortest last group), as
 * in the previous DP, so both return the same partition for the same T.
 * The starts' tables (below) go to a pool of O(m + E + n) entries; when it
 * is full (huge live sets), check_push does the same in push order: each
 * start, with only its own tables, pushes every step of c(a, .) into the
 * levels above it, and a step that cannot reach what an earlier start
 * pushed there is skipped by the same bound (that rarely helps: the later
 * start wins), so it searches up to n (n + 1) / 2 steps.
 *
 * The search for f(a, c) keeps an end that fits and one that does not:
 * a few guesses from the capacity of the cores at the routing of the last
 * end tried, then galloping and bisection, so the guesses only save work.
 *
 * Segments in O(log Z). For the current start a, the live set Z(a) = {u <
 * a : last(u) >= a} (the tensors crossing the cut) is tabulated by next(u),
 * u's first successor >= a: distinct keys, ascending, with prefix sums of
 * ob[u] (zin) and of ob[u] for the u whose first successor is < a (zx).
 * With F[x] = sum of ob[u] over u with first(u) < x,
 *   in(a, b) = sum of ob[u], u in Z(a), next(u) < b         = zin[k],
 *   R(a, b)  = F[b] - F[a] + sum of those with first(u) < a = ... + zx[k],
 * k = the number of keys < b (a binary search; a u in Z(a) whose first
 * successor is >= a is already in F[b] - F[a]). Z is swept along the
 * increasing starts, so a check costs O(m + E) for the sweep plus O(Z log
 * Z) per start; the last layers' keys (a concat that takes every earlier
 * output) share one key.
 *
 * Capacity bound. R(a, b) >= R(a, ref) + F[b] - F[ref] for b >= ref (the
 * outputs that join and are consumed inside), and in(a, b) >= in(a, ref).
 * So c(a, b) <= c needs pmacs[b] + (c rate / bw) F[b] <= a limit and
 * pstore[b] <= another, both monotone in b and O(1) to test (with a slack
 * for rounding, so it is a necessary condition): the skip test, and a
 * binary search on prefix sums that guesses the end of a search, exactly
 * once the routing of the nearby ends is known (about 3 segment costings
 * per search).
 *
 * Complexity of one check: O(m + E) for the sweep of the live sets, O(Z log
 * Z) per start, O(1) per (start, level) pair, O(log m log Z) per search,
 * a few per level. Measured: 50,000 layers on 256 cores, about 0.5 ms per
 * check; the previous DP (kept as pb_part_exact_min_cores_ref) scanned the
 * candidate starts below every end, close to O(m^2) per check.
 *
 * Rounding: every quantity a segment evaluation uses is a difference of
 * non-decreasing prefix sums, so c(a, b) as computed stays non-decreasing in
 * b; the core counts round as the reference does (ceil(x (1 - 1e-12))).
 * Only exactly at a group's time can the two checks disagree (on the last
 * bit of a routing time summed in another order); the search never probes
 * there.
 *
 * The search keeps lo (infeasible) and hi (the max(t) actually achieved by
 * the best partition found, re-evaluated exactly: the optimum is the time
 * of some group, a breakpoint of the cost function, and each feasible check
 * snaps hi down to one). It starts from the memory check (T = INFINITY);
 * when nothing fits, the answer is one group of all cores and the search
 * ignores memory, without a second pass. It bisects geometrically while
 * hi > 2 lo, then arithmetically down to a 1e-4 bracket, then probes just
 * below hi; it ends when hi - lo <= PB_EXACT_RTOL * hi, so hi is the
 * optimum to that precision. (The reference also starts from the greedy
 * split: O(n (m + E)), more than the checks it saves now.)
 */
#include "partition/chain/exact.h"

#include "partition/chain/baselines.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Ceiling with the slack every check uses: a need that exceeds an integer
 * by a rounding error does not cost one more core. */
#define CEIL_SLACK (1 - 1e-12)

/* A start's search state: the furthest end found so far and what it
 * costs. lo = a (nothing yet) or the last end that some c' cores reach;
 * nnext = c(a, lo + 1), INT_MAX when lo = m or past the start's cores. */
typedef struct start {
	int j, a, lo, nnext; /* level, first layer, furthest end, cores to pass it */
	double rt, in;       /* routing time and entering bytes of [a, lo) */
	size_t off;          /* pull: its tables in the pool */
	int nz;
} start;

struct pb_exact_ctx {
	int m, n;
	double *F;           /* F[x]: sum of ob[u] over u with first(u) < x (m+1) */
	int *soff;           /* successors of u: succ[soff[u] .. soff[u+1]), ascending */
	int *succ;           /* (duplicates kept: harmless for "first >= a") */
	int *last;           /* last(u), -1 when u has no successor */
	int *reach;          /* per check: reach[k], k = 0..n */
	int *par;            /* the level reach[k] was pushed from */
	int *live;           /* the live set of the current start (unsorted) */
	int n_live;          /* ... and its size */
	int *zkey;           /* distinct next(u) of the live set, ascending */
	int nz;              /* ... how many */
	double *zin;         /* zin[i]: sum of ob of the live layers with next < zkey[i] */
	double *zx;          /* zx[i]: the same over those with first(u) < a */
	double *kin, *kx;    /* per key: the sums being tabulated */
	unsigned *kgen, gen; /* kin, kx of key k are current when kgen[k] == gen */
	int *groups;         /* reconstruction scratch: cores and layers, n each */
	double per_core;     /* layers per core of the last search: where to look next */
	double inv_bw;       /* 1 / bandwidth, for the capacity bounds */
	start *starts;       /* pull: the live starts, n + 1 */
	int *pkey;           /* pull: the pool of the starts' tables */
	double *pin, *px;
	size_t pool_cap;
};

static void ctx_free(struct pb_exact_ctx *C)
{
	if (!C)
		return;
	free(C->F);
	free(C->soff);
	free(C->succ);
	free(C->last);
	free(C->reach);
	free(C->par);
	free(C->live);
	free(C->zkey);
	free(C->zin);
	free(C->zx);
	free(C->kin);
	free(C->kx);
	free(C->kgen);
	free(C->groups);
	free(C->starts);
	free(C->pkey);
	free(C->pin);
	free(C->px);
	free(C);
}

static struct pb_exact_ctx *ctx_new(const pb_part_problem *P)
{
	const int m = P->m, n = P->n;
	const int ne = P->pred_off[m];
	size_t M = (size_t)m + 1, N = (size_t)n + 1;
	struct pb_exact_ctx *C = calloc(1, sizeof *C);
	if (!C)
		return NULL;
	C->m = m;
	C->n = n;
	C->F = calloc(M, sizeof *C->F);
	C->soff = calloc(M + 1, sizeof *C->soff);
	C->succ = malloc(((size_t)ne + 1) * sizeof *C->succ);
	C->last = malloc(M * sizeof *C->last);
	C->reach = malloc(N * sizeof *C->reach);
	C->par = malloc(N * sizeof *C->par);
	C->live = malloc(M * sizeof *C->live);
	C->zkey = malloc(M * sizeof *C->zkey);
	C->zin = malloc((M + 1) * sizeof *C->zin);
	C->zx = malloc((M + 1) * sizeof *C->zx);
	C->kin = malloc(M * sizeof *C->kin);
	C->kx = malloc(M * sizeof *C->kx);
	C->kgen = calloc(M, sizeof *C->kgen);
	C->groups = malloc(2 * N * sizeof *C->groups);
	/* The pool: O(m + E + n) entries, a few times what usual models use
	 * (their live sets are small); beyond it a check runs in push order. */
	C->pool_cap = 2 * (M + (size_t)ne) + 16 * N + 1024;
	C->starts = malloc(N * sizeof *C->starts);
	C->pkey = malloc(C->pool_cap * sizeof *C->pkey);
	C->pin = malloc(C->pool_cap * sizeof *C->pin);
	C->px = malloc(C->pool_cap * sizeof *C->px);
	if (!C->starts || !C->pkey || !C->pin || !C->px) {
		ctx_free(C);
		return NULL;
	}
	if (!C->F || !C->soff || !C->succ || !C->last || !C->reach || !C->par || !C->live ||
	    !C->zkey || !C->zin || !C->zx || !C->kin || !C->kx || !C->kgen || !C->groups) {
		ctx_free(C);
		return NULL;
	}
	/* Successor lists from the predecessor CSR: visiting v in increasing
	 * order appends each u's successors in ascending order. */
	for (int k = 0; k < ne; k++)
		C->soff[P->pred[k] + 1]++;
	for (int u = 0; u < m; u++)
		C->soff[u + 1] += C->soff[u];
	int *fill = calloc(M, sizeof *fill);
	if (!fill) {
		ctx_free(C);
		return NULL;
	}
	for (int v = 0; v < m; v++)
		for (int k = P->pred_off[v]; k < P->pred_off[v + 1]; k++) {
			int u = P->pred[k];
			C->succ[C->soff[u] + fill[u]++] = v;
		}
	free(fill);
	/* F by first successor (min_succ, m when none). */
	double *add = C->zin; /* scratch, m+1 entries */
	memset(add, 0, M * sizeof *add);
	for (int u = 0; u < m; u++) {
		C->last[u] = C->soff[u + 1] > C->soff[u] ? C->succ[C->soff[u + 1] - 1] : -1;
		if (P->min_succ[u] < m)
			add[P->min_succ[u]] += P->ob[u];
	}
	for (int x = 0; x < m; x++)
		C->F[x + 1] = C->F[x] + add[x];
	return C;
}

/* ---- one start's segments ---- */

typedef struct seg_view {
	const pb_part_problem *P;
	const struct pb_exact_ctx *C;
	const int *zkey;        /* the start's live set by next(u) (see live_at) */
	const double *zin, *zx; /* ... and its prefix sums, nz + 1 entries */
	int a, nz, use_memory;
	double T, cap_macs; /* cap_macs: MACs n cores run within T */
} seg_view;

static int cmp_int(const void *x, const void *y)
{
	int p = *(const int *)x, q = *(const int *)y;
	return (p > q) - (p < q);
}

/* Moves the live set to cut a (a >= the previous cut) and tabulates it by
 * next(u): zkey[0..nz) the distinct next successors, ascending, with the
 * prefix sums zin and zx of the bytes of the live layers per key (many
 * live layers share one: a concat that takes every earlier output). */
static void live_at(const pb_part_problem *P, struct pb_exact_ctx *C, int *cut, int a)
{
	int w = 0;
	for (int i = 0; i < C->n_live; i++)
		if (C->last[C->live[i]] >= a)
			C->live[w++] = C->live[i];
	for (int u = *cut; u < a; u++)
		if (C->last[u] >= a)
			C->live[w++] = u;
	C->n_live = w;
	*cut = a;
	if (++C->gen == 0) {
		memset(C->kgen, 0, (size_t)C->m * sizeof *C->kgen);
		C->gen = 1;
	}
	int nz = 0;
	for (int i = 0; i < w; i++) {
		int u = C->live[i];
		/* next(u): the first successor >= a (binary search). */
		int lo = C->soff[u], hi = C->soff[u + 1] - 1;
		while (lo < hi) {
			int mid = lo + (hi - lo) / 2;
			if (C->succ[mid] >= a)
				hi = mid;
			else
				lo = mid + 1;
		}
		int key = C->succ[lo];
		if (C->kgen[key] != C->gen) {
			C->kgen[key] = C->gen;
			C->kin[key] = C->kx[key] = 0;
			C->zkey[nz++] = key;
		}
		C->kin[key] += P->ob[u];
		if (P->min_succ[u] < a)
			C->kx[key] += P->ob[u];
	}
	/* Few distinct keys, mostly in order: insertion sort, else qsort. */
	int *key = C->zkey;
	if (nz > 32) {
		qsort(key, (size_t)nz, sizeof *key, cmp_int);
	} else {
		for (int i = 1; i < nz; i++) {
			int k = key[i], j = i;
			for (; j > 0 && key[j - 1] > k; j--)
				key[j] = key[j - 1];
			key[j] = k;
		}
	}
	C->zin[0] = C->zx[0] = 0;
	for (int i = 0; i < nz; i++) {
		C->zin[i + 1] = C->zin[i] + C->kin[key[i]];
		C->zx[i + 1] = C->zx[i] + C->kx[key[i]];
	}
	C->nz = nz;
}

/* Entries of the sorted live set with next(u) < b. */
static inline int live_below(const seg_view *s, int b)
{
	const int *key = s->zkey;
	int nz = s->nz;
	if (nz == 0 || key[nz - 1] < b)
		return nz;
	int lo = 0, hi = nz - 1; /* key[hi] >= b */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (key[mid] >= b)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* c(a, b) at T, or INT_MAX when it exceeds r (or is infinite); *rt gets
 * the routing time and *in the bytes entering [a, b). */
static int seg_cores(const seg_view *s, int b, int r, double *rt_out, double *in_out)
{
	const pb_part_problem *P = s->P;
	const int a = s->a;
	int k = live_below(s, b);
	double in = s->zin[k];
	double bytes = s->C->F[b] - s->C->F[a] + s->zx[k];
	double rt = (bytes > 0 ? bytes : 0) / P->hw.bandwidth;
	*rt_out = rt;
	*in_out = in;
	double macs = P->pmacs[b] - P->pmacs[a];
	if (macs > s->cap_macs || rt > s->T)
		return INT_MAX;
	int c = 1;
	if (macs > 0) {
		double slack = s->T - rt;
		if (slack <= 0)
			return INT_MAX;
		double need = macs / (P->hw.mac_rate * slack);
		if (need > P->n)
			return INT_MAX;
		int ct = (int)ceil(need * CEIL_SLACK);
		if (ct > c)
			c = ct;
	}
	if (s->use_memory) {
		double need = (P->pstore[b] - P->pstore[a] + in) / P->hw.memory;
		if (need > P->n)
			return INT_MAX;
		int cm = (int)ceil(need * CEIL_SLACK);
		if (cm > c)
			c = cm;
	}
	return c > r ? INT_MAX : c;
}

/* Capacity of cc cores for an end x, given a known end `ref` of the start
 * with routing time rt and entering bytes in. The routing of [a, b) is
 * R(a, b) = F[b] - F[a] + (bytes of live layers whose next successor is
 * < b), so for x >= ref it is at least rt + (F[x] - F[ref]) / bw (the
 * outputs that join, consumed inside), and the entering bytes at least in.
 * c(a, x) <= cc then needs
 *   MACs(a, x) <= cc rate (T - rt - (F[x] - F[ref]) / bw), i.e.
 *   pmacs[x] + kf F[x] <= mac_lim, with kf = cc rate / bw, and
 *   pstore[x] <= mem_lim = pstore[a] - in + cc memory,
 * both monotone in x. The limits carry a slack for rounding (1e-9 of the
 * capacity, 1e-12 of the largest prefix sums), so
 * `fits` is a necessary condition for c(a, x) <= cc when x >= ref, and a
 * good guess otherwise. */
typedef struct cap_test {
	double kf, mac_lim, mem_lim;
} cap_test;

static cap_test capacity(const seg_view *s, int cc, double rt, double in, int ref)
{
	const pb_part_problem *P = s->P;
	double w = cc * P->hw.mac_rate * (1 + 1e-9);
	cap_test t;
	t.kf = w * s->C->inv_bw;
	/* Rounding of the sums themselves: relative to the largest terms. */
	double tol_mac = 1e-12 * (P->pmacs[P->m] + t.kf * s->C->F[P->m]);
	t.mac_lim = P->pmacs[s->a] + w * (s->T - rt) + t.kf * s->C->F[ref] + tol_mac;
	t.mem_lim = s->use_memory ? P->pstore[s->a] - in + cc * P->hw.memory * (1 + 1e-9) +
	                                1e-12 * P->pstore[P->m]
	                          : INFINITY;
	return t;
}

static inline int fits(const seg_view *s, const cap_test *t, int x)
{
	return s->P->pmacs[x] + t->kf * s->C->F[x] <= t->mac_lim && s->P->pstore[x] <= t->mem_lim;
}

/* A guess at the last end in [good, bad) that cc cores reach from a: the
 * largest one that fits, found by galloping from a hint (up if the hint
 * fits, else down) and bisection, so a close hint costs a few tests. Only
 * a guess: the caller tests it with seg_cores. */
static int guess_end(const seg_view *s, const cap_test *t, int good, int bad, int hint)
{
	int lo = good, hi = bad; /* lo: taken to fit; hi: past the end, or does not fit */
	int h = hint < lo ? lo : hint >= hi ? hi - 1 : hint;
	if (h > lo) {
		if (fits(s, t, h))
			lo = h;
		else
			hi = h;
	}
	if (lo == h) {
		for (int step = 1; hi - lo > 1; step <<= 1) {
			int x = lo + step;
			if (x >= hi)
				break;
			if (fits(s, t, x))
				lo = x;
			else
				hi = x;
		}
	} else {
		for (int step = 1; hi - lo > 1; step <<= 1) {
			int x = hi - step;
			if (x <= lo)
				break;
			if (fits(s, t, x))
				lo = x;
			else
				hi = x;
		}
	}
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;
		if (fits(s, t, mid))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Moves st->lo to f(a, c), the last end that c cores reach from st->a,
 * given c(a, st->lo + 1) <= c; updates rt, in and nnext. The search keeps
 * an end that fits (good) and one that does not (bad): first a few guesses
 * from the capacity at the routing of the last end tried (exact once the
 * routing stops growing), then galloping and bisection, so the guesses
 * only save work. */
static void find_end(const seg_view *s, struct pb_exact_ctx *C, start *st, int c, int r)
{
	const int m = C->m;
	int good = st->lo, bad = m + 1, ref = good;
	double rt = st->rt, in = st->in, rt_good = rt, in_good = in;
	double h = st->a + C->per_core * c;
	int hint = h < m ? (int)h : m;
	for (int tries = 0; tries < 4 && bad - good > 1; tries++) {
		cap_test t = capacity(s, c, rt, in, ref);
		int x = guess_end(s, &t, good, bad, hint);
		if (x <= good) /* the guess is what we know: test the next */
			x = good + 1;
		ref = hint = x;
		if (seg_cores(s, x, r, &rt, &in) <= c) {
			good = x;
			rt_good = rt;
			in_good = in;
		} else {
			bad = x;
			if (x == good + 1)
				break;
		}
	}
	for (int step = 1; bad > m && good < m; step <<= 1) {
		int x = good + step > m ? m : good + step;
		if (seg_cores(s, x, r, &rt, &in) <= c) {
			good = x;
			rt_good = rt;
			in_good = in;
		} else {
			bad = x;
		}
	}
	while (bad - good > 1) {
		int mid = good + (bad - good) / 2;
		if (seg_cores(s, mid, r, &rt, &in) <= c) {
			good = mid;
			rt_good = rt;
			in_good = in;
		} else {
			bad = mid;
		}
	}
	C->per_core = (double)(good - st->a) / c;
	st->lo = good;
	st->rt = rt_good;
	st->in = in_good;
	st->nnext = good < m ? seg_cores(s, good + 1, r, &rt, &in) : INT_MAX;
}

/* Whether c cores from st may reach past x: the capacity bound from st's
 * furthest end (a necessary condition for x > st->lo). */
static int may_pass(const seg_view *s, const start *st, int c, int x)
{
	if (x <= st->lo)
		return 1;
	cap_test t = capacity(s, c, st->rt, st->in, st->lo);
	return fits(s, &t, x);
}

/* Push order: the steps of c(a, .) from start level j into reach[] — for
 * each core count c the start can still use, the last end c cores reach,
 * unless may_pass shows it cannot match reach[j + c] already. */
static void push_start(const seg_view *s, struct pb_exact_ctx *C, int j)
{
	const int r = C->n - j;
	double rt, in;
	start st = {j, s->a, s->a, 0, 0, 0, 0, 0};
	st.nnext = seg_cores(s, s->a + 1, r, &rt, &in);
	for (int c = st.nnext; c <= r; c = st.nnext) {
		while (c <= r && !may_pass(s, &st, c, C->reach[j + c]))
			c++;
		if (c > r)
			return;
		find_end(s, C, &st, c, r);
		/* Ties go to the later start, as in the reference (the shortest
		 * last group), so both return the same partition. */
		if (st.lo >= C->reach[j + c]) {
			C->reach[j + c] = st.lo;
			C->par[j + c] = j;
		}
		if (st.lo == C->m)
			return;
	}
}

static void give_spare_cores(pb_part_problem *P, int ng, int *cores, const int *layers, int spare)
{
	/* Each spare core goes to the group whose time is currently largest.
	 * A group's MACs and routing do not depend on its cores: its new time
	 * is computed as pb_part_eval_group does, without costing it again. */
	double *t = malloc((size_t)ng * 3 * sizeof *t);
	if (!t) { /* out of memory: still a valid state */
		cores[ng - 1] += spare;
		return;
	}
	double *macs = t + ng, *routing = t + 2 * ng;
	int a = 0;
	for (int g = 0; g < ng; g++) {
		pb_part_group gr;
		pb_part_eval_group(P, a, a + layers[g], cores[g], &gr);
		t[g] = gr.time;
		macs[g] = gr.macs;
		routing[g] = gr.routing;
		a += layers[g];
	}
	while (spare-- > 0) {
		int best = 0;
		for (int g = 1; g < ng; g++)
			if (t[g] > t[best])
				best = g;
		cores[best]++;
		t[best] = macs[best] / ((double)cores[best] * P->hw.mac_rate) + routing[best];
	}
	free(t);
}

/* A view of the start at cut a whose tables live_at just built. */
static seg_view view_at(pb_part_problem *P, struct pb_exact_ctx *C, double T, int use_memory, int a)
{
	seg_view s = {P, C,     C->zkey,    C->zin, C->zx,
	              a, C->nz, use_memory, T,      T * P->hw.mac_rate * P->n};
	return s;
}

/* Dead start: the rest needs more than n - j cores at compute alone (the
 * margin keeps rounding from pruning a feasible start). */
static int dead_start(const pb_part_problem *P, double T, int j, int a)
{
	const double *pm = P->pmacs;
	return pm[P->m] - pm[a] >
	       (double)(P->n - j) * P->hw.mac_rate * T * (1 + 1e-9) + 1e-12 * pm[P->m];
}

static void reach_init(const pb_part_problem *P, struct pb_exact_ctx *C)
{
	C->inv_bw = 1.0 / P->hw.bandwidth;
	C->reach[0] = 0;
	for (int k = 1; k <= C->n; k++) {
		C->reach[k] = 0;
		C->par[k] = -1;
	}
	C->n_live = 0;
	C->per_core = (double)C->m / C->n;
}

/* Push order: each start pushes every step of its cost into the levels
 * above it. Needs one start's tables at a time. */
static int check_push(pb_part_problem *P, struct pb_exact_ctx *C, double T, int use_memory)
{
	const int m = P->m, n = P->n;
	int *reach = C->reach;
	reach_init(P, C);
	int cut = 0;
	for (int j = 0; j <= n; j++) {
		if (j > 0 && reach[j] <= reach[j - 1]) {
			reach[j] = reach[j - 1]; /* the same prefix, one core more */
			continue;
		}
		if (reach[j] == m)
			return j;
		if (j == n || dead_start(P, T, j, reach[j]))
			continue;
		live_at(P, C, &cut, reach[j]);
		seg_view s = view_at(P, C, T, use_memory, reach[j]);
		push_start(&s, C, j);
	}
	return INT_MAX;
}

/* Pull order: level k takes the best of the starts below it, newest first,
 * each searched only when may_pass says it could beat the best so far (a
 * later start usually covers more with the same total cores, so the older
 * ones mostly fail that O(1) test). Keeps every live start's tables, in a
 * pool of bounded size; returns -1 when the pool overflows (the caller
 * then runs check_push). */
static int check_pull(pb_part_problem *P, struct pb_exact_ctx *C, double T, int use_memory)
{
	const int m = P->m, n = P->n;
	int *reach = C->reach, *par = C->par;
	start *act = C->starts;
	int n_act = 0, cut = 0;
	size_t used = 0;
	reach_init(P, C);
	for (int k = 0;; k++) {
		/* reach[k] is final: a new start when it grew. */
		if (reach[k] == m)
			return k;
		if (k == n)
			return INT_MAX;
		if ((k == 0 || reach[k] > reach[k - 1]) && !dead_start(P, T, k, reach[k])) {
			int a = reach[k];
			live_at(P, C, &cut, a);
			if (used + (size_t)C->nz + 1 > C->pool_cap)
				return -1;
			start *st = &act[n_act];
			*st = (start){k, a, a, 0, 0, 0, used, C->nz};
			memcpy(C->pkey + used, C->zkey, (size_t)C->nz * sizeof *C->pkey);
			memcpy(C->pin + used, C->zin, ((size_t)C->nz + 1) * sizeof *C->pin);
			memcpy(C->px + used, C->zx, ((size_t)C->nz + 1) * sizeof *C->px);
			used += (size_t)C->nz + 1;
			seg_view s = view_at(P, C, T, use_memory, a);
			double rt, in;
			st->nnext = seg_cores(&s, a + 1, n - k, &rt, &in);
			if (st->nnext <= n - k)
				n_act++;
		}
		/* Level k + 1. */
		int best = reach[k], from = -1, w = n_act;
		for (int i = n_act - 1; i >= 0 && best < m; i--) {
			start *st = &act[i];
			int c = k + 1 - st->j;
			if (c < st->nnext) /* cannot pass st->lo, offered before */
				continue;
			seg_view s = {P,
			              C,
			              C->pkey + st->off,
			              C->pin + st->off,
			              C->px + st->off,
			              st->a,
			              st->nz,
			              use_memory,
			              T,
			              T * P->hw.mac_rate * n};
			if (!may_pass(&s, st, c, best + 1))
				continue;
			find_end(&s, C, st, c, n - st->j);
			if (st->lo > best) {
				best = st->lo;
				from = st->j;
			}
			if (st->nnext > n - st->j) { /* done: reached m or its cores */
				st->j = -1;
				w--;
			}
		}
		if (w < n_act) { /* drop the finished starts, keeping the order */
			int o = 0;
			for (int i = 0; i < n_act; i++)
				if (act[i].j >= 0)
					act[o++] = act[i];
			n_act = o;
		}
		reach[k + 1] = best;
		par[k + 1] = from;
	}
}

/* The check with the context's tables; see pb_part_exact_min_cores. */
static int check_fast(pb_part_problem *P, struct pb_exact_ctx *C, double T, int use_memory, int *ac)
{
	const int n = P->n;
	int total = check_pull(P, C, T, use_memory);
	if (total < 0)
		total = check_push(P, C, T, use_memory);
	if (total > n || !ac)
		return total;
	/* The groups, backwards from the level that reached m. */
	const int *reach = C->reach, *par = C->par;
	int ng = 0;
	for (int k = total; k > 0; k = par[k])
		ng++;
	int *cores = C->groups, *layers = C->groups + n + 1;
	int g = ng;
	for (int k = total; k > 0; k = par[k]) {
		g--;
		layers[g] = reach[k] - reach[par[k]];
		cores[g] = k - par[k];
	}
	give_spare_cores(P, ng, cores, layers, n - total);
	pb_part_state_from_groups(ng, cores, layers, ac);
	return total;
}

int pb_part_exact_min_cores(pb_part_problem *P, double T, int use_memory, int *dp, int *from,
                            int *ac)
{
	(void)dp;
	(void)from;
	struct pb_exact_ctx *C = ctx_new(P);
	if (!C) /* out of memory: the reference needs no tables */
		return pb_part_exact_min_cores_ref(P, T, use_memory, dp, from, ac);
	int total = check_fast(P, C, T, use_memory, ac);
	ctx_free(C);
	return total;
}

/* ---- the reference: the previous DP over prefixes ---- */

/*
 * dp[b] = the fewest cores that cover layers [0, b) with every group's time
 * <= T and storage <= memory; for a fixed end b the start a walks down with
 * in_bytes(a, b) updated in O(1) per edge (pred_next), and only the last
 * index of each dp level is a candidate start. Close to O(m^2) per check.
 */
int pb_part_exact_min_cores_ref(pb_part_problem *P, double T, int use_memory, int *dp, int *from,
                                int *ac)
{
	const int m = P->m, n = P->n;
	const double rate = P->hw.mac_rate, bw = P->hw.bandwidth, mem = P->hw.memory;
	const double *pm = P->pmacs, *ps = P->pstore, *ob = P->ob;
	const double cap_macs = T * rate * n; /* MACs that n cores run within T */
	dp[0] = 0;
	for (int b = 1; b <= m; b++) {
		int best = INT_MAX, arg = -1;
		double in = 0, own = 0;
		for (int a = b - 1; a >= 0; a--) {
			/* Move the start from a+1 to a: node a joins the segment. */
			if (P->min_succ[a] < b) {
				in -= ob[a];
				own += ob[a];
			}
			for (int k = P->pred_off[a]; k < P->pred_off[a + 1]; k++)
				if (P->pred_next[k] >= b)
					in += ob[P->pred[k]];
			double macs = pm[b] - pm[a];
			if (macs > cap_macs)
				break;
			/* dp is non-decreasing in a and c(a, b) non-increasing, so only
			 * the last index of each dp level can be the best start. */
			if (a + 1 < b && dp[a + 1] == dp[a])
				continue;
			if (dp[a] >= n)
				continue;
			double rt = ((in > 0 ? in : 0) + own) / bw;
			if (rt > T)
				break; /* traffic only grows as a decreases */
			int c = 1;
			if (macs > 0) {
				double slack = T - rt;
				if (slack <= 0)
					break;
				double need = macs / (rate * slack);
				if (need > n)
					break;
				int ct = (int)ceil(need * CEIL_SLACK);
				if (ct > c)
					c = ct;
			}
			if (use_memory) {
				double need = (ps[b] - ps[a] + (in > 0 ? in : 0)) / mem;
				if (need > n)
					break;
				int cm = (int)ceil(need * CEIL_SLACK);
				if (cm > c)
					c = cm;
			}
			if (c >= best)
				break; /* c only grows further left, and dp >= 0 */
			if (dp[a] + c < best) {
				best = dp[a] + c;
				arg = a;
			}
		}
		dp[b] = best;
		from[b] = arg;
	}
	int total = dp[m];
	if (total > n || !ac)
		return total;
	/* Reconstruct groups (backwards), then hand out spare cores. */
	int ng = 0;
	for (int b = m; b > 0; b = from[b])
		ng++;
	int *cores = malloc((size_t)ng * 2 * sizeof *cores), *layers = cores + ng;
	int g = ng;
	for (int b = m; b > 0; b = from[b]) {
		g--;
		layers[g] = b - from[b];
		cores[g] = dp[b] - dp[from[b]];
	}
	give_spare_cores(P, ng, cores, layers, n - total);
	pb_part_state_from_groups(ng, cores, layers, ac);
	free(cores);
	return total;
}

/* ---- the search ---- */

static int check(pb_part_exact *E, double T, int use_memory, int *ac)
{
	if (E->reference)
		return pb_part_exact_min_cores_ref(E->P, T, use_memory, E->dp, E->from, ac);
	return check_fast(E->P, E->ctx, T, use_memory, ac);
}

static int exact_init(pb_part_exact *E, pb_part_problem *P, int reference, pb_error *err)
{
	memset(E, 0, sizeof *E);
	E->P = P;
	E->reference = reference;
	size_t M = (size_t)P->m + 1;
	E->best = malloc((size_t)P->n * sizeof *E->best);
	E->scratch = malloc((size_t)P->n * sizeof *E->scratch);
	if (reference) {
		E->dp = malloc(M * sizeof *E->dp);
		E->from = malloc(M * sizeof *E->from);
	} else {
		E->ctx = ctx_new(P);
	}
	if (!E->best || !E->scratch || (reference ? !E->dp || !E->from : !E->ctx)) {
		pb_part_exact_free(E);
		return pb_err(err, PB_ENOMEM, "exact: out of memory");
	}
	/* Is there any partition that fits the memory limit? */
	E->use_memory = 1;
	if (check(E, INFINITY, 1, E->best) > P->n) {
		E->use_memory = 0;
		if (reference) {
			check(E, INFINITY, 0, E->best);
		} else {
			/* Without memory and T, one group of all cores covers
			 * everything: what the check would return. */
			memset(E->best, 0, (size_t)P->n * sizeof *E->best);
			E->best[P->n - 1] = P->m;
		}
	}
	E->memory_feasible = E->use_memory;
	pb_part_eval ev;
	pb_part_evaluate(P, E->best, &ev, NULL);
	E->hi = ev.max_time;
	/* The reference starts from the greedy split, usually much tighter;
	 * it costs O(n (m + E)), more than the few checks it saves now. */
	if (reference) {
		pb_part_greedy(P, E->scratch);
		pb_part_evaluate(P, E->scratch, &ev, NULL);
		if (ev.max_time < E->hi && (!ev.over_memory || !E->use_memory)) {
			E->hi = ev.max_time;
			memcpy(E->best, E->scratch, (size_t)P->n * sizeof *E->best);
		}
	}
	E->lo = P->lower_bound * (1 - 1e-12);
	if (E->lo >= E->hi)
		E->done = 1;
	return PB_OK;
}

int pb_part_exact_needs_labels(const pb_part_problem *P)
{
	return P->cut || P->pin || P->hw.reward_mode == PB_REWARD_WEIGHTED;
}

static int labels_init(pb_part_exact *E, pb_part_problem *P, pb_error *err)
{
	memset(E, 0, sizeof *E);
	E->P = P;
	E->labels = 1;
	E->best = malloc((size_t)P->n * sizeof *E->best);
	E->scratch = malloc((size_t)P->n * sizeof *E->scratch);
	if (!E->best || !E->scratch) {
		pb_part_exact_free(E);
		return pb_err(err, PB_ENOMEM, "exact: out of memory");
	}
	double obj;
	int exact = 1;
	int rc = pb_part_exact_labels(P, E->best, &obj, &E->memory_feasible, &exact, err);
	if (rc) {
		pb_part_exact_free(E);
		return rc;
	}
	E->use_memory = E->memory_feasible;
	E->not_exact = !exact;
	E->lo = E->hi = obj;
	E->checks = 1;
	E->done = 1;
	return PB_OK;
}

int pb_part_exact_init(pb_part_exact *E, pb_part_problem *P, pb_error *err)
{
	if (pb_part_exact_needs_labels(P))
		return labels_init(E, P, err);
	return exact_init(E, P, 0, err);
}

int pb_part_exact_step(pb_part_exact *E, int checks)
{
	pb_part_problem *P = E->P;
	while (!E->done && checks-- > 0) {
		if (E->hi - E->lo <= PB_EXACT_RTOL * E->hi) {
			E->done = 1;
			break;
		}
		/* Bisect while the bracket is wide; then probe just below hi: the
		 * optimum is the time of some group, so once no partition beats hi
		 * by more than the tolerance, hi is the optimum. */
		double mid;
		if (E->hi > 2 * E->lo && E->lo > 0)
			mid = sqrt(E->lo * E->hi);
		else if (E->hi - E->lo > 1e-4 * E->hi)
			mid = 0.5 * (E->lo + E->hi);
		else
			mid = E->hi * (1 - 0.5 * PB_EXACT_RTOL);
		E->checks++;
		int need = check(E, mid, E->use_memory, E->scratch);
		if (need > P->n) {
			E->lo = mid;
			continue;
		}
		pb_part_eval ev;
		pb_part_evaluate(P, E->scratch, &ev, NULL);
		if (ev.max_time < E->hi) {
			E->hi = ev.max_time;
			memcpy(E->best, E->scratch, (size_t)P->n * sizeof *E->best);
		}
	}
	if (E->hi - E->lo <= PB_EXACT_RTOL * E->hi)
		E->done = 1;
	return E->done;
}

void pb_part_exact_free(pb_part_exact *E)
{
	free(E->best);
	free(E->scratch);
	free(E->dp);
	free(E->from);
	ctx_free(E->ctx);
	E->best = E->scratch = E->dp = E->from = NULL;
	E->ctx = NULL;
}

static int exact_solve(pb_part_problem *P, int reference, double *optimum, int *ac,
                       int *memory_feasible, pb_error *err)
{
	pb_part_exact E;
	int rc = reference || !pb_part_exact_needs_labels(P) ? exact_init(&E, P, reference, err)
	                                                     : labels_init(&E, P, err);
	if (rc)
		return rc;
	while (!pb_part_exact_step(&E, 64))
		;
	pb_part_eval ev;
	pb_part_evaluate(P, E.best, &ev, NULL);
	*optimum = ev.max_time;
	if (ac)
		memcpy(ac, E.best, (size_t)P->n * sizeof *ac);
	if (memory_feasible)
		*memory_feasible = E.memory_feasible;
	pb_part_exact_free(&E);
	return PB_OK;
}

int pb_part_exact_solve(pb_part_problem *P, double *optimum, int *ac, int *memory_feasible,
                        pb_error *err)
{
	return exact_solve(P, 0, optimum, ac, memory_feasible, err);
}

int pb_part_exact_solve_ref(pb_part_problem *P, double *optimum, int *ac, int *memory_feasible,
                            pb_error *err)
{
	return exact_solve(P, 1, optimum, ac, memory_feasible, err);
}
