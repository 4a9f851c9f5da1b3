/*
 * bench_partition_exact.c — speed of the exact solver.
 *
 *   bench_partition_exact [LAYERS] [CORES] [REPEATS]   (default 1000 64 21)
 *
 * Builds a synthetic chain of LAYERS layers (pseudo-random MACs, parameter
 * and activation bytes, a skip connection every 4 layers, memory that binds
 * for some segments), solves it REPEATS times and prints the median and
 * minimum wall time, the feasibility checks used, and the optimum against
 * the lower bound.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partition/exact.h"
#include "partition/chain_problem.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int m = argc > 1 ? atoi(argv[1]) : 1000, n = argc > 2 ? atoi(argv[2]) : 64;
	int reps = argc > 3 ? atoi(argv[3]) : 21;
	if (m < 1 || n < 1 || reps < 1) {
		fprintf(stderr, "usage: %s [LAYERS] [CORES] [REPEATS]\n", argv[0]);
		return 1;
	}
	double *macs = malloc(m * sizeof *macs), *par = malloc(m * sizeof *par),
	       *ob = malloc(m * sizeof *ob);
	int *from = malloc(2 * m * sizeof *from), *to = malloc(2 * m * sizeof *to), ne = 0;
	unsigned s = 12345;
	double total_store = 0;
	for (int i = 0; i < m; i++) {
		s = s * 1103515245u + 12345u;
		macs[i] = 1e6 * (1 + (s >> 16) % 100);
		s = s * 1103515245u + 12345u;
		par[i] = 1e4 * ((s >> 16) % 200);
		ob[i] = 2e4 * (1 + (s >> 20) % 16);
		total_store += par[i] + ob[i];
		if (i) {
			from[ne] = i - 1;
			to[ne++] = i;
		}
		if (i >= 4 && i % 4 == 0) {
			from[ne] = i - 4;
			to[ne++] = i;
		}
	}
	pb_manycore h;
	memset(&h, 0, sizeof h);
	snprintf(h.name, sizeof h.name, "bench%d", n);
	h.cores = n;
	h.mac_rate = 5e10;
	h.memory = 1.5 * total_store / n;
	h.bandwidth = 3.2e11;
	h.reward_a = 1;
	h.penalty = 100;
	pb_part_problem *P;
	pb_error err = {0};
	if (pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, &h, &P, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	double *t = malloc(reps * sizeof *t), opt = 0;
	int *ac = malloc(n * sizeof *ac);
	long checks = 0;
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		pb_part_exact E;
		pb_part_exact_init(&E, P, &err);
		while (!pb_part_exact_step(&E, 64))
			;
		checks = E.checks;
		memcpy(ac, E.best, n * sizeof *ac);
		opt = E.hi;
		pb_part_exact_free(&E);
		t[r] = now() - t0;
	}
	qsort(t, reps, sizeof *t, cmp);
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	printf("exact: %d layers, %d cores, %d runs: median %.2f ms, min %.2f ms, %ld checks; "
	       "optimum %.6f ms = %.4f x lower bound, %d groups, memory %s\n",
	       m, n, reps, t[reps / 2] * 1e3, t[0] * 1e3, checks, opt * 1e3, opt / P->lower_bound,
	       ev.n_groups, ev.over_memory ? "EXCEEDED" : "ok");
	pb_part_problem_free(P);
	free(macs);
	free(par);
	free(ob);
	free(from);
	free(to);
	free(t);
	free(ac);
	return 0;
}
