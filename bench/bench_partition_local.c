/*
 * bench_partition_local.c — the iterated local search (`--method local`,
 * pb_part_ils) against its start, the other baselines and the exact
 * optimum.
 *
 *   bench_partition_local [-s SEED] [-r RESTARTS] [-w WINDOW] [-G 0|1]
 *                         [-g COUNT] [-n CORES] [LAYOUT[,LAYOUT...] MODEL...]
 *
 * For every model x layout, then for COUNT generated chains (default 0): the
 * exact optimum (pb_part_exact_solve, the judge; the search never sees it)
 * and its CPU time; the gaps max(t)/optimum - 1 of greedy, of the old (c)/(d)
 * polish from greedy (pb_part_local_search), of pack, and of the search
 * from greedy (its start, the start `partition --method local` uses) with
 * its CPU time and the steps that improved; then the search from pack.
 * "fits" is "no" when no partition fits the core memory: every method then
 * minimises the overflow first and the optimum ignores the limit, so that
 * row's gaps are not comparable (and the summary leaves it out). Times are
 * CPU seconds of this thread.
 *
 * Generated chains (deterministic from the seed): 60 to 2,000 layers in
 * blocks of 2 to 12 layers, with skip connections inside a block, from its
 * first layer to its last, and now and then from far back; MACs spread over
 * two orders of magnitude (one layer in eight free, one in twenty 100x
 * heavier), activations large enough that routing matters; 16 or 64 cores;
 * every other chain gets a core memory of 1.2 to 3 times its storage over
 * the cores, which binds.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/graph.h"
#include "load.h"
#include "hw.h"
#include "partition/chain/baselines.h"
#include "partition/chain/exact.h"
#include "partition/chain/chain_problem.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
	return (double)(rnd(s) >> 11) * 0x1.0p-53;
}

typedef struct summary {
	int rows, comparable, within2, greedy_off, beat_greedy, beat_pack, worse_pack;
	double worst, sum_gap, sum_time;
	char worst_row[128];
} summary;

static double gap_of(pb_part_problem *P, const int *ac, double opt)
{
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	return ev.max_time / opt - 1;
}

static double objective_of(pb_part_problem *P, const int *ac)
{
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	return pb_part_objective(&ev);
}

static void row(pb_part_problem *P, const char *model, const char *layout,
                const pb_part_ils_opts *o, summary *sum)
{
	int n = P->n;
	int *gr = malloc((size_t)n * sizeof *gr), *pol = malloc((size_t)n * sizeof *pol),
	    *pk = malloc((size_t)n * sizeof *pk), *ls = malloc((size_t)n * sizeof *ls),
	    *lp = malloc((size_t)n * sizeof *lp), *ex = malloc((size_t)n * sizeof *ex);
	pb_error err = {0};
	double opt;
	int feasible = 1;
	double t0 = now();
	if (pb_part_exact_solve(P, &opt, ex, &feasible, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(2);
	}
	double t_exact = now() - t0;
	pb_part_eval eo;
	pb_part_evaluate(P, ex, &eo, NULL);
	pb_part_greedy(P, gr);
	memcpy(pol, gr, (size_t)n * sizeof *gr);
	pb_part_local_search(P, pol, 1 << 30);
	t0 = now();
	pb_part_pack(P, pk);
	double t_pack = now() - t0;
	memcpy(ls, gr, (size_t)n * sizeof *gr);
	t0 = now();
	int steps = pb_part_ils(P, ls, o);
	double t_ls = now() - t0;
	memcpy(lp, pk, (size_t)n * sizeof *pk);
	t0 = now();
	pb_part_ils(P, lp, o);
	double t_lp = now() - t0;
	double g_gr = gap_of(P, gr, opt), g_pol = gap_of(P, pol, opt), g_pk = gap_of(P, pk, opt),
	       g_ls = gap_of(P, ls, opt), g_lp = gap_of(P, lp, opt);
	printf("| %s | %s | %d | %s | %d | %.5f | %.3f | %.2f%% | %.2f%% | %.2f%% | %.3f | "
	       "**%.2f%%** | %d | %.3f | %.2f%% | %.3f |\n",
	       model, layout, P->m, feasible ? "yes" : "no", eo.n_groups, opt * 1e3, t_exact,
	       100 * g_gr, 100 * g_pol, 100 * g_pk, t_pack, 100 * g_ls, steps, t_ls, 100 * g_lp,
	       t_lp);
	fflush(stdout);
	sum->rows++;
	if (feasible) {
		sum->comparable++;
		sum->within2 += g_ls <= 0.02;
		sum->sum_gap += g_ls;
		sum->sum_time += t_ls;
		if (g_ls > sum->worst) {
			sum->worst = g_ls;
			snprintf(sum->worst_row, sizeof sum->worst_row, "%s on %s", model, layout);
		}
		if (g_gr > 1e-9) {
			sum->greedy_off++;
			sum->beat_greedy += objective_of(P, ls) < objective_of(P, gr) * (1 - 1e-12);
		}
		sum->beat_pack += g_ls < g_pk - 1e-9;
		sum->worse_pack += g_ls > g_pk + 1e-9;
	}
	free(gr);
	free(pol);
	free(pk);
	free(ls);
	free(lp);
	free(ex);
}

/* A generated chain (file comment). */
static pb_part_problem *generated(uint64_t *s, int idx, int cores, char *name, size_t len,
                                  char *lay, size_t lay_len)
{
	static const int sizes[] = {60, 200, 600, 2000};
	int m = sizes[idx % 4], n = cores > 0 ? cores : (idx / 4) % 2 ? 64 : 16, bound = idx % 2;
	double *macs = malloc((size_t)m * sizeof *macs), *par = malloc((size_t)m * sizeof *par),
	       *ob = malloc((size_t)m * sizeof *ob);
	int *from = malloc((size_t)m * 4 * sizeof *from), *to = malloc((size_t)m * 4 * sizeof *to);
	int ne = 0, block = 0, prev_block = 0;
	double store = 0;
	for (int i = 0; i < m; i++) {
		if (i == block) { /* a new block starts here */
			prev_block = i;
			block = i + 2 + (int)(rnd(s) % 11);
		}
		/* one layer in eight is free (a reshape), one in twenty is heavy */
		double u = unif(s);
		macs[i] = rnd(s) % 8 == 0 ? 0 : 1e6 * pow(10, 2 * u + (rnd(s) % 20 == 0 ? 2 : 0));
		par[i] = 1e3 * pow(10, 3 * unif(s));
		ob[i] = 1e5 * pow(10, 2.5 * unif(s));
		store += par[i] + ob[i];
		if (i > 0) {
			from[ne] = i - 1;
			to[ne++] = i;
		}
		/* skips: inside the block, into its last layer from its first, and
		 * now and then from far back (a U-Net-like long skip) */
		if (i > 1 && i - 2 >= prev_block && rnd(s) % 3 == 0) {
			from[ne] = i - 2;
			to[ne++] = i;
		}
		if (i + 1 == block && i > prev_block + 1) {
			from[ne] = prev_block;
			to[ne++] = i;
		}
		if (i > 40 && rnd(s) % 40 == 0) {
			from[ne] = (int)(rnd(s) % (uint64_t)(i - 20));
			to[ne++] = i;
		}
	}
	pb_manycore h;
	memset(&h, 0, sizeof h);
	h.cores = n;
	h.mac_rate = 1e11;
	h.bandwidth = 1.6e11;
	h.memory = bound ? (1.2 + 1.8 * unif(s)) * store / n : 1e15;
	h.reward_a = 1;
	h.penalty = 100;
	snprintf(h.name, sizeof h.name, "gen%d", n);
	snprintf(name, len, "chain%02d (%d layers%s)", idx, m, bound ? ", memory" : "");
	snprintf(lay, lay_len, "%d cores", n);
	pb_part_problem *P;
	pb_error err = {0};
	if (pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, &h, &P, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		exit(2);
	}
	free(macs);
	free(par);
	free(ob);
	free(from);
	free(to);
	return P;
}

static void usage(const char *me)
{
	fprintf(stderr,
	        "usage: %s [-s SEED] [-r RESTARTS] [-w WINDOW] [-G 0|1] [-g COUNT] [-n CORES] "
	        "[LAYOUT[,LAYOUT...] MODEL...]\n",
	        me);
	exit(1);
}

int main(int argc, char **argv)
{
	pb_part_ils_opts o;
	pb_part_ils_defaults(&o);
	int gen = 0, cores = 0, i = 1;
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "-s") == 0)
			o.seed = strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "-r") == 0)
			o.restarts = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-w") == 0)
			o.window = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-G") == 0)
			o.global = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-n") == 0)
			cores = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-g") == 0)
			gen = atoi(argv[i + 1]);
		else
			usage(argv[0]);
	}
	if (i < argc && argv[i][0] == '-')
		usage(argv[0]);
	if (i + 1 > argc && gen == 0)
		usage(argv[0]);
	printf("seed %lu, restarts %d, window %d\n\n", o.seed, o.restarts, o.window);
	printf("| model | layout | layers | fits | opt. groups | exact (ms) | exact (s) | greedy | "
	       "polish | pack | pack (s) | local from greedy | steps | local (s) | local from "
	       "pack | (s) |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	summary sum = {0};
	if (i + 1 < argc) {
		char *lay_all = argv[i];
		for (int k = i + 1; k < argc; k++) {
			pb_error err = {0};
			pb_graph *g;
			if (pb_graph_load(argv[k], NULL, &g, &err)) {
				fprintf(stderr, "%s\n", err.msg);
				return 2;
			}
			char *save = NULL, *lays = strdup(lay_all);
			for (char *lay = strtok_r(lays, ",", &save); lay;
			     lay = strtok_r(NULL, ",", &save)) {
				pb_hw *hw;
				pb_manycore mc;
				pb_part_problem *P;
				if (pb_hw_load(lay, &hw, &err) ||
				    pb_manycore_parse(hw, &mc, &err) ||
				    pb_part_problem_new(g, &mc, &P, &err)) {
					fprintf(stderr, "%s\n", err.msg);
					return 2;
				}
				const char *base = strrchr(g->path, '/');
				row(P, base ? base + 1 : g->path, mc.name, &o, &sum);
				pb_part_problem_free(P);
				pb_hw_free(hw);
			}
			free(lays);
			pb_graph_free(g);
		}
	}
	uint64_t s = o.seed * 0x2545f4914f6cdd1dULL + 7;
	for (int k = 0; k < gen; k++) {
		char name[96], lay[32];
		pb_part_problem *P = generated(&s, k, cores, name, sizeof name, lay, sizeof lay);
		row(P, name, lay, &o, &sum);
		pb_part_problem_free(P);
	}
	printf("\n%d rows, %d comparable (a partition fits): local within 2%% of the optimum on "
	       "%d, mean gap %.3f%%, worst %.3f%% (%s); better than greedy on %d of the %d "
	       "where greedy is not optimal; better than pack on %d, worse on %d; local CPU "
	       "time %.2f s in all\n",
	       sum.rows, sum.comparable, sum.within2,
	       sum.comparable ? 100 * sum.sum_gap / sum.comparable : 0, 100 * sum.worst,
	       sum.worst_row[0] ? sum.worst_row : "-", sum.beat_greedy, sum.greedy_off,
	       sum.beat_pack, sum.worse_pack, sum.sum_time);
	return 0;
}
