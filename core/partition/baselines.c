/*
 * baselines.c — equal, greedy and local-search partitions (baselines.h).
 */
#include "partition/baselines.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition/env.h"

void pb_part_equal(const pb_part_problem *P, int *ac)
{
	pb_env_equal_state(P->m, P->n, ac);
}

/* MAC-balanced split of the layers into k segments: segment g ends where
 * the running MACs come closest to (g+1)*M/k, each keeping >= 1 layer. */
static void balanced_split(const pb_part_problem *P, int k, int *layers)
{
	int m = P->m, start = 0;
	for (int g = 0; g < k; g++) {
		int left = k - g - 1, end;
		if (left == 0) {
			end = m;
		} else {
			double target = P->total_macs * (g + 1) / k;
			end = start + 1;
			while (end < m - left &&
			       fabs(P->pmacs[end + 1] - target) <= fabs(P->pmacs[end] - target))
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
	balanced_split(P, k, layers);
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

void pb_part_greedy(const pb_part_problem *P_const, int *ac)
{
	pb_part_problem *P = (pb_part_problem *)P_const; /* scratch stamps only */
	int n = P->n, kmax = P->m < n ? P->m : n;
	int *layers = malloc((size_t)n * 3 * sizeof *layers), *cores = layers + n,
	    *trial = layers + 2 * n;
	double *rt = malloc((size_t)n * 2 * sizeof *rt), *mc = rt + n;
	double best = INFINITY;
	int best_over = 1;
	pb_part_equal(P, ac);
	for (int k = 1; k <= kmax; k++) {
		balanced_split(P, k, layers);
		if (!assign_cores(P, k, layers, cores, rt, mc))
			continue;
		pb_part_state_from_groups(k, cores, layers, trial);
		pb_part_eval ev;
		pb_part_evaluate(P, trial, &ev, NULL);
		if ((ev.over_memory < best_over) ||
		    (ev.over_memory == best_over && ev.max_time < best)) {
			best = ev.max_time;
			best_over = ev.over_memory;
			memcpy(ac, trial, (size_t)n * sizeof *ac);
		}
	}
	free(layers);
	free(rt);
}

double pb_part_objective(const pb_part_eval *ev)
{
	return ev->max_time + (ev->over_memory ? 1e6 * (1.0 + ev->max_storage) : 0.0);
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
