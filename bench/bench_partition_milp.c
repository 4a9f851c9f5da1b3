/*
 * bench_partition_milp.c — time to proof of the partition MILP, and glpsol / cbc on the
 * LP it emits.
 *
 *   bench_partition_milp [-t SECONDS] [-g PROBE_GAP] [-d LP_DIR] LAYOUT MODEL...
 *
 * For each model: builds the problem, runs the MILP (chain_milp.h) step by step to the
 * proof (or SECONDS, default 120) and prints the wall time, probes, B&B nodes, columns,
 * the proven max(t) and whether it equals the exact DP's optimum (computed afterwards,
 * only to check the result; the MILP never sees it). The emitted LP (the optimisation
 * MILP for the bracket the probes reached) is then solved by `glpsol --lp` and `cbc`
 * with the same time limit, when they are installed; their times include reading the
 * file, the MILP's include building its model; the last column splits the MILP's
 * time into probing, columns + root LP, and branch and bound. -g sets the probing
 * target (default 0.002; a large value such as 1 leaves more of the work to branch
 * and bound).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hw.h"
#include "load.h"
#include "model/graph.h"
#include "partition/milp/chain_milp.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/exact.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs cmd; returns its wall time, the objective (the number after the last `key` in
 * its output, NAN when absent) and whether it printed `proved` (its optimality line). */
static double run_solver(const char *cmd, const char *key, const char *proved, double *obj,
                         int *optimal)
{
	double t0 = now();
	FILE *f = popen(cmd, "r");
	*obj = NAN;
	*optimal = 0;
	if (!f)
		return NAN;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, proved))
			*optimal = 1;
		char *p = strstr(line, key);
		if (p) {
			p += strlen(key);
			while (*p == ' ' || *p == ':' || *p == '=')
				p++;
			char *end;
			double v = strtod(p, &end);
			if (end != p)
				*obj = v;
		}
	}
	pclose(f);
	return now() - t0;
}

static int have(const char *prog)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int main(int argc, char **argv)
{
	double limit = 120, gap = 0;
	const char *dir = "/tmp";
	int opt;
	while ((opt = getopt(argc, argv, "t:g:d:")) != -1) {
		if (opt == 't')
			limit = atof(optarg);
		else if (opt == 'g')
			gap = atof(optarg);
		else if (opt == 'd')
			dir = optarg;
		else
			return 1;
	}
	if (argc - optind < 2) {
		fprintf(stderr,
		        "usage: %s [-t SECONDS] [-g PROBE_GAP] [-d LP_DIR] LAYOUT MODEL...\n",
		        argv[0]);
		return 1;
	}
	pb_error err = {0};
	pb_hw *hw;
	pb_manycore mc;
	if (pb_hw_load(argv[optind], &hw, &err) || pb_manycore_parse(hw, &mc, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	int glpsol = have("glpsol"), cbc = have("cbc");
	printf("%-22s %-7s %5s %9s %6s %7s %8s %12s %6s %9s %9s %9s   %s\n", "model", "layout", "m",
	       "milp(s)", "probes", "nodes", "columns", "max(t) ms", "exact", "gap", "glpsol(s)",
	       "cbc(s)", "[probing, model, B&B (s)]");
	for (int i = optind + 1; i < argc; i++) {
		pb_graph *g;
		if (pb_graph_load(argv[i], NULL, &g, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		pb_part_problem *P;
		if (pb_part_problem_new(g, &mc, &P, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		char lp[512], name[128];
		snprintf(name, sizeof name, "%s", base(argv[i]));
		char *dot = strrchr(name, '.');
		if (dot)
			*dot = 0;
		snprintf(lp, sizeof lp, "%s/%s_%s.lp", dir, name, mc.name);
		remove(lp);
		pb_milp_opts o = {limit, gap};
		double t0 = now();
		pb_milp *M;
		int rc = pb_milp_new_opts(P, &o, lp, &M, &err), improved;
		int *ac = malloc((size_t)P->n * sizeof *ac);
		while (rc == PB_OK && !pb_milp_done(M))
			rc = pb_milp_step(M, 1, ac, &improved, &err);
		double t_milp = now() - t0;
		if (rc) {
			printf("%-22s %-7s %5d error: %s\n", name, mc.name, P->m, err.msg);
			pb_milp_free(M);
			free(ac);
			pb_part_problem_free(P);
			pb_graph_free(g);
			continue;
		}
		pb_milp_stats st;
		pb_milp_stats_get(M, &st);
		pb_milp_free(M);
		double ex;
		pb_part_exact_solve(P, &ex, NULL, NULL, &err);
		const char *eq = st.state != PB_MILP_OPTIMAL            ? "-"
		                 : fabs(st.incumbent - ex) <= 1e-6 * ex ? "yes"
		                                                        : "NO";
		char tg[32] = "-", tc[32] = "-", gp[32] = "proved";
		if (st.state != PB_MILP_OPTIMAL)
			snprintf(gp, sizeof gp, "%.3f%%", 100 * st.gap);
		if (access(lp, R_OK) == 0) {
			char cmd[1024];
			double obj, t;
			int ok;
			if (glpsol) {
				snprintf(cmd, sizeof cmd, "glpsol --lp %s --tmlim %d 2>&1", lp,
				         (int)limit);
				t = run_solver(cmd, "mip =", "INTEGER OPTIMAL SOLUTION FOUND", &obj,
				               &ok);
				if (ok && fabs(obj * P->lower_bound - ex) <= 1e-5 * ex)
					snprintf(tg, sizeof tg, "%.2f", t);
				else
					snprintf(tg, sizeof tg, ok ? "WRONG" : ">%.0f", limit);
			}
			if (cbc) {
				snprintf(cmd, sizeof cmd, "cbc %s sec %d solve quit 2>&1", lp,
				         (int)limit);
				t = run_solver(cmd, "Objective value",
				               "Result - Optimal solution found", &obj, &ok);
				if (ok && fabs(obj * P->lower_bound - ex) <= 1e-5 * ex)
					snprintf(tc, sizeof tc, "%.2f", t);
				else
					snprintf(tc, sizeof tc, ok ? "WRONG" : ">%.0f", limit);
			}
		}
		printf("%-22s %-7s %5d %9.3f %6ld %7ld %8d %12.6f %6s %9s %9s %9s   [%.3f %.3f "
		       "%.3f]\n",
		       name, mc.name, P->m, t_milp, st.probes, st.nodes, st.columns,
		       st.incumbent * 1e3, eq, gp, tg, tc, st.probe_seconds, st.model_seconds,
		       st.bb_seconds);
		fflush(stdout);
		free(ac);
		pb_part_problem_free(P);
		pb_graph_free(g);
	}
	pb_hw_free(hw);
	return 0;
}
