/*
 * bench_partition_memory.c — does a layout's memory limit bind?
 *
 *   bench_partition_memory LAYOUT MODEL...
 *
 * For each model: the exact optimum ignoring memory and the largest
 * per-core storage of that partition (S_free), the smallest memory per core
 * that any partition fits in (M_min, bisection on the feasibility DP), and the
 * exact optimum under the layout's memory. The limit binds when
 * M_min <= memory < S_free (the constrained optimum is then slower).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/graph.h"
#include "load.h"
#include "hw.h"
#include "partition/chain/exact.h"
#include "partition/chain/chain_problem.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s LAYOUT MODEL...\n", argv[0]);
		return 1;
	}
	pb_error err = {0};
	pb_hw *hw;
	pb_manycore mc;
	if (pb_hw_load(argv[1], &hw, &err) || pb_manycore_parse(hw, &mc, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	printf("%-28s %12s %12s %12s %12s %12s %s\n", "model", "opt_free(ms)", "S_free(MiB)",
	       "M_min(MiB)", "memory(MiB)", "opt_mem(ms)", "binds");
	for (int i = 2; i < argc; i++) {
		pb_graph *g;
		if (pb_graph_load(argv[i], NULL, &g, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		pb_part_problem *P;
		pb_manycore free_mc = mc;
		free_mc.memory = INFINITY;
		if (pb_part_problem_new(g, &free_mc, &P, &err))
			return 2;
		int *ac = malloc((size_t)P->n * sizeof *ac);
		double opt_free, opt_mem;
		pb_part_exact_solve(P, &opt_free, ac, NULL, &err);
		pb_part_eval ev;
		pb_part_evaluate(P, ac, &ev, NULL);
		double s_free = ev.max_storage;
		int *dp = malloc(((size_t)P->m + 1) * 2 * sizeof *dp), *from = dp + P->m + 1;
		double lo = 0, hi = s_free;
		for (int k = 0; k < 60; k++) {
			double mid = 0.5 * (lo + hi);
			P->hw.memory = mid;
			if (pb_part_exact_min_cores(P, INFINITY, 1, dp, from, NULL) <= P->n)
				hi = mid;
			else
				lo = mid;
		}
		P->hw.memory = mc.memory;
		int feasible;
		pb_part_exact_solve(P, &opt_mem, ac, &feasible, &err);
		int binds = feasible && hi <= mc.memory && mc.memory < s_free &&
		            opt_mem > opt_free * (1 + 1e-9);
		printf("%-28s %12.5f %12.3f %12.3f %12.3f %12.5f %s\n", g->path, opt_free * 1e3,
		       s_free / 1048576, hi / 1048576, mc.memory / 1048576, opt_mem * 1e3,
		       binds ? "yes" : (feasible ? "no (fits)" : "no (infeasible)"));
		fflush(stdout);
		free(dp);
		free(ac);
		pb_part_problem_free(P);
		pb_graph_free(g);
	}
	pb_hw_free(hw);
	return 0;
}
