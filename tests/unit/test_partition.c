/* test_partition.c — many-core layouts, the environment's actions, the time
 * model, the exact solver against brute force, baselines, plans and the
 * `partition` command. */
#include "pb_test.h"

#include "commands.h"
#include "hw.h"
#include "partition/chain/baselines.h"
#include "partition/chain/env.h"
#include "partition/chain/exact.h"
#include "partition/methods/partition.h"
#include "partition/chain/chain_problem.h"
#include "session.h"

static pb_manycore test_chip(int cores, double memory)
{
	char name[16];
	snprintf(name, sizeof name, "test%d", cores);
	return pb_test_chip(name, cores, 1e3, memory, 1000, 100);
}

/* Random layered DAG with forward skip edges (pb_test_random_problem; one
 * layer in ten has no MACs). */
static pb_part_problem *random_problem(unsigned *seed, int m, int cores, double memory)
{
	pb_manycore h = test_chip(cores, memory);
	return pb_test_random_problem(seed, m, &h, 1);
}

/* ---- layouts ---- */

static void test_bundled_layouts(void **state)
{
	const char *files[] = {"layouts/manycore-16.lua", "layouts/manycore-64.lua",
	                       "layouts/manycore-tight.lua"};
	int cores[] = {16, 64, 32};
	for (int i = 0; i < 3; i++) {
		pb_hw *hw;
		pb_error err = {0};
		assert_int_equal(pb_hw_load(files[i], &hw, &err), PB_OK);
		pb_manycore mc;
		assert_int_equal(pb_manycore_parse(hw, &mc, &err), PB_OK);
		assert_int_equal(mc.cores, cores[i]);
		assert_true(mc.mac_rate > 0 && mc.memory > 0 && mc.bandwidth > 0);
		pb_hw_free(hw);
	}
}

static void expect_layout_error(const char *text, const char *needle)
{
	pb_hw *hw = NULL;
	pb_error err = {0};
	int rc = pb_hw_load_string(text, "bad.lua", &hw, &err);
	if (rc == PB_OK) {
		pb_manycore mc;
		rc = pb_manycore_parse(hw, &mc, &err);
		pb_hw_free(hw);
	}
	assert_int_equal(rc, PB_EINPUT);
	if (!strstr(err.msg, needle) || !strstr(err.msg, "bad.lua"))
		fail_msg("message '%s' lacks '%s'", err.msg, needle);
}

static void test_layout_errors(void **state)
{
	expect_layout_error("return { kind='manycore', mac_rate=1, memory=1, bandwidth=1 }",
	                    "'cores'");
	expect_layout_error(
	    "return { kind='manycore', cores=4, mac_rate=-1, memory=1, bandwidth=1 }",
	    "'mac_rate'");
	expect_layout_error(
	    "return { kind='manycore', cores=4, mac_rate=1, memory='big', bandwidth=1 }",
	    "'memory'");
	expect_layout_error(
	    "return { kind='manycore', cores=4, mac_rate=1, memory=1, bandwidth=0 }",
	    "'bandwidth'");
	expect_layout_error("return { kind='manycore', cores=4, mac_rate=1, memory=1, bandwidth=1,"
	                    " mesh = { rows = 3, cols = 3 } }",
	                    "'mesh'");
	expect_layout_error("return { kind='manycore', cores=4, mac_rate=1, memory=1, bandwidth=1,"
	                    " reward = { a = -2 } }",
	                    "'reward.a'");
	expect_layout_error("return { kind='manycore', cores=4, mac_rate=1, memory=1, bandwidth=1,"
	                    " reward = { mode = 'fast' } }",
	                    "'reward.mode'");
	expect_layout_error(
	    "return { kind='manycore', cores=2.5, mac_rate=1, memory=1, bandwidth=1 }", "'cores'");
	/* A layout of another kind is refused by name. */
	pb_hw *hw;
	pb_error err = {0};
	assert_int_equal(pb_hw_load_string("return { kind='cluster' }", "c.lua", &hw, &err), PB_OK);
	pb_manycore mc;
	assert_int_not_equal(pb_manycore_parse(hw, &mc, &err), PB_OK);
	assert_non_null(strstr(err.msg, "manycore"));
	pb_hw_free(hw);
}

/* ---- environment ---- */

static void test_actions_by_hand(void **state)
{
	int n = 4;
	assert_int_equal(pb_env_n_actions(n), 12);
	const char *why;
	/* a(1,2): merge core 1's group into core 2's. */
	int ac[4] = {2, 3, 4, 1};
	assert_int_equal(pb_env_apply(ac, n, pb_env_encode(n, PB_ACT_A, 1), &why), 1);
	int e1[4] = {2, 0, 7, 1};
	assert_memory_equal(ac, e1, sizeof ac);
	/* Now cores 1 and 2 share a group: every action on that pair is invalid. */
	for (int t = 0; t < 4; t++) {
		int before[4];
		memcpy(before, ac, sizeof ac);
		assert_int_equal(pb_env_apply(ac, n, pb_env_encode(n, t, 1), &why), 0);
		assert_non_null(why);
		assert_memory_equal(ac, before, sizeof ac);
	}
	/* b(0,1) is invalid: core 1 is not alone in its group. */
	assert_int_equal(pb_env_apply(ac, n, pb_env_encode(n, PB_ACT_B, 0), &why), 0);
	/* c(0,1): give core 0's last layer to core 1 (joins the group of core 2). */
	assert_int_equal(pb_env_apply(ac, n, pb_env_encode(n, PB_ACT_C, 0), &why), 1);
	int e2[4] = {1, 1, 7, 1};
	assert_memory_equal(ac, e2, sizeof ac);
	/* b(0,1): core 0 takes core 1's layer, core 1 joins core 2's group. */
	assert_int_equal(pb_env_apply(ac, n, pb_env_encode(n, PB_ACT_B, 0), &why), 1);
	int e3[4] = {2, 0, 7, 1};
	assert_memory_equal(ac, e3, sizeof ac);
	/* d(2,3): the last core would lose its only layer. */
	assert_int_equal(pb_env_apply(ac, n, pb_env_encode(n, PB_ACT_D, 2), &why), 0);
	/* b on the last pair: there is no core after the last one. */
	assert_int_equal(pb_env_apply(ac, n, pb_env_encode(n, PB_ACT_B, 2), &why), 0);
	/* d(0,1)... cores 0 and 1 are in different groups only if ac[0] > 0: yes. */
	assert_int_equal(pb_env_apply(ac, n, pb_env_encode(n, PB_ACT_D, 2), &why), 0);
	assert_int_equal(pb_env_apply(ac, n, pb_env_encode(n, PB_ACT_C, 2), &why), 1);
	int e4[4] = {2, 0, 6, 2};
	assert_memory_equal(ac, e4, sizeof ac);
	assert_int_equal(pb_env_apply(ac, n, 12, &why), 0);
	assert_int_equal(pb_env_apply(ac, n, -1, &why), 0);
	char desc[160];
	pb_env_describe(n, pb_env_encode(n, PB_ACT_D, 2), desc, sizeof desc);
	assert_non_null(strstr(desc, "first layer of core 3 to core 2"));
}

static void test_actions_keep_states_valid(void **state)
{
	unsigned seed = 7;
	pb_part_problem *P = random_problem(&seed, 30, 6, 1e9);
	int ac[6];
	pb_env_equal_state(P->m, P->n, ac);
	pb_error err = {0};
	assert_true(pb_part_state_valid(P, ac, &err));
	int na = pb_env_n_actions(P->n), changed = 0;
	unsigned char mask[32];
	for (int step = 0; step < 5000; step++) {
		int k = (int)(pb_test_rnd(&seed) % (unsigned)na);
		int v = pb_env_valid(ac, P->n, k, NULL);
		pb_env_valid_mask(ac, P->n, mask);
		assert_int_equal(mask[k], v);
		changed += pb_env_apply(ac, P->n, k, NULL);
		assert_true(pb_part_state_valid(P, ac, &err));
		if (step % 50 == 0)
			pb_env_equal_state(P->m, P->n, ac); /* restart an episode */
	}
	assert_true(changed > 1000);
	pb_part_problem_free(P);
}

/* The segment cache (16 slots, so slots are overwritten all the time) gives
 * the same evaluations, bit for bit, as the uncached problem. */
static void test_segment_cache(void **state)
{
	unsigned s1 = 21, s2 = 21, seed = 5;
	pb_part_problem *P = random_problem(&s1, 40, 8, 1e9);
	pb_part_problem *Q = random_problem(&s2, 40, 8, 1e9);
	pb_error err = {0};
	assert_int_equal(pb_part_problem_cache(Q, 4, &err), PB_OK);
	int ac[8];
	pb_env_equal_state(P->m, P->n, ac);
	int na = pb_env_n_actions(P->n);
	for (int step = 0; step < 3000; step++) {
		pb_env_apply(ac, P->n, (int)(pb_test_rnd(&seed) % (unsigned)na), NULL);
		if (step % 97 == 0)
			pb_env_equal_state(P->m, P->n, ac);
		pb_part_eval a, b;
		pb_part_group ga[8], gb[8];
		pb_part_evaluate(P, ac, &a, ga);
		pb_part_evaluate(Q, ac, &b, gb);
		assert_true(a.max_time == b.max_time && a.max_storage == b.max_storage &&
		            a.sum_sq_time == b.sum_sq_time && a.reward == b.reward);
		for (int g = 0; g < a.n_groups; g++)
			assert_true(ga[g].routing == gb[g].routing &&
			            ga[g].storage == gb[g].storage);
	}
	assert_true(Q->seg_hits > 1000 && Q->seg_misses > 100);
	assert_true(P->seg_hits == 0 && P->seg == NULL);
	pb_part_problem_free(P);
	pb_part_problem_free(Q);
}

/* ---- time model ---- */

static void test_in_bytes_and_groups(void **state)
{
	/* 0 -> 1 -> 2 -> 3 plus a skip 0 -> 3 and 1 -> 3. */
	double macs[4] = {100, 200, 300, 400}, par[4] = {10, 20, 30, 40}, ob[4] = {1, 2, 4, 8};
	int from[5] = {0, 1, 2, 0, 1}, to[5] = {1, 2, 3, 3, 3};
	pb_manycore h = test_chip(3, 1e9);
	pb_part_problem *P;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(4, macs, par, ob, 5, from, to, &h, &P, &err),
	                 PB_OK);
	assert_true(pb_part_in_bytes(P, 3, 4) == 1 + 2 + 4); /* 0, 1 (skips) and 2 */
	assert_true(pb_part_in_bytes(P, 2, 4) == 1 + 2);     /* output of 1 enters once */
	assert_true(pb_part_in_bytes(P, 0, 4) == 0);
	int ac[3] = {0, 2, 2}; /* cores 0-1: layers 0-1; core 2: layers 2-3 */
	pb_part_group gs[3];
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, gs);
	assert_int_equal(ev.n_groups, 2);
	assert_int_equal(gs[0].cores, 2);
	assert_int_equal(gs[1].first_layer, 2);
	assert_true(fabs(gs[0].compute - 300.0 / (2 * 1e3)) < 1e-12);
	assert_true(pb_part_own_bytes(P, 2, 4) == 4); /* 2 -> 3 stays inside */
	assert_true(pb_part_own_bytes(P, 0, 2) == 1); /* 0 -> 1 */
	assert_true(fabs(gs[0].routing - 1.0 / 1000) < 1e-12);
	assert_true(fabs(gs[1].routing - 7.0 / 1000) < 1e-12);
	assert_true(fabs(gs[1].time - (700.0 / 1e3 + 7.0 / 1000)) < 1e-12);
	assert_true(fabs(gs[1].storage - (30 + 40 + 4 + 8 + 3)) < 1e-9);
	assert_true(fabs(gs[0].storage - (10 + 20 + 1 + 2) / 2.0) < 1e-9);
	assert_int_equal(ev.bottleneck, 1);
	assert_true(fabs(ev.reward - (-ev.max_time * 1e3)) < 1e-9);
	double am[3];
	pb_part_arranged_macs(P, ac, am);
	assert_true(am[0] == 0 && am[1] == 300 && am[2] == 700);
	/* Memory penalty: shrink the memory below the largest storage. */
	P->hw.memory = 10;
	pb_part_evaluate(P, ac, &ev, gs);
	assert_true(ev.over_memory);
	assert_true(fabs(ev.reward - (-ev.max_time * 1e3 - 100)) < 1e-9);
	/* Weighted reward of the method. */
	P->hw.reward_mode = PB_REWARD_WEIGHTED;
	P->hw.w_compute = 2;
	P->hw.w_storage = 1;
	P->hw.w_routing = 3;
	P->hw.memory = 1e9;
	pb_part_evaluate(P, ac, &ev, gs);
	double want =
	    -(2 * ev.max_compute * 1e3 + ev.max_storage / 1048576.0 + 3 * ev.max_routing * 1e3);
	assert_true(fabs(ev.reward - want) < 1e-9);
	pb_part_problem_free(P);
}

/* ---- exact vs brute force ---- */

typedef struct bf {
	pb_part_problem *P;
	int ac[8];
	double best;     /* memory-feasible optimum */
	double best_any; /* ignoring memory */
	double s_min;    /* smallest max storage of any state */
	double s_any;    /* smallest max storage among states reaching best_any */
} bf;

static void brute(bf *b, int core, int left)
{
	int n = b->P->n;
	if (core == n - 1) {
		if (left == 0)
			return;
		b->ac[core] = left;
		pb_part_eval ev;
		pb_part_evaluate(b->P, b->ac, &ev, NULL);
		if (!ev.over_memory && ev.max_time < b->best)
			b->best = ev.max_time;
		if (ev.max_time < b->best_any * (1 - 1e-12)) {
			b->best_any = ev.max_time;
			b->s_any = ev.max_storage;
		} else if (ev.max_time <= b->best_any * (1 + 1e-12) && ev.max_storage < b->s_any) {
			b->s_any = ev.max_storage;
		}
		if (ev.max_storage < b->s_min)
			b->s_min = ev.max_storage;
		return;
	}
	for (int k = 0; k <= left; k++) {
		b->ac[core] = k;
		brute(b, core + 1, left - k);
	}
}

static void test_exact_matches_brute_force(void **state)
{
	unsigned seed = 12345;
	int binding = 0;
	for (int trial = 0; trial < 120; trial++) {
		int m = 2 + (int)(pb_test_rnd(&seed) % 9), n = 1 + (int)(pb_test_rnd(&seed) % 5);
		pb_part_problem *P = random_problem(&seed, m, n, 1e12);
		bf b = {P, {0}, INFINITY, INFINITY, INFINITY, INFINITY};
		brute(&b, 0, m);
		if (trial % 3 == 0 && b.s_min < b.s_any) {
			/* A memory that the fastest partition does not fit in. */
			P->hw.memory = 0.5 * (b.s_min + b.s_any);
			b.best = b.best_any = b.s_min = b.s_any = INFINITY;
			brute(&b, 0, m);
		} else if (trial % 3 == 1) {
			P->hw.memory = 0.9 * b.s_min; /* nothing fits */
			b.best = b.best_any = INFINITY;
			brute(&b, 0, m);
		}
		double opt;
		int ac[8], feasible;
		pb_error err = {0};
		assert_int_equal(pb_part_exact_solve(P, &opt, ac, &feasible, &err), PB_OK);
		assert_true(pb_part_state_valid(P, ac, &err));
		pb_part_eval ev;
		pb_part_evaluate(P, ac, &ev, NULL);
		assert_true(fabs(ev.max_time - opt) <= 1e-12 * opt);
		if (isfinite(b.best)) {
			assert_true(feasible);
			assert_false(ev.over_memory);
			if (fabs(opt - b.best) > 1e-8 * b.best)
				fail_msg("trial %d (m=%d n=%d): exact %.12g, brute force %.12g",
				         trial, m, n, opt, b.best);
			if (b.best > b.best_any * (1 + 1e-9))
				binding++;
		} else {
			assert_false(feasible);
			assert_true(fabs(opt - b.best_any) <= 1e-8 * b.best_any);
		}
		assert_true(P->lower_bound <= opt * (1 + 1e-12));
		pb_part_problem_free(P);
	}
	if (binding < 10) /* the memory limit must have mattered in some trials */
		fail_msg("memory bound in only %d trials", binding);
}

static void test_exact_large_chain(void **state)
{
	/* 1000 layers, 64 cores: the result is valid, no better than the lower
	 * bound, and no local move improves it. */
	int m = 1000;
	double *macs = malloc(m * sizeof *macs), *par = calloc(m, sizeof *par),
	       *ob = malloc(m * sizeof *ob);
	int *from = malloc(2 * m * sizeof *from), *to = malloc(2 * m * sizeof *to), ne = 0;
	unsigned seed = 99;
	for (int i = 0; i < m; i++) {
		macs[i] = 1 + pb_test_rnd(&seed) % 10000;
		ob[i] = 100 + pb_test_rnd(&seed) % 1000;
		if (i) {
			from[ne] = i - 1;
			to[ne++] = i;
		}
		if (i > 4 && i % 5 == 0) {
			from[ne] = i - 4;
			to[ne++] = i;
		}
	}
	pb_manycore h = test_chip(64, 1e12);
	h.bandwidth = 1e7;
	pb_part_problem *P;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, &h, &P, &err),
	                 PB_OK);
	double opt;
	int ac[64], g[64];
	assert_int_equal(pb_part_exact_solve(P, &opt, ac, NULL, &err), PB_OK);
	assert_true(opt >= P->lower_bound);
	pb_part_greedy(P, g);
	pb_part_eval ev;
	pb_part_evaluate(P, g, &ev, NULL);
	assert_true(opt <= ev.max_time * (1 + 1e-12));
	memcpy(g, ac, sizeof ac);
	assert_int_equal(pb_part_local_search(P, g, 10), 0);
	pb_part_problem_free(P);
	free(macs);
	free(par);
	free(ob);
	free(from);
	free(to);
}

/* ---- baselines ---- */

static void test_baselines(void **state)
{
	unsigned seed = 4242;
	for (int trial = 0; trial < 30; trial++) {
		int m = 3 + (int)(pb_test_rnd(&seed) % 40), n = 1 + (int)(pb_test_rnd(&seed) % 8);
		pb_part_problem *P = random_problem(&seed, m, n, 1e12);
		int eq[8], gr[8], lo[8];
		pb_error err = {0};
		pb_part_equal(P, eq);
		pb_part_greedy(P, gr);
		assert_true(pb_part_state_valid(P, eq, &err));
		assert_true(pb_part_state_valid(P, gr, &err));
		int groups = m < n ? m : n, mx = 0, mn = m;
		for (int i = n - groups; i < n; i++) {
			mx = eq[i] > mx ? eq[i] : mx;
			mn = eq[i] < mn ? eq[i] : mn;
		}
		assert_true(mx - mn <= 1);
		memcpy(lo, gr, sizeof gr);
		pb_part_local_search(P, lo, 100000);
		pb_part_eval eg, el;
		pb_part_evaluate(P, gr, &eg, NULL);
		pb_part_evaluate(P, lo, &el, NULL);
		assert_true(el.max_time <= eg.max_time);
		double opt;
		assert_int_equal(pb_part_exact_solve(P, &opt, NULL, NULL, &err), PB_OK);
		assert_true(opt <= el.max_time * (1 + 1e-9));
		pb_part_problem_free(P);
	}
}

/* pack: valid, never worse than greedy (it falls back to it), never better
 * than the exact optimum, and on these random chains better than greedy on
 * average (a pack that only returned greedy's partition fails that). */
static void test_pack_baseline(void **state)
{
	unsigned seed = 777;
	int better = 0, trials = 200, feasible_trials = 0;
	double sum_pack = 0, sum_greedy = 0;
	for (int trial = 0; trial < trials; trial++) {
		int m = 3 + (int)(pb_test_rnd(&seed) % 58), n = 1 + (int)(pb_test_rnd(&seed) % 8);
		/* A third of the chips have a memory limit that binds. */
		double memory = trial % 3 == 0 ? 400 + pb_test_rnd(&seed) % 2000 : 1e12;
		pb_part_problem *P = random_problem(&seed, m, n, memory);
		int gr[8], pk[8];
		pb_error err = {0};
		pb_part_greedy(P, gr);
		pb_part_pack(P, pk);
		assert_true(pb_part_state_valid(P, pk, &err));
		pb_part_eval eg, ep;
		pb_part_evaluate(P, gr, &eg, NULL);
		pb_part_evaluate(P, pk, &ep, NULL);
		assert_true(pb_part_objective(&ep) <= pb_part_objective(&eg));
		double opt;
		int feasible;
		assert_int_equal(pb_part_exact_solve(P, &opt, NULL, &feasible, &err), PB_OK);
		if (feasible) {
			assert_false(ep.over_memory);
			assert_true(opt <= ep.max_time * (1 + 1e-9));
			feasible_trials++;
			sum_pack += ep.max_time / opt;
			sum_greedy += eg.max_time / opt;
			better += pb_part_objective(&ep) < pb_part_objective(&eg) * (1 - 1e-12);
		}
		pb_part_problem_free(P);
	}
	print_message("pack beat greedy in %d of %d trials (%d fit the memory); mean ratio to "
	              "the optimum %.4f (greedy %.4f)\n",
	              better, trials, feasible_trials, sum_pack / feasible_trials,
	              sum_greedy / feasible_trials);
	assert_true(feasible_trials >= trials / 2);
	assert_true(better >= feasible_trials / 10);
	assert_true(sum_pack < sum_greedy);
}

/* A memory so small that one group's storage is more than INT_MAX core
 * memories: greedy (and pack and exact, which start from it) once converted
 * that count to int, got a negative core count and wrote past the state.
 * Nothing fits: greedy keeps its equal fallback, pack returns greedy's. */
static void test_baselines_tiny_memory(void **state)
{
	unsigned seed = 31;
	for (int trial = 0; trial < 20; trial++) {
		int m = 2 + (int)(pb_test_rnd(&seed) % 30), n = 1 + (int)(pb_test_rnd(&seed) % 8);
		pb_part_problem *P = random_problem(&seed, m, n, 1e-9);
		int gr[8], pk[8], eq[8];
		pb_error err = {0};
		pb_part_greedy(P, gr);
		assert_true(pb_part_state_valid(P, gr, &err));
		pb_part_equal(P, eq);
		assert_memory_equal(gr, eq, (size_t)n * sizeof *gr);
		pb_part_pack(P, pk);
		assert_memory_equal(pk, gr, (size_t)n * sizeof *pk);
		assert_int_equal(pb_part_rebalance_cores(P, pk), 0);
		double opt;
		int feasible = 1;
		assert_int_equal(pb_part_exact_solve(P, &opt, pk, &feasible, &err), PB_OK);
		assert_false(feasible);
		assert_true(pb_part_state_valid(P, pk, &err));
		pb_part_problem_free(P);
	}
}

/* ---- plans and the command ---- */

static void test_plan_round_trip(void **state)
{
	unsigned seed = 5;
	pb_part_problem *P = random_problem(&seed, 20, 5, 1e12);
	int ac[5] = {3, 0, 9, 4, 4};
	pb_plan *p = pb_part_to_plan(P, ac, "manual", 0.5);
	assert_string_equal(p->kind, "partition");
	assert_int_equal(p->n_groups, 4);
	assert_int_equal(p->groups[1].first_unit, 1);
	assert_int_equal(p->groups[1].n_units, 2);
	assert_int_equal(p->groups[1].first_node, 3);
	assert_int_equal(p->groups[1].last_node, 11);
	assert_int_equal(p->group[12], 2);
	int nb = 0;
	for (int i = 0; i < p->n_groups; i++)
		nb += p->groups[i].bottleneck;
	assert_int_equal(nb, 1);
	assert_true(fabs(pb_plan_metric(p, "gap", 0) -
	                 (pb_plan_metric(p, "max_time", 0) / 0.5 - 1)) < 1e-12);
	json_t *j = pb_plan_to_json(p, NULL);
	pb_plan *q;
	pb_error err = {0};
	assert_int_equal(pb_plan_from_json(j, "mem", 20, &q, &err), PB_OK);
	int back[5];
	assert_int_equal(pb_part_from_plan(P, q, back, &err), PB_OK);
	assert_memory_equal(back, ac, sizeof ac);
	free(q->kind);
	q->kind = strdup("shard");
	assert_int_not_equal(pb_part_from_plan(P, q, back, &err), PB_OK);
	assert_non_null(strstr(err.msg, "shard"));
	json_decref(j);
	pb_plan_free(p);
	pb_plan_free(q);
	pb_part_problem_free(P);
}

static pb_session *chain_session(int n)
{
	double macs[64];
	char edges[1024] = "";
	for (int i = 0; i < n; i++) {
		macs[i] = 1e6 * (1 + (i * 7) % 5);
		if (i) {
			char e[16];
			snprintf(e, sizeof e, "%d>%d ", i - 1, i);
			strcat(edges, e);
		}
	}
	strcat(edges, "2>9 5>20");
	pb_graph *g = pb_test_chain_graph(n, macs, edges);
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, g, "chain.test");
	return s;
}

static void test_partition_command(void **state)
{
	pb_session *s = chain_session(40);
	int rc;
	char *o = pb_test_run_cmd(
	    s, "partition --layout layouts/manycore-16.lua --method exact --json", &rc);
	assert_int_equal(rc, PB_OK);
	json_error_t je;
	json_t *j = json_loads(o, 0, &je);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "method")), "exact");
	double opt = json_number_value(json_object_get(j, "optimum"));
	double mt = json_number_value(json_object_get(j, "max_time"));
	assert_true(fabs(opt - mt) <= 1e-12 * mt);
	assert_true(json_array_size(json_object_get(j, "groups")) >= 1);
	assert_true(json_is_number(json_object_get(j, "gap")));
	assert_true(json_is_number(json_object_get(j, "reward")));
	json_decref(j);
	free(o);
	assert_non_null(s->plan);
	assert_string_equal(s->plan->kind, "partition");

	const char *methods[] = {"equal", "greedy", "local", "pack"};
	for (int i = 0; i < 4; i++) {
		char line[128];
		snprintf(line, sizeof line, "partition --method %s --json", methods[i]);
		o = pb_test_run_cmd(s, line, &rc);
		assert_int_equal(rc, PB_OK);
		j = json_loads(o, 0, &je);
		assert_non_null(j);
		assert_true(json_number_value(json_object_get(j, "max_time")) >= opt * (1 - 1e-9));
		assert_true(json_number_value(json_object_get(j, "gap")) >= -1e-9);
		json_decref(j);
		free(o);
	}
	/* Human table. */
	o = pb_test_run_cmd(s, "partition --method greedy", &rc);
	assert_int_equal(rc, PB_OK);
	assert_non_null(strstr(o, "max(t)"));
	assert_non_null(strstr(o, "exact optimum"));
	free(o);
	/* --start attaches the solver; step advances it and installs the plan. */
	o = pb_test_run_cmd(s, "partition --method exact --start", &rc);
	assert_int_equal(rc, PB_OK);
	free(o);
	assert_non_null(s->solver);
	for (int k = 0; k < 200 && !(s->plan && pb_plan_has_metric(s->plan, "optimum")); k++) {
		o = pb_test_run_cmd(s, "step -n 1", &rc);
		assert_int_equal(rc, PB_OK);
		free(o);
	}
	assert_true(pb_plan_has_metric(s->plan, "optimum"));
	assert_true(fabs(pb_plan_metric(s->plan, "max_time", 0) - opt) <= 1e-9 * opt);
	/* Errors. */
	o = pb_test_run_cmd(s, "partition --method magic", &rc);
	assert_int_equal(rc, PB_EUSAGE);
	free(o);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bundled_layouts),
	    cmocka_unit_test(test_layout_errors),
	    cmocka_unit_test(test_actions_by_hand),
	    cmocka_unit_test(test_actions_keep_states_valid),
	    cmocka_unit_test(test_segment_cache),
	    cmocka_unit_test(test_in_bytes_and_groups),
	    cmocka_unit_test(test_exact_matches_brute_force),
	    cmocka_unit_test(test_pack_baseline),
	    cmocka_unit_test(test_baselines_tiny_memory),
	    cmocka_unit_test(test_exact_large_chain),
	    cmocka_unit_test(test_baselines),
	    cmocka_unit_test(test_plan_round_trip),
	    cmocka_unit_test(test_partition_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
