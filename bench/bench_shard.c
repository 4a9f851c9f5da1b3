/*
 * bench_shard.c — strategy search speed: per scheme, the time to build the
 * problem and to solve the MILP, the MILP size before shrinking (every
 * operator its own group) and after, and the optimum. With --lp FILE the
 * MILP of one scheme is written for external solvers (bench/bench_shard.sh
 * times glpsol and cbc on it).
 *
 * --layers: repeated layers solved once (shard's default); --full-build: and
 * every block's tables built (no sharing: the build time before
 * strategy_share.c); --recompute none|selective|full (training);
 * --input NAME=D1,D2 sets an input's shape (the batch); --no-size0 skips the
 * build without shrinking (its size columns are then 0).
 *
 * usage: bench_shard MODEL LAYOUT [--level N] [--scheme S] [--max-axes N]
 *                    [--train] [--lp FILE] [--layers] [--full-build]
 *                    [--recompute K] [--input NAME=DIMS] [--no-size0]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/graph.h"
#include "load.h"
#include "hw.h"
#include "shard/search/search.h"
#include "shard/strategy/strategy_milp.h"
#include "shard/strategy/strategy_problem.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr,
		        "usage: %s MODEL LAYOUT [--level N] [--scheme S] [--max-axes N] "
		        "[--train] [--lp FILE] [--layers] [--full-build] [--recompute K] "
		        "[--input NAME=DIMS] [--no-size0]\n",
		        argv[0]);
		return 1;
	}
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	const char *scheme = NULL, *lp = NULL;
	int max_axes = 2, size0 = 1;
	pb_input_override ov = {0};
	pb_load_opts lo;
	memset(&lo, 0, sizeof lo);
	pb_error err = {0};
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--level") && i + 1 < argc)
			o.opt_level = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--scheme") && i + 1 < argc)
			scheme = argv[++i];
		else if (!strcmp(argv[i], "--max-axes") && i + 1 < argc)
			max_axes = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--train"))
			o.train = 1;
		else if (!strcmp(argv[i], "--lp") && i + 1 < argc)
			lp = argv[++i];
		else if (!strcmp(argv[i], "--layers"))
			o.layers = 1;
		else if (!strcmp(argv[i], "--full-build"))
			o.layers = o.no_share = 1;
		else if (!strcmp(argv[i], "--no-size0"))
			size0 = 0;
		else if (!strcmp(argv[i], "--recompute") && i + 1 < argc) {
			const char *k = argv[++i];
			o.recompute = !strcmp(k, "full")        ? PB_RECOMP_FULL
			              : !strcmp(k, "selective") ? PB_RECOMP_SELECTIVE
			                                        : PB_RECOMP_NONE;
		} else if (!strcmp(argv[i], "--input") && i + 1 < argc) {
			if (pb_parse_input_override(argv[++i], &ov, &err)) {
				fprintf(stderr, "%s\n", err.msg);
				return 1;
			}
			lo.overrides = &ov;
			lo.n_overrides = 1;
		}
	}
	if (o.train)
		o.optimizer = PB_OPTIM_ADAM; /* shard's default */
	pb_graph *g = NULL;
	pb_hw *hw = NULL;
	double t0 = now();
	if (pb_graph_load(argv[1], &lo, &g, &err) || pb_hw_load(argv[2], &hw, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	double t_load = now() - t0;
	pb_cluster c;
	if (pb_cluster_from_hw(hw, &c, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	pb_shard_rules *rules = o.opt_level >= 1 ? pb_rules_new(1) : NULL;
	o.rules = rules;
	pb_mesh meshes[64];
	int n = 0;
	if (scheme) {
		if (pb_cluster_mesh_parse(&meshes[0], &c, scheme, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		n = 1;
	} else {
		n = pb_cluster_mesh_schemes(&c, max_axes, meshes, 64, NULL, NULL, 0);
	}
	printf("model %s (%d nodes), layout %s, %s, opt-level %d, load %.3f s\n", argv[1],
	       g->n_nodes, argv[2], o.train ? "training" : "inference", o.opt_level, t_load);
	printf("%-8s %8s %8s %10s %9s | %8s %10s %9s | %8s %8s %12s\n", "scheme", "ops", "groups0",
	       "cols0", "rows0", "groups", "cols", "rows", "build s", "solve s", "step us");
	double total = 0, best = 1e300;
	const char *best_name = "";
	for (int i = 0; i < n; i++) {
		pb_shard_opts o0 = o;
		o0.no_shrink = 1;
		pb_shard_problem *p0 = NULL, *p = NULL;
		pb_milp_size s0 = {0}, s1;
		int g0 = 0;
		if (size0 && pb_strategy_problem_build(g, &c, &meshes[i], &o0, &p0, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		if (p0) {
			pb_strategy_milp_size(p0, &s0);
			g0 = p0->n_groups;
			pb_strategy_problem_free(p0);
		}
		double tb = now();
		if (pb_strategy_problem_build(g, &c, &meshes[i], &o, &p, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		double t_build = now() - tb;
		pb_strategy_milp_size(p, &s1);
		pb_shard_result r;
		double ts = now();
		if (pb_strategy_milp_solve(p, (lp && (scheme || n == 1)) ? lp : NULL, NULL, NULL,
		                           &r, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		double t_solve = now() - ts;
		total += t_build + t_solve;
		printf("%-8s %8d %8d %10ld %9ld | %8d %10ld %9ld | %8.3f %8.3f %12.4f%s\n",
		       meshes[i].name, p->n_active, g0, s0.cols, s0.rows, p->n_groups, s1.cols,
		       s1.rows, t_build, t_solve, r.objective * 1e6, r.optimal ? " optimal" : "");
		if (r.objective < best) {
			best = r.objective;
			best_name = meshes[i].name;
		}
		pb_strategy_problem_result_free(&r);
		pb_strategy_problem_free(p);
	}
	printf("best %s %.4f us; all schemes built and solved in %.3f s (+ %.3f s loading)\n",
	       best_name, best * 1e6, total, t_load);
	pb_rules_free(rules);
	pb_cluster_free(&c);
	pb_hw_free(hw);
	pb_graph_free(g);
	if (lo.n_overrides)
		pb_input_override_free(&ov);
	return 0;
}
