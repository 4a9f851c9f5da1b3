/*
 * test_exact_fast.c — the near-linear feasibility check of the exact solver
 * (partition/chain/exact.c) against the previous DP (pb_part_exact_min_cores_ref)
 * on thousands of random chains, and the whole solve against the previous
 * solve (pb_part_exact_solve_ref).
 *
 * Instances: 1..400 layers on 1..300 cores (more cores than layers
 * included), chains with random skips, DenseNet-like blocks (every output
 * feeds every later layer of its block: long live sets sharing one next
 * consumer), long skips (layer i feeds i + m/2: many distinct next
 * consumers), fan-out and duplicate edges, layers without MACs or without
 * output bytes, routing from negligible to dominant, and a memory per core
 * from generous to binding to nothing fits. Each check must need the same
 * number of cores (or both more than n) and, when feasible, return the same
 * partition (both break ties towards the shortest last group); each solve
 * the same optimum to PB_EXACT_RTOL and the same memory feasibility. The
 * bundled models are solved by both on the three manycore layouts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"
#include "load.h"
#include "model/graph.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/exact.h"

static uint64_t next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int below(uint64_t *s, int n) /* 0..n-1 */
{
	return (int)(next_u64(s) % (uint64_t)n);
}

static double unit(uint64_t *s) /* [0, 1) */
{
	return (double)(next_u64(s) >> 11) * 0x1.0p-53;
}

/* log-uniform in [lo, hi] */
static double logu(uint64_t *s, double lo, double hi)
{
	return lo * pow(hi / lo, unit(s));
}

enum { G_CHAIN, G_DENSE, G_LONG, G_FANOUT, G_KINDS };
static const char *const kind_name[] = {"chain", "dense", "long skips", "fan-out"};

typedef struct inst {
	int kind, m, n;
	double mem_factor; /* memory = factor x average storage per core */
} inst;

static pb_part_problem *random_instance(uint64_t *s, inst *in)
{
	int m = in->m, n = in->n;
	double *macs = malloc(m * sizeof *macs), *par = malloc(m * sizeof *par),
	       *ob = malloc(m * sizeof *ob);
	int cap = 8 * m + 16, ne = 0;
	int *from = malloc(cap * sizeof *from), *to = malloc(cap * sizeof *to);
	double mac_scale = logu(s, 1, 1e9), ob_scale = logu(s, 1, 1e7);
	int p_zero_mac = below(s, 4), p_zero_ob = below(s, 3);
	for (int i = 0; i < m; i++) {
		macs[i] = below(s, 10) < p_zero_mac ? 0 : mac_scale * logu(s, 0.1, 10);
		ob[i] = below(s, 20) < p_zero_ob ? 0 : ob_scale * logu(s, 0.1, 10);
		par[i] = below(s, 3) == 0 ? 0 : ob_scale * logu(s, 0.01, 100);
	}
	int block = 2 + below(s, 12);
	for (int v = 1; v < m && ne + 8 < cap; v++) {
		if (below(s, 10) != 0 || in->kind == G_CHAIN) /* usually fed by v-1 */
			from[ne] = v - 1, to[ne++] = v;
		switch (in->kind) {
		case G_CHAIN:
			if (v > 1 && below(s, 3) == 0)
				from[ne] = below(s, v - 1), to[ne++] = v;
			break;
		case G_DENSE: /* every earlier layer of the block feeds v */
			for (int u = v - v % block; u < v - 1 && ne + 8 < cap; u++)
				from[ne] = u, to[ne++] = v;
			break;
		case G_LONG:
			if (v >= m / 2 && v - m / 2 < v - 1)
				from[ne] = v - m / 2, to[ne++] = v;
			if (v > 2 && below(s, 5) == 0)
				from[ne] = below(s, v - 2), to[ne++] = v;
			break;
		case G_FANOUT: {
			int hub = (v / block) * block / 2; /* a few hubs feed many */
			if (hub < v - 1)
				from[ne] = hub, to[ne++] = v;
			if (below(s, 6) == 0 && v > 1) { /* a duplicate edge */
				from[ne] = v - 1, to[ne++] = v;
			}
			break;
		}
		}
	}
	double store = 0;
	for (int i = 0; i < m; i++)
		store += par[i] + ob[i];
	pb_manycore h;
	memset(&h, 0, sizeof h);
	snprintf(h.name, sizeof h.name, "rand%d", n);
	h.cores = n;
	h.mac_rate = logu(s, 1e3, 1e12);
	/* Routing from negligible to dominant next to the compute time. */
	double per_layer_compute = mac_scale / h.mac_rate;
	h.bandwidth = ob_scale / (per_layer_compute * logu(s, 1e-4, 1e2) + 1e-300);
	if (!(h.bandwidth > 0) || !isfinite(h.bandwidth))
		h.bandwidth = 1;
	h.memory = in->mem_factor * (store > 0 ? store : 1) / n;
	h.reward_a = 1;
	h.penalty = 100;
	pb_part_problem *P = NULL;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, &h, &P, &err),
	                 PB_OK);
	free(macs);
	free(par);
	free(ob);
	free(from);
	free(to);
	return P;
}

static void random_shape(uint64_t *s, inst *in)
{
	in->kind = below(s, G_KINDS);
	switch (below(s, 6)) {
	case 0: /* tiny */
		in->m = 1 + below(s, 6);
		in->n = 1 + below(s, 8);
		break;
	case 1: /* more cores than layers */
		in->m = 1 + below(s, 40);
		in->n = in->m + below(s, 260);
		break;
	case 2: /* huge core counts */
		in->m = 50 + below(s, 300);
		in->n = 64 + below(s, 237);
		break;
	default:
		in->m = 2 + below(s, 200);
		in->n = 1 + below(s, 64);
	}
	/* Generous, binding, or nothing fits. */
	double f[] = {1e6, 3, 1.5, 1.1, 0.8, 0.3, 0.05};
	in->mem_factor = f[below(s, 7)] * logu(s, 0.7, 1.4);
}

/* One check by both at T; returns 1 when feasible. */
static int compare_check(pb_part_problem *P, double T, int use_memory, const inst *in, int trial)
{
	int m = P->m, n = P->n;
	int *dp = malloc((m + 1) * sizeof *dp), *from = malloc((m + 1) * sizeof *from);
	int *ac_new = malloc(n * sizeof *ac_new), *ac_ref = malloc(n * sizeof *ac_ref);
	int k_ref = pb_part_exact_min_cores_ref(P, T, use_memory, dp, from, ac_ref);
	int k_new = pb_part_exact_min_cores(P, T, use_memory, NULL, NULL, ac_new);
	int feasible = k_ref <= n;
	if (feasible ? k_new != k_ref : k_new <= n)
		fail_msg("trial %d (%s, m=%d n=%d, memory x%.3g, T=%.17g, use_memory=%d): cores "
		         "%d, reference %d",
		         trial, kind_name[in->kind], m, n, in->mem_factor, T, use_memory, k_new,
		         k_ref);
	if (!feasible)
		assert_int_equal(k_new, INT_MAX);
	if (feasible) {
		pb_error err = {0};
		assert_true(pb_part_state_valid(P, ac_new, &err));
		if (memcmp(ac_new, ac_ref, n * sizeof *ac_new) != 0)
			fail_msg("trial %d (%s, m=%d n=%d, T=%.17g): same cores (%d), another "
			         "partition",
			         trial, kind_name[in->kind], m, n, T, k_new);
		pb_part_eval ev;
		pb_part_evaluate(P, ac_new, &ev, NULL);
		assert_true(ev.max_time <= T * (1 + 1e-9));
		if (use_memory)
			assert_true(ev.max_storage <= P->hw.memory * (1 + 1e-9));
	}
	free(dp);
	free(from);
	free(ac_new);
	free(ac_ref);
	return feasible;
}

/* Checks at random bottlenecks, with and without memory, and at T = INFINITY
 * (the memory check of the solver). */
static void test_checks_match_reference(void **state)
{
	(void)state;
	uint64_t seed = 2024;
	int feasible = 0, infeasible = 0, kinds[G_KINDS] = {0};
	const int trials = 3000;
	for (int trial = 0; trial < trials; trial++) {
		inst in;
		random_shape(&seed, &in);
		pb_part_problem *P = random_instance(&seed, &in);
		kinds[in.kind]++;
		compare_check(P, INFINITY, 1, &in, trial);
		compare_check(P, INFINITY, 0, &in, trial);
		for (int k = 0; k < 4; k++) {
			double T = P->lower_bound * logu(&seed, 0.95, 4) +
			           (P->lower_bound > 0 ? 0 : logu(&seed, 1e-12, 1));
			if (compare_check(P, T, below(&seed, 2), &in, trial))
				feasible++;
			else
				infeasible++;
		}
		pb_part_problem_free(P);
	}
	print_message("%d instances (chain %d, dense %d, long skips %d, fan-out %d): %d "
	              "feasible and %d infeasible checks at random T\n",
	              trials, kinds[0], kinds[1], kinds[2], kinds[3], feasible, infeasible);
	assert_true(feasible > trials / 2 && infeasible > trials / 2);
}

/* Whole solves: the same optimum and memory feasibility; checks just above
 * and below the optimum agree too (where the search ends). Exactly at it
 * the outcome may hang on the last bit of a group's routing time, which
 * the two checks sum in different orders. */
static void test_solve_matches_reference(void **state)
{
	(void)state;
	uint64_t seed = 77;
	int nofit = 0, binds = 0;
	const int trials = 2000;
	for (int trial = 0; trial < trials; trial++) {
		inst in;
		random_shape(&seed, &in);
		pb_part_problem *P = random_instance(&seed, &in);
		int n = P->n, *ac = malloc(n * sizeof *ac), *ac_ref = malloc(n * sizeof *ac_ref);
		int feas = -1, feas_ref = -1;
		double opt, opt_ref;
		pb_error err = {0};
		assert_int_equal(pb_part_exact_solve(P, &opt, ac, &feas, &err), PB_OK);
		assert_int_equal(pb_part_exact_solve_ref(P, &opt_ref, ac_ref, &feas_ref, &err),
		                 PB_OK);
		if (feas != feas_ref || !(fabs(opt - opt_ref) <= PB_EXACT_RTOL * opt_ref))
			fail_msg("trial %d (%s, m=%d n=%d, memory x%.3g): optimum %.17g (fits %d), "
			         "reference %.17g (fits %d)",
			         trial, kind_name[in.kind], P->m, n, in.mem_factor, opt, feas,
			         opt_ref, feas_ref);
		assert_true(pb_part_state_valid(P, ac, &err));
		pb_part_eval ev;
		pb_part_evaluate(P, ac, &ev, NULL);
		assert_true(ev.max_time == opt);
		assert_true(ev.over_memory == 0 || !feas);
		assert_true(P->lower_bound <= opt * (1 + 1e-12));
		nofit += !feas;
		if (feas) {
			/* Does memory bind? Compare with the optimum without it. */
			pb_part_problem *Q = P;
			double mem = Q->hw.memory, free_opt;
			Q->hw.memory = INFINITY;
			assert_int_equal(pb_part_exact_solve(Q, &free_opt, NULL, NULL, &err),
			                 PB_OK);
			Q->hw.memory = mem;
			binds += opt > free_opt * (1 + 1e-9);
		}
		compare_check(P, opt * (1 + 1e-9), feas, &in, trial);
		compare_check(P, opt * (1 - 1e-7), feas, &in, trial);
		free(ac);
		free(ac_ref);
		pb_part_problem_free(P);
	}
	print_message("%d solves: memory binds in %d, nothing fits in %d\n", trials, binds, nofit);
	assert_true(binds >= trials / 20);
	assert_true(nofit >= trials / 20);
}

/* Larger chains (up to 2,000 layers, up to 256 cores): the same optimum. */
static void test_large_chains(void **state)
{
	(void)state;
	uint64_t seed = 99;
	for (int trial = 0; trial < 12; trial++) {
		inst in = {trial % G_KINDS, 500 + below(&seed, 1500),
		           (int[]){16, 64, 256}[trial % 3], (double[]){1e6, 1.5, 0.9}[trial / 4]};
		pb_part_problem *P = random_instance(&seed, &in);
		double opt, opt_ref;
		int feas, feas_ref;
		pb_error err = {0};
		assert_int_equal(pb_part_exact_solve(P, &opt, NULL, &feas, &err), PB_OK);
		assert_int_equal(pb_part_exact_solve_ref(P, &opt_ref, NULL, &feas_ref, &err),
		                 PB_OK);
		if (feas != feas_ref || !(fabs(opt - opt_ref) <= PB_EXACT_RTOL * opt_ref))
			fail_msg("trial %d (%s, m=%d n=%d): optimum %.17g (fits %d), reference "
			         "%.17g (fits %d)",
			         trial, kind_name[in.kind], P->m, P->n, opt, feas, opt_ref,
			         feas_ref);
		compare_check(P, opt * (1 + 1e-6), feas, &in, trial);
		compare_check(P, opt * (1 - 1e-6), feas, &in, trial);
		pb_part_problem_free(P);
	}
}

/* The steppable solver, one check per step, ends where the solve does. */
static void test_steps(void **state)
{
	(void)state;
	uint64_t seed = 5;
	for (int trial = 0; trial < 100; trial++) {
		inst in;
		random_shape(&seed, &in);
		pb_part_problem *P = random_instance(&seed, &in);
		pb_part_exact E;
		pb_error err = {0};
		assert_int_equal(pb_part_exact_init(&E, P, &err), PB_OK);
		pb_part_eval ev;
		pb_part_evaluate(P, E.best, &ev, NULL);
		assert_true(ev.max_time == E.hi); /* a real partition from the start */
		int steps = 0;
		while (!pb_part_exact_step(&E, 1)) {
			assert_true(E.lo < E.hi);
			steps++;
			assert_true(steps < 10000);
		}
		double opt;
		int feas;
		assert_int_equal(pb_part_exact_solve(P, &opt, NULL, &feas, &err), PB_OK);
		assert_true(E.hi == opt);
		assert_int_equal(E.memory_feasible, feas);
		pb_part_exact_free(&E);
		pb_part_problem_free(P);
	}
}

/* The bundled models on the three manycore layouts: the same optimum
 * (swin_t, 6,623 layers, on 64 cores only: the reference takes 0.3 s). */
static void test_models(void **state)
{
	(void)state;
	const char *layouts[] = {"layouts/manycore-16.lua", "layouts/manycore-64.lua",
	                         "layouts/manycore-tight.lua"};
	const char *models[] = {"models/resnet18.onnx",     "models/googlenet.onnx",
	                        "models/mobilenet_v2.onnx", "models/squeezenet1_1.onnx",
	                        "models/densenet121.onnx",  "models/bert_base_like.onnx",
	                        "models/swin_t.onnx"};
	for (int l = 0; l < 3; l++) {
		pb_hw *hw;
		pb_manycore mc;
		pb_error err = {0};
		assert_int_equal(pb_hw_load(layouts[l], &hw, &err), PB_OK);
		assert_int_equal(pb_manycore_parse(hw, &mc, &err), PB_OK);
		for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
			if (strstr(models[i], "swin_t") && l != 1)
				continue;
			pb_graph *g;
			pb_part_problem *P;
			if (pb_graph_load(models[i], NULL, &g, &err))
				fail_msg("%s", err.msg);
			assert_int_equal(pb_part_problem_new(g, &mc, &P, &err), PB_OK);
			double opt, opt_ref;
			int feas, feas_ref;
			assert_int_equal(pb_part_exact_solve(P, &opt, NULL, &feas, &err), PB_OK);
			assert_int_equal(
			    pb_part_exact_solve_ref(P, &opt_ref, NULL, &feas_ref, &err), PB_OK);
			if (feas != feas_ref || !(fabs(opt - opt_ref) <= PB_EXACT_RTOL * opt_ref))
				fail_msg("%s on %s: optimum %.17g (fits %d), reference %.17g "
				         "(fits %d)",
				         models[i], layouts[l], opt, feas, opt_ref, feas_ref);
			inst in = {G_CHAIN, P->m, P->n, 0};
			compare_check(P, opt * (1 + 1e-9), feas, &in, (int)i);
			compare_check(P, opt * (1 - 1e-9), feas, &in, (int)i);
			pb_part_problem_free(P);
			pb_graph_free(g);
		}
		pb_hw_free(hw);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_checks_match_reference),
	    cmocka_unit_test(test_solve_matches_reference),
	    cmocka_unit_test(test_large_chains),
	    cmocka_unit_test(test_steps),
	    cmocka_unit_test(test_models),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
