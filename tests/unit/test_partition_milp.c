/* test_partition_milp.c — the GLPK MILP reaches the exact optimum, steps
 * report incumbents and bounds, the emitted LP re-solves to the same optimum
 * with glpsol, and the rl/milp methods through the `partition` command. */
#include "pb_test.h"

#include <unistd.h>

#include "commands.h"
#include "partition/chain/exact.h"
#include "partition/milp/chain_milp.h"
#include "partition/chain/chain_problem.h"
#include "session.h"

/* Random layered DAG with forward skip edges (pb_test_random_problem). */
static pb_part_problem *random_problem(unsigned *seed, int m, int cores)
{
	pb_manycore h = pb_test_chip("milptest", cores, 1e3, 1e12, 1000, 0);
	return pb_test_random_problem(seed, m, &h, 0);
}

static void test_milp_equals_exact(void **state)
{
	unsigned seed = 31;
	for (int trial = 0; trial < 25; trial++) {
		int m = 3 + (int)(pb_test_rnd(&seed) % 14), n = 2 + (int)(pb_test_rnd(&seed) % 5);
		pb_part_problem *P = random_problem(&seed, m, n);
		if (trial % 2) /* memory that binds for some instances */
			P->hw.memory = P->pstore[m] / n * 1.3;
		double ex, mi;
		int ac[8], feasible;
		pb_error err = {0};
		assert_int_equal(pb_part_exact_solve(P, &ex, NULL, &feasible, &err), PB_OK);
		if (!feasible) {
			pb_part_problem_free(P);
			continue;
		}
		assert_int_equal(pb_milp_solve(P, NULL, &mi, ac, &err), PB_OK);
		assert_true(pb_part_state_valid(P, ac, &err));
		if (fabs(mi - ex) > 1e-6 * ex)
			fail_msg("trial %d (m=%d n=%d): milp %.10g exact %.10g", trial, m, n, mi,
			         ex);
		pb_part_problem_free(P);
	}
}

static void test_milp_steps(void **state)
{
	unsigned seed = 8;
	pb_part_problem *P = random_problem(&seed, 30, 6);
	double ex;
	pb_error err = {0};
	assert_int_equal(pb_part_exact_solve(P, &ex, NULL, NULL, &err), PB_OK);
	pb_milp *M;
	assert_int_equal(pb_milp_new(P, ex, NULL, &M, &err), PB_OK);
	assert_true(pb_milp_columns(M) > 0);
	int ac[6], improved, steps = 0, improvements = 0;
	double last = INFINITY;
	while (!pb_milp_done(M)) {
		assert_int_equal(pb_milp_step(M, 1, ac, &improved, &err), PB_OK);
		steps++;
		if (improved) {
			improvements++;
			pb_part_eval ev;
			pb_part_evaluate(P, ac, &ev, NULL);
			assert_true(ev.max_time <= last * (1 + 1e-9));
			last = ev.max_time;
		}
		double b = pb_milp_bound(M);
		if (isfinite(b))
			assert_true(b <= pb_milp_incumbent(M) * (1 + 1e-6) + 1e-15);
		assert_true(steps < 100000);
	}
	assert_true(improvements >= 1);
	assert_true(fabs(pb_milp_incumbent(M) - ex) <= 1e-6 * ex);
	assert_true(fabs(pb_milp_bound(M) - ex) <= 1e-6 * ex);
	pb_milp_free(M);
	/* Freeing a search in the middle unwinds GLPK cleanly (no leaks). */
	assert_int_equal(pb_milp_new(P, ex, NULL, &M, &err), PB_OK);
	assert_int_equal(pb_milp_step(M, 1, ac, &improved, &err), PB_OK);
	pb_milp_free(M);
	pb_part_problem_free(P);
}

static void test_emit_lp_glpsol(void **state)
{
	unsigned seed = 99;
	pb_part_problem *P = random_problem(&seed, 12, 4);
	char lp[64], out[64];
	snprintf(lp, sizeof lp, "/tmp/pb_milp_%d.lp", (int)getpid());
	snprintf(out, sizeof out, "/tmp/pb_milp_%d.out", (int)getpid());
	double mi, ex;
	pb_error err = {0};
	assert_int_equal(pb_milp_solve(P, lp, &mi, NULL, &err), PB_OK);
	assert_int_equal(pb_part_exact_solve(P, &ex, NULL, NULL, &err), PB_OK);
	assert_int_equal(access(lp, R_OK), 0);
	if (system("command -v glpsol >/dev/null 2>&1") != 0) {
		remove(lp);
		pb_part_problem_free(P);
		skip();
	}
	char cmd[256];
	snprintf(cmd, sizeof cmd, "glpsol --lp %s -o %s >/dev/null 2>&1", lp, out);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(out, "r");
	assert_non_null(f);
	char line[512];
	double obj = NAN;
	while (fgets(line, sizeof line, f)) {
		char *p = strstr(line, "Objective:");
		if (p && (p = strchr(p, '=')))
			obj = strtod(p + 1, NULL);
	}
	fclose(f);
	assert_true(isfinite(obj));
	double glpsol_opt = obj * P->lower_bound; /* objective is in lower-bound units */
	if (fabs(glpsol_opt - ex) > 1e-5 * ex)
		fail_msg("glpsol %.10g vs exact %.10g", glpsol_opt, ex);
	remove(lp);
	remove(out);
	pb_part_problem_free(P);
}

static void test_command_milp_rl(void **state)
{
	double macs[32];
	char edges[512] = "";
	for (int i = 0; i < 32; i++) {
		macs[i] = 1e6 * (1 + (i * 3) % 7);
		if (i) {
			char e[16];
			snprintf(e, sizeof e, "%d>%d ", i - 1, i);
			strcat(edges, e);
		}
	}
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, pb_test_chain_graph(32, macs, edges), "chain.test");
	int rc;
	char *o = pb_test_run_cmd(
	    s, "partition --layout layouts/manycore-16.lua --method milp --json", &rc);
	if (rc)
		fail_msg("%s", o);
	json_error_t je;
	json_t *j = json_loads(o, 0, &je);
	assert_non_null(j);
	double opt = json_number_value(json_object_get(j, "optimum"));
	assert_true(fabs(json_number_value(json_object_get(j, "max_time")) - opt) <= 1e-6 * opt);
	json_decref(j);
	free(o);
	o = pb_test_run_cmd(s, "partition --method rl --episodes 40 --seed 3 --json", &rc);
	if (rc)
		fail_msg("%s", o);
	j = json_loads(o, 0, &je);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "method")), "rl");
	assert_true(json_number_value(json_object_get(j, "gap")) >= -1e-9);
	json_decref(j);
	free(o);
	/* rl and milp attached to the session and stepped. */
	o = pb_test_run_cmd(s, "partition --method rl --episodes 10 --start", &rc);
	assert_int_equal(rc, PB_OK);
	free(o);
	for (int k = 0; k < 3; k++) {
		o = pb_test_run_cmd(s, "step -n 5", &rc);
		assert_int_equal(rc, PB_OK);
		free(o);
	}
	assert_string_equal(s->plan->kind, "partition");
	o = pb_test_run_cmd(s, "partition --method milp --start", &rc);
	assert_int_equal(rc, PB_OK);
	free(o);
	o = pb_test_run_cmd(s, "step -n 1", &rc);
	assert_int_equal(rc, PB_OK);
	free(o);
	/* Training writes a checkpoint that partition --agent reads. */
	char ck[64], line[256];
	snprintf(ck, sizeof ck, "/tmp/pb_cmd_%d.ckpt", (int)getpid());
	snprintf(line, sizeof line, "train --episodes 20 -o %s", ck);
	o = pb_test_run_cmd(s, line, &rc);
	if (rc)
		fail_msg("%s", o);
	free(o);
	snprintf(line, sizeof line, "partition --method rl --episodes 5 --agent %s", ck);
	o = pb_test_run_cmd(s, line, &rc);
	assert_int_equal(rc, PB_OK);
	free(o);
	snprintf(line, sizeof line,
	         "partition --layout layouts/manycore-64.lua --method rl --episodes 5 --agent %s",
	         ck);
	o = pb_test_run_cmd(s, line, &rc);
	assert_int_equal(rc, PB_EINPUT);
	assert_non_null(strstr(o, "trained for 16 cores"));
	free(o);
	remove(ck);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_milp_equals_exact),
	    cmocka_unit_test(test_milp_steps),
	    cmocka_unit_test(test_emit_lp_glpsol),
	    cmocka_unit_test(test_command_milp_rl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
