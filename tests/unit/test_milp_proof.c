/* test_milp_proof.c — the partition MILP proves optima: on random small chains its proven
 * optimum equals the exact DP's (the judge, called only here), with probing to the end
 * and with branch and bound doing most of the work; bounds stay valid while it steps;
 * a time limit stops it with incumbent >= bound and a consistent gap (API and command,
 * text and JSON); one step unit is one probe or one node; the emitted LP re-solves to the
 * same optimum with glpsol and cbc; the `reference` argument is never an input. */
#include "pb_test.h"

#include <unistd.h>

#include "commands.h"
#include "partition/milp/chain_milp.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/exact.h"
#include "partition/methods/partition.h"
#include "session.h"

static pb_part_problem *random_problem(unsigned *seed, int m, int cores, int zero_macs)
{
	pb_manycore h = pb_test_chip("proof", cores, 1e3, 1e12, 1000, 0);
	return pb_test_random_problem(seed, m, &h, zero_macs);
}

/* Runs M to the end; checks every step's bound and incumbent on the way. */
static void run_checked(pb_part_problem *P, pb_milp *M)
{
	int ac[16], improved;
	double last_inc = INFINITY, last_bound = 0;
	pb_error err = {0};
	for (int steps = 0; !pb_milp_done(M); steps++) {
		assert_int_equal(pb_milp_step(M, 1, ac, &improved, &err), PB_OK);
		double inc = pb_milp_incumbent(M), b = pb_milp_bound(M);
		assert_true(isfinite(b));
		assert_true(b >= P->lower_bound * (1 - 1e-12));
		assert_true(b >= last_bound * (1 - 1e-12)); /* the bound never drops */
		assert_true(b <= inc * (1 + 1e-9));
		assert_true(inc <= last_inc);
		if (improved) {
			pb_part_eval ev;
			pb_part_evaluate(P, ac, &ev, NULL);
			assert_true(fabs(ev.max_time - inc) <= 1e-12 * inc);
		}
		last_inc = inc;
		last_bound = b;
		assert_true(steps < 200000);
	}
}

static void check_against_exact(unsigned seed0, int trials, double probe_gap)
{
	unsigned seed = seed0;
	for (int trial = 0; trial < trials; trial++) {
		int m = 2 + (int)(pb_test_rnd(&seed) % 30), n = 1 + (int)(pb_test_rnd(&seed) % 8);
		pb_part_problem *P = random_problem(&seed, m, n, trial % 3 == 0);
		if (trial % 2) /* memory that binds for some instances, none fits for others */
			P->hw.memory = P->pstore[m] / n * (0.4 + 0.3 * (trial % 5));
		double ex;
		int ex_ac[16];
		pb_error err = {0};
		assert_int_equal(pb_part_exact_solve(P, &ex, ex_ac, NULL, &err), PB_OK);
		pb_milp_opts o = {0, probe_gap};
		pb_milp *M;
		assert_int_equal(pb_milp_new_opts(P, &o, NULL, &M, &err), PB_OK);
		run_checked(P, M);
		pb_milp_stats st;
		pb_milp_stats_get(M, &st);
		assert_int_equal(st.state, PB_MILP_OPTIMAL);
		assert_true(st.gap == 0);
		assert_true(pb_milp_bound(M) == pb_milp_incumbent(M));
		const int *ac = pb_milp_incumbent_state(M);
		assert_non_null(ac);
		assert_true(pb_part_state_valid(P, ac, &err));
		pb_part_eval ev, eev;
		pb_part_evaluate(P, ac, &ev, NULL);
		pb_part_evaluate(P, ex_ac, &eev, NULL);
		if (fabs(ev.max_time - ex) > 1e-6 * ex)
			fail_msg("trial %d (m=%d n=%d gap %g): milp %.12g exact %.12g", trial, m, n,
			         probe_gap, ev.max_time, ex);
		assert_int_equal(ev.over_memory, eev.over_memory);
		pb_milp_free(M);
		pb_part_problem_free(P);
	}
}

/* Probing to the default 0.2% bracket, then the MILP. */
static void test_proof_equals_exact(void **state)
{
	check_against_exact(2024, 60, 0);
}

/* One probe (θ = inf) only: branch and bound closes the whole gap, so the column
 * dominance rules and the start/end rows are exercised on wide brackets. */
static void test_bb_alone_equals_exact(void **state)
{
	check_against_exact(77, 60, 100.0);
}

static void test_reference_ignored(void **state)
{
	unsigned seed = 5;
	pb_part_problem *P = random_problem(&seed, 24, 6, 0);
	double refs[] = {NAN, 1e-30, -1.0, 1e30};
	double first = NAN;
	pb_error err = {0};
	for (int i = 0; i < 4; i++) {
		pb_milp *M;
		assert_int_equal(pb_milp_new(P, refs[i], NULL, &M, &err), PB_OK);
		run_checked(P, M);
		if (i == 0)
			first = pb_milp_incumbent(M);
		assert_true(pb_milp_incumbent(M) == first);
		pb_milp_free(M);
	}
	pb_part_problem_free(P);
}

/* A chain big enough that probing and the MILP take many units. */
static pb_part_problem *chain_problem(int m, int cores)
{
	unsigned seed = 11;
	double macs[64], par[64], ob[64];
	int from[128], to[128], ne = 0;
	for (int i = 0; i < m; i++) {
		macs[i] = 1e6 * (1 + pb_test_rnd(&seed) % 50);
		par[i] = 1e3 * (pb_test_rnd(&seed) % 100);
		ob[i] = 1e4 * (1 + pb_test_rnd(&seed) % 20);
		if (i) {
			from[ne] = i - 1;
			to[ne++] = i;
		}
		if (i >= 3 && i % 3 == 0) {
			from[ne] = i - 3;
			to[ne++] = i;
		}
	}
	pb_manycore h = pb_test_chip("chain", cores, 1e9, 1e12, 1e9, 0);
	pb_part_problem *P = NULL;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, &h, &P, &err),
	                 PB_OK);
	return P;
}

static void test_units(void **state)
{
	pb_part_problem *P = chain_problem(60, 12);
	pb_error err = {0};
	int ac[12], improved;
	/* Probing to the closed bracket: every unit is one probe. */
	pb_milp_opts o = {0, 1e-15};
	pb_milp *M;
	assert_int_equal(pb_milp_new_opts(P, &o, NULL, &M, &err), PB_OK);
	pb_milp_stats st;
	pb_milp_stats_get(M, &st);
	assert_int_equal(st.probes, 1);
	assert_string_equal(st.stage, "probing");
	assert_int_equal(pb_milp_step(M, 1, ac, &improved, &err), PB_OK);
	assert_int_equal(improved, 1); /* the first probe's incumbent is reported */
	pb_milp_stats_get(M, &st);
	assert_int_equal(st.probes, 2);
	assert_int_equal(pb_milp_step(M, 3, ac, &improved, &err), PB_OK);
	pb_milp_stats_get(M, &st);
	assert_int_equal(st.probes, 5);
	pb_milp_free(M);
	/* Branch and bound from one probe: every unit is at most one node. */
	o.probe_gap = 100;
	assert_int_equal(pb_milp_new_opts(P, &o, NULL, &M, &err), PB_OK);
	while (!pb_milp_done(M)) {
		pb_milp_stats_get(M, &st);
		int bb = strcmp(st.stage, "branch and bound") == 0;
		long before = st.nodes;
		assert_int_equal(pb_milp_step(M, 4, ac, &improved, &err), PB_OK);
		pb_milp_stats_get(M, &st);
		if (bb)
			assert_true(st.nodes - before <= 4);
		if (bb && !pb_milp_done(M))
			assert_int_equal(st.nodes - before, 4);
	}
	pb_milp_stats_get(M, &st);
	assert_int_equal(st.state, PB_MILP_OPTIMAL);
	assert_true(st.nodes > 4);
	double ex;
	assert_int_equal(pb_part_exact_solve(P, &ex, NULL, NULL, &err), PB_OK);
	assert_true(fabs(st.incumbent - ex) <= 1e-6 * ex);
	pb_milp_free(M);
	pb_part_problem_free(P);
}

static void test_time_limit(void **state)
{
	pb_part_problem *P = chain_problem(60, 12);
	pb_error err = {0};
	int ac[12], improved;
	pb_milp_opts o = {1e-9, 100}; /* any step is past the limit */
	pb_milp *M;
	assert_int_equal(pb_milp_new_opts(P, &o, NULL, &M, &err), PB_OK);
	assert_int_equal(pb_milp_step(M, 1000, ac, &improved, &err), PB_OK);
	assert_true(pb_milp_done(M));
	pb_milp_stats st;
	pb_milp_stats_get(M, &st);
	assert_int_equal(st.state, PB_MILP_TIME_LIMIT);
	assert_true(isfinite(st.incumbent) && isfinite(st.bound));
	assert_true(st.bound >= P->lower_bound * (1 - 1e-12));
	assert_true(st.bound <= st.incumbent);
	assert_true(fabs(st.gap - (st.incumbent - st.bound) / st.incumbent) <= 1e-12);
	double ex;
	assert_int_equal(pb_part_exact_solve(P, &ex, NULL, NULL, &err), PB_OK);
	assert_true(st.bound <= ex * (1 + 1e-9) && st.incumbent >= ex * (1 - 1e-9));
	/* Stepping after the stop does nothing. */
	assert_int_equal(pb_milp_step(M, 5, ac, &improved, &err), PB_OK);
	assert_int_equal(improved, 0);
	pb_milp_free(M);
	pb_part_problem_free(P);
}

static pb_session *chain_session(void)
{
	double macs[48];
	char edges[1024] = "";
	for (int i = 0; i < 48; i++) {
		macs[i] = 1e6 * (1 + (i * 7) % 11);
		char e[24];
		if (i) {
			snprintf(e, sizeof e, "%d>%d ", i - 1, i);
			strcat(edges, e);
		}
		if (i >= 4 && i % 4 == 0) {
			snprintf(e, sizeof e, "%d>%d ", i - 4, i);
			strcat(edges, e);
		}
	}
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, pb_test_chain_graph(48, macs, edges), "chain.test");
	return s;
}

static void test_command_time_limit(void **state)
{
	pb_session *s = chain_session();
	int rc;
	char *o = pb_test_run_cmd(s,
	                          "partition --layout layouts/manycore-16.lua --method milp "
	                          "--time-limit 0.000000001 --json",
	                          &rc);
	if (rc)
		fail_msg("%s", o);
	json_error_t je;
	json_t *j = json_loads(o, 0, &je);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "time_limit_reached")));
	json_t *mj = json_object_get(j, "milp");
	assert_non_null(mj);
	assert_string_equal(json_string_value(json_object_get(mj, "status")), "time_limit");
	double inc = json_number_value(json_object_get(mj, "incumbent"));
	double bound = json_number_value(json_object_get(mj, "bound"));
	double gap = json_number_value(json_object_get(mj, "gap"));
	double lb = json_number_value(json_object_get(j, "lower_bound"));
	assert_true(json_is_number(json_object_get(mj, "bound")));
	assert_true(bound >= lb * (1 - 1e-12) && bound <= inc);
	assert_true(fabs(gap - (inc - bound) / inc) <= 1e-9);
	assert_true(fabs(json_number_value(json_object_get(j, "max_time")) - inc) <= 1e-12 * inc);
	json_decref(j);
	free(o);
	/* Text: the stop, the incumbent, the bound and the gap. */
	o = pb_test_run_cmd(s, "partition --method milp --time-limit 0.000000001", &rc);
	assert_int_equal(rc, PB_OK);
	assert_non_null(strstr(o, "(time limit: best so far)"));
	assert_non_null(strstr(o, "milp: stopped at the time limit"));
	assert_non_null(strstr(o, "bound "));
	assert_non_null(strstr(o, "gap "));
	free(o);
	/* Without a limit: proved, and equal to the exact optimum. */
	o = pb_test_run_cmd(s, "partition --method milp --json", &rc);
	assert_int_equal(rc, PB_OK);
	j = json_loads(o, 0, &je);
	assert_non_null(j);
	mj = json_object_get(j, "milp");
	assert_string_equal(json_string_value(json_object_get(mj, "status")), "optimal");
	assert_true(json_number_value(json_object_get(mj, "gap")) == 0);
	double opt = json_number_value(json_object_get(j, "optimum"));
	assert_true(fabs(json_number_value(json_object_get(j, "max_time")) - opt) <= 1e-6 * opt);
	json_decref(j);
	free(o);
	pb_session_free(s);
}

static void test_command_step(void **state)
{
	pb_session *s = chain_session();
	int rc;
	char *o = pb_test_run_cmd(
	    s, "partition --layout layouts/manycore-16.lua --method milp --start --time-limit 60",
	    &rc);
	assert_int_equal(rc, PB_OK);
	free(o);
	pb_milp_stats st;
	assert_int_equal(pb_partition_solver_milp_stats(s->solver, &st), 1);
	long units = st.probes + st.nodes;
	o = pb_test_run_cmd(s, "step -n 2", &rc);
	assert_int_equal(rc, PB_OK);
	/* The status line shows a real bound, never a sentinel like -1.8e+305. */
	assert_non_null(strstr(o, "bound "));
	assert_null(strstr(o, "e+"));
	assert_null(strstr(o, "-"));
	free(o);
	pb_partition_solver_milp_stats(s->solver, &st);
	if (st.state == PB_MILP_RUNNING && strcmp(st.stage, "probing") == 0)
		assert_int_equal(st.probes + st.nodes, units + 2);
	for (int k = 0; k < 1000 && st.state == PB_MILP_RUNNING; k++) {
		free(pb_test_run_cmd(s, "step -n 5", &rc));
		assert_int_equal(rc, PB_OK);
		pb_partition_solver_milp_stats(s->solver, &st);
	}
	assert_int_equal(st.state, PB_MILP_OPTIMAL);
	assert_true(s->solver->bound == st.bound);
	assert_true(fabs(st.incumbent - pb_partition_solver_optimum(s->solver)) <=
	            1e-6 * st.incumbent);
	pb_session_free(s);
}

/* Solves an LP file with a command line; returns the objective after `key`. */
static double solve_lp(const char *cmd, const char *key, const char *proved)
{
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	char line[1024];
	double obj = NAN;
	int ok = 0;
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, proved))
			ok = 1;
		char *p = strstr(line, key);
		if (p) {
			p += strlen(key);
			while (*p == ' ' || *p == ':' || *p == '=')
				p++;
			char *end;
			double v = strtod(p, &end);
			if (end != p)
				obj = v;
		}
	}
	pclose(f);
	return ok ? obj : NAN;
}

static void check_lp(const char *lp, const pb_part_problem *P, double ex)
{
	char cmd[512];
	if (system("command -v glpsol >/dev/null 2>&1") == 0) {
		snprintf(cmd, sizeof cmd, "glpsol --lp %s 2>&1", lp);
		double obj = solve_lp(cmd, "mip =", "INTEGER OPTIMAL SOLUTION FOUND");
		if (!(fabs(obj * P->lower_bound - ex) <= 1e-6 * ex))
			fail_msg("glpsol on %s: %.10g x %.10g vs exact %.10g", lp, obj,
			         P->lower_bound, ex);
	}
	if (system("command -v cbc >/dev/null 2>&1") == 0) {
		snprintf(cmd, sizeof cmd, "cbc %s solve quit 2>&1", lp);
		double obj = solve_lp(cmd, "Objective value", "Result - Optimal solution found");
		if (!(fabs(obj * P->lower_bound - ex) <= 1e-6 * ex))
			fail_msg("cbc on %s: %.10g x %.10g vs exact %.10g", lp, obj, P->lower_bound,
			         ex);
	}
}

static void test_emit_lp(void **state)
{
	unsigned seed = 4242;
	char lp[64];
	snprintf(lp, sizeof lp, "/tmp/pb_milp_proof_%d.lp", (int)getpid());
	for (int trial = 0; trial < 6; trial++) {
		int m = 8 + (int)(pb_test_rnd(&seed) % 30), n = 2 + (int)(pb_test_rnd(&seed) % 6);
		pb_part_problem *P = random_problem(&seed, m, n, 0);
		if (trial % 2)
			P->hw.memory = P->pstore[m] / n * 1.3;
		double ex, mi;
		pb_error err = {0};
		assert_int_equal(pb_part_exact_solve(P, &ex, NULL, NULL, &err), PB_OK);
		remove(lp);
		/* Default probing, and a wide bracket (the model B&B must close). */
		pb_milp_opts o = {0, trial < 3 ? 0 : 100};
		pb_milp *M;
		assert_int_equal(pb_milp_new_opts(P, &o, lp, &M, &err), PB_OK);
		int ac[8], improved;
		while (!pb_milp_done(M))
			assert_int_equal(pb_milp_step(M, 100, ac, &improved, &err), PB_OK);
		mi = pb_milp_incumbent(M);
		pb_milp_stats st;
		pb_milp_stats_get(M, &st);
		assert_true(st.lp_written[0] != '\0');
		assert_true(fabs(mi - ex) <= 1e-6 * ex);
		pb_milp_free(M);
		assert_int_equal(access(lp, R_OK), 0);
		check_lp(lp, P, ex);
		pb_part_problem_free(P);
	}
	/* Stopped at the time limit while probing: the LP of the bracket reached is
	 * still written and still has the optimum. */
	pb_part_problem *P = chain_problem(40, 8);
	double ex;
	pb_error err = {0};
	assert_int_equal(pb_part_exact_solve(P, &ex, NULL, NULL, &err), PB_OK);
	remove(lp);
	pb_milp_opts o = {1e-9, 0};
	pb_milp *M;
	assert_int_equal(pb_milp_new_opts(P, &o, lp, &M, &err), PB_OK);
	int ac[8], improved;
	assert_int_equal(pb_milp_step(M, 1, ac, &improved, &err), PB_OK);
	pb_milp_stats st;
	pb_milp_stats_get(M, &st);
	assert_int_equal(st.state, PB_MILP_TIME_LIMIT);
	assert_true(st.lp_written[0] != '\0');
	pb_milp_free(M);
	check_lp(lp, P, ex);
	remove(lp);
	pb_part_problem_free(P);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_proof_equals_exact), cmocka_unit_test(test_bb_alone_equals_exact),
	    cmocka_unit_test(test_reference_ignored),  cmocka_unit_test(test_units),
	    cmocka_unit_test(test_time_limit),         cmocka_unit_test(test_command_time_limit),
	    cmocka_unit_test(test_command_step),       cmocka_unit_test(test_emit_lp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
