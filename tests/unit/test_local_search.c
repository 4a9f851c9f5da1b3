/*
 * test_local_search.c — the iterated local search of `--method local`
 * (pb_part_ils, local_search.c) on random chains: its result is a valid
 * state, never worse than its start, never better than the exact optimum,
 * strictly better than greedy on most instances where greedy is not
 * optimal, within 2% of the optimum on nearly all, and the same for the
 * same seed. The exact optimum is only the judge here: the search never
 * sees it. No timing is asserted.
 *
 * The chains are built here (own generator) so this file depends only on
 * the partition module: 2 to 60 layers with forward skip edges, MACs over
 * two orders of magnitude (some layers free, a few heavy), activations that
 * make routing matter, 1 to 16 cores; every third chain has a core memory
 * that binds (on a quarter of those nothing fits).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition/chain/baselines.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/exact.h"

#define MAX_CORES 16

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

/* A random chain (file comment); memory_bound picks a binding memory. */
static pb_part_problem *chain(uint64_t *s, int m, int n, int memory_bound)
{
	double macs[64], par[64], ob[64], store = 0;
	int from[160], to[160], ne = 0;
	assert_true(m >= 1 && m <= 64);
	for (int i = 0; i < m; i++) {
		double u = unif(s);
		macs[i] = rnd(s) % 8 == 0 ? 0 : 1e6 * pow(10, 2 * u + (rnd(s) % 12 == 0 ? 1.5 : 0));
		par[i] = 1e3 * pow(10, 3 * unif(s));
		ob[i] = 1e5 * pow(10, 2 * unif(s));
		store += par[i] + ob[i];
		if (i > 0) {
			from[ne] = i - 1;
			to[ne++] = i;
		}
		if (i > 1 && rnd(s) % 3 == 0) {
			from[ne] = (int)(rnd(s) % (uint64_t)(i - 1));
			to[ne++] = i;
		}
	}
	pb_manycore h;
	memset(&h, 0, sizeof h);
	snprintf(h.name, sizeof h.name, "ils%d", n);
	h.cores = n;
	h.mac_rate = 1e11;
	h.bandwidth = 1.6e11;
	/* 0.8 .. 1.6 x the storage per core: it changes the optimum of about
	 * half of these chains, and a quarter fit no partition at all */
	h.memory = memory_bound ? (0.8 + 0.8 * unif(s)) * store / n : 1e15;
	h.reward_a = 1;
	h.penalty = 100;
	pb_part_problem *P = NULL;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, &h, &P, &err),
	                 PB_OK);
	return P;
}

static void evaluate(pb_part_problem *P, const int *ac, pb_part_eval *ev)
{
	pb_part_evaluate(P, ac, ev, NULL);
}

/* Valid, never worse than greedy (its start), never better than the exact
 * optimum; better than greedy wherever greedy is not optimal on all but a
 * few instances; within 2% of the optimum on nearly all. */
static void test_ils_random_chains(void **state)
{
	uint64_t s = 2024;
	int trials = 360, judged = 0, greedy_off = 0, better = 0, within2 = 0;
	double worst = 0;
	for (int trial = 0; trial < trials; trial++) {
		int m = 2 + (int)(rnd(&s) % 59), n = 1 + (int)(rnd(&s) % MAX_CORES);
		pb_part_problem *P = chain(&s, m, n, trial % 3 == 0);
		int gr[MAX_CORES], ls[MAX_CORES];
		pb_error err = {0};
		pb_part_greedy(P, gr);
		memcpy(ls, gr, sizeof gr);
		pb_part_ils(P, ls, NULL);
		if (!pb_part_state_valid(P, ls, &err))
			fail_msg("trial %d (m=%d n=%d): invalid state: %s", trial, m, n, err.msg);
		pb_part_eval eg, el;
		evaluate(P, gr, &eg);
		evaluate(P, ls, &el);
		assert_true(pb_part_objective(&el) <= pb_part_objective(&eg));
		double opt;
		int feasible;
		assert_int_equal(pb_part_exact_solve(P, &opt, NULL, &feasible, &err), PB_OK);
		/* The exact optimum ignores the memory when nothing fits; either
		 * way no partition has a smaller max(t) within its constraints. */
		if (!el.over_memory || !feasible)
			assert_true(el.max_time >= opt * (1 - 1e-9));
		if (!feasible) {
			assert_true(el.over_memory);
			pb_part_problem_free(P);
			continue;
		}
		judged++;
		if (el.over_memory)
			fail_msg("trial %d (m=%d n=%d): a partition fits, local's does not", trial,
			         m, n);
		double gap = el.max_time / opt - 1;
		worst = gap > worst ? gap : worst;
		within2 += gap <= 0.02;
		if (eg.over_memory || eg.max_time > opt * (1 + 1e-9)) {
			greedy_off++;
			better += pb_part_objective(&el) < pb_part_objective(&eg) * (1 - 1e-12);
		}
		pb_part_problem_free(P);
	}
	print_message("local: %d of %d chains fit the memory; better than greedy on %d of the %d "
	              "where greedy is not optimal; within 2%% of the optimum on %d, worst gap "
	              "%.3f%%\n",
	              judged, trials, better, greedy_off, within2, 100 * worst);
	assert_true(judged >= trials / 2);
	assert_true(greedy_off >= judged / 3);
	/* A search that returned greedy's partition would have 0 here. */
	assert_true(better >= greedy_off * 95 / 100);
	assert_true(within2 >= judged * 97 / 100);
}

/* Other starts: never worse than the start, whatever it is. */
static void test_ils_other_starts(void **state)
{
	uint64_t s = 99;
	for (int trial = 0; trial < 120; trial++) {
		int m = 1 + (int)(rnd(&s) % 40), n = 1 + (int)(rnd(&s) % MAX_CORES);
		pb_part_problem *P = chain(&s, m, n, trial % 3 == 0);
		int start[MAX_CORES], ls[MAX_CORES];
		pb_error err = {0};
		switch (trial % 3) {
		case 0:
			pb_part_equal(P, start);
			break;
		case 1:
			pb_part_pack(P, start);
			break;
		default:
			pb_part_balanced(P, start);
			break;
		}
		memcpy(ls, start, sizeof start);
		pb_part_ils(P, ls, NULL);
		assert_true(pb_part_state_valid(P, ls, &err));
		pb_part_eval e0, e1;
		evaluate(P, start, &e0);
		evaluate(P, ls, &e1);
		assert_true(pb_part_objective(&e1) <= pb_part_objective(&e0));
		pb_part_problem_free(P);
	}
}

/* The same seed gives the same result, step by step; the defaults (NULL)
 * are the documented ones. */
static void test_ils_deterministic(void **state)
{
	uint64_t s = 7;
	pb_part_ils_opts o, d;
	pb_part_ils_defaults(&d);
	assert_int_equal(d.seed, 1);
	assert_true(d.restarts >= 1 && d.window >= 1);
	o = d;
	o.seed = 12345;
	for (int trial = 0; trial < 40; trial++) {
		int m = 10 + (int)(rnd(&s) % 50), n = 2 + (int)(rnd(&s) % 15);
		pb_part_problem *P = chain(&s, m, n, trial % 3 == 0);
		int a[MAX_CORES], b[MAX_CORES], c[MAX_CORES], e[MAX_CORES];
		pb_part_greedy(P, a);
		memcpy(b, a, sizeof a);
		memcpy(c, a, sizeof a);
		memcpy(e, a, sizeof a);
		int sa = pb_part_ils(P, a, &o), sb = pb_part_ils(P, b, &o);
		assert_int_equal(sa, sb);
		assert_memory_equal(a, b, (size_t)n * sizeof *a);
		/* Stepping by hand is the same search. */
		int steps = 0;
		while (pb_part_ils_step(P, c, &o))
			steps++;
		assert_int_equal(steps, sa);
		assert_memory_equal(a, c, (size_t)n * sizeof *a);
		/* NULL options are the defaults. */
		int f[MAX_CORES];
		memcpy(f, e, sizeof e);
		pb_part_ils(P, e, NULL);
		pb_part_ils(P, f, &d);
		assert_memory_equal(e, f, (size_t)n * sizeof *e);
		pb_part_problem_free(P);
	}
}

/* At the exact optimum a step finds nothing better and leaves the state
 * alone; so does a second step after the search ended. */
static void test_ils_step_at_optimum(void **state)
{
	uint64_t s = 4711;
	for (int trial = 0; trial < 40; trial++) {
		int m = 2 + (int)(rnd(&s) % 50), n = 1 + (int)(rnd(&s) % MAX_CORES);
		pb_part_problem *P = chain(&s, m, n, 0);
		int ac[MAX_CORES], keep[MAX_CORES];
		double opt;
		pb_error err = {0};
		assert_int_equal(pb_part_exact_solve(P, &opt, ac, NULL, &err), PB_OK);
		memcpy(keep, ac, sizeof ac);
		assert_int_equal(pb_part_ils_step(P, ac, NULL), 0);
		assert_memory_equal(ac, keep, (size_t)n * sizeof *ac);
		pb_part_greedy(P, ac);
		pb_part_ils(P, ac, NULL);
		memcpy(keep, ac, sizeof ac);
		assert_int_equal(pb_part_ils_step(P, ac, NULL), 0);
		assert_memory_equal(ac, keep, (size_t)n * sizeof *ac);
		pb_part_problem_free(P);
	}
}

/* Degenerate shapes: one layer, one core, fewer layers than cores, a
 * window of one group, no restarts, and a memory nothing fits. */
static void test_ils_edges(void **state)
{
	uint64_t s = 3;
	int shapes[][2] = {{1, 1}, {1, 8}, {2, 16}, {5, 16}, {30, 1}, {7, 7}, {60, 2}};
	for (size_t q = 0; q < sizeof shapes / sizeof *shapes; q++)
		for (int variant = 0; variant < 4; variant++) {
			int m = shapes[q][0], n = shapes[q][1];
			pb_part_problem *P = chain(&s, m, n, variant == 3);
			if (variant == 3)
				P->hw.memory = 1e-9; /* nothing fits */
			pb_part_ils_opts o;
			pb_part_ils_defaults(&o);
			o.window = variant == 1 ? 1 : o.window;
			o.restarts = variant == 2 ? 0 : o.restarts;
			o.global = variant != 1;
			int ac[MAX_CORES], gr[MAX_CORES];
			pb_error err = {0};
			pb_part_greedy(P, gr);
			memcpy(ac, gr, sizeof gr);
			pb_part_ils(P, ac, &o);
			assert_true(pb_part_state_valid(P, ac, &err));
			pb_part_eval eg, el;
			evaluate(P, gr, &eg);
			evaluate(P, ac, &el);
			assert_true(pb_part_objective(&el) <= pb_part_objective(&eg));
			pb_part_problem_free(P);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ils_random_chains), cmocka_unit_test(test_ils_other_starts),
	    cmocka_unit_test(test_ils_deterministic), cmocka_unit_test(test_ils_step_at_optimum),
	    cmocka_unit_test(test_ils_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
