/* test_milp_job.c — the partition MILP as a workbench job (chain_milp.c white box,
 * chain_milp_root.c): on bert_base_like x manycore-16 the job (25 ms slices, its root LP
 * in a child process) proves the same optimum as the direct solve, and its root LP did
 * come from the child; a cancel inside the root LP (the child running) ends the job
 * with the child killed and reaped; a cancel while probing ends it at once; a cancel
 * read while GLPK's branch and bound had yielded for the job's slice (inside a node's
 * LP or at a callback) ends it before GLPK reaches another node. */
#include "pb_test.h"

#include <errno.h>
#include <signal.h>
#include <sys/types.h>

#include "hw.h"
#include "load.h"
#include "model/graph.h"
#include "partition/milp/chain_milp.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/manycore.h"
#include "util/job.h"
#include "gpt_fixture.h"
/* White box: the stage and the root LP's child. */
#include "partition/milp/chain_milp.c"

typedef struct run {
	pb_part_problem *P;
	pb_milp *M; /* while the body runs */
	double optimum;
	long nodes;
	int state, child, rc;
} run;

static void body(void *arg)
{
	run *r = arg;
	pb_error err = {0};
	int ac[64], improved;
	r->rc = pb_milp_new_opts(r->P, NULL, NULL, &r->M, &err);
	while (r->rc == PB_OK && !pb_milp_done(r->M)) {
		r->rc = pb_milp_step(r->M, 1, ac, &improved, &err);
		pb_job_tick();
		if (pb_job_cancelled())
			break;
	}
	if (r->M) {
		r->optimum = r->M->U;
		r->state = r->M->state;
		r->child = r->M->child;
		r->nodes = r->M->nodes;
	}
	pb_milp_free(r->M);
	r->M = NULL;
}

static pb_part_problem *load_problem(pb_graph **g, pb_hw **hw)
{
	pb_error err = {0};
	pb_manycore mc;
	pb_part_problem *P;
	assert_int_equal(pb_hw_load("layouts/manycore-16.lua", hw, &err), PB_OK);
	assert_int_equal(pb_manycore_parse(*hw, &mc, &err), PB_OK);
	assert_int_equal(pb_graph_load("models/bert_base_like.onnx", NULL, g, &err), PB_OK);
	assert_int_equal(pb_part_problem_new(*g, &mc, &P, &err), PB_OK);
	return P;
}

static void test_job_same_optimum(void **state)
{
	(void)state;
	pb_graph *g;
	pb_hw *hw;
	pb_part_problem *P = load_problem(&g, &hw);
	pb_error err = {0};
	double direct;
	assert_int_equal(pb_milp_solve(P, NULL, &direct, NULL, &err), PB_OK);
	run r = {.P = P};
	pb_job *j = pb_job_new(body, &r);
	while (!pb_job_resume(j, 0.025))
		;
	pb_job_free(j);
	assert_int_equal(r.rc, PB_OK);
	assert_int_equal(r.state, PB_MILP_OPTIMAL);
	assert_int_equal(r.child, 2); /* the root LP's basis came from the child */
	assert_true(fabs(r.optimum - direct) <= 1e-12 * direct);
	pb_part_problem_free(P);
	pb_graph_free(g);
	pb_hw_free(hw);
}

static void test_cancel_in_root_lp(void **state)
{
	(void)state;
	pb_graph *g;
	pb_hw *hw;
	pb_part_problem *P = load_problem(&g, &hw);
	run r = {.P = P};
	pb_job *j = pb_job_new(body, &r);
	int done = 0, pid = 0;
	while (!done && !pid) {
		done = pb_job_resume(j, 0.001); /* short slices: catch the child running */
		if (r.M && r.M->stage == ST_ROOT && r.M->child == 1)
			pid = r.M->root.pid;
	}
	assert_false(done);
	assert_true(pid > 0);
	assert_int_equal(kill((pid_t)pid, 0), 0); /* running */
	pb_job_cancel(j);
	while (!pb_job_resume(j, 0.025))
		;
	pb_job_free(j);
	assert_int_equal(r.child, 1);              /* cancelled while it ran */
	assert_int_equal(kill((pid_t)pid, 0), -1); /* killed and reaped */
	assert_int_equal(errno, ESRCH);
	pb_part_problem_free(P);
	pb_graph_free(g);
	pb_hw_free(hw);
}

static void test_cancel_while_probing(void **state)
{
	(void)state;
	pb_graph *g;
	pb_hw *hw;
	pb_part_problem *P = load_problem(&g, &hw);
	run r = {.P = P};
	pb_job *j = pb_job_new(body, &r);
	int done = 0;
	while (!done && !(r.M && r.M->stage == ST_PROBE && r.M->probes >= 1))
		done = pb_job_resume(j, 0.0005);
	assert_false(done);
	long probes = r.M->probes;
	pb_job_cancel(j);
	int resumes = 0;
	while (!pb_job_resume(j, 0.001))
		resumes++;
	pb_job_free(j);
	/* the body ended at once (a probe run to its end takes ~10 slices of 1 ms here) */
	assert_true(resumes <= 1);
	assert_int_equal(r.rc, PB_OK);
	assert_true(probes >= 1);
	pb_part_problem_free(P);
	pb_graph_free(g);
	pb_hw_free(hw);
}

/* One solve of gpt16 x manycore-16 (5 nodes) cancelled at the `k`-th time the job
 * was suspended inside branch and bound with GLPK mid-node (M->paused == 1: a hook
 * or callback yield for the slice). Returns 0 when the solve ended first. Before the
 * fix the step resumed GLPK after the cancel was read: it ran the node's LP, its
 * branching choice (230 ms on gpt34 x manycore-64) and the next node selection. */
static int cancel_in_bb(pb_part_problem *P, int k)
{
	run r = {.P = P};
	pb_job *j = pb_job_new(body, &r);
	int done = 0, seen = 0;
	while (!done) {
		done = pb_job_resume(j, 0.0002);
		if (!done && r.M && r.M->stage == ST_BB && r.M->paused == 1 && seen++ == k)
			break;
	}
	if (done) {
		pb_job_free(j);
		return 0;
	}
	long nodes = r.M->nodes;
	pb_job_cancel(j);
	while (!pb_job_resume(j, 0.025))
		;
	pb_job_free(j);
	assert_int_equal(r.rc, PB_OK);
	assert_int_equal(r.state, PB_MILP_RUNNING); /* not proved: stopped */
	assert_int_equal(r.nodes, nodes);           /* GLPK was not resumed for its search */
	return 1;
}

static void test_cancel_in_branch_and_bound(void **state)
{
	(void)state;
	pb_hw *hw;
	pb_manycore mc;
	pb_part_problem *P;
	pb_error err = {0};
	pb_graph *g = pb_test_gpt(16, 256, 4, 128, 1000, 1);
	assert_int_equal(pb_hw_load("layouts/manycore-16.lua", &hw, &err), PB_OK);
	assert_int_equal(pb_manycore_parse(hw, &mc, &err), PB_OK);
	assert_int_equal(pb_part_problem_new(g, &mc, &P, &err), PB_OK);
	int tested = 0;
	for (int k = 0; k < 3; k++)
		tested += cancel_in_bb(P, 4 * k);
	assert_true(tested >= 1);
	pb_part_problem_free(P);
	pb_graph_free(g);
	pb_hw_free(hw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_job_same_optimum),
	    cmocka_unit_test(test_cancel_in_root_lp),
	    cmocka_unit_test(test_cancel_while_probing),
	    cmocka_unit_test(test_cancel_in_branch_and_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
