/*
 * baselines.c — equal, greedy and local-search partitions (baselines.h).
 */
#include "baselines.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

void pb_part_equal(const pb_part_problem *P, int *ac)
{
	pb_env_equal_state(P->m, P->n, ac);
}

void pb_part_greedy(const pb_part_problem *P, int *ac)
{
	int m = P->m, n = P->n;
	int groups = m < n ? m : n;
	memset(ac, 0, (size_t)n * sizeof *ac);
	int spare = n - groups, start = 0;
	for (int g = 0; g < groups; g++) {
		int left = groups - g - 1; /* groups after this one need a layer each */
		int end;
		if (left == 0) {
			end = m;
		} else {
			double target = P->total_macs * (g + 1) / groups;
			end = start + 1;
			/* Extend while the prefix gets closer to the target. */
			while (end < m - left &&
			       fabs(P->pmacs[end + 1] - target) <= fabs(P->pmacs[end] - target))
				end++;
		}
		ac[spare + g] = end - start;
		start = end;
	}
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
