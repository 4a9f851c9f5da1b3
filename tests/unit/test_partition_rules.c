/* test_partition_rules.c — issue 18 parts 2 and 4: cut and core rules
 * (chain_rules.h) obeyed by every partition method, the label DP against
 * brute force under random rules and the weighted objective, and the
 * weighted objective as the objective (exact = milp, heuristics >= it). */
#include "pb_test.h"

#include "hw.h"
#include "partition/chain/baselines.h"
#include "partition/milp/chain_milp.h"
#include "partition/chain/chain_rules.h"
#include "partition/chain/exact.h"
#include "partition/methods/partition.h"
#include "pb_test_graphs.h"
#include "shard/pipeline/pipeline_stages.h"

static const char *const methods[] = {"exact", "milp", "greedy", "pack", "local", "rl"};
enum { N_METHODS = 6 };

/* ---- the label DP and the MILP against brute force ---- */

typedef struct bf {
	pb_part_problem *P;
	int ac[8], best_ac[8];
	double best; /* best objective of a state obeying the rules, memory ignored */
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
		if (ev.violations == 0 && ev.objective < b->best) {
			b->best = ev.objective;
			memcpy(b->best_ac, b->ac, sizeof b->ac);
		}
		return;
	}
	for (int k = 0; k <= left; k++) {
		b->ac[core] = k;
		brute(b, core + 1, left - k);
	}
}

static void test_labels_match_brute_force(void **state)
{
	(void)state;
	unsigned seed = 777;
	int checked = 0, binding = 0, weighted = 0;
	for (int trial = 0; trial < 150; trial++) {
		int m = 3 + (int)(pb_test_rnd(&seed) % 8), n = 2 + (int)(pb_test_rnd(&seed) % 4);
		pb_manycore h = pb_test_chip("rules", n, 1e3, 1e12, 1000, 100);
		if (trial % 2) {
			h.reward_mode = PB_REWARD_WEIGHTED;
			h.w_compute = 1.0;
			h.w_storage = (double)(pb_test_rnd(&seed) % 5) * 1e5;
			h.w_routing = (double)(pb_test_rnd(&seed) % 3);
		}
		pb_part_problem *P = pb_test_random_problem(&seed, m, &h, 1);
		bf free_ = {P, {0}, {0}, INFINITY};
		brute(&free_, 0, m);
		pb_part_rules *r = pb_part_rules_new(m);
		pb_error err = {0};
		for (int v = 0; v + 1 < m; v++) {
			unsigned d = pb_test_rnd(&seed) % 6;
			if (d == 0)
				assert_int_equal(
				    pb_part_rules_cut(r, "f", v, "x", PB_CUT_FORBID, &err), PB_OK);
			else if (d == 1)
				assert_int_equal(
				    pb_part_rules_cut(r, "F", v, "x", PB_CUT_FORCE, &err), PB_OK);
		}
		if (pb_test_rnd(&seed) % 2)
			assert_int_equal(
			    pb_part_rules_pin(r, "p", (int)(pb_test_rnd(&seed) % (unsigned)m), "x",
			                      (int)(pb_test_rnd(&seed) % (unsigned)n), &err),
			    PB_OK);
		assert_int_equal(pb_part_problem_set_rules(P, r, &err), PB_OK);
		pb_part_rules_free(r);
		bf b = {P, {0}, {0}, INFINITY};
		brute(&b, 0, m);
		int ac[8], feasible, exact;
		double obj;
		int rc = pb_part_exact_labels(P, ac, &obj, &feasible, &exact, &err);
		if (!isfinite(b.best)) {
			/* contradictory rules: a clear error, no plan */
			assert_int_equal(rc, PB_EINPUT);
			assert_non_null(strstr(err.msg, "obeys the rules"));
			pb_part_problem_free(P);
			continue;
		}
		assert_int_equal(rc, PB_OK);
		assert_true(exact);
		pb_part_eval ev;
		pb_part_evaluate(P, ac, &ev, NULL);
		assert_int_equal(ev.violations, 0);
		if (fabs(obj - b.best) > 1e-9 * b.best)
			fail_msg("trial %d (m=%d n=%d): labels %.12g, brute force %.12g", trial, m,
			         n, obj, b.best);
		/* the MILP reaches the same optimum, on its own */
		int mac[8];
		pb_milp_rules_result res;
		assert_int_equal(pb_milp_rules_solve(P, 0, NULL, mac, &res, &err), PB_OK);
		assert_true(res.optimal);
		pb_part_evaluate(P, mac, &ev, NULL);
		assert_int_equal(ev.violations, 0);
		if (fabs(ev.objective - b.best) > 1e-6 * b.best)
			fail_msg("trial %d: milp %.12g, brute force %.12g", trial, ev.objective,
			         b.best);
		checked++;
		binding += b.best > free_.best * (1 + 1e-9);
		weighted += trial % 2;
		pb_part_problem_free(P);
	}
	/* enough instances where the rules moved the optimum */
	if (checked < 60 || binding < 20 || weighted < 20)
		fail_msg("checked %d, rules binding in %d, weighted %d", checked, binding,
		         weighted);
}

/* ---- every method on resnet18 ---- */

static pb_hw *load_layout(const char *text)
{
	pb_hw *hw = NULL;
	pb_error err = {0};
	if (pb_hw_load_string(text, "rules-test.lua", &hw, &err) != PB_OK)
		fail_msg("%s", err.msg);
	return hw;
}

#define CHIP(mode, ws)                                                                             \
	"return { kind = 'manycore', name = 'chip16', cores = 16, mac_rate = 1.0e11,"              \
	" memory = 128 * 1024 * 1024, bandwidth = 1.6e11, reward = { mode = '" mode "',"           \
	" a = 1.0, penalty = 100.0, weights = { compute = 1.0, storage = " ws ", routing = 1.0 }"  \
	" } }"

/* Runs method on g with rules r; returns the plan's arranged_core in ac and
 * the evaluation. */
static void run(const pb_graph *g, const pb_hw *hw, const char *method, const pb_part_rules *r,
                int *ac, pb_part_eval *ev, double *optimum)
{
	pb_part_opts o = {0};
	o.method = method;
	o.episodes = 40;
	o.seed = 3;
	o.rules = r;
	pb_solver *sv;
	pb_error err = {0};
	if (pb_partition_solver_new(g, hw, &o, &sv, &err) != PB_OK)
		fail_msg("%s: %s", method, err.msg);
	pb_solver_progress p = {0};
	while (!p.done)
		if (pb_solver_step(sv, 50, &p, &err) != PB_OK)
			fail_msg("%s: %s", method, err.msg);
	pb_part_problem *P = pb_partition_solver_problem(sv);
	const pb_plan *plan = pb_solver_incumbent(sv);
	assert_int_equal(pb_part_from_plan(P, plan, ac, &err), PB_OK);
	pb_part_evaluate(P, ac, ev, NULL);
	if (optimum)
		*optimum = pb_partition_solver_optimum(sv);
	if (r)
		assert_non_null(json_object_get(plan->detail, "rules"));
	pb_solver_free(sv);
}

/* The graph node of partition layer l (load-time constants are no layers:
 * chain_layers.h; rules are made per node). */
static int node_of(const pb_graph *g, int l)
{
	pb_part_layers L = {0};
	pb_error err = {0};
	assert_int_equal(pb_part_layers_new(g, &L, &err), PB_OK);
	assert_true(l >= 0 && l < L.m);
	int v = L.layer_node[l];
	pb_part_layers_free(&L);
	return v;
}

/* Positions p (1..m-1) where the state has a group boundary. */
static int boundaries(const int *ac, int n, int *pos)
{
	int k = 0, layer = 0;
	for (int i = 0; i < n; i++) {
		if (ac[i] == 0)
			continue;
		layer += ac[i];
		pos[k++] = layer;
	}
	return k - 1; /* the last is the end of the chain */
}

static void test_every_method_obeys_cuts(void **state)
{
	(void)state;
	pb_graph *g = pb_test_load_model("resnet18.onnx");
	pb_hw *hw = load_layout(CHIP("max_time", "0.1"));
	int m = g->n_nodes;
	for (int i = 0; i < N_METHODS; i++) {
		int ac[16], ac2[16], pos[16];
		pb_part_eval ev, ev2;
		run(g, hw, methods[i], NULL, ac, &ev, NULL);
		int nb = boundaries(ac, 16, pos);
		assert_true(nb >= 1);
		/* forbid every boundary of the method's own plan */
		pb_part_rules *r = pb_part_rules_new(m);
		pb_error err = {0};
		for (int k = 0; k < nb; k++)
			assert_int_equal(pb_part_rules_cut(r, "no_cut_here", node_of(g, pos[k] - 1),
			                                   g->nodes[node_of(g, pos[k] - 1)].name,
			                                   PB_CUT_FORBID, &err),
			                 PB_OK);
		run(g, hw, methods[i], r, ac2, &ev2, NULL);
		if (ev2.violations)
			fail_msg("%s breaks %d forbidden cuts", methods[i], ev2.violations);
		int pos2[16], nb2 = boundaries(ac2, 16, pos2);
		for (int k = 0; k < nb2; k++)
			for (int j = 0; j < nb; j++)
				assert_int_not_equal(pos2[k], pos[j]);
		assert_memory_not_equal(ac, ac2, sizeof ac); /* the rule changed the plan */
		pb_part_rules_free(r);
		/* force a boundary the plan does not have: after layer 5 */
		r = pb_part_rules_new(m);
		assert_int_equal(pb_part_rules_cut(r, "cut_after_5", node_of(g, 5),
		                                   g->nodes[node_of(g, 5)].name, PB_CUT_FORCE,
		                                   &err),
		                 PB_OK);
		run(g, hw, methods[i], r, ac2, &ev2, NULL);
		if (ev2.violations)
			fail_msg("%s breaks the forced cut", methods[i]);
		nb2 = boundaries(ac2, 16, pos2);
		int has = 0;
		for (int k = 0; k < nb2; k++)
			has |= pos2[k] == 6;
		assert_true(has);
		pb_part_rules_free(r);
	}
	pb_hw_free(hw);
	pb_graph_free(g);
}

static void test_pins_and_optimum(void **state)
{
	(void)state;
	pb_graph *g = pb_test_load_model("resnet18.onnx");
	pb_hw *hw = load_layout(CHIP("max_time", "0.1"));
	int m = g->n_nodes;
	/* layer 10 on core 15 and a group boundary after it: contradictory (the
	 * chain runs over the cores in order, so nothing is left for the layers
	 * after the boundary); then layer 10 on core 12 alone */
	pb_part_rules *r = pb_part_rules_new(m);
	pb_error err = {0};
	int v10 = node_of(g, 10);
	assert_int_equal(pb_part_rules_pin(r, "early_late", v10, g->nodes[v10].name, 15, &err),
	                 PB_OK);
	assert_int_equal(pb_part_rules_cut(r, "cut", v10, g->nodes[v10].name, PB_CUT_FORCE, &err),
	                 PB_OK);
	pb_part_opts o = {0};
	o.method = "exact";
	o.rules = r;
	pb_solver *sv;
	assert_int_equal(pb_partition_solver_new(g, hw, &o, &sv, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "obeys the rules"));
	pb_part_rules_free(r);
	r = pb_part_rules_new(m);
	assert_int_equal(pb_part_rules_pin(r, "pin", v10, g->nodes[v10].name, 12, &err), PB_OK);
	double opt_exact = NAN;
	int ac0[16];
	pb_part_eval ev0;
	run(g, hw, "exact", NULL, ac0, &ev0, NULL);
	for (int i = 0; i < N_METHODS; i++) {
		int ac[16];
		pb_part_eval ev;
		double opt;
		run(g, hw, methods[i], r, ac, &ev, &opt);
		if (ev.violations)
			fail_msg("%s breaks the pin", methods[i]);
		if (i == 0) {
			opt_exact = ev.objective;
			assert_true(ev.max_time >
			            ev0.max_time * (1 + 1e-9)); /* the pin costs time */
		} else if (i == 1) {
			assert_true(fabs(ev.objective - opt_exact) <= 1e-9 * opt_exact);
		} else {
			assert_true(ev.objective >= opt_exact * (1 - 1e-12));
		}
	}
	/* a core the layout lacks */
	pb_part_rules_free(r);
	r = pb_part_rules_new(m);
	assert_int_equal(pb_part_rules_pin(r, "too_far", 3, g->nodes[3].name, 16, &err), PB_OK);
	o.rules = r;
	assert_int_equal(pb_partition_solver_new(g, hw, &o, &sv, &err), PB_EINPUT);
	pb_test_expect_msg(&err, "rules-test.lua", "too_far", "core 16");
	pb_part_rules_free(r);
	pb_hw_free(hw);
	pb_graph_free(g);
}

/* ---- the weighted objective ---- */

static void test_weighted_objective(void **state)
{
	(void)state;
	pb_graph *g = pb_test_load_model("resnet18.onnx");
	pb_hw *hm = load_layout(CHIP("max_time", "2.0"));
	pb_hw *hw = load_layout(CHIP("weighted", "2.0"));
	int act[16], acw[16];
	pb_part_eval evt, evw;
	run(g, hm, "exact", NULL, act, &evt, NULL);
	double opt;
	run(g, hw, "exact", NULL, acw, &evw, &opt);
	/* the two objectives have different optima on this layout */
	assert_memory_not_equal(act, acw, sizeof act);
	assert_true(evw.max_time > evt.max_time * (1 + 1e-6));
	/* the max(t) plan, scored by the weighted objective, is worse */
	pb_part_problem *P;
	pb_manycore mc;
	pb_error err = {0};
	assert_int_equal(pb_manycore_parse(hw, &mc, &err), PB_OK);
	assert_int_equal(pb_part_problem_new(g, &mc, &P, &err), PB_OK);
	pb_part_eval cross;
	pb_part_evaluate(P, act, &cross, NULL);
	assert_true(cross.objective > evw.objective * (1 + 1e-6));
	pb_part_problem_free(P);
	for (int i = 1; i < N_METHODS; i++) {
		int ac[16];
		pb_part_eval ev;
		run(g, hw, methods[i], NULL, ac, &ev, NULL);
		if (i == 1 && fabs(ev.objective - evw.objective) > 1e-9 * evw.objective)
			fail_msg("milp %.12g, exact %.12g", ev.objective, evw.objective);
		if (ev.objective < evw.objective * (1 - 1e-12))
			fail_msg("%s beats the exact optimum: %.12g < %.12g", methods[i],
			         ev.objective, evw.objective);
	}
	pb_hw_free(hm);
	pb_hw_free(hw);
	pb_graph_free(g);
}

/* ---- the pipeline split ---- */

/* Best slowest stage over every split of a chain of n costs into p
 * contiguous non-empty stages obeying R (brute force over boundary sets). */
static double pipe_brute(const double *cost, int n, int p, const pb_part_rules *R)
{
	double best = INFINITY;
	for (unsigned mask = 0; mask < (1u << (n - 1)); mask++) {
		if (__builtin_popcount(mask) != p - 1)
			continue;
		int stage = 0, ok = 1;
		double cur = 0, worst = 0;
		for (int v = 0; v < n && ok; v++) {
			if (R->pin[v] >= 0 && R->pin[v] != stage)
				ok = 0;
			cur += cost[v];
			if (v + 1 < n) {
				int cut = (mask >> v) & 1;
				if ((cut && R->cut[v + 1] == PB_CUT_FORBID) ||
				    (!cut && R->cut[v + 1] == PB_CUT_FORCE))
					ok = 0;
				if (cut) {
					worst = cur > worst ? cur : worst;
					cur = 0;
					stage++;
				}
			}
		}
		worst = cur > worst ? cur : worst;
		if (ok && worst < best)
			best = worst;
	}
	return best;
}

static void test_pipeline_rules(void **state)
{
	(void)state;
	unsigned seed = 99;
	int binding = 0, infeasible = 0;
	for (int trial = 0; trial < 60; trial++) {
		int n = 4 + (int)(pb_test_rnd(&seed) % 7), p = 2 + (int)(pb_test_rnd(&seed) % 3);
		double macs[16], cost[16];
		for (int v = 0; v < n; v++)
			macs[v] = cost[v] = 1 + pb_test_rnd(&seed) % 100;
		char edges[256] = "";
		for (int v = 0; v + 1 < n; v++)
			snprintf(edges + strlen(edges), sizeof edges - strlen(edges), "%d>%d ", v,
			         v + 1);
		pb_graph *g = pb_test_chain_graph(n, macs, edges);
		assert_non_null(g);
		pb_part_rules *r = pb_part_rules_new(n);
		pb_error err = {0};
		for (int v = 0; v + 1 < n; v++) {
			unsigned d = pb_test_rnd(&seed) % 5;
			if (d == 0)
				pb_part_rules_cut(r, "f", v, g->nodes[v].name, PB_CUT_FORBID, &err);
			else if (d == 1)
				pb_part_rules_cut(r, "F", v, g->nodes[v].name, PB_CUT_FORCE, &err);
		}
		if (pb_test_rnd(&seed) % 2)
			pb_part_rules_pin(r, "s", (int)(pb_test_rnd(&seed) % (unsigned)n), "x",
			                  (int)(pb_test_rnd(&seed) % (unsigned)p), &err);
		snprintf(r->pin_kind, sizeof r->pin_kind, "stage");
		pb_part_rules *none = pb_part_rules_new(n);
		double free_best = pipe_brute(cost, n, p, none);
		double want = pipe_brute(cost, n, p, r);
		pb_pipe_split sp;
		int rc = pb_pipeline_stages_split_dp_rules(g, cost, p, r, &sp, &err);
		if (!isfinite(want)) {
			assert_int_equal(rc, PB_EINPUT);
			assert_non_null(strstr(err.msg, "obeys the Lua cut and stage rules"));
			infeasible++;
		} else {
			assert_int_equal(rc, PB_OK);
			if (fabs(sp.max_cost - want) > 1e-9 * want)
				fail_msg("trial %d: dp %g, brute force %g", trial, sp.max_cost,
				         want);
			for (int v = 0; v < n; v++) {
				if (r->pin[v] >= 0)
					assert_int_equal(sp.stage[v], r->pin[v]);
				if (v + 1 < n && r->cut[v + 1] == PB_CUT_FORBID)
					assert_int_equal(sp.stage[v + 1], sp.stage[v]);
				if (v + 1 < n && r->cut[v + 1] == PB_CUT_FORCE)
					assert_true(sp.stage[v + 1] > sp.stage[v]);
			}
			pb_pipeline_stages_split_free(&sp);
			binding += want > free_best * (1 + 1e-9);
			/* the MILP obeys the same rules (its stages may be empty) */
			rc = pb_pipeline_stages_split_milp_rules(g, cost, p, 0, 0, r, &sp, &err);
			assert_int_equal(rc, PB_OK);
			for (int v = 0; v < n; v++) {
				if (r->pin[v] >= 0)
					assert_int_equal(sp.stage[v], r->pin[v]);
				if (v + 1 < n && r->cut[v + 1] == PB_CUT_FORBID)
					assert_int_equal(sp.stage[v + 1], sp.stage[v]);
				if (v + 1 < n && r->cut[v + 1] == PB_CUT_FORCE)
					assert_true(sp.stage[v + 1] > sp.stage[v]);
			}
			pb_pipeline_stages_split_free(&sp);
		}
		pb_part_rules_free(none);
		pb_part_rules_free(r);
		pb_graph_free(g);
	}
	if (binding < 10 || infeasible < 3)
		fail_msg("rules binding in %d trials, infeasible in %d", binding, infeasible);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_labels_match_brute_force),
	    cmocka_unit_test(test_every_method_obeys_cuts),
	    cmocka_unit_test(test_pins_and_optimum),
	    cmocka_unit_test(test_weighted_objective),
	    cmocka_unit_test(test_pipeline_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
