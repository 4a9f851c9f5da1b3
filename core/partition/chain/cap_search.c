/*
 * cap_search.c — the whole-chain repair by caps (cap_search.h).
 *
 * The check. For caps (time t, compute c, storage s, routing r; +inf when
 * not posed) g[p] is the fewest cores of a partition of layers [0, p) into
 * groups that keep under the caps, fit the core memory and break no rule:
 * ends only at allowed positions (p = m, or a cut that is not forbidden),
 * no forced cut inside a group, and a group holding pinned layers on cores
 * [o, o + j) with o <= every pin and o + j > every pin. Fewer cores for the
 * same prefix is never worse: the spare cores can join the prefix's last
 * group, which keeps its pins, rules and caps (compute, storage and time
 * only fall with cores; routing does not depend on them). So
 *   g[p] = min over starts q of g[q] + j(q, p, g[q]),
 * j the fewest cores that meet the caps, the memory and the pins at first
 * core g[q]; g[m] <= n is feasible and the plan gives its spare cores to
 * its last group. For a fixed end p the starts are scanned from p - 1 down,
 * the segment's bytes kept incrementally (own bytes gain a layer's output
 * when it is consumed inside; entering bytes lose it and gain the layer's
 * producers whose next consumer is past the segment: chain_problem.h's
 * pred_next), and the scan stops at a forced cut, or when the own bytes
 * alone (which only grow leftwards), the compute or the weights and outputs
 * on all n cores pass the caps; a start whose cores plus one (or plus its
 * compute over the cap) reach the end's best so far is not priced.
 *
 * The search. max(t): bisection on the time cap between the perfect-balance
 * bound and the start's max(t) (to a relative 1e-5). Weighted, a pattern
 * search over the three caps from the start's maxima: first each cap
 * lowered alone by bisection; then, per round, each cap x lowered by
 * bisection (CS_WSTEPS steps in [cap / f^4, cap]) while another, y, is
 * multiplied by f or 1/f (f = CS_STEP: a trade, more compute for less
 * routing, ...) and the third by f^2 or 1/f^2 in the same direction (a
 * cheap term may have to give too). Every plan a check returns is scored
 * by its actual maxima and the best kept; a round starts from the best, and
 * after a round that finds nothing f becomes its square root, down to
 * CS_STEP_MIN. The caps' ranges bound every check's work: O(m x the
 * longest group the caps allow x in-degree).
 */
#include "partition/chain/cap_search.h"

#include "util/job.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CS_SLACK 1e-9    /* caps from a plan's own maxima: rounding room */
#define CS_BISECT_MAX 40 /* bisection steps on max(t) */
#define CS_BISECT_RTOL 1e-5
#define CS_WSTEPS 6      /* bisection steps of one weighted cap (2^-6 of its bracket) */
#define CS_ROUNDS 8      /* weighted rounds */
#define CS_STEP 1.25     /* the first trade: one cap x or / 1.25 */
#define CS_STEP_MIN 1.03 /* trades are refined (square root) after a round that fails, to here */
#define CS_RELAX 16 /* times the start's caps are loosened by 1.25 to find a rule-obeying plan */

enum { CS_C, CS_S, CS_R, CS_T, CS_NCAP }; /* compute, storage, routing, time */

typedef struct cs {
	pb_part_problem *P;
	int n, m;
	int *g, *from, *cores; /* m + 1 entries each */
	int *S, *C, k;         /* the plan of the last feasible check */
	int *bS, *bC, bk;      /* the best plan */
	double bobj;
	double bmax[CS_NCAP]; /* the best plan's maxima */
} cs;

/* Fewest cores j >= lo meeting the caps for a segment of c1 seconds of
 * compute on one core, s1 bytes of storage on one core and `routing`
 * seconds; INT_MAX when more than `most`. */
static int cs_cores(const cs *X, const double *cap, double c1, double s1, double routing, int lo,
                    int most)
{
	const pb_part_problem *P = X->P;
	if (routing > cap[CS_R] || routing >= cap[CS_T])
		return INT_MAX;
	double need[3] = {c1 / cap[CS_C],
	                  s1 / (cap[CS_S] < P->hw.memory ? cap[CS_S] : P->hw.memory),
	                  c1 / (cap[CS_T] - routing)};
	for (int i = 0; i < 3; i++) {
		if (!(need[i] <= most))
			return INT_MAX;
		int j = (int)ceil(need[i]);
		lo = j > lo ? j : lo;
	}
	for (int j = lo < 1 ? 1 : lo; j <= most; j++) { /* ceil may be short by rounding */
		double comp = c1 / (double)j, st = s1 / (double)j;
		if (comp <= cap[CS_C] && st <= cap[CS_S] && st <= P->hw.memory &&
		    comp + routing <= cap[CS_T])
			return j;
	}
	return INT_MAX;
}

/* The check (file comment); 1 with the plan in S, C, k when feasible. */
static int cs_check(cs *X, const double *cap)
{
	pb_part_problem *P = X->P;
	int m = X->m, n = X->n;
	const unsigned char *cut = P->cut;
	double bw = P->hw.bandwidth, rate = P->hw.mac_rate;
	double own_lim = (cap[CS_T] < cap[CS_R] ? cap[CS_T] : cap[CS_R]) * bw;
	double comp_lim = cap[CS_T] < cap[CS_C] ? cap[CS_T] : cap[CS_C];
	double store_lim = cap[CS_S] < P->hw.memory ? cap[CS_S] : P->hw.memory;
	pb_job_tick();
	if (pb_job_cancelled()) /* every check fails: the search ends at once */
		return 0;
	for (int p = 0; p <= m; p++)
		X->g[p] = INT_MAX;
	X->g[0] = 0;
	for (int p = 1; p <= m; p++) {
		if (p < m && cut && cut[p] == PB_CUT_FORBID)
			continue;
		double in = 0, own = 0;
		int pmin = INT_MAX, pmax = -1;
		for (int q = p - 1; q >= 0; q--) {
			if (q + 1 < p && cut && cut[q + 1] == PB_CUT_FORCE)
				break;
			if (P->min_succ[q] <
			    p) { /* q's output: consumed inside, no longer entering */
				own += P->ob[q];
				in -= P->ob[q];
			}
			for (int e = P->pred_off[q]; e < P->pred_off[q + 1]; e++)
				if (P->pred_next[e] >= p)
					in += P->ob[P->pred[e]];
			double c1 = (P->pmacs[p] - P->pmacs[q]) / rate;
			if (own > own_lim || c1 / n > comp_lim ||
			    (P->pstore[p] - P->pstore[q]) / n > store_lim)
				break;
			if (P->pin && P->pin[q] >= 0) {
				pmin = P->pin[q] < pmin ? P->pin[q] : pmin;
				pmax = P->pin[q] > pmax ? P->pin[q] : pmax;
			}
			int o = X->g[q];
			if ((q > 0 && cut && cut[q] == PB_CUT_FORBID) || o >= n || pmin < o ||
			    o + 1 >= X->g[p] || o + c1 / comp_lim >= X->g[p])
				continue; /* cannot beat the end's best */
			double s1 = P->pstore[p] - P->pstore[q] + in;
			int j = cs_cores(X, cap, c1, s1, (in + own) / bw, pmax - o + 1, n - o);
			if (j != INT_MAX && o + j < X->g[p]) {
				X->g[p] = o + j;
				X->from[p] = q;
				X->cores[p] = j;
			}
		}
	}
	if (X->g[m] > n)
		return 0;
	int k = 0;
	for (int p = m; p > 0; p = X->from[p])
		k++;
	X->k = k;
	X->S[k] = m;
	for (int p = m, i = k - 1; p > 0; p = X->from[p], i--) {
		X->S[i] = X->from[p];
		X->C[i] = X->cores[p];
	}
	X->C[k - 1] += n - X->g[m];
	return 1;
}

/* Maxima of the plan in S, C, k into mx; returns its objective. */
static double cs_score(cs *X, double *mx)
{
	pb_part_eval ev;
	memset(&ev, 0, sizeof ev);
	for (int i = 0; i < X->k; i++) {
		pb_part_group gr;
		pb_part_eval_group(X->P, X->S[i], X->S[i + 1], X->C[i], &gr);
		ev.max_time = gr.time > ev.max_time ? gr.time : ev.max_time;
		ev.max_compute = gr.compute > ev.max_compute ? gr.compute : ev.max_compute;
		ev.max_storage = gr.storage > ev.max_storage ? gr.storage : ev.max_storage;
		ev.max_routing = gr.routing > ev.max_routing ? gr.routing : ev.max_routing;
	}
	mx[CS_C] = ev.max_compute;
	mx[CS_S] = ev.max_storage;
	mx[CS_R] = ev.max_routing;
	mx[CS_T] = ev.max_time;
	return pb_part_objective_value(X->P, &ev);
}

/* Checks caps; a feasible plan is scored and kept when it beats the best.
 * Returns 1 when feasible, with the plan's maxima in mx. */
static int cs_try(cs *X, const double *cap, double *mx)
{
	if (!cs_check(X, cap))
		return 0;
	double v = cs_score(X, mx);
	if (X->bk == 0 || v < X->bobj * (1 - 1e-12)) {
		X->bk = X->k;
		X->bobj = v;
		memcpy(X->bS, X->S, ((size_t)X->k + 1) * sizeof *X->S);
		memcpy(X->bC, X->C, (size_t)X->k * sizeof *X->C);
		memcpy(X->bmax, mx, sizeof X->bmax);
	}
	return 1;
}

/* max(t): bisection on the time cap below the best plan's. */
static void cs_search_time(cs *X)
{
	double cap[CS_NCAP] = {INFINITY, INFINITY, INFINITY, 0}, mx[CS_NCAP];
	double lo = X->P->lower_bound * (1 - CS_SLACK), hi = X->bmax[CS_T];
	for (int it = 0; it < CS_BISECT_MAX && hi > lo * (1 + CS_BISECT_RTOL); it++) {
		cap[CS_T] = 0.5 * (lo + hi);
		if (cs_try(X, cap, mx))
			hi = mx[CS_T] < cap[CS_T] ? mx[CS_T] : cap[CS_T];
		else
			lo = cap[CS_T];
	}
}

/* Weighted: lowers cap x with the others at base (one of them, y, scaled
 * by f when y >= 0; the third one, z, lifted when z >= 0) by bisection. */
static void cs_lower(cs *X, const double *base, int x, int y, double f, int z)
{
	double cap[CS_NCAP], mx[CS_NCAP];
	memcpy(cap, base, sizeof cap);
	if (y >= 0)
		cap[y] *= f;
	if (z >= 0)
		cap[z] *= f > 1 ? f * f : 1 / (f * f);
	if (y >= 0 && f < 1 && !cs_try(X, cap, mx))
		return;
	double span = f > 1 ? f * f * f * f : 1 / (f * f * f * f);
	double hi = cap[x], lo = hi / (y >= 0 ? span : 4);
	for (int d = 0; d < 4; d++) { /* the floor itself is met: lower the bracket */
		cap[x] = lo;
		if (!cs_try(X, cap, mx))
			break;
		hi = mx[x] < lo ? mx[x] : lo;
		lo = hi / (y >= 0 ? span : 4);
	}
	for (int it = 0; it < CS_WSTEPS; it++) {
		cap[x] = 0.5 * (lo + hi);
		if (cs_try(X, cap, mx))
			hi = mx[x] < cap[x] ? mx[x] : cap[x];
		else
			lo = cap[x];
	}
}

static void cs_search_weighted(cs *X)
{
	double step = CS_STEP;
	for (int round = 0; round < CS_ROUNDS && step > CS_STEP_MIN; round++) {
		double before = X->bobj, base[CS_NCAP], f[2] = {1 / step, step};
		for (int i = 0; i < CS_T; i++)
			base[i] = X->bmax[i] * (1 + CS_SLACK);
		base[CS_T] = INFINITY;
		for (int x = 0; x < CS_T; x++) {
			if (round == 0)
				cs_lower(X, base, x, -1, 1, -1);
			for (int y = 0; y < CS_T; y++)
				for (int i = 0; y != x && i < 2; i++) {
					cs_lower(X, base, x, y, f[i], CS_T - x - y);
				}
		}
		if (!(X->bobj < before * (1 - 1e-9)))
			step = sqrt(step); /* no trade of this size pays: finer ones */
	}
}

static void cs_free(cs *X)
{
	free(X->g);
	free(X->from);
	free(X->cores);
	free(X->S);
	free(X->C);
	free(X->bS);
	free(X->bC);
}

int pb_part_cap_search(pb_part_problem *P, int *ac)
{
	if (P->m < 1 || P->n < 1 || !pb_part_state_valid(P, ac, NULL))
		return 0;
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	cs X;
	memset(&X, 0, sizeof X);
	X.P = P;
	X.n = P->n;
	X.m = P->m;
	size_t M = (size_t)P->m + 2, N = (size_t)P->n + 2;
	X.g = malloc(M * sizeof *X.g);
	X.from = malloc(M * sizeof *X.from);
	X.cores = malloc(M * sizeof *X.cores);
	X.S = malloc(N * sizeof *X.S);
	X.C = malloc(N * sizeof *X.C);
	X.bS = malloc(N * sizeof *X.bS);
	X.bC = malloc(N * sizeof *X.bC);
	int changed = 0, weighted = P->hw.reward_mode == PB_REWARD_WEIGHTED;
	if (!X.g || !X.from || !X.cores || !X.S || !X.C || !X.bS || !X.bC)
		goto out;
	/* the start's caps, loosened until a rule-obeying plan meets them */
	double cap[CS_NCAP], mx[CS_NCAP];
	cap[CS_C] = weighted ? ev.max_compute * (1 + CS_SLACK) : INFINITY;
	cap[CS_S] = weighted ? ev.max_storage * (1 + CS_SLACK) : INFINITY;
	cap[CS_R] = weighted ? ev.max_routing * (1 + CS_SLACK) : INFINITY;
	cap[CS_T] = weighted ? INFINITY : ev.max_time * (1 + CS_SLACK);
	int ok = 0;
	for (int r = 0; r < CS_RELAX && !(ok = cs_try(&X, cap, mx)); r++)
		for (int i = 0; i < CS_NCAP; i++)
			cap[i] *= 1.25;
	if (!ok)
		goto out;
	if (weighted)
		cs_search_weighted(&X);
	else
		cs_search_time(&X);
	int better = ev.violations > 0 || ev.over_memory || X.bobj < ev.objective * (1 - 1e-12);
	if (better) {
		int *cv = X.C, *lv = X.S; /* scratch: layers per group */
		for (int i = 0; i < X.bk; i++) {
			cv[i] = X.bC[i];
			lv[i] = X.bS[i + 1] - X.bS[i];
		}
		pb_part_state_from_groups(X.bk, cv, lv, ac);
		changed = 1;
	}
out:
	cs_free(&X);
	return changed;
}
