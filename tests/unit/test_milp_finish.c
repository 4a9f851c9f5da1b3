/* test_milp_finish.c — the partition MILP on long chains (chain_milp.c, white box):
 * the segment costs kept by end position (chain_milp_seg.c) equal pb_part_eval_group's
 * bit for bit on random DAGs with long skip edges, repeated edges and outputs nobody
 * reads; on random chains of 1000 to 2600 layers (4 to 64 cores, memory binding or not)
 * the probes' finish proves the exact DP's optimum with no MILP built (no columns, no
 * branch-and-bound node; before, these went through GLPK), and the work stays
 * near-linear: every probe evaluates at most 2 n m segments, the candidate list at most
 * 4 n m plus the candidates (the walk it replaced evaluated O(m^2) per probe). */
#include "pb_test.h"

#include "partition/milp/chain_milp.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/exact.h"
/* White box: the stage, the probes and the segment evaluator's count. */
#include "partition/milp/chain_milp.c"

/* A random chain of m layers: each fed by the one before; one in three also by a
 * random earlier layer (up to `span` back); one in 50 by none (a new input) and one
 * in 40 read twice by the same consumer. Integer byte counts, as a model's. */
static pb_part_problem *long_chain(unsigned *seed, int m, int n, int span, double mem_factor)
{
	double *macs = malloc((size_t)m * sizeof *macs), *par = malloc((size_t)m * sizeof *par),
	       *ob = malloc((size_t)m * sizeof *ob);
	int *from = malloc((size_t)3 * m * sizeof *from), *to = malloc((size_t)3 * m * sizeof *to);
	assert_non_null(macs);
	assert_non_null(par);
	assert_non_null(ob);
	assert_non_null(from);
	assert_non_null(to);
	int ne = 0;
	for (int i = 0; i < m; i++) {
		macs[i] = pb_test_rnd(seed) % 7 == 0 ? 0 : 1 + pb_test_rnd(seed) % 100000;
		par[i] = pb_test_rnd(seed) % 5000;
		ob[i] = 1 + pb_test_rnd(seed) % 2000;
		if (i > 0 && pb_test_rnd(seed) % 50 != 0) {
			from[ne] = i - 1;
			to[ne++] = i;
			if (pb_test_rnd(seed) % 40 == 0) {
				from[ne] = i - 1;
				to[ne++] = i;
			}
		}
		if (i > 1 && pb_test_rnd(seed) % 3 == 0) {
			int back = 2 + (int)(pb_test_rnd(seed) % (unsigned)span);
			from[ne] = i - back < 0 ? 0 : i - back;
			to[ne++] = i;
		}
	}
	pb_manycore h = pb_test_chip("finish", n, 1e6, 1e12, 1e6, 0);
	pb_part_problem *P = NULL;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, &h, &P, &err),
	                 PB_OK);
	if (mem_factor > 0)
		P->hw.memory = P->pstore[m] / n * mem_factor;
	free(macs);
	free(par);
	free(ob);
	free(from);
	free(to);
	return P;
}

static void test_segment_costs_bit_exact(void **state)
{
	(void)state;
	unsigned seed = 4242;
	for (int trial = 0; trial < 20; trial++) {
		int m = 5 + (int)(pb_test_rnd(&seed) % 300), span = 1 + trial * 7;
		pb_part_problem *P = long_chain(&seed, m, 8, span, 0);
		pb_milp_seg S;
		assert_int_equal(pb_milp_seg_init(&S, P), PB_OK);
		for (int b = 1; b <= m; b++) {
			pb_milp_seg_advance(&S);
			for (int k = 0; k < 12; k++) {
				int a = (int)(pb_test_rnd(&seed) % (unsigned)b);
				pb_milp_seg_cost C;
				pb_part_group g;
				pb_milp_seg_cost_of(&S, a, &C);
				pb_part_eval_group(P, a, b, 1, &g);
				if (C.macs != g.macs || C.routing != g.routing ||
				    C.storage != g.storage)
					fail_msg("trial %d [%d, %d): macs %.17g/%.17g routing "
					         "%.17g/%.17g "
					         "storage %.17g/%.17g",
					         trial, a, b, C.macs, g.macs, C.routing, g.routing,
					         C.storage, g.storage);
			}
		}
		pb_milp_seg_free(&S);
		pb_part_problem_free(P);
	}
}

static void test_long_chains_proved_without_milp(void **state)
{
	(void)state;
	unsigned seed = 9090;
	const int cores[] = {4, 16, 64};
	for (int trial = 0; trial < 6; trial++) {
		int m = 1000 + (int)(pb_test_rnd(&seed) % 1600), n = cores[trial % 3];
		pb_part_problem *P = long_chain(&seed, m, n, 3 + trial * 5, trial % 2 ? 1.3 : 0);
		double ex;
		int feasible;
		pb_error err = {0};
		assert_int_equal(pb_part_exact_solve(P, &ex, NULL, &feasible, &err), PB_OK);
		pb_milp *M;
		assert_int_equal(pb_milp_new_opts(P, NULL, NULL, &M, &err), PB_OK);
		int *ac = malloc((size_t)n * sizeof *ac), improved;
		assert_non_null(ac);
		while (!pb_milp_done(M))
			assert_int_equal(pb_milp_step(M, 4, ac, &improved, &err), PB_OK);
		pb_milp_stats st;
		pb_milp_stats_get(M, &st);
		assert_int_equal(st.state, PB_MILP_OPTIMAL);
		if (fabs(st.incumbent - ex) > 1e-9 * ex)
			fail_msg("trial %d (m=%d n=%d): milp %.12g exact %.12g", trial, m, n,
			         st.incumbent, ex);
		assert_true(st.bound == st.incumbent);
		assert_int_equal(st.memory_used, feasible);
		/* no MILP: the probes proved it */
		assert_int_equal(st.columns, 0);
		assert_int_equal(st.nodes, 0);
		/* the plan is the incumbent */
		const int *inc = pb_milp_incumbent_state(M);
		assert_non_null(inc);
		assert_true(pb_part_state_valid(P, inc, &err));
		pb_part_eval ev;
		pb_part_evaluate(P, inc, &ev, NULL);
		assert_true(fabs(ev.max_time - ex) <= 1e-9 * ex);
		/* near-linear work (see the header) */
		long per_pass = 3L * n * m;
		if (M->seg.evals > (st.probes + 1) * per_pass + M->n_cand)
			fail_msg("trial %d (m=%d n=%d): %ld segment evaluations for %ld probes",
			         trial, m, n, M->seg.evals, st.probes);
		free(ac);
		pb_milp_free(M);
		pb_part_problem_free(P);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_segment_costs_bit_exact),
	                                   cmocka_unit_test(test_long_chains_proved_without_milp)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
