/*
 * pack.c — the "pack" baseline (baselines.h): bisection on the bottleneck
 * time T with a greedy packing for each T.
 *
 * For a given T the layers are packed left to right: the next group may take
 * 1..cap cores, and for each core count c it runs to the furthest end whose
 * time (compute + routing) stays within T and whose storage per core fits
 * the core memory (both only grow with the end, so a binary search finds
 * it). The group takes the c that covers the most MACs per core, or the
 * fewest cores that reach the last layer. T is feasible when the packing
 * needs at most n cores. The greedy choice is myopic (a cheaper group now
 * can force an expensive one later), so it is repeated for a range of caps
 * and the best partition kept; it is a heuristic, not the exact optimum
 * (exact.c solves the same question with a DP over prefixes and cores).
 */
#include "partition/chain/baselines.h"
#include "partition/chain/chain_rules.h"
#include "partition/chain/rule_search.h"

#include "util/error.h"
#include "util/job.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pack_ctx {
	pb_part_problem *P;
	int cap;
	int *layers, *cores; /* the packing of the last feasible call, n entries */
	int k;               /* its group count */
} pack_ctx;

/* Packs the layers within T (file comment); 1 when n cores suffice, with
 * the groups in F->layers / F->cores / F->k. */
static int pack_at(pack_ctx *F, double T)
{
	pb_part_problem *P = F->P;
	int s = 0, used = 0, k = 0;
	while (s < P->m) {
		double best = -1;
		int bc = -1, be = -1;
		/* Cut rules: a group ends at the next forced boundary at the
		 * latest, and never on a forbidden one. */
		int emax = P->m;
		for (int p = s + 1; P->cut && p < P->m; p++)
			if (P->cut[p] == PB_CUT_FORCE) {
				emax = p;
				break;
			}
		for (int c = 1; c <= F->cap && used + c <= P->n; c++) {
			int e = pb_part_furthest_end(P, s, emax, c, T, P->hw.memory);
			while (P->cut && e > s && e < P->m && P->cut[e] == PB_CUT_FORBID)
				e--;
			if (e <= s)
				continue;
			if (e == P->m) { /* the fewest cores that finish the model */
				bc = c;
				be = e;
				break;
			}
			double per_core = (P->pmacs[e] - P->pmacs[s]) / c;
			if (per_core > best) {
				best = per_core;
				bc = c;
				be = e;
			}
		}
		if (bc < 0)
			return 0;
		F->layers[k] = be - s;
		F->cores[k] = bc;
		k++;
		used += bc;
		s = be;
	}
	F->k = k;
	return 1;
}

/* Spare cores of a packing go, one at a time, to the slowest group (a
 * group's time never grows with its cores). */
static void spread_spare(pack_ctx *F)
{
	pb_part_problem *P = F->P;
	int used = 0;
	for (int g = 0; g < F->k; g++)
		used += F->cores[g];
	for (; used < P->n; used++) {
		int w = 0, a = 0;
		double tw = -1;
		for (int g = 0; g < F->k; g++) {
			pb_part_group gr;
			pb_part_eval_group(P, a, a + F->layers[g], F->cores[g], &gr);
			if (gr.time > tw) {
				tw = gr.time;
				w = g;
			}
			a += F->layers[g];
		}
		F->cores[w]++;
	}
}

/* The least feasible T for F->cap (to 1e-9 relative) packed into ac;
 * 0 when nothing packs up to 1024 x hi. */
static int bisect(pack_ctx *F, double lo, double hi, int *ac)
{
	int ok = 0;
	for (int d = 0; d < 10 && !(ok = pack_at(F, hi)); d++) {
		lo = hi;
		hi *= 2;
	}
	if (!ok)
		return 0;
	for (int it = 0; it < 60 && hi - lo > 1e-9 * hi; it++) {
		pb_job_tick();
		double mid = 0.5 * (lo + hi);
		if (pack_at(F, mid))
			hi = mid;
		else
			lo = mid;
	}
	pack_at(F, hi);
	spread_spare(F);
	pb_part_state_from_groups(F->k, F->cores, F->layers, ac);
	return 1;
}

void pb_part_pack(const pb_part_problem *P_const, int *ac)
{
	pb_part_problem *P = (pb_part_problem *)P_const; /* scratch stamps only */
	int n = P->n;
	int *buf = malloc((size_t)n * 3 * sizeof *buf);
	pb_part_greedy(P, ac); /* the answer when nothing packs */
	/* The bisections re-evaluate the same segments many times: the
	 * problem's segment cache (bit-identical results) makes that ~100x
	 * cheaper; without it (out of memory) this is only slower. */
	if (!P->seg) {
		pb_error ignored = {0};
		pb_part_problem_cache(P, 16, &ignored);
	}
	if (!buf || P->m == 0)
		goto out;
	pack_ctx F = {P, 1, buf, buf + n, 0};
	int *trial = buf + 2 * n;
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	double best = pb_part_objective(&ev);
	/* Upper end of the bisection: greedy's max(t) (doubled while nothing
	 * packs). */
	double hi = ev.max_time > P->lower_bound ? ev.max_time : 2 * P->lower_bound;
	/* Caps 1, 2, 3, 4, 6, 9, 13, ... (x1.5 from 4), and n. */
	for (int cap = 1, prev = 0; prev < n; prev = cap, cap = cap < 4 ? cap + 1 : cap * 3 / 2) {
		F.cap = cap < n ? cap : n;
		if (!bisect(&F, P->lower_bound, hi, trial))
			continue;
		pb_part_evaluate(P, trial, &ev, NULL);
		if (pb_part_objective(&ev) < best) {
			best = pb_part_objective(&ev);
			memcpy(ac, trial, (size_t)n * sizeof *ac);
		}
		if (F.cap == n)
			break;
	}
	/* Pins and the weighted objective are not what the packing balances;
	 * the rule-aware search (rule_search.h) continues from its best. */
	if (pb_part_rsearch_wanted(P))
		pb_part_rsearch(P, ac, NULL);
out:
	free(buf);
}
