/* test_rule_search.c — issue 36 item 2: the heuristics under random Lua-style
 * rules (allowed-cut sets, forced cuts, core pins) and the weighted objective
 * on random chains, each checked against the exact label DP
 * (pb_part_exact_labels): greedy, pack, local (its ILS, then the rule-aware
 * search, as solvers.c runs it) and the RL agent (its rule-aware actions,
 * then the polish of its best, as solvers.c runs it) obey every rule and end
 * within 1% of the optimum. The heuristics never see the optimum. Also the
 * agent's (c)/(d) actions under cut rules: a boundary jumps to the next
 * allowed cut (pb_part_rules_apply). */
#include "pb_test.h"

#include "partition/chain/baselines.h"
#include "partition/chain/chain_rules.h"
#include "partition/chain/env.h"
#include "partition/chain/exact.h"
#include "partition/rl/rl_reinforce.h"
#include "partition/chain/rule_search.h"
#include "pb_test_graphs.h"

enum { H_GREEDY, H_PACK, H_LOCAL, H_RL, N_H };
static const char *const names[N_H] = {"greedy", "pack", "local", "rl"};

static double objective(pb_part_problem *P, const int *ac, int *viol)
{
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	*viol = ev.violations;
	return ev.objective;
}

static void run_heuristic(pb_part_problem *P, int h, int *ac)
{
	pb_error err = {0};
	switch (h) {
	case H_GREEDY:
		pb_part_greedy(P, ac);
		break;
	case H_PACK:
		pb_part_pack(P, ac);
		break;
	case H_LOCAL:
		pb_part_greedy(P, ac);
		while (pb_part_ils_step(P, ac, NULL))
			;
		pb_part_rsearch(P, ac, NULL);
		break;
	default: {
		pb_rl_config cfg;
		pb_rl_config_default(&cfg);
		cfg.episodes = 8;
		cfg.seed = 3;
		pb_part_greedy(P, ac);
		cfg.init_state = ac;
		pb_rl_trainer *T = NULL;
		assert_int_equal(pb_rl_trainer_new(P, &cfg, NULL, &T, &err), PB_OK);
		while (!pb_rl_trainer_done(T))
			assert_int_equal(pb_rl_trainer_step(T, 4, &err), PB_OK);
		memcpy(ac, pb_rl_trainer_best(T), (size_t)P->n * sizeof *ac);
		pb_rl_trainer_free(T);
		pb_part_rsearch(P, ac, NULL);
		break;
	}
	}
}

static void test_random_rules_within_one_percent(void **state)
{
	(void)state;
	unsigned seed = 3601;
	int checked = 0, weighted = 0, pinned = 0, sparse = 0, bad = 0;
	double worst[N_H] = {0};
	for (int trial = 0; trial < 90; trial++) {
		int m = 24 + (int)(pb_test_rnd(&seed) % 41), n = 4 + (int)(pb_test_rnd(&seed) % 13);
		pb_manycore hw = pb_test_chip("rules", n, 1e3, 1e12, 1000, 100);
		if (trial % 3 == 2) {
			hw.reward_mode = PB_REWARD_WEIGHTED;
			hw.w_compute = 1.0;
			hw.w_storage = (double)(pb_test_rnd(&seed) % 4) * 1e5;
			hw.w_routing = (double)(1 + pb_test_rnd(&seed) % 3);
		}
		pb_part_problem *P = pb_test_random_problem(&seed, m, &hw, 0);
		pb_part_rules *r = pb_part_rules_new(m);
		pb_error err = {0};
		/* an allowed-cut set of density 1/2 .. 1/8, a rare forced cut */
		unsigned keep = 2 + pb_test_rnd(&seed) % 7;
		for (int v = 0; v + 1 < m; v++) {
			unsigned d = pb_test_rnd(&seed) % (keep * 8);
			int how = d == 0 ? PB_CUT_FORCE : d % keep ? PB_CUT_FORBID : 0;
			if (how)
				assert_int_equal(pb_part_rules_cut(r, "c", v, "x", how, &err),
				                 PB_OK);
		}
		int pins = (int)(pb_test_rnd(&seed) % 3);
		for (int i = 0; i < pins; i++)
			assert_int_equal(
			    pb_part_rules_pin(r, "p", (int)(pb_test_rnd(&seed) % (unsigned)m), "x",
			                      (int)(pb_test_rnd(&seed) % (unsigned)n), &err),
			    PB_OK);
		assert_int_equal(pb_part_problem_set_rules(P, r, &err), PB_OK);
		pb_part_rules_free(r);
		int ac[16], feasible, exact;
		double opt;
		if (pb_part_exact_labels(P, ac, &opt, &feasible, &exact, &err) != PB_OK) {
			pb_part_problem_free(P); /* contradictory pins: nothing to compare */
			continue;
		}
		assert_true(exact);
		for (int h = 0; h < N_H; h++) {
			int got[16], viol;
			run_heuristic(P, h, got);
			assert_true(pb_part_state_valid(P, got, NULL));
			double o = objective(P, got, &viol);
			if (viol != 0 || o > opt * 1.01) {
				bad++;
				print_message(
				    "trial %d (m=%d n=%d, %s, 1/%u cuts allowed, %d pins): %s "
				    "%.9g with %d broken rules, exact %.9g (+%.2f%%)\n",
				    trial, m, n, trial % 3 == 2 ? "weighted" : "max(t)", keep, pins,
				    names[h], o, viol, opt, 100 * (o / opt - 1));
			}
			assert_true(viol > 0 || o >= opt * (1 - 1e-9)); /* the DP is exact */
			worst[h] = o / opt - 1 > worst[h] ? o / opt - 1 : worst[h];
		}
		checked++;
		weighted += trial % 3 == 2;
		pinned += pins > 0;
		sparse += keep >= 5;
		pb_part_problem_free(P);
	}
	print_message("rule_search: %d chains (%d weighted, %d pinned, %d sparse); worst gap "
	              "greedy %.3f%%, pack %.3f%%, local %.3f%%, rl %.3f%%\n",
	              checked, weighted, pinned, sparse, 100 * worst[0], 100 * worst[1],
	              100 * worst[2], 100 * worst[3]);
	if (bad > 0)
		fail_msg("%d plans broke a rule or ended more than 1%% above exact", bad);
	if (checked < 60 || weighted < 20 || pinned < 30 || sparse < 20)
		fail_msg("checked %d, weighted %d, pinned %d, sparse %d", checked, weighted, pinned,
		         sparse);
}

/* A random chain of m layers (m <= 200) for the larger trials: MACs 1..1000,
 * parameters 0..499, output bytes 1..100, each layer fed by the one before
 * and, one time in three, by one of the 8 layers before that (short skips,
 * as in residual blocks), drawn from *seed. */
static pb_part_problem *long_chain(unsigned *seed, int m, const pb_manycore *h)
{
	double macs[200], par[200], ob[200];
	int from[400], to[400], ne = 0;
	assert_true(m >= 2 && m <= 200);
	for (int i = 0; i < m; i++) {
		macs[i] = 1 + pb_test_rnd(seed) % 1000;
		par[i] = pb_test_rnd(seed) % 500;
		ob[i] = 1 + pb_test_rnd(seed) % 100;
		if (i > 0) {
			from[ne] = i - 1;
			to[ne++] = i;
		}
		if (i > 1 && pb_test_rnd(seed) % 3 == 0) {
			int back = 2 + (int)(pb_test_rnd(seed) % 8);
			from[ne] = i - (back < i ? back : i);
			to[ne++] = i;
		}
	}
	pb_part_problem *P = NULL;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, h, &P, &err),
	                 PB_OK);
	return P;
}

/* Longer chains on more cores (80..200 layers, 16..48 cores), sparse
 * allowed cuts and pins, max(t) and the weighted objective with routing and
 * storage weights where trading compute for them pays: greedy, pack and
 * local (each ending in the rule-aware search) within 1% of the label DP.
 * Plans stuck with too few groups (every group's routing near the largest,
 * so no single move lowers the weighted sum; or a pin that only a re-cut of
 * every group on its side reaches) are what the whole-chain cap repair
 * (cap_search.h) is for. */
static void test_long_chains_within_one_percent(void **state)
{
	(void)state;
	unsigned seed = 3636;
	int checked = 0, weighted = 0, pinned = 0, bad = 0;
	double worst[N_H] = {0};
	for (int trial = 0; trial < 10; trial++) {
		int m = 60 + (int)(pb_test_rnd(&seed) % 71),
		    n = 12 + (int)(pb_test_rnd(&seed) % 21);
		pb_manycore hw = pb_test_chip("long", n, 1e3, 1e12, 200, 100);
		int w = trial % 2;
		if (w) {
			hw.reward_mode = PB_REWARD_WEIGHTED;
			hw.w_compute = 1.0;
			hw.w_storage = (double)(pb_test_rnd(&seed) % 3) * 2e4;
			hw.w_routing = (double)(1 + pb_test_rnd(&seed) % 3);
		}
		pb_part_problem *P = long_chain(&seed, m, &hw);
		pb_part_rules *r = pb_part_rules_new(m);
		pb_error err = {0};
		unsigned keep = 1 + pb_test_rnd(&seed) % 4; /* 1: every cut allowed */
		for (int v = 0; v + 1 < m; v++)
			if (pb_test_rnd(&seed) % keep)
				assert_int_equal(
				    pb_part_rules_cut(r, "c", v, "x", PB_CUT_FORBID, &err), PB_OK);
		int pins = w ? (int)(pb_test_rnd(&seed) % 2) : 1 + (int)(pb_test_rnd(&seed) % 2);
		for (int i = 0; i < pins; i++)
			assert_int_equal(
			    pb_part_rules_pin(r, "p", i ? 0 : m - 1, "x", i ? n / 4 : n / 2, &err),
			    PB_OK);
		assert_int_equal(pb_part_problem_set_rules(P, r, &err), PB_OK);
		pb_part_rules_free(r);
		int ac[48], feasible, exact;
		double opt;
		assert_int_equal(pb_part_exact_labels(P, ac, &opt, &feasible, &exact, &err), PB_OK);
		if (!exact) { /* the label DP gave up: no reference */
			pb_part_problem_free(P);
			continue;
		}
		for (int h = 0; h < H_RL; h++) {
			int got[48], viol;
			run_heuristic(P, h, got);
			assert_true(pb_part_state_valid(P, got, NULL));
			double o = objective(P, got, &viol);
			if (viol != 0 || o > opt * 1.01) {
				bad++;
				print_message(
				    "long trial %d (m=%d n=%d, %s, 1/%u cuts allowed, %d pins): "
				    "%s %.9g with %d broken rules, exact %.9g (+%.2f%%)\n",
				    trial, m, n, w ? "weighted" : "max(t)", keep, pins, names[h], o,
				    viol, opt, 100 * (o / opt - 1));
				for (int z = 0; z < 2; z++) {
					pb_part_group G[48];
					pb_part_eval ev;
					pb_part_evaluate(P, z ? got : ac, &ev, G);
					print_message("%s: c %.6g s %.6g r %.6g w %g %g %g:",
					              z ? "got" : "opt", ev.max_compute,
					              ev.max_storage, ev.max_routing, hw.w_compute,
					              hw.w_storage, hw.w_routing);
					for (int q = 0; q < ev.n_groups; q++)
						print_message(" %dc:%dL(%.3g,%.3g,%.3g)",
						              G[q].cores, G[q].layers, G[q].compute,
						              G[q].storage, G[q].routing);
					print_message("\n");
				}
			}
			assert_true(viol > 0 || o >= opt * (1 - 1e-9));
			worst[h] = o / opt - 1 > worst[h] ? o / opt - 1 : worst[h];
		}
		checked++;
		weighted += w;
		pinned += pins > 0;
		pb_part_problem_free(P);
	}
	print_message("long chains: %d checked (%d weighted, %d pinned); worst gap greedy %.3f%%, "
	              "pack %.3f%%, local %.3f%%\n",
	              checked, weighted, pinned, 100 * worst[0], 100 * worst[1], 100 * worst[2]);
	if (bad > 0)
		fail_msg("%d plans broke a rule or ended more than 1%% above exact", bad);
	if (checked < 8 || weighted < 4 || pinned < 6)
		fail_msg("checked %d, weighted %d, pinned %d", checked, weighted, pinned);
}

/* Under cut rules a (c) or (d) action carries the boundary to the next
 * allowed cut; without rules it moves one layer. */
static void test_action_jumps_to_allowed_cut(void **state)
{
	(void)state;
	unsigned seed = 5;
	pb_manycore hw = pb_test_chip("jump", 3, 1e3, 1e12, 1000, 100);
	pb_part_problem *P = pb_test_random_problem(&seed, 12, &hw, 0);
	pb_part_rules *r = pb_part_rules_new(12);
	pb_error err = {0};
	/* allowed cuts after layers 2, 5 and 9 only: positions 3, 6, 10 */
	for (int v = 0; v + 1 < 12; v++)
		if (v != 2 && v != 5 && v != 9)
			assert_int_equal(pb_part_rules_cut(r, "c", v, "x", PB_CUT_FORBID, &err),
			                 PB_OK);
	assert_int_equal(pb_part_problem_set_rules(P, r, &err), PB_OK);
	pb_part_rules_free(r);
	int ac[3] = {3, 3, 6}; /* cuts at 3 and 6 */
	assert_true(pb_part_rules_apply(P, ac, pb_env_encode(3, PB_ACT_D, 1), NULL));
	assert_int_equal(ac[1], 7); /* the cut at 6 jumped to 10 */
	assert_int_equal(ac[2], 2);
	assert_true(pb_part_rules_apply(P, ac, pb_env_encode(3, PB_ACT_C, 1), NULL));
	assert_int_equal(ac[1], 3); /* and back to 6 */
	assert_int_equal(ac[2], 6);
	assert_true(pb_part_rules_apply(P, ac, pb_env_encode(3, PB_ACT_C, 0), NULL));
	assert_int_equal(ac[0], 0); /* no allowed cut inside core 0's layers: all go */
	assert_int_equal(ac[1], 6);
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	assert_int_equal(ev.violations, 0);
	pb_part_problem_free(P);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_action_jumps_to_allowed_cut),
	    cmocka_unit_test(test_random_rules_within_one_percent),
	    cmocka_unit_test(test_long_chains_within_one_percent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
