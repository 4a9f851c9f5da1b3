/*
 * rule_search.c — the partition search under rules and the weighted
 * objective (rule_search.h).
 *
 * State: k groups, group g covering layers [S[g], S[g+1]) on C[g] cores
 * (sum n), its first core O[g] = C[0] + ... + C[g-1]. States are compared
 * by a key read in order: broken rules, memory overflow (the largest
 * storage when over), the layout's objective (pb_part_objective_value: max(t)
 * or the weighted sum of the three worst terms), then the sum of squared
 * group times (a plateau of the maximum still moves towards balance).
 * A group's broken rules are O(1) to count: a forbidden cut at its start,
 * forced cuts inside it (prefix counts) and its pinned layers whose core is
 * outside [O[g], O[g] + C[g]) (a sorted list of the pinned layers).
 *
 * Every move replaces a window of adjacent groups g0..g1 by w groups on
 * the same number of cores, so the groups outside keep their layers and
 * cores, and the key of a candidate is the window's new groups joined with
 * prefix and suffix aggregates of the others (maxima, sums): O(window).
 * Cuts are placed only at allowed positions (not forbidden), so a boundary
 * jumps from one allowed cut to any other, over a whole run of layers:
 *   - a pair of adjacent groups re-cut at every allowed position of their
 *     span with every split of their cores (a run of layers moves between
 *     them, cores follow);
 *   - a group split at every allowed position with every split of its cores;
 *   - two adjacent groups merged;
 *   - one core moved from any group to any other (the groups between shift,
 *     which is what a core pin needs).
 * The descent applies the best move while it lowers the key. When none
 * does, windows of 1..3 groups around the group with the largest share of
 * the objective (its time, or its weighted sum) are re-formed by a DP over
 * the window's allowed positions and core counts (any number of groups;
 * broken rules, overflow, then the largest share, minimised inside the
 * window; skipped when positions^2 x cores^2 > RS_DP_WORK): a move that
 * re-cuts a window into more or fewer groups at once, which no sequence of
 * improving single moves may reach.
 *
 * After the first descent, and again on the best state when the restarts
 * lowered its objective, the whole chain is re-cut by the repair by caps
 * (cap_search.h: the fewest-cores DP under rules, its caps lowered on the
 * objective actually posed), followed by a descent.
 *
 * Restarts: `kicks` perturbations of the best state (a window of 2..5 groups
 * re-cut at random allowed positions into one group fewer to one more, with
 * random core counts) and `starts` random starts (random allowed cuts, the
 * forced ones included, cores given one at a time to the slowest group),
 * each followed by a descent; the best state is kept. The generator
 * (splitmix64) is seeded from the options' seed and the start.
 *
 * Invariants: every state is valid (each group >= 1 layer and >= 1 core,
 * cores sum to n); ac changes only when the key strictly falls.
 */
#include "partition/chain/rule_search.h"

#include "partition/chain/cap_search.h"
#include "util/job.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RS_TIE 1e-12
#define RS_KICK_MAX 5
#define RS_DP_WORK 2e5 /* largest positions^2 x cores^2 a window DP takes */

typedef struct rs_agg {
	double mc, mr, ms, mt, sq; /* maxima of compute, routing, storage, time; sum t^2 */
	long viol;
} rs_agg;

typedef struct rs_key {
	long viol;
	double mem, obj, sq;
} rs_key;

typedef struct rs_state {
	int k;
	int *S, *C; /* S: k+1 entries */
} rs_state;

typedef struct rs {
	pb_part_problem *P;
	int n, m;
	int *al, n_al; /* allowed cut positions in 1..m-1, ascending */
	int *fcnt;     /* fcnt[p]: forced positions q < p (m+2 entries) */
	int *pl, n_pl; /* pinned layers, ascending */
	rs_state cur, home, tmp;
	rs_agg *pre, *suf; /* aggregates of groups < g and >= g of cur */
	int *O;            /* first core of each group of cur */
	/* a candidate and the best move of a pass */
	int *cv, *ce, *bcv, *bce, *pick;
	int bw, bg0, bg1;
	rs_key bkey;
	uint64_t rng;
} rs;

static uint64_t rs_rand(rs *I)
{
	uint64_t z = (I->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int rs_below(rs *I, int bound)
{
	return bound <= 1 ? 0 : (int)(rs_rand(I) % (uint64_t)bound);
}

void pb_part_rsearch_defaults(pb_part_rsearch_opts *o)
{
	o->seed = 1;
	o->kicks = 48;
	o->starts = 8;
}

int pb_part_rsearch_wanted(const pb_part_problem *P)
{
	return P->cut || P->pin || P->hw.reward_mode == PB_REWARD_WEIGHTED;
}

/* First index of al (or pl) holding a value >= x. */
static int lower(const int *v, int len, int x)
{
	int lo = 0, hi = len;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Rules broken by layers [a, b) on cores [c0, c0 + cores) (file comment). */
static int rs_viol(const rs *I, int a, int b, int c0, int cores)
{
	const pb_part_problem *P = I->P;
	int v = 0;
	if (P->cut) {
		v += a > 0 && P->cut[a] == PB_CUT_FORBID;
		if (b > a + 1)
			v += I->fcnt[b] - I->fcnt[a + 1];
	}
	for (int i = lower(I->pl, I->n_pl, a); i < I->n_pl && I->pl[i] < b; i++) {
		int k = P->pin[I->pl[i]];
		v += k < c0 || k >= c0 + cores;
	}
	return v;
}

static void agg_group(rs *I, rs_agg *a, int s, int e, int c0, int cores)
{
	pb_part_group g;
	pb_part_eval_group(I->P, s, e, cores, &g);
	a->mc = g.compute > a->mc ? g.compute : a->mc;
	a->mr = g.routing > a->mr ? g.routing : a->mr;
	a->ms = g.storage > a->ms ? g.storage : a->ms;
	a->mt = g.time > a->mt ? g.time : a->mt;
	a->sq += g.time * g.time;
	a->viol += rs_viol(I, s, e, c0, cores);
}

static void agg_join(rs_agg *a, const rs_agg *b)
{
	a->mc = b->mc > a->mc ? b->mc : a->mc;
	a->mr = b->mr > a->mr ? b->mr : a->mr;
	a->ms = b->ms > a->ms ? b->ms : a->ms;
	a->mt = b->mt > a->mt ? b->mt : a->mt;
	a->sq += b->sq;
	a->viol += b->viol;
}

static rs_key key_of(const rs *I, const rs_agg *a)
{
	pb_part_eval ev;
	memset(&ev, 0, sizeof ev);
	ev.max_time = a->mt;
	ev.max_compute = a->mc;
	ev.max_routing = a->mr;
	ev.max_storage = a->ms;
	rs_key k = {a->viol, a->ms > I->P->hw.memory ? a->ms : 0.0,
	            pb_part_objective_value(I->P, &ev), a->sq};
	return k;
}

/* 1 when x is strictly better than y (file comment). */
static int key_less(const rs_key *x, const rs_key *y)
{
	if (x->viol != y->viol)
		return x->viol < y->viol;
	if (x->mem < y->mem * (1 - RS_TIE))
		return 1;
	if (x->mem > y->mem * (1 + RS_TIE))
		return 0;
	if (x->obj < y->obj * (1 - RS_TIE))
		return 1;
	if (x->obj > y->obj * (1 + RS_TIE))
		return 0;
	return x->sq < y->sq * (1 - RS_TIE);
}

/* Aggregates, first cores and the key of cur. */
static rs_key refresh(rs *I)
{
	rs_state *c = &I->cur;
	memset(&I->pre[0], 0, sizeof I->pre[0]);
	I->O[0] = 0;
	for (int g = 0; g < c->k; g++) {
		I->pre[g + 1] = I->pre[g];
		agg_group(I, &I->pre[g + 1], c->S[g], c->S[g + 1], I->O[g], c->C[g]);
		I->O[g + 1] = I->O[g] + c->C[g];
	}
	memset(&I->suf[c->k], 0, sizeof I->suf[0]);
	for (int g = c->k - 1; g >= 0; g--) {
		I->suf[g] = I->suf[g + 1];
		agg_group(I, &I->suf[g], c->S[g], c->S[g + 1], I->O[g], c->C[g]);
	}
	return key_of(I, &I->pre[c->k]);
}

/* Key of cur with groups g0..g1 replaced by w groups of cores I->cv
 * (same total) ending at I->ce; keeps it as the best move when better. */
static void offer(rs *I, int g0, int g1, int w)
{
	rs_state *c = &I->cur;
	rs_agg a = I->pre[g0];
	int s = c->S[g0], c0 = I->O[g0];
	for (int i = 0; i < w; i++) {
		agg_group(I, &a, s, I->ce[i], c0, I->cv[i]);
		s = I->ce[i];
		c0 += I->cv[i];
	}
	agg_join(&a, &I->suf[g1 + 1]);
	rs_key k = key_of(I, &a);
	if (!key_less(&k, &I->bkey))
		return;
	I->bkey = k;
	I->bw = w;
	I->bg0 = g0;
	I->bg1 = g1;
	memcpy(I->bcv, I->cv, (size_t)w * sizeof *I->cv);
	memcpy(I->bce, I->ce, (size_t)w * sizeof *I->ce);
}

/* Replaces groups g0..g1 of cur by w groups (cores cv, ends ce). */
static void replace(rs *I, int g0, int g1, int w, const int *cv, const int *ce)
{
	rs_state *c = &I->cur, *t = &I->tmp;
	int k = 0;
	for (int g = 0; g < g0; g++, k++) {
		t->S[k] = c->S[g];
		t->C[k] = c->C[g];
	}
	for (int i = 0; i < w; i++, k++) {
		t->S[k] = i == 0 ? c->S[g0] : ce[i - 1];
		t->C[k] = cv[i];
	}
	for (int g = g1 + 1; g < c->k; g++, k++) {
		t->S[k] = c->S[g];
		t->C[k] = c->C[g];
	}
	t->k = k;
	t->S[k] = I->m;
	c->k = k;
	memcpy(c->S, t->S, ((size_t)k + 1) * sizeof *c->S);
	memcpy(c->C, t->C, (size_t)k * sizeof *c->C);
}

/* Every move of one pass (file comment) offered against key `now`. */
static void pass_moves(rs *I, rs_key now)
{
	rs_state *c = &I->cur;
	int k = c->k, *cv = I->cv, *ce = I->ce;
	I->bkey = now;
	I->bw = 0;
	pb_job_tick();
	/* A pair re-cut at every allowed position, every split of its cores. */
	for (int g = 0; g + 1 < k; g++) {
		int T = c->C[g] + c->C[g + 1], e = c->S[g + 2];
		for (int i = lower(I->al, I->n_al, c->S[g] + 1); i < I->n_al && I->al[i] < e; i++)
			for (int a = 1; a < T; a++) {
				cv[0] = a;
				cv[1] = T - a;
				ce[0] = I->al[i];
				ce[1] = e;
				offer(I, g, g + 1, 2);
			}
	}
	/* A group split at every allowed position, every split of its cores. */
	for (int g = 0; g < k; g++) {
		int T = c->C[g], e = c->S[g + 1];
		for (int i = lower(I->al, I->n_al, c->S[g] + 1); i < I->n_al && I->al[i] < e; i++)
			for (int a = 1; a < T; a++) {
				cv[0] = a;
				cv[1] = T - a;
				ce[0] = I->al[i];
				ce[1] = e;
				offer(I, g, g, 2);
			}
	}
	/* Two adjacent groups merged. */
	for (int g = 0; g + 1 < k; g++) {
		cv[0] = c->C[g] + c->C[g + 1];
		ce[0] = c->S[g + 2];
		offer(I, g, g + 1, 1);
	}
	/* One core from group i to group j. */
	for (int i = 0; i < k; i++)
		for (int j = 0; j < k; j++) {
			if (i == j || c->C[i] < 2)
				continue;
			int lo = i < j ? i : j, hi = i < j ? j : i;
			for (int g = lo; g <= hi; g++) {
				cv[g - lo] = c->C[g] + (g == j) - (g == i);
				ce[g - lo] = c->S[g + 1];
			}
			offer(I, lo, hi, hi - lo + 1);
		}
}

/* A group's own share of the objective: its time, or its weighted sum. */
static double group_h(const rs *I, const pb_part_group *g)
{
	const pb_manycore *h = &I->P->hw;
	if (h->reward_mode == PB_REWARD_WEIGHTED)
		return h->w_compute * g->compute * 1e3 +
		       h->w_storage * g->storage / (1024.0 * 1024.0) +
		       h->w_routing * g->routing * 1e3;
	return g->time;
}

/* Window re-formed by a DP (file comment): groups g0..g1 into any number of
 * groups on the same cores, cut at allowed positions, minimising (broken
 * rules, largest overflow, largest group_h) inside the window; offered as a
 * move. Skipped when positions^2 x cores^2 exceeds RS_DP_WORK. */
static void window_dp(rs *I, int g0, int g1)
{
	rs_state *c = &I->cur;
	int A = c->S[g0], B = c->S[g1 + 1], T = 0, c0 = I->O[g0];
	for (int g = g0; g <= g1; g++)
		T += c->C[g];
	int lo = lower(I->al, I->n_al, A + 1), hi = lower(I->al, I->n_al, B);
	int np = hi - lo + 2, W = T + 1;
	if ((double)np * np * T * T > RS_DP_WORK)
		return;
	size_t sz = (size_t)np * (size_t)W;
	long *fv = malloc(sz * sizeof *fv);
	double *fm = malloc(sz * sizeof *fm), *fh = malloc(sz * sizeof *fh);
	int *bq = malloc(sz * sizeof *bq), *bj = malloc(sz * sizeof *bj);
	if (!fv || !fm || !fh || !bq || !bj)
		goto out;
	for (size_t x = 0; x < sz; x++)
		fv[x] = -1; /* unreached */
	fv[0] = 0;
	fm[0] = fh[0] = 0;
	for (int i = 1; i < np; i++) {
		int e = i == np - 1 ? B : I->al[lo + i - 1];
		for (int q = 0; q < i; q++) {
			int s = q == 0 ? A : I->al[lo + q - 1];
			for (int u = 0; u < T; u++) {
				size_t from = (size_t)q * W + u;
				if (fv[from] < 0)
					continue;
				for (int j = 1; u + j <= T; j++) {
					pb_part_group g;
					pb_part_eval_group(I->P, s, e, j, &g);
					long v = fv[from] + rs_viol(I, s, e, c0 + u, j);
					double mo = g.storage > I->P->hw.memory ? g.storage : 0.0;
					double mm = mo > fm[from] ? mo : fm[from];
					double h = group_h(I, &g), mh = h > fh[from] ? h : fh[from];
					size_t to = (size_t)i * W + u + j;
					if (fv[to] < 0 || v < fv[to] ||
					    (v == fv[to] &&
					     (mm < fm[to] || (mm == fm[to] && mh < fh[to])))) {
						fv[to] = v;
						fm[to] = mm;
						fh[to] = mh;
						bq[to] = q;
						bj[to] = j;
					}
				}
			}
		}
	}
	size_t end = (size_t)(np - 1) * W + T;
	if (fv[end] < 0)
		goto out;
	int w = 0;
	for (int i = np - 1, u = T; i > 0;) { /* count the groups */
		size_t x = (size_t)i * W + u;
		u -= bj[x];
		i = bq[x];
		w++;
	}
	for (int i = np - 1, u = T, k = w - 1; i > 0; k--) {
		size_t x = (size_t)i * W + u;
		I->ce[k] = i == np - 1 ? B : I->al[lo + i - 1];
		I->cv[k] = bj[x];
		u -= bj[x];
		i = bq[x];
	}
	offer(I, g0, g1, w);
out:
	free(fv);
	free(fm);
	free(fh);
	free(bq);
	free(bj);
}

/* When no move of a pass helps: windows of 1..3 groups around the group with
 * the largest group_h, each re-formed by the DP. */
static void dp_moves(rs *I, rs_key now)
{
	rs_state *c = &I->cur;
	I->bkey = now;
	I->bw = 0;
	int b = 0;
	double bh = -1;
	for (int g = 0; g < c->k; g++) {
		pb_part_group gr;
		pb_part_eval_group(I->P, c->S[g], c->S[g + 1], c->C[g], &gr);
		double h = group_h(I, &gr);
		if (h > bh) {
			bh = h;
			b = g;
		}
	}
	for (int w = 1; w <= 3 && w <= c->k; w++)
		for (int g0 = b - w + 1; g0 <= b; g0++)
			if (g0 >= 0 && g0 + w - 1 < c->k)
				window_dp(I, g0, g0 + w - 1);
}

/* Descent from cur; returns its final key. */
static rs_key descend(rs *I)
{
	rs_key now = refresh(I);
	for (;;) {
		pass_moves(I, now);
		if (I->bw == 0)
			dp_moves(I, now);
		if (I->bw == 0)
			return now;
		replace(I, I->bg0, I->bg1, I->bw, I->bcv, I->bce);
		now = refresh(I);
	}
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* w - 1 distinct allowed cuts drawn in (A, B) into ends ce (ascending, ce[w-1]
 * = B), when there are enough; returns the count of groups made. */
static int random_cuts(rs *I, int A, int B, int w, int *ce)
{
	int lo = lower(I->al, I->n_al, A + 1), hi = lower(I->al, I->n_al, B);
	int avail = hi - lo;
	if (w - 1 > avail)
		w = avail + 1;
	/* partial Fisher-Yates over the candidate indices */
	int *idx = I->pick;
	for (int i = 0; i < avail; i++)
		idx[i] = lo + i;
	for (int i = 0; i < w - 1; i++) {
		int j = i + rs_below(I, avail - i);
		int t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
		ce[i] = I->al[idx[i]];
	}
	qsort(ce, (size_t)(w - 1), sizeof *ce, cmp_int);
	ce[w - 1] = B;
	return w;
}

/* A random kick of cur (file comment). */
static void kick(rs *I)
{
	rs_state *c = &I->cur;
	int w = 2 + rs_below(I, RS_KICK_MAX - 1);
	w = w < c->k ? w : c->k;
	int g0 = rs_below(I, c->k - w + 1), g1 = g0 + w - 1, T = 0;
	for (int g = g0; g <= g1; g++)
		T += c->C[g];
	int lo = w > 1 ? w - 1 : 1, hi = w + 1 < T ? w + 1 : T;
	int nw = lo + rs_below(I, hi - lo + 1);
	nw = random_cuts(I, c->S[g0], c->S[g1 + 1], nw, I->ce);
	if (nw > T)
		return;
	for (int i = 0; i < nw; i++)
		I->cv[i] = 1;
	for (int r = T - nw; r > 0; r--)
		I->cv[rs_below(I, nw)]++;
	replace(I, g0, g1, nw, I->cv, I->ce);
}

/* A random start into cur (file comment): forced cuts, random allowed ones,
 * cores to the slowest group. */
static void random_start(rs *I)
{
	rs_state *c = &I->cur;
	int n = I->n, m = I->m, *ends = I->ce;
	int most = n < I->n_al + 1 ? n : I->n_al + 1;
	int k = random_cuts(I, 0, m, 1 + rs_below(I, most), ends);
	/* the forced cuts (repeats drop out below) */
	for (int p = 1; I->P->cut && p < m && k < n; p++)
		if (I->P->cut[p] == PB_CUT_FORCE)
			ends[k++] = p;
	qsort(ends, (size_t)k, sizeof *ends, cmp_int);
	int u = 0;
	for (int i = 0; i < k; i++)
		if (u == 0 || ends[i] != ends[u - 1])
			ends[u++] = ends[i];
	k = u;
	c->k = k;
	c->S[0] = 0;
	for (int g = 0; g < k; g++) {
		c->S[g + 1] = ends[g];
		c->C[g] = 1;
	}
	for (int used = k; used < n; used++) {
		int w = 0;
		double tw = -1;
		for (int g = 0; g < k; g++) {
			pb_part_group gr;
			pb_part_eval_group(I->P, c->S[g], c->S[g + 1], c->C[g], &gr);
			if (gr.time > tw) {
				tw = gr.time;
				w = g;
			}
		}
		c->C[w]++;
	}
}

static int state_alloc(rs_state *s, int n)
{
	s->S = malloc(((size_t)n + 2) * sizeof *s->S);
	s->C = malloc(((size_t)n + 1) * sizeof *s->C);
	return s->S && s->C;
}

static void state_copy(rs_state *d, const rs_state *s)
{
	d->k = s->k;
	memcpy(d->S, s->S, ((size_t)s->k + 1) * sizeof *s->S);
	memcpy(d->C, s->C, (size_t)s->k * sizeof *s->C);
}

static void state_from_ac(const rs *I, rs_state *s, const int *ac)
{
	s->k = pb_part_groups_of_state(I->n, ac, s->S, s->C);
}

static void rs_free(rs *I)
{
	free(I->al);
	free(I->fcnt);
	free(I->pl);
	free(I->cur.S);
	free(I->cur.C);
	free(I->home.S);
	free(I->home.C);
	free(I->tmp.S);
	free(I->tmp.C);
	free(I->pre);
	free(I->suf);
	free(I->O);
	free(I->cv);
}

static int rs_init(rs *I, pb_part_problem *P)
{
	int n = P->n, m = P->m;
	size_t w = (size_t)n + 8;
	I->P = P;
	I->n = n;
	I->m = m;
	I->al = malloc(((size_t)m + 1) * sizeof *I->al);
	I->fcnt = calloc((size_t)m + 2, sizeof *I->fcnt);
	I->pl = malloc(((size_t)m + 1) * sizeof *I->pl);
	I->pre = malloc(w * sizeof *I->pre);
	I->suf = malloc(w * sizeof *I->suf);
	I->O = malloc(w * sizeof *I->O);
	I->cv = malloc((4 * w + (size_t)m + 1) * sizeof *I->cv);
	if (!I->al || !I->fcnt || !I->pl || !I->pre || !I->suf || !I->O || !I->cv ||
	    !state_alloc(&I->cur, n) || !state_alloc(&I->home, n) || !state_alloc(&I->tmp, n))
		return 0;
	I->ce = I->cv + w;
	I->bcv = I->cv + 2 * w;
	I->bce = I->cv + 3 * w;
	I->pick = I->cv + 4 * w;
	for (int p = 1; p < m; p++)
		if (!P->cut || P->cut[p] != PB_CUT_FORBID)
			I->al[I->n_al++] = p;
	for (int p = 1; p <= m + 1; p++)
		I->fcnt[p] = I->fcnt[p - 1] +
		             (P->cut && p - 1 >= 1 && p - 1 < m && P->cut[p - 1] == PB_CUT_FORCE);
	for (int l = 0; P->pin && l < m; l++)
		if (P->pin[l] >= 0)
			I->pl[I->n_pl++] = l;
	return 1;
}

static void ac_of_state(const rs *I, const rs_state *s, int *ac)
{
	memset(ac, 0, (size_t)I->n * sizeof *ac);
	int c = 0;
	for (int g = 0; g < s->k; g++) {
		c += s->C[g];
		ac[c - 1] = s->S[g + 1] - s->S[g];
	}
}

/* The whole-chain repair by caps (cap_search.h) of home, then a descent from
 * its plan; home and *best follow when the key falls. */
static void caps_repair(rs *I, rs_key *best)
{
	int *ac = malloc((size_t)I->n * sizeof *ac);
	if (!ac)
		return;
	ac_of_state(I, &I->home, ac);
	if (pb_part_cap_search(I->P, ac)) {
		state_from_ac(I, &I->cur, ac);
		rs_key k = descend(I);
		if (key_less(&k, best)) {
			*best = k;
			state_copy(&I->home, &I->cur);
		}
	}
	free(ac);
}

int pb_part_rsearch(pb_part_problem *P, int *ac, const pb_part_rsearch_opts *opts)
{
	pb_part_rsearch_opts o;
	if (opts)
		o = *opts;
	else
		pb_part_rsearch_defaults(&o);
	if (P->m < 1 || P->n < 1 || !pb_part_state_valid(P, ac, NULL))
		return 0;
	if (!P->seg) { /* bit-identical segment cache: searches revisit segments */
		pb_error ignored = {0};
		pb_part_problem_cache(P, 16, &ignored);
	}
	rs I;
	memset(&I, 0, sizeof I);
	int changed = 0;
	if (!rs_init(&I, P))
		goto out;
	I.rng = (uint64_t)o.seed;
	for (int i = 0; i < I.n; i++)
		I.rng = (I.rng ^ (uint64_t)(unsigned)ac[i]) * 0x100000001b3ULL;
	state_from_ac(&I, &I.cur, ac);
	rs_key start = refresh(&I);
	rs_key best = descend(&I);
	state_copy(&I.home, &I.cur);
	caps_repair(&I, &best);
	rs_key repaired = best;
	for (int r = 0; r < o.kicks + o.starts; r++) {
		if (r < o.kicks) {
			state_copy(&I.cur, &I.home);
			kick(&I);
		} else {
			random_start(&I);
		}
		rs_key k = descend(&I);
		if (key_less(&k, &best)) {
			best = k;
			state_copy(&I.home, &I.cur);
		}
	}
	if (best.obj < repaired.obj * (1 - RS_TIE)) /* the restarts lowered it: repair theirs too */
		caps_repair(&I, &best);
	if (key_less(&best, &start)) {
		ac_of_state(&I, &I.home, ac);
		changed = 1;
	}
out:
	rs_free(&I);
	return changed;
}
