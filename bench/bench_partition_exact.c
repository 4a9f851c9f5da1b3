/*
 * bench_partition_exact.c — speed of the exact solver, new check against
 * the reference (the previous DP, pb_part_exact_solve_ref), in one run.
 *
 *   bench_partition_exact [LAYERS] [CORES] [REPEATS]   (default 1000 64 21)
 *       the chain of the first version of this bench: pseudo-random MACs,
 *       parameter and activation bytes, a skip connection every 4 layers;
 *   bench_partition_exact --grid [--repeats R] [--ref-layers L]
 *       Conv+Relu-like and MatMul+Relu-like chains of 1k..50k layers on 16,
 *       64 and 256 cores; the reference only up to L layers (default all);
 *       then the exponent of a least-squares fit of log(time) on
 *       log(layers) (and on log(cores));
 *   bench_partition_exact --memory [--repeats R] [--ref-layers L]
 *       the same chains of 2k, 20k and 50k layers on 64 cores with a memory
 *       that binds and one that nothing fits in;
 *   bench_partition_exact --models LAYOUT MODEL...
 *       real models on a manycore layout.
 *
 * Every problem is solved by both; the optima must agree to PB_EXACT_RTOL
 * (and the memory feasibility exactly), else the bench says MISMATCH and
 * exits 1. Times are CPU seconds of this thread (the VM is shared): the
 * median of REPEATS solves for the new check, one solve for the reference
 * when it takes more than a second. Memory per core is 1.5x the average
 * storage per core, so it binds for some segments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hw.h"
#include "load.h"
#include "model/graph.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/exact.h"

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

/* A chain under construction: per-layer costs and edges. */
typedef struct chain {
	int m, ne;
	double *macs, *par, *ob;
	int *from, *to;
} chain;

static chain chain_new(int m)
{
	chain c = {m,
	           0,
	           malloc(m * sizeof(double)),
	           calloc(m, sizeof(double)),
	           malloc(m * sizeof(double)),
	           malloc(2 * m * sizeof(int)),
	           malloc(2 * m * sizeof(int))};
	return c;
}

static void chain_free(chain *c)
{
	free(c->macs);
	free(c->par);
	free(c->ob);
	free(c->from);
	free(c->to);
}

static void edge(chain *c, int u, int v)
{
	c->from[c->ne] = u;
	c->to[c->ne++] = v;
}

enum { K_SKIP4, K_CONV, K_MATMUL };
static const char *const kind_names[] = {"skip4", "conv", "matmul"};

/* skip4: the chain of the first version of this bench. */
static void gen_skip4(chain *c)
{
	unsigned s = 12345;
	for (int i = 0; i < c->m; i++) {
		s = s * 1103515245u + 12345u;
		c->macs[i] = 1e6 * (1 + (s >> 16) % 100);
		s = s * 1103515245u + 12345u;
		c->par[i] = 1e4 * ((s >> 16) % 200);
		c->ob[i] = 2e4 * (1 + (s >> 20) % 16);
		if (i)
			edge(c, i - 1, i);
		if (i >= 4 && i % 4 == 0)
			edge(c, i - 4, i);
	}
}

/* conv: residual blocks conv, relu, conv, add, relu (the add also takes the
 * block's input), in four stages of halving resolution and doubling
 * channels (56x56x64 .. 7x7x512, as in a ResNet); MACs and bytes vary by
 * +-25%. Relu and add have no MACs. */
static void gen_conv(chain *c)
{
	unsigned s = 777;
	int blocks = (c->m + 4) / 5;
	for (int i = 0; i < c->m; i++) {
		int blk = i / 5, pos = i % 5, stage = (int)((long)blk * 4 / blocks);
		double hw = 56.0 / (1 << stage), ch = 64.0 * (1 << stage);
		double jit = 0.75 + 0.5 * (rnd(&s) % 1000) / 1000.0;
		c->ob[i] = hw * hw * ch * 4 * jit;
		if (pos == 0 || pos == 2) {
			c->macs[i] = hw * hw * ch * ch * 9 * jit;
			c->par[i] = ch * ch * 9 * 4 * jit;
		} else {
			c->macs[i] = 0;
		}
		if (i)
			edge(c, i - 1, i);
		if (pos == 3 && blk > 0)
			edge(c, 5 * blk - 1, i); /* skip from the block's input */
	}
}

/* matmul: transformer MLP blocks up (d -> 4d), relu, down (4d -> d), add
 * (with the block's input) over 196 tokens, d = 384 +-25%. */
static void gen_matmul(chain *c)
{
	unsigned s = 4242;
	const double tok = 196;
	for (int i = 0; i < c->m; i++) {
		int blk = i / 4, pos = i % 4;
		double d = 384 * (0.75 + 0.5 * (rnd(&s) % 1000) / 1000.0);
		switch (pos) {
		case 0:
		case 2:
			c->macs[i] = tok * d * 4 * d;
			c->par[i] = d * 4 * d * 4;
			c->ob[i] = tok * (pos == 0 ? 4 * d : d) * 4;
			break;
		default:
			c->macs[i] = 0;
			c->ob[i] = tok * (pos == 1 ? 4 * d : d) * 4;
		}
		if (i)
			edge(c, i - 1, i);
		if (pos == 3 && blk > 0)
			edge(c, 4 * blk - 1, i);
	}
}

static pb_part_problem *make_problem(int kind, int m, int n)
{
	chain c = chain_new(m);
	if (kind == K_SKIP4)
		gen_skip4(&c);
	else if (kind == K_CONV)
		gen_conv(&c);
	else
		gen_matmul(&c);
	double total_store = 0;
	for (int i = 0; i < m; i++)
		total_store += c.par[i] + c.ob[i];
	pb_manycore h;
	memset(&h, 0, sizeof h);
	snprintf(h.name, sizeof h.name, "bench%d", n);
	h.cores = n;
	h.mac_rate = 5e10;
	h.memory = 1.5 * total_store / n;
	h.bandwidth = 3.2e11;
	h.reward_a = 1;
	h.penalty = 100;
	pb_part_problem *P = NULL;
	pb_error err = {0};
	if (pb_part_problem_synthetic(m, c.macs, c.par, c.ob, c.ne, c.from, c.to, &h, &P, &err))
		fprintf(stderr, "%s\n", err.msg);
	chain_free(&c);
	return P;
}

typedef struct run {
	double time;  /* CPU seconds: median over the repeats */
	double opt;   /* optimum */
	long checks;  /* feasibility checks of the last solve */
	int feasible; /* memory feasibility */
	int groups;
} run;

static run solve(pb_part_problem *P, int reference, int reps)
{
	run r = {0};
	double *t = malloc(reps * sizeof *t);
	pb_error err = {0};
	for (int k = 0; k < reps; k++) {
		double t0 = cpu_now();
		pb_part_exact E;
		if (reference) {
			int *ac = malloc(P->n * sizeof *ac);
			pb_part_exact_solve_ref(P, &r.opt, ac, &r.feasible, &err);
			pb_part_eval ev;
			pb_part_evaluate(P, ac, &ev, NULL);
			r.groups = ev.n_groups;
			free(ac);
			r.checks = -1;
		} else {
			pb_part_exact_init(&E, P, &err);
			while (!pb_part_exact_step(&E, 64))
				;
			pb_part_eval ev;
			pb_part_evaluate(P, E.best, &ev, NULL);
			r.opt = ev.max_time;
			r.feasible = E.memory_feasible;
			r.checks = E.checks;
			r.groups = ev.n_groups;
			pb_part_exact_free(&E);
		}
		t[k] = cpu_now() - t0;
		if (reference && t[k] > 1.0) { /* one slow reference solve is enough */
			reps = k + 1;
			break;
		}
	}
	qsort(t, reps, sizeof *t, cmp);
	r.time = t[reps / 2];
	free(t);
	return r;
}

static int same(const run *a, const run *b)
{
	return a->feasible == b->feasible && fabs(a->opt - b->opt) <= PB_EXACT_RTOL * b->opt;
}

/* Least-squares slope of log(y) on log(x). */
static double slope(const double *x, const double *y, int k)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	int used = 0;
	for (int i = 0; i < k; i++) {
		if (!(x[i] > 0 && y[i] > 0))
			continue;
		double lx = log(x[i]), ly = log(y[i]);
		sx += lx;
		sy += ly;
		sxx += lx * lx;
		sxy += lx * ly;
		used++;
	}
	if (used < 2)
		return NAN;
	return (used * sxy - sx * sy) / (used * sxx - sx * sx);
}

static int grid(int reps, int ref_layers)
{
	static const int layers[] = {1000, 2000, 5000, 10000, 20000, 50000};
	static const int cores[] = {16, 64, 256};
	enum { NL = 6, NC = 3 };
	double tn[2][NC][NL], tr[2][NC][NL], x[NL];
	int bad = 0;
	printf(
	    "| chain | layers | cores | reference (s) | new (s) | speed-up | new checks | optimum "
	    "(ms) | x lower bound | groups | memory |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int kind = K_CONV; kind <= K_MATMUL; kind++)
		for (int ci = 0; ci < NC; ci++)
			for (int li = 0; li < NL; li++) {
				pb_part_problem *P = make_problem(kind, layers[li], cores[ci]);
				if (!P)
					return 2;
				run rn = solve(P, 0, reps);
				run rr = {NAN, NAN, 0, 0, 0};
				int with_ref = layers[li] <= ref_layers;
				if (with_ref)
					rr = solve(P, 1, reps);
				tn[kind - K_CONV][ci][li] = rn.time;
				tr[kind - K_CONV][ci][li] = with_ref ? rr.time : NAN;
				int ok = !with_ref || same(&rn, &rr);
				bad += !ok;
				char ref[32] = "-", up[32] = "-";
				if (with_ref) {
					snprintf(ref, sizeof ref, "%.4f", rr.time);
					snprintf(up, sizeof up, "%.0fx", rr.time / rn.time);
				}
				printf("| %s | %d | %d | %s | %.5f | %s | %ld | %.6f | %.4f | %d | "
				       "%s%s |\n",
				       kind_names[kind], layers[li], cores[ci], ref, rn.time, up,
				       rn.checks, rn.opt * 1e3, rn.opt / P->lower_bound, rn.groups,
				       rn.feasible ? "fits" : "no fit", ok ? "" : " MISMATCH");
				fflush(stdout);
				pb_part_problem_free(P);
			}
	for (int li = 0; li < NL; li++)
		x[li] = layers[li];
	printf("\nExponent of time in layers (least squares of log time on log layers, "
	       "1k..50k):\n\n| chain | cores | reference | new |\n|---|---|---|---|\n");
	for (int k = 0; k < 2; k++)
		for (int ci = 0; ci < NC; ci++)
			printf("| %s | %d | %.2f | %.2f |\n", kind_names[K_CONV + k], cores[ci],
			       slope(x, tr[k][ci], NL), slope(x, tn[k][ci], NL));
	double xc[NC], yr[NC], yn[NC];
	for (int ci = 0; ci < NC; ci++)
		xc[ci] = cores[ci];
	printf("\nExponent of time in cores (16..256):\n\n| chain | layers | reference | new "
	       "|\n|---|---|---|---|\n");
	for (int k = 0; k < 2; k++)
		for (int li = 0; li < NL; li++) {
			for (int ci = 0; ci < NC; ci++) {
				yr[ci] = tr[k][ci][li];
				yn[ci] = tn[k][ci][li];
			}
			printf("| %s | %d | %.2f | %.2f |\n", kind_names[K_CONV + k], layers[li],
			       slope(xc, yr, NC), slope(xc, yn, NC));
		}
	if (bad)
		printf("\n%d MISMATCH(ES)\n", bad);
	return bad ? 1 : 0;
}

/* Memory that binds (between the smallest memory any partition fits in
 * and the storage of the optimum without a limit) and memory that nothing
 * fits in (0.8 x the smallest): the optimum and the memory check of both. */
static int memory_rows(int reps, int ref_layers)
{
	static const int layers[] = {2000, 20000, 50000};
	const int n = 64;
	int bad = 0;
	printf(
	    "| chain | layers | cores | memory (MiB) | case | reference (s) | new (s) | speed-up "
	    "| new checks | optimum (ms) | without the limit (ms) |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int kind = K_CONV; kind <= K_MATMUL; kind++)
		for (int li = 0; li < 3; li++) {
			pb_part_problem *P = make_problem(kind, layers[li], n);
			if (!P)
				return 2;
			P->hw.memory = INFINITY;
			run rf = solve(P, 0, 1);
			int *ac = malloc(n * sizeof *ac);
			pb_error err = {0};
			double opt;
			pb_part_exact_solve(P, &opt, ac, NULL, &err);
			pb_part_eval ev;
			pb_part_evaluate(P, ac, &ev, NULL);
			free(ac);
			double lo = 0, hi = ev.max_storage; /* smallest memory that fits */
			for (int k = 0; k < 60; k++) {
				P->hw.memory = 0.5 * (lo + hi);
				if (pb_part_exact_min_cores(P, INFINITY, 1, NULL, NULL, NULL) <= n)
					hi = P->hw.memory;
				else
					lo = P->hw.memory;
			}
			double mems[2] = {sqrt(hi * ev.max_storage), 0.8 * hi};
			for (int c = 0; c < 2; c++) {
				P->hw.memory = mems[c];
				run rn = solve(P, 0, reps);
				run rr = {NAN, NAN, 0, 0, 0};
				int with_ref = layers[li] <= ref_layers;
				if (with_ref)
					rr = solve(P, 1, reps);
				int ok = !with_ref || same(&rn, &rr);
				bad += !ok;
				char ref[32] = "-", up[32] = "-";
				if (with_ref) {
					snprintf(ref, sizeof ref, "%.4f", rr.time);
					snprintf(up, sizeof up, "%.0fx", rr.time / rn.time);
				}
				const char *what = !rn.feasible ? "nothing fits"
				                   : rn.opt > rf.opt * (1 + 1e-9)
				                       ? "binds"
				                       : "fits, does not bind";
				printf("| %s | %d | %d | %.3f | %s | %s | %.5f | %s | %ld | %.6f | "
				       "%.6f "
				       "|%s\n",
				       kind_names[kind], layers[li], n, mems[c] / 1048576, what,
				       ref, rn.time, up, rn.checks, rn.opt * 1e3, rf.opt * 1e3,
				       ok ? "" : " MISMATCH");
				fflush(stdout);
			}
			pb_part_problem_free(P);
		}
	if (bad)
		printf("\n%d MISMATCH(ES)\n", bad);
	return bad ? 1 : 0;
}

static int models(const char *layout, int nm, char **paths, int reps)
{
	pb_error err = {0};
	pb_hw *hw;
	pb_manycore mc;
	if (pb_hw_load(layout, &hw, &err) || pb_manycore_parse(hw, &mc, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	int bad = 0;
	printf("| model | layout | layers | reference (s) | new (s) | checks | optimum (ms) | "
	       "memory |\n|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nm; i++) {
		pb_graph *g;
		pb_part_problem *P;
		if (pb_graph_load(paths[i], NULL, &g, &err) ||
		    pb_part_problem_new(g, &mc, &P, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		run rn = solve(P, 0, reps), rr = solve(P, 1, reps);
		int ok = same(&rn, &rr);
		bad += !ok;
		printf("| %s | %s | %d | %.4f | %.5f | %ld | %.6f | %s%s |\n", paths[i], mc.name,
		       P->m, rr.time, rn.time, rn.checks, rn.opt * 1e3,
		       rn.feasible ? "fits" : "no fit", ok ? "" : " MISMATCH");
		fflush(stdout);
		pb_part_problem_free(P);
		pb_graph_free(g);
	}
	pb_hw_free(hw);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--grid") == 0 || strcmp(argv[1], "--memory") == 0)) {
		int reps = 5, ref_layers = 50000;
		for (int i = 2; i + 1 < argc; i += 2) {
			if (strcmp(argv[i], "--repeats") == 0)
				reps = atoi(argv[i + 1]);
			else if (strcmp(argv[i], "--ref-layers") == 0)
				ref_layers = atoi(argv[i + 1]);
		}
		if (reps < 1)
			reps = 1;
		return argv[1][2] == 'g' ? grid(reps, ref_layers) : memory_rows(reps, ref_layers);
	}
	if (argc > 1 && strcmp(argv[1], "--models") == 0) {
		if (argc < 4) {
			fprintf(stderr, "usage: %s --models LAYOUT MODEL...\n", argv[0]);
			return 1;
		}
		return models(argv[2], argc - 3, argv + 3, 3);
	}
	int m = argc > 1 ? atoi(argv[1]) : 1000, n = argc > 2 ? atoi(argv[2]) : 64;
	int reps = argc > 3 ? atoi(argv[3]) : 21;
	if (m < 1 || n < 1 || reps < 1) {
		fprintf(stderr,
		        "usage: %s [LAYERS] [CORES] [REPEATS] | --grid|--memory [--repeats R] "
		        "[--ref-layers L] | --models LAYOUT MODEL...\n",
		        argv[0]);
		return 1;
	}
	pb_part_problem *P = make_problem(K_SKIP4, m, n);
	if (!P)
		return 2;
	run rn = solve(P, 0, reps), rr = solve(P, 1, reps);
	printf("exact: %d layers, %d cores, %d runs: median %.3f ms CPU, %ld checks (reference "
	       "%.3f ms); optimum %.6f ms = %.4f x lower bound, %d groups, memory %s%s\n",
	       m, n, reps, rn.time * 1e3, rn.checks, rr.time * 1e3, rn.opt * 1e3,
	       rn.opt / P->lower_bound, rn.groups, rn.feasible ? "ok" : "EXCEEDED",
	       same(&rn, &rr) ? "" : " MISMATCH");
	pb_part_problem_free(P);
	return same(&rn, &rr) ? 0 : 1;
}
