/*
 * partition/rl/rl_window.c — the agent's restart windows (rl_window.h):
 * broken into parts at MAC shares, their cuts retimed, and tuned: core
 * counts of a window's groups moved one core at a time between neighbours,
 * and (regroup) a group split in two or two neighbours merged, each try
 * re-cut by pb_rl_retime_window.
 *
 * A re-cut window gets random core counts; the retime then places its cuts
 * for those counts. On 64 cores the optima have many groups of uneven core
 * counts (swin_t: 22 groups of 2 to 8 cores) and random counts rarely come
 * close, so this hill-climb moves a core from one group of the window to
 * its neighbour while that lowers the window's largest group time. Their
 * group counts matter as much: mobilenet_v2's 64-core optimum has 20
 * groups, 7 of them single-core, and a loaded agent's merges left
 * windows with too few groups that core moves alone never split, so the
 * regroup moves also split and merge groups. It uses
 * only the state and the costs (blind: no optimum, no other solver's plan).
 */
#include "partition/rl/rl_window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int pb_rl_break_window(pb_part_problem *P, int *ac, const pb_part_group *gs, int n_groups, int g0,
                       int g1, int parts, const int *part_cores, int *lo, int *hi)
{
	int gl = g0 > 0 ? g0 - 1 : 0, gr = g1 + 1 < n_groups ? g1 + 1 : g1;
	*lo = gs[gl].first_core - 1;
	*hi = gs[gr].first_core + gs[gr].cores - 1;
	if (*lo < 0)
		*lo = 0;
	if (*hi > P->n - 2)
		*hi = P->n - 2;
	int c0 = gs[g0].first_core, cores = 0, a = gs[g0].first_layer, layers = 0;
	for (int g = g0; g <= g1; g++) {
		cores += gs[g].cores;
		layers += gs[g].layers;
	}
	if (parts <= 0 || parts > cores)
		parts = cores;
	if (cores < 2 || parts < 2 || layers < parts)
		return 0;
	/* Part k gets part_cores[k] cores (when given and they sum to the window's
	 * cores), else cores/parts (the first cores % parts one more), and the
	 * layers up to where the running MACs cross its share of cores. */
	if (part_cores) {
		int sum = 0;
		for (int k = 0; k < parts; k++)
			sum += part_cores[k] >= 1 ? part_cores[k] : cores + 1;
		if (sum != cores)
			part_cores = NULL;
	}
	double m0 = P->pmacs[a], M = P->pmacs[a + layers] - m0;
	int start = a, used = 0;
	for (int k = 0; k < parts; k++) {
		int pc = part_cores ? part_cores[k] : cores / parts + (k < cores % parts);
		int left = parts - k - 1, end;
		used += pc;
		if (left == 0) {
			end = a + layers;
		} else {
			double target = m0 + M * used / cores;
			end = start + 1;
			while (end < a + layers - left &&
			       fabs(P->pmacs[end + 1] - target) <= fabs(P->pmacs[end] - target))
				end++;
		}
		for (int c = c0 + used - pc; c < c0 + used - 1; c++)
			ac[c] = 0;
		ac[c0 + used - 1] = end - start;
		start = end;
	}
	return 1;
}

/* Groups of pc[0..k) cores over layers [a, b), each taking as many layers
 * as fit in time T; ends[] gets their ends. 1 if the last group fits too. */
static int fit_groups(pb_part_problem *P, int a, int b, int k, const int *pc, double T, int *ends)
{
	int s = a;
	for (int i = 0; i < k - 1; i++) {
		int e = pb_part_furthest_end(P, s, b - (k - 1 - i), pc[i], T, INFINITY);
		if (e < 0)
			return 0;
		ends[i] = s = e;
	}
	pb_part_group g;
	pb_part_eval_group(P, s, b, pc[k - 1], &g);
	ends[k - 1] = b;
	return g.time <= T;
}

int pb_rl_retime_window(pb_part_problem *P, int *ac, int c0, int c1)
{
	int n = P->n, k = 0, a = 0, b, prev = c0 - 1, changed = 0;
	if (c0 < 0 || c1 > n || c1 - c0 < 2)
		return 0;
	int *pc = malloc((size_t)n * 3 * sizeof *pc), *ends = pc ? pc + n : NULL,
	    *best = pc ? pc + 2 * n : NULL;
	if (!pc)
		return 0;
	for (int c = 0; c < c0; c++)
		a += ac[c];
	b = a;
	for (int c = c0; c < c1; c++) {
		b += ac[c];
		if (ac[c] > 0) {
			pc[k++] = c - prev;
			prev = c;
		}
	}
	if (k < 2 || prev != c1 - 1 || (c0 > 0 && ac[c0 - 1] == 0))
		goto out;
	/* The window's largest group time now: where the bisection starts. */
	double hi = 0, lo = 0;
	for (int i = 0, s = a, c = c0; i < k; i++) {
		c += pc[i];
		pb_part_group g;
		pb_part_eval_group(P, s, s + ac[c - 1], pc[i], &g);
		if (g.time > hi)
			hi = g.time;
		s += ac[c - 1];
	}
	if (!fit_groups(P, a, b, k, pc, hi, best))
		goto out;
	for (int it = 0; it < 20 && hi - lo > 1e-4 * hi; it++) {
		double mid = 0.5 * (lo + hi);
		if (fit_groups(P, a, b, k, pc, mid, ends)) {
			hi = mid;
			memcpy(best, ends, (size_t)k * sizeof *best);
		} else {
			lo = mid;
		}
	}
	for (int i = 0, s = a, c = c0; i < k; i++) {
		c += pc[i];
		changed |= ac[c - 1] != best[i] - s;
		ac[c - 1] = best[i] - s;
		s = best[i];
	}
out:
	free(pc);
	return changed;
}

/* Largest group time over cores [c0, c1) of ac (whole groups). */
static double window_time(pb_part_problem *P, const int *ac, int a, int c0, int c1)
{
	double t = 0;
	for (int c = c0, first = c0, s = a; c < c1; c++) {
		if (ac[c] == 0)
			continue;
		pb_part_group g;
		pb_part_eval_group(P, s, s + ac[c], c - first + 1, &g);
		if (g.time > t)
			t = g.time;
		s += ac[c];
		first = c + 1;
	}
	return t;
}

/* Writes groups of pc[0..k) cores with lay[0..k) layers over cores from c0. */
static void lay_out(int *ac, int c0, int k, const int *pc, const int *lay)
{
	for (int i = 0, c = c0; i < k; i++) {
		for (int j = 0; j < pc[i] - 1; j++)
			ac[c++] = 0;
		ac[c++] = lay[i];
	}
}

/* lay[0..k) <- the layers of the k groups of pc[0..k) cores from core c0. */
static void group_layers(const int *ac, int c0, int k, const int *pc, int *lay)
{
	for (int j = 0, c = c0; j < k; j++) {
		c += pc[j];
		lay[j] = ac[c - 1];
	}
}

/* Lays the window [c0, c1) of ac out as k groups of pc cores and lay layers
 * in try, retimes it, and keeps it in ac when the window's largest time
 * drops below *best (then updated). Returns 1 if kept. */
static int try_layout(pb_part_problem *P, int *ac, int *try, int c0, int c1, int a, int k,
                      const int *pc, const int *lay, double *best)
{
	size_t bytes = (size_t)P->n * sizeof *ac;
	memcpy(try, ac, bytes);
	lay_out(try, c0, k, pc, lay);
	pb_rl_retime_window(P, try, c0, c1);
	double t = window_time(P, try, a, c0, c1);
	if (!(t < *best * (1 - 1e-9)))
		return 0;
	*best = t;
	memcpy(ac, try, bytes);
	return 1;
}

/* The core and layer counts (npc, nlay) of the groups pc[0..k) with
 * lay[0..k) layers after one regroup move: op 0 splits group i in two
 * (halves of its cores and layers), op 1 merges groups i and i+1. Returns
 * the new group count, 0 when the move does not apply. */
static int regroup_move(const int *pc, const int *lay, int k, int i, int op, int *npc, int *nlay)
{
	int nk = 0;
	if (op == 0 ? pc[i] < 2 || lay[i] < 2 : i + 1 >= k || k <= 2)
		return 0;
	for (int j = 0; j < k; j++) {
		if (op == 0 && j == i) {
			npc[nk] = pc[j] / 2, nlay[nk++] = lay[j] / 2;
			npc[nk] = pc[j] - pc[j] / 2, nlay[nk++] = lay[j] - lay[j] / 2;
		} else if (op == 1 && j == i + 1) {
			continue;
		} else {
			npc[nk] = pc[j] + (op == 1 && j == i ? pc[i + 1] : 0);
			nlay[nk++] = lay[j] + (op == 1 && j == i ? lay[i + 1] : 0);
		}
	}
	return nk;
}

int pb_rl_tune_window(pb_part_problem *P, int *ac, int c0, int c1, int passes, int regroup)
{
	const int n = P->n;
	if (c0 < 0 || c1 > n || c1 - c0 < 2 || ac[c1 - 1] == 0 || (c0 > 0 && ac[c0 - 1] == 0))
		return 0;
	int *pc = malloc((size_t)n * 5 * sizeof *pc), *lay = pc ? pc + n : NULL,
	    *try = pc ? pc + 2 * n : NULL, *npc = pc ? pc + 3 * n : NULL,
	    *nlay = pc ? pc + 4 * n : NULL;
	if (!pc)
		return 0;
	int a = 0, k = 0, prev = c0 - 1, changed = 0;
	for (int c = 0; c < c0; c++)
		a += ac[c];
	for (int c = c0; c < c1; c++)
		if (ac[c] > 0) {
			pc[k] = c - prev;
			lay[k++] = ac[c];
			prev = c;
		}
	if (k < 2)
		goto out;
	memcpy(try, ac, (size_t)n * sizeof *try);
	pb_rl_retime_window(P, try, c0, c1);
	double best = window_time(P, try, a, c0, c1);
	if (best < window_time(P, ac, a, c0, c1)) {
		memcpy(ac, try, (size_t)n * sizeof *ac);
		changed = 1;
	}
	for (int pass = 0; pass < passes; pass++) {
		int improved = 0;
		for (int i = 0; i + 1 < k; i++)
			for (int dir = -1; dir <= 1; dir += 2) { /* a core from i+1 to i, or back */
				int from = dir < 0 ? i + 1 : i, to = dir < 0 ? i : i + 1;
				if (pc[from] < 2)
					continue;
				group_layers(ac, c0, k, pc, lay);
				pc[from]--, pc[to]++;
				if (try_layout(P, ac, try, c0, c1, a, k, pc, lay, &best))
					improved = changed = 1;
				else
					pc[from]++, pc[to]--;
			}
		/* The window's group count: a group split in two or two
		 * neighbours merged, retimed; the first that lowers the window's
		 * largest time is kept, then the next group is tried. */
		for (int i = 0; regroup && i < k; i++) {
			group_layers(ac, c0, k, pc, lay);
			for (int op = 0; op < 2; op++) {
				int nk = regroup_move(pc, lay, k, i, op, npc, nlay);
				if (nk > 0 &&
				    try_layout(P, ac, try, c0, c1, a, nk, npc, nlay, &best)) {
					memcpy(pc, npc, (size_t)nk * sizeof *pc);
					k = nk;
					improved = changed = 1;
					break;
				}
			}
		}
		if (!improved)
			break;
	}
out:
	free(pc);
	return changed;
}
