/*
 * local_search.c — the iterated local search behind `--method local`
 * (pb_part_ils*, declared in baselines.h). It improves the state it is
 * given (the solver gives it greedy's partition); nothing here reads the
 * exact optimum or the exact plan: only the problem and the start.
 *
 * State: k groups, group g covering layers [S[g], S[g+1]) on C[g] cores
 * (the cores sum to n). The search compares groups by a cost h: the group's
 * time (compute + routing), or 1e6 x (1 + storage) + time when its storage
 * per core exceeds the core memory, so the largest h orders states as
 * pb_part_objective does (memory overflow first, then max(t)). h grows with
 * a segment's end, shrinks as its start moves later and never grows with
 * more cores.
 *
 * Descent. A move re-forms a window of 1..W adjacent groups (W = 3 by
 * default) that holds a group at the maximum h:
 *   - the same groups with other core counts: every split of a pair's
 *     cores, one core moved between two groups of a larger window;
 *   - one core more, taken from the group outside the window that loses
 *     least by giving it up;
 *   - one of its groups split in two (every split of its cores; a one-core
 *     group splits with a taken core);
 *   - two adjacent groups of it merged.
 * For the new core counts the window's cuts are then placed so that its
 * largest h is smallest: a bisection on that value, each group taking as
 * many layers as fit (by the monotonicity above, packing from the left
 * decides exactly whether a value is reachable). So one move can shift a
 * cut across a whole block, where single-layer moves would have to climb
 * over the routing peak inside it. A move counts only when every group it
 * changes ends strictly below the current maximum (then the maximum, or the
 * number of groups at it, falls, so the descent terminates); of those, the
 * one with the smallest new largest h is applied.
 *
 * When no window move improves, moves of the whole chain: every cut placed
 * anew for the same cores, or after one edit of the cores — a core moved
 * between any two groups, a group split (evenly, or one core off either
 * end), two adjacent groups merged, or merged on one core fewer with that
 * core given to any other group. Cutting anew lets slack far from the
 * bottleneck travel to it (each cut moves a little). A candidate is
 * screened in O(changed groups) packings: the groups before the edit packed
 * from the left and those after it from the right are computed once per
 * move; the first candidate that brings every group strictly below the
 * maximum is applied with its cuts placed by the bisection.
 *
 * Restarts. At a local optimum, up to `restarts` kicks of that state: a
 * window of 2..6 groups (around a group at the maximum half of the time) is
 * re-formed into a random number of groups with random core counts, its
 * cuts placed as above, and sometimes one core moves between two random
 * groups; a descent follows, and a result better than the state replaces
 * it. The random generator (splitmix64) is seeded from the options' seed and
 * the state the step started from, so a step's result is a pure function of
 * (problem, state, options).
 *
 * Invariants: every state is valid (k >= 1, each group >= 1 layer and >= 1
 * core, sum of cores = n); a step changes the caller's state only when
 * pb_part_objective strictly falls, so the result is never worse than the
 * start.
 */
#include "partition/chain/baselines.h"

#include "util/error.h"
#include "util/job.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ILS_TIE 1e-12   /* relative: h values this close count as equal */
#define ILS_KICK_MAX 6  /* largest window a kick re-forms */
#define ILS_BISECT 1e-9 /* relative precision of a window's bisection */

typedef struct ils_state {
	int k;
	int *S, *C; /* S: k+1 entries */
	double *H;
} ils_state;

typedef struct ils {
	pb_part_problem *P;
	int n, m, W, global;
	ils_state cur, save, home; /* working state, a copy, the step's best */
	double *dh;                /* h of each group with one core fewer */
	int *cv, *cut, *tcut;      /* a candidate: core counts, group ends */
	int *bcv, *bcut;           /* the best move so far */
	int *pre, *suf;            /* packings of the whole chain (packings()) */
	int bw, bg0, bg1, bdonor;
	double bval;
	uint64_t rng;
} ils;

static uint64_t ils_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform integer in [0, bound) (bound >= 1). */
static int ils_below(ils *I, int bound)
{
	return (int)(ils_rand(&I->rng) % (uint64_t)bound);
}

static double seg_h(ils *I, int a, int b, int cores)
{
	pb_part_group g;
	pb_part_eval_group(I->P, a, b, cores, &g);
	return g.storage > I->P->hw.memory ? 1e6 * (1.0 + g.storage) + g.time : g.time;
}

/* Largest end e in (s, emax] with h(s, e, cores) <= T; -1 when none. */
static int furthest(ils *I, int s, int emax, int cores, double T)
{
	if (s + 1 > emax || seg_h(I, s, s + 1, cores) > T)
		return -1;
	int lo = s + 1, hi = emax;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (seg_h(I, s, mid, cores) <= T)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Packs layers [A, B) into w groups with cores cv, each within T, from the
 * left; 1 when it fits, with the group ends in cut and the largest h. */
static int fit(ils *I, int A, int B, int w, const int *cv, double T, int *cut, double *worst)
{
	int s = A;
	double mx = 0;
	for (int i = 0; i + 1 < w; i++) {
		int e = furthest(I, s, B - (w - 1 - i), cv[i], T);
		if (e < 0)
			return 0;
		double h = seg_h(I, s, e, cv[i]);
		mx = h > mx ? h : mx;
		cut[i] = e;
		s = e;
	}
	double h = seg_h(I, s, B, cv[w - 1]);
	if (h > T)
		return 0;
	cut[w - 1] = B;
	*worst = h > mx ? h : mx;
	return 1;
}

/* The cuts of [A, B) into w groups with cores cv that minimise the largest
 * h, if that is at most lim: 1 with the ends in cut and the value in val. */
static int place(ils *I, int A, int B, int w, const int *cv, double lim, int *cut, double *val)
{
	double hi, got, lo;
	if (B - A < w || !fit(I, A, B, w, cv, lim, cut, &hi))
		return 0;
	int cores = 0;
	for (int i = 0; i < w; i++)
		cores += cv[i];
	/* No group can beat the window's perfect balance. */
	lo = (I->P->pmacs[B] - I->P->pmacs[A]) / (cores * I->P->hw.mac_rate);
	for (int it = 0; it < 80 && hi - lo > ILS_BISECT * hi; it++) {
		double mid = 0.5 * (lo + hi);
		if (fit(I, A, B, w, cv, mid, I->tcut, &got)) {
			hi = got;
			memcpy(cut, I->tcut, (size_t)w * sizeof *cut);
		} else {
			lo = mid;
		}
	}
	*val = hi;
	return 1;
}

static int state_alloc(ils_state *s, int n)
{
	s->S = malloc(((size_t)n + 1) * sizeof *s->S);
	s->C = malloc((size_t)n * sizeof *s->C);
	s->H = malloc((size_t)n * sizeof *s->H);
	return s->S && s->C && s->H;
}

static void state_free(ils_state *s)
{
	free(s->S);
	free(s->C);
	free(s->H);
}

static void state_copy(ils_state *d, const ils_state *s)
{
	d->k = s->k;
	memcpy(d->S, s->S, ((size_t)s->k + 1) * sizeof *s->S);
	memcpy(d->C, s->C, (size_t)s->k * sizeof *s->C);
	memcpy(d->H, s->H, (size_t)s->k * sizeof *s->H);
}

static void state_from_ac(ils *I, ils_state *s, const int *ac)
{
	s->k = pb_part_groups_of_state(I->n, ac, s->S, s->C);
	for (int g = 0; g < s->k; g++)
		s->H[g] = seg_h(I, s->S[g], s->S[g + 1], s->C[g]);
}

static void state_to_ac(const ils *I, const ils_state *s, int *ac)
{
	int c = 0;
	for (int g = 0; g < s->k; g++) {
		for (int j = 1; j < s->C[g]; j++)
			ac[c++] = 0;
		ac[c++] = s->S[g + 1] - s->S[g];
	}
}

/* The largest h and how many groups are at it. */
static double state_max(const ils_state *s, int *at)
{
	double M = 0;
	for (int g = 0; g < s->k; g++)
		M = s->H[g] > M ? s->H[g] : M;
	*at = 0;
	for (int g = 0; g < s->k; g++)
		*at += s->H[g] >= M * (1 - ILS_TIE);
	return M;
}

/* 1 when a is better than b: a lower maximum, or as high with fewer
 * groups at it. */
static int state_better(const ils_state *a, const ils_state *b)
{
	int na, nb;
	double ma = state_max(a, &na), mb = state_max(b, &nb);
	if (ma < mb * (1 - ILS_TIE))
		return 1;
	return ma <= mb * (1 + ILS_TIE) && na < nb;
}

/* Replaces groups g0..g1 of the working state by w groups (cores cv, ends
 * cut) and takes one core from group donor (outside the window) if >= 0. */
static void apply(ils *I, int g0, int g1, int w, const int *cv, const int *cut, int donor)
{
	ils_state *c = &I->cur, *t = &I->save;
	int k = 0;
	for (int g = 0; g < g0; g++, k++) {
		t->S[k] = c->S[g];
		t->C[k] = c->C[g];
		t->H[k] = c->H[g];
	}
	for (int i = 0; i < w; i++, k++) {
		t->S[k] = i == 0 ? c->S[g0] : cut[i - 1];
		t->C[k] = cv[i];
		t->H[k] = seg_h(I, t->S[k], cut[i], cv[i]);
	}
	int shift = w - (g1 - g0 + 1);
	for (int g = g1 + 1; g < c->k; g++, k++) {
		t->S[k] = c->S[g];
		t->C[k] = c->C[g];
		t->H[k] = c->H[g];
	}
	t->k = k;
	t->S[k] = I->m;
	if (donor >= 0) {
		int d = donor > g1 ? donor + shift : donor;
		t->C[d]--;
		t->H[d] = seg_h(I, t->S[d], t->S[d + 1], t->C[d]);
	}
	state_copy(c, t);
}

/* Offers a candidate for the window g0..g1: w groups with cores I->cv,
 * plus one core from donor (>= 0) whose h then is dval. Keeps it as the
 * best move when its largest h is below I->bval. */
static void offer(ils *I, int g0, int g1, int w, int donor, double dval)
{
	if (donor >= 0 && dval >= I->bval)
		return;
	const ils_state *c = &I->cur;
	double val;
	if (!place(I, c->S[g0], c->S[g1 + 1], w, I->cv, I->bval, I->cut, &val))
		return;
	if (donor >= 0 && dval > val)
		val = dval;
	if (val >= I->bval)
		return;
	I->bval = val;
	I->bw = w;
	I->bg0 = g0;
	I->bg1 = g1;
	I->bdonor = donor;
	memcpy(I->bcv, I->cv, (size_t)w * sizeof *I->cv);
	memcpy(I->bcut, I->cut, (size_t)w * sizeof *I->cut);
}

/* Every move of the window g0..g1 (file comment). */
static void window_moves(ils *I, int g0, int g1)
{
	pb_job_tick();
	const ils_state *c = &I->cur;
	int w = g1 - g0 + 1, cores = 0;
	for (int g = g0; g <= g1; g++)
		cores += c->C[g];
	/* The donor: the group outside the window that loses least. */
	int donor = -1;
	for (int g = 0; g < c->k; g++)
		if ((g < g0 || g > g1) && isfinite(I->dh[g]) &&
		    (donor < 0 || I->dh[g] < I->dh[donor]))
			donor = g;
	double dval = donor >= 0 ? I->dh[donor] : INFINITY;
	int *cv = I->cv, extra = donor >= 0 ? 1 : 0; /* cores a move may take */
	/* Same groups, other core counts. */
	if (w == 2) {
		for (int a = 1; a < cores; a++) {
			cv[0] = a;
			cv[1] = cores - a;
			offer(I, g0, g1, 2, -1, 0);
		}
	} else if (w > 2) {
		memcpy(cv, c->C + g0, (size_t)w * sizeof *cv);
		offer(I, g0, g1, w, -1, 0);
		for (int i = 0; i < w; i++)
			for (int j = 0; j < w; j++) {
				if (i == j || c->C[g0 + i] < 2)
					continue;
				memcpy(cv, c->C + g0, (size_t)w * sizeof *cv);
				cv[i]--;
				cv[j]++;
				offer(I, g0, g1, w, -1, 0);
			}
	}
	/* One core more, to each group of the window. */
	if (donor >= 0)
		for (int j = 0; j < w; j++) {
			memcpy(cv, c->C + g0, (size_t)w * sizeof *cv);
			cv[j]++;
			offer(I, g0, g1, w, donor, dval);
		}
	/* A group split in two, with its own cores (every split when the
	 * window is that group, else the even one) and with a taken core. */
	for (int j = 0; j < w; j++) {
		if (c->S[g0 + j + 1] - c->S[g0 + j] < 2)
			continue;
		memcpy(cv, c->C + g0, (size_t)j * sizeof *cv);
		memcpy(cv + j + 2, c->C + g0 + j + 1, (size_t)(w - j - 1) * sizeof *cv);
		for (int more = 0; more <= extra; more++) {
			int cj = c->C[g0 + j] + more;
			int a0 = w == 1 ? 1 : cj / 2, a1 = w == 1 ? cj - 1 : (cj + 1) / 2;
			for (int a = a0 > 1 ? a0 : 1; a <= a1 && a < cj; a++) {
				cv[j] = a;
				cv[j + 1] = cj - a;
				offer(I, g0, g1, w + 1, more ? donor : -1, dval);
			}
		}
	}
	/* Two adjacent groups merged, with their cores and with a taken one. */
	for (int j = 0; j + 1 < w; j++)
		for (int more = 0; more <= extra; more++) {
			int o = 0;
			for (int i = 0; i < w; i++)
				if (i == j + 1)
					cv[o - 1] += c->C[g0 + i] + more;
				else
					cv[o++] = c->C[g0 + i];
			offer(I, g0, g1, w - 1, more ? donor : -1, dval);
		}
}

/* Smallest start s in [smin, e) with h(s, e, cores) <= T; -1 when none. */
static int nearest(ils *I, int smin, int e, int cores, double T)
{
	if (smin >= e || seg_h(I, e - 1, e, cores) > T)
		return -1;
	int lo = smin, hi = e - 1;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (seg_h(I, mid, e, cores) <= T)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The working state's cores packed within T: pre[g] is the furthest end of
 * groups 0..g-1 packed from the left (pre[0] = 0), suf[g] the earliest
 * start from which groups g..k-1 cover the rest packed from the right
 * (suf[k] = m); -1 once a packing fails. */
static void packings(ils *I, double T)
{
	const ils_state *c = &I->cur;
	int k = c->k;
	I->pre[0] = 0;
	for (int g = 0; g < k; g++)
		I->pre[g + 1] =
		    I->pre[g] < 0 ? -1 : furthest(I, I->pre[g], I->m - (k - 1 - g), c->C[g], T);
	I->suf[k] = I->m;
	for (int g = k - 1; g >= 0; g--)
		I->suf[g] = I->suf[g + 1] < 0 ? -1 : nearest(I, g, I->suf[g + 1], c->C[g], T);
}

/* 1 when w groups of cores cv in place of groups lo..hi can be packed
 * within T between the packings of the groups around them. */
static int middle_fits(ils *I, int lo, int hi, int w, const int *cv, double T)
{
	int k = I->cur.k, x = I->pre[lo], after = k - 1 - hi;
	int need = hi + 1 < k ? I->suf[hi + 1] : I->m;
	if (x < 0 || need < 0)
		return 0;
	for (int i = 0; i < w && x >= 0; i++)
		x = furthest(I, x, I->m - (w - 1 - i) - after, cv[i], T);
	return x >= need;
}

/* Tries cores cv (w groups) in place of groups lo..hi with every cut of
 * the chain placed anew; applies it and returns 1 when all groups then end
 * below tau. */
static int global_try(ils *I, int lo, int hi, int w, const int *cv, double tau)
{
	pb_job_tick();
	const ils_state *c = &I->cur;
	if (!middle_fits(I, lo, hi, w, cv, tau))
		return 0;
	int *all = I->bcv, nk = 0;
	for (int g = 0; g < lo; g++)
		all[nk++] = c->C[g];
	for (int i = 0; i < w; i++)
		all[nk++] = cv[i];
	for (int g = hi + 1; g < c->k; g++)
		all[nk++] = c->C[g];
	double val;
	if (!place(I, 0, I->m, nk, all, tau, I->bcut, &val))
		return 0;
	apply(I, 0, c->k - 1, nk, all, I->bcut, -1);
	return 1;
}

/* A move of the whole chain (file comment): its cuts placed anew for the
 * same cores, or with one core moved between any two groups, a group split
 * or two merged. The first one that brings every group below tau. */
static int global_move(ils *I, double tau)
{
	const ils_state *c = &I->cur;
	int k = c->k, *cv = I->cv;
	packings(I, tau);
	if (I->pre[k] == I->m && global_try(I, 0, k - 1, k, c->C, tau))
		return 1;
	for (int i = 0; i < k; i++)
		for (int j = 0; j < k; j++) {
			if (i == j || c->C[i] < 2)
				continue;
			int lo = i < j ? i : j, hi = i < j ? j : i;
			memcpy(cv, c->C + lo, (size_t)(hi - lo + 1) * sizeof *cv);
			cv[i - lo]--;
			cv[j - lo]++;
			if (global_try(I, lo, hi, hi - lo + 1, cv, tau))
				return 1;
		}
	for (int g = 0; g < k; g++) {
		int cg = c->C[g];
		if (c->S[g + 1] - c->S[g] < 2 || cg < 2)
			continue;
		int as[3] = {cg / 2, 1, cg - 1};
		for (int q = 0; q < 3; q++) {
			if (q > 0 && as[q] == as[0])
				continue;
			cv[0] = as[q];
			cv[1] = cg - as[q];
			if (global_try(I, g, g, 2, cv, tau))
				return 1;
		}
	}
	for (int g = 0; g + 1 < k; g++) {
		cv[0] = c->C[g] + c->C[g + 1];
		if (global_try(I, g, g + 1, 1, cv, tau))
			return 1;
	}
	/* Two groups merged on one core fewer, that core given to group j. */
	for (int g = 0; g + 1 < k; g++)
		for (int j = 0; j < k; j++) {
			if (j == g || j == g + 1)
				continue;
			int lo = j < g ? j : g, hi = j > g + 1 ? j : g + 1, w = 0;
			for (int q = lo; q <= hi; q++)
				if (q == g + 1)
					cv[w - 1] += c->C[q] - 1;
				else
					cv[w++] = c->C[q] + (q == j);
			if (global_try(I, lo, hi, w, cv, tau))
				return 1;
		}
	return 0;
}

/* One descent move; 1 when the working state improved. */
static int descend_move(ils *I)
{
	ils_state *c = &I->cur;
	int at;
	double M = state_max(c, &at);
	for (int g = 0; g < c->k; g++)
		I->dh[g] = c->C[g] >= 2 ? seg_h(I, c->S[g], c->S[g + 1], c->C[g] - 1) : INFINITY;
	for (int b = 0; b < c->k; b++) {
		if (c->H[b] < M * (1 - ILS_TIE))
			continue;
		I->bval = M * (1 - ILS_TIE);
		I->bw = 0;
		for (int w = 1; w <= I->W && w <= c->k; w++) {
			int lo = b - w + 1 > 0 ? b - w + 1 : 0;
			int hi = b < c->k - w ? b : c->k - w;
			for (int g0 = lo; g0 <= hi; g0++)
				window_moves(I, g0, g0 + w - 1);
		}
		if (I->bw > 0) {
			apply(I, I->bg0, I->bg1, I->bw, I->bcv, I->bcut, I->bdonor);
			return 1;
		}
	}
	return I->global && global_move(I, M * (1 - ILS_TIE));
}

static void descend(ils *I)
{
	while (descend_move(I))
		;
}

/* A random kick of the working state (file comment). */
static void kick(ils *I)
{
	ils_state *c = &I->cur;
	int at;
	double M = state_max(c, &at);
	int g = ils_below(I, c->k);
	if (ils_below(I, 2) == 0) { /* a group at the maximum */
		int r = ils_below(I, at);
		for (g = 0; g < c->k; g++)
			if (c->H[g] >= M * (1 - ILS_TIE) && r-- == 0)
				break;
	}
	int w = 2 + ils_below(I, ILS_KICK_MAX - 1);
	w = w < c->k ? w : c->k;
	int g0 = g - ils_below(I, w);
	g0 = g0 < 0 ? 0 : g0 > c->k - w ? c->k - w : g0;
	int g1 = g0 + w - 1, cores = 0, layers = c->S[g1 + 1] - c->S[g0];
	for (int i = g0; i <= g1; i++)
		cores += c->C[i];
	int most = cores < layers ? cores : layers, least = w - 2 > 1 ? w - 2 : 1;
	most = most < w + 2 ? most : w + 2;
	least = least < most ? least : most;
	int nw = least + ils_below(I, most - least + 1);
	for (int i = 0; i < nw; i++)
		I->cv[i] = 1;
	for (int r = cores - nw; r > 0; r--)
		I->cv[ils_below(I, nw)]++;
	double val;
	if (place(I, c->S[g0], c->S[g1 + 1], nw, I->cv, INFINITY, I->cut, &val))
		apply(I, g0, g1, nw, I->cv, I->cut, -1);
	if (c->k >= 2 && ils_below(I, 3) == 0) { /* one core between two groups */
		int from = ils_below(I, c->k), to = ils_below(I, c->k - 1);
		to += to >= from;
		if (c->C[from] >= 2) {
			c->C[from]--;
			c->C[to]++;
			c->H[from] = seg_h(I, c->S[from], c->S[from + 1], c->C[from]);
			c->H[to] = seg_h(I, c->S[to], c->S[to + 1], c->C[to]);
		}
	}
}

void pb_part_ils_defaults(pb_part_ils_opts *o)
{
	o->seed = 1;
	o->restarts = 32;
	o->window = 3;
	o->global = 1;
}

static void ils_free(ils *I)
{
	state_free(&I->cur);
	state_free(&I->save);
	state_free(&I->home);
	free(I->dh);
	free(I->cv);
}

static double objective_of(pb_part_problem *P, const int *ac)
{
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	return pb_part_objective(&ev);
}

int pb_part_ils_step(pb_part_problem *P, int *ac, const pb_part_ils_opts *opts)
{
	pb_part_ils_opts o;
	if (opts)
		o = *opts;
	else
		pb_part_ils_defaults(&o);
	int n = P->n, improved = 0;
	if (P->m < 1 || n < 1 || !pb_part_state_valid(P, ac, NULL))
		return 0;
	/* Searches revisit the same segments many times: the problem's segment
	 * cache (bit-identical results) makes that much cheaper. */
	if (!P->seg) {
		pb_error ignored = {0};
		pb_part_problem_cache(P, 16, &ignored);
	}
	ils I = {0};
	I.P = P;
	I.n = n;
	I.m = P->m;
	I.W = o.window < 1 ? 1 : o.window;
	size_t w = (size_t)n + 8; /* windows may grow by a group */
	I.dh = malloc((size_t)n * sizeof *I.dh);
	I.cv = malloc(7 * w * sizeof *I.cv);
	I.global = o.global;
	int *out = malloc((size_t)n * sizeof *out);
	if (!state_alloc(&I.cur, n) || !state_alloc(&I.save, n) || !state_alloc(&I.home, n) ||
	    !I.dh || !I.cv || !out)
		goto done;
	I.cut = I.cv + w;
	I.tcut = I.cv + 2 * w;
	I.bcv = I.cv + 3 * w;
	I.bcut = I.cv + 4 * w;
	I.pre = I.cv + 5 * w;
	I.suf = I.cv + 6 * w;
	double start = objective_of(P, ac);
	/* The seed mixed with the start state (file comment). */
	I.rng = (uint64_t)o.seed;
	for (int i = 0; i < n; i++)
		I.rng = (I.rng ^ (uint64_t)(unsigned)ac[i]) * 0x100000001b3ULL;
	state_from_ac(&I, &I.cur, ac);
	descend(&I);
	state_copy(&I.home, &I.cur);
	for (int r = 0;; r++) {
		state_to_ac(&I, &I.home, out);
		if (objective_of(P, out) < start) {
			memcpy(ac, out, (size_t)n * sizeof *ac);
			improved = 1;
			break;
		}
		if (r >= o.restarts)
			break;
		state_copy(&I.cur, &I.home);
		kick(&I);
		descend(&I);
		if (state_better(&I.cur, &I.home))
			state_copy(&I.home, &I.cur);
	}
done:
	free(out);
	ils_free(&I);
	return improved;
}

int pb_part_ils(pb_part_problem *P, int *ac, const pb_part_ils_opts *opts)
{
	int steps = 0;
	while (pb_part_ils_step(P, ac, opts))
		steps++;
	return steps;
}
