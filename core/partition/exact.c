/*
 * exact.c — exact min-max partition by bisection on the bottleneck time with
 * a feasibility DP over prefixes (exact.h).
 *
 * Feasibility of a bottleneck T: dp[b] = the fewest cores that cover layers
 * [0, b) with every group's time <= T and storage <= memory, where a segment
 * [a, b) needs c(a, b) = max(1, ceil(MACs / (rate * (T - routing))),
 * ceil(storage_total / memory)) cores (more cores never hurt: time and
 * storage per core both fall with c). T is feasible iff dp[m] <= n; spare
 * cores then go to the slowest groups. For a fixed end b the DP walks the
 * start a downwards and updates in_bytes(a, b) with O(1) work per edge
 * (problem.c's pred_next), so one check costs O(m^2 + m*E) at worst.
 *
 * Monotonicity makes most of that walk cheap: shortening a segment from
 * either end never increases its MACs, traffic (in + own bytes) or storage,
 * so c(a, b) is non-increasing in a and dp[] is non-decreasing. Hence only
 * the last index of each dp level is a candidate start (at most n+1 per b,
 * the only places where c is computed), and the walk stops once c(a, b)
 * alone reaches the best total or a segment cannot meet T at all.
 *
 * The search keeps lo (infeasible) and hi (the max(t) actually achieved by
 * the best partition found, re-evaluated exactly; initially the better of
 * the greedy split and the memory-only DP), bisects down to a 1e-4 bracket
 * and snaps hi to the achieved value after each feasible check, then probes
 * just below hi; it ends when hi - lo <= PB_EXACT_RTOL * hi, so hi is the
 * optimum to that precision.
 */
#include "partition/exact.h"

#include "partition/baselines.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void give_spare_cores(pb_part_problem *P, int ng, int *cores, const int *layers, int spare)
{
	/* Each spare core goes to the group whose time is currently largest. */
	double *t = malloc((size_t)ng * sizeof *t);
	int first = 0;
	for (int g = 0; g < ng; g++) {
		pb_part_group gr;
		pb_part_eval_group(P, first, first + layers[g], cores[g], &gr);
		t[g] = gr.time;
		first += layers[g];
	}
	while (spare-- > 0) {
		int best = 0;
		for (int g = 1; g < ng; g++)
			if (t[g] > t[best])
				best = g;
		cores[best]++;
		int a = 0;
		for (int g = 0; g < best; g++)
			a += layers[g];
		pb_part_group gr;
		pb_part_eval_group(P, a, a + layers[best], cores[best], &gr);
		t[best] = gr.time;
	}
	free(t);
}

int pb_part_exact_min_cores(pb_part_problem *P, double T, int use_memory, int *dp, int *from,
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
				int ct = (int)ceil(need * (1 - 1e-12));
				if (ct > c)
					c = ct;
			}
			if (use_memory) {
				double need = (ps[b] - ps[a] + (in > 0 ? in : 0)) / mem;
				if (need > n)
					break;
				int cm = (int)ceil(need * (1 - 1e-12));
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

int pb_part_exact_init(pb_part_exact *E, pb_part_problem *P, pb_error *err)
{
	memset(E, 0, sizeof *E);
	E->P = P;
	size_t M = (size_t)P->m + 1;
	E->best = malloc((size_t)P->n * sizeof *E->best);
	E->scratch = malloc((size_t)P->n * sizeof *E->scratch);
	E->dp = malloc(M * sizeof *E->dp);
	E->from = malloc(M * sizeof *E->from);
	if (!E->best || !E->scratch || !E->dp || !E->from) {
		pb_part_exact_free(E);
		return pb_err(err, PB_ENOMEM, "exact: out of memory");
	}
	/* Is there any partition that fits the memory limit? */
	E->use_memory = 1;
	if (pb_part_exact_min_cores(P, INFINITY, 1, E->dp, E->from, E->best) > P->n) {
		E->use_memory = 0;
		pb_part_exact_min_cores(P, INFINITY, 0, E->dp, E->from, E->best);
	}
	E->memory_feasible = E->use_memory;
	pb_part_eval ev;
	pb_part_evaluate(P, E->best, &ev, NULL);
	E->hi = ev.max_time;
	/* The greedy split is usually a much tighter start. */
	pb_part_greedy(P, E->scratch);
	pb_part_evaluate(P, E->scratch, &ev, NULL);
	if (ev.max_time < E->hi && (!ev.over_memory || !E->use_memory)) {
		E->hi = ev.max_time;
		memcpy(E->best, E->scratch, (size_t)P->n * sizeof *E->best);
	}
	E->lo = P->lower_bound * (1 - 1e-12);
	if (E->lo >= E->hi)
		E->done = 1;
	return PB_OK;
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
		int need =
		    pb_part_exact_min_cores(P, mid, E->use_memory, E->dp, E->from, E->scratch);
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
	E->best = E->scratch = E->dp = E->from = NULL;
}

int pb_part_exact_solve(pb_part_problem *P, double *optimum, int *ac, int *memory_feasible,
                        pb_error *err)
{
	pb_part_exact E;
	int rc = pb_part_exact_init(&E, P, err);
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
