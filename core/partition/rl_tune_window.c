/*
 * partition/rl_tune_window.c — the agent's restart windows, tuned: core
 * counts of a window's groups moved one core at a time between neighbours,
 * each try re-cut by pb_rl_retime_window (rl_reinforce.h).
 *
 * A re-cut window gets random core counts; the retime then places its cuts
 * for those counts. On 64 cores the optima have many groups of uneven core
 * counts (swin_t: 22 groups of 2 to 8 cores) and random counts rarely come
 * close, so this hill-climb moves a core from one group of the window to
 * its neighbour while that lowers the window's largest group time. It uses
 * only the state and the costs (blind: no optimum, no other solver's plan).
 */
#include <stdlib.h>
#include <string.h>

#include "partition/rl_reinforce.h"

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

int pb_rl_tune_window(pb_part_problem *P, int *ac, int c0, int c1, int passes)
{
	const int n = P->n;
	if (c0 < 0 || c1 > n || c1 - c0 < 2 || ac[c1 - 1] == 0 || (c0 > 0 && ac[c0 - 1] == 0))
		return 0;
	int *pc = malloc((size_t)n * 3 * sizeof *pc), *lay = pc ? pc + n : NULL,
	    *try = pc ? pc + 2 * n : NULL;
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
				for (int j = 0, c = c0; j < k; j++) { /* current layers per group */
					c += pc[j];
					lay[j] = ac[c - 1];
				}
				pc[from]--, pc[to]++;
				memcpy(try, ac, (size_t)n * sizeof *try);
				lay_out(try, c0, k, pc, lay);
				pb_rl_retime_window(P, try, c0, c1);
				double t = window_time(P, try, a, c0, c1);
				if (t < best * (1 - 1e-9)) {
					best = t;
					memcpy(ac, try, (size_t)n * sizeof *ac);
					improved = changed = 1;
				} else {
					pc[from]++, pc[to]--;
				}
			}
		if (!improved)
			break;
	}
out:
	free(pc);
	return changed;
}
