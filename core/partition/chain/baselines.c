/*
 * baselines.c — equal, greedy and local-search partitions (baselines.h).
 */
#include "partition/chain/baselines.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition/chain/chain_rules.h"
#include "partition/chain/env.h"
#include "partition/chain/rule_search.h"

void pb_part_equal(const pb_part_problem *P, int *ac)
{
	pb_env_equal_state(P->m, P->n, ac);
}

/* Prefix sums (m+1 entries) of the weight the splits balance: the MACs, or,
 * when no layer has any (all time is routing), each layer's time alone on
 * one core: with all-zero MACs every cut point ties and the first segment
 * took all but k-1 layers. Returns P->pmacs or a new array (free it). */
static double *split_weights(const pb_part_problem *P)
{
	if (P->total_macs > 0)
		return P->pmacs;
	double *w = malloc(((size_t)P->m + 1) * sizeof *w);
	if (!w)
		return P->pmacs;
	w[0] = 0;
	for (int v = 0; v < P->m; v++) {
		pb_part_group gr;
		pb_part_eval_group((pb_part_problem *)P, v, v + 1, 1, &gr); /* scratch stamps */
		w[v + 1] = w[v] + gr.time;
	}
	return w;
}

/* Balanced split of the layers into k segments by the prefix weights pw:
 * segment g ends where the running weight comes closest to (g+1)*W/k,
 * each keeping >= 1 layer. */
static void balanced_split(const pb_part_problem *P, const double *pw, int k, int *layers)
{
	int m = P->m, start = 0;
	for (int g = 0; g < k; g++) {
		int left = k - g - 1, end;
		if (left == 0) {
			end = m;
		} else {
			double target = pw[m] * (g + 1) / k;
			end = start + 1;
			while (end < m - left &&
			       fabs(pw[end + 1] - target) <= fabs(pw[end] - target))
				end++;
		}
		layers[g] = end - start;
		start = end;
	}
}

void pb_part_balanced(const pb_part_problem *P, int *ac)
{
	int n = P->n, k = P->m < n ? P->m : n;
	int *layers = malloc((size_t)k * sizeof *layers);
	double *pw = split_weights(P);
	balanced_split(P, pw, k, layers);
	if (pw != P->pmacs)
		free(pw);
	memset(ac, 0, (size_t)n * sizeof *ac);
	for (int g = 0; g < k; g++) /* spare cores (m < n) join the first group */
		ac[n - k + g] = layers[g];
	free(layers);
}

/* Cores for k groups of the given layers: each group first gets what its
 * storage needs, then each remaining core goes to the slowest group.
 * Returns 0 when the storage needs alone exceed n. */
static int assign_cores(pb_part_problem *P, int k, const int *layers, int *cores, double *rt,
                        double *mc)
{
	int n = P->n, used = 0, a = 0;
	for (int g = 0; g < k; g++) {
		pb_part_group gr;
		pb_part_eval_group(P, a, a + layers[g], 1, &gr);
		rt[g] = gr.routing;
		mc[g] = gr.macs;
		/* Storage with one core, in core memories. Tested against n before
		 * the conversion: a tiny memory makes it exceed INT_MAX, and the
		 * int it then converts to (undefined) came back negative, so the
		 * check below passed and the groups were handed out of bounds. */
		double need = gr.storage / P->hw.memory * (1 - 1e-12);
		if (need > n - used)
			return 0;
		cores[g] = need > 1 ? (int)ceil(need) : 1;
		used += cores[g];
		a += layers[g];
	}
	if (used > n)
		return 0;
	for (; used < n; used++) {
		int w = 0;
		double tw = -1;
		for (int g = 0; g < k; g++) {
			double t = mc[g] / (cores[g] * P->hw.mac_rate) + rt[g];
			if (t > tw) {
				tw = t;
				w = g;
			}
		}
		cores[w]++;
	}
	return 1;
}

int pb_part_rebalance_cores(pb_part_problem *P, int *ac)
{
	int n = P->n;
	int *layers = malloc((size_t)n * 3 * sizeof *layers), *cores = layers + n,
	    *trial = layers + 2 * n;
	double *rt = malloc((size_t)n * 2 * sizeof *rt), *mc = rt + n;
	int k = 0, changed = 0;
	for (int i = 0; i < n; i++)
		if (ac[i] > 0)
			layers[k++] = ac[i];
	if (assign_cores(P, k, layers, cores, rt, mc)) {
		pb_part_state_from_groups(k, cores, layers, trial);
		pb_part_eval e0, e1;
		pb_part_evaluate(P, ac, &e0, NULL);
		pb_part_evaluate(P, trial, &e1, NULL);
		if (pb_part_objective(&e1) < pb_part_objective(&e0)) {
			memcpy(ac, trial, (size_t)n * sizeof *ac);
			changed = 1;
		}
	}
	free(layers);
	free(rt);
	return changed;
}

/* With cut rules: moves each of the k-1 ends of a split off a forbidden
 * boundary (to the nearest allowed one) and adds every forced boundary.
 * Returns the new number of segments, or 0 when they need more than n
 * cores. layers has room for n entries. */
static int obey_cuts(const pb_part_problem *P, int k, int *layers)
{
	int m = P->m, n = P->n;
	unsigned char *at = calloc((size_t)m + 1, 1);
	if (!at)
		return 0;
	int e = 0;
	for (int g = 0; g + 1 < k; g++) {
		e += layers[g];
		int best = -1;
		for (int d = 0; d < m && best < 0; d++) {
			if (e - d > 0 && P->cut[e - d] != PB_CUT_FORBID)
				best = e - d;
			else if (e + d < m && P->cut[e + d] != PB_CUT_FORBID)
				best = e + d;
		}
		if (best > 0)
			at[best] = 1;
	}
	for (int p = 1; p < m; p++)
		if (P->cut[p] == PB_CUT_FORCE)
			at[p] = 1;
	int k2 = 0, start = 0;
	for (int p = 1; p <= m; p++)
		if (p == m || at[p]) {
			if (k2 == n) {
				free(at);
				return 0;
			}
			layers[k2++] = p - start;
			start = p;
		}
	free(at);
	return k2;
}

void pb_part_greedy(const pb_part_problem *P_const, int *ac)
{
	pb_part_problem *P = (pb_part_problem *)P_const; /* scratch stamps only */
	int n = P->n, kmax = P->m < n ? P->m : n;
	int *layers = malloc((size_t)n * 3 * sizeof *layers), *cores = layers + n,
	    *trial = layers + 2 * n;
	double *rt = malloc((size_t)n * 2 * sizeof *rt), *mc = rt + n;
	double best = INFINITY;
	double *pw = split_weights(P);
	pb_part_equal(P, ac);
	for (int k0 = 1; k0 <= kmax; k0++) {
		balanced_split(P, pw, k0, layers);
		int k = P->cut ? obey_cuts(P, k0, layers) : k0;
		if (k < 1 || !assign_cores(P, k, layers, cores, rt, mc))
			continue;
		pb_part_state_from_groups(k, cores, layers, trial);
		/* Pins: block moves of single layers until they hold (or stall). */
		if (P->pin)
			pb_part_local_search(P, trial, 4 * n);
		pb_part_eval ev;
		pb_part_evaluate(P, trial, &ev, NULL);
		if (pb_part_objective(&ev) < best) {
			best = pb_part_objective(&ev);
			memcpy(ac, trial, (size_t)n * sizeof *ac);
		}
	}
	if (pw != P->pmacs)
		free(pw);
	free(layers);
	free(rt);
	/* Rules or the weighted objective: the splits above balance MACs only;
	 * the rule-aware search (rule_search.h) repairs them (a descent alone
	 * stayed 6.6% above exact, or on a broken pin, on random chains of
	 * tests/unit/test_rule_search.c; 8 kicks 1.23% on densenet121 x
	 * manycore-16 with cuts only after Add/Concat). */
	if (pb_part_rsearch_wanted(P))
		pb_part_rsearch(P, ac, NULL);
}

double pb_part_objective(const pb_part_eval *ev)
{
	/* Broken rules first, then memory overflow, then the layout's objective. */
	return 1e18 * ev->violations + (ev->over_memory ? 1e6 * (1.0 + ev->max_storage) : 0.0) +
	       ev->objective;
}

int pb_part_local_step(pb_part_problem *P, int *ac, int *scratch)
{
	int n = P->n;
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	double best = pb_part_objective(&ev);
	int best_action = -1;
	for (int type = PB_ACT_C; type <= PB_ACT_D; type++)
		for (int i = 0; i + 1 < n; i++) {
			int k = pb_env_encode(n, type, i);
			memcpy(scratch, ac, (size_t)n * sizeof *ac);
			if (!pb_env_apply(scratch, n, k, NULL))
				continue;
			/* A move that empties a core merges groups: keep block moves only. */
			if ((type == PB_ACT_C && scratch[i] == 0) ||
			    (type == PB_ACT_D && scratch[i + 1] == 0))
				continue;
			pb_part_evaluate(P, scratch, &ev, NULL);
			double o = pb_part_objective(&ev);
			if (o < best * (1 - 1e-12)) {
				best = o;
				best_action = k;
			}
		}
	if (best_action < 0)
		return 0;
	pb_env_apply(ac, n, best_action, NULL);
	return 1;
}

int pb_part_local_search(pb_part_problem *P, int *ac, int max_passes)
{
	int *scratch = malloc((size_t)P->n * sizeof *scratch);
	int passes = 0;
	while (passes < max_passes && pb_part_local_step(P, ac, scratch))
		passes++;
	free(scratch);
	return passes;
}
