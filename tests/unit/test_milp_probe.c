/* test_milp_probe.c — the partition MILP's probe (chain_milp.c, white box): for a
 * threshold θ the fewest cores over the probe's arcs found by the shortest-path pass
 * equal the optimum GLPK finds for the same arcs posed as the 0/1 program (flow rows,
 * one binary per arc, cost = its cores), on random chains with and without a binding
 * memory, for θ unbounded, below the first feasible value and in between; the path
 * handed to install() covers the chain with groups that run within θ on their cores. */
#include "pb_test.h"

#include <glpk.h>

#include "partition/milp/chain_milp.h"
#include "partition/chain/chain_problem.h"
/* White box: probe_build, probe_path and the arcs. */
#include "partition/milp/chain_milp.c"

/* GLPK's optimum of the probe's arcs as a 0/1 shortest-path program; INT_MAX when
 * no path exists. */
static int glpk_probe(const pb_milp *M)
{
	const int m = M->P->m;
	if (M->n_arcs == 0)
		return INT_MAX;
	glp_prob *lp = glp_create_prob();
	glp_set_obj_dir(lp, GLP_MIN);
	glp_add_rows(lp, m + 1);
	for (int p = 0; p <= m; p++) {
		double rhs = p == 0 ? -1.0 : p == m ? 1.0 : 0.0;
		glp_set_row_bnds(lp, p + 1, GLP_FX, rhs, rhs);
	}
	glp_add_cols(lp, M->n_arcs);
	for (int j = 0; j < M->n_arcs; j++) {
		int ind[3] = {0, M->arc_a[j] + 1, M->arc_b[j] + 1};
		double val[3] = {0, -1.0, 1.0};
		glp_set_col_kind(lp, j + 1, GLP_BV);
		glp_set_obj_coef(lp, j + 1, M->arc_c[j]);
		glp_set_mat_col(lp, j + 1, 2, ind, val);
	}
	glp_iocp ip;
	glp_init_iocp(&ip);
	ip.msg_lev = GLP_MSG_OFF;
	ip.presolve = GLP_ON;
	int r = glp_intopt(lp, &ip), best = INT_MAX;
	if (r == 0 && glp_mip_status(lp) == GLP_OPT)
		best = (int)lround(glp_mip_obj_val(lp));
	glp_delete_prob(lp);
	return best;
}

/* Probes θ both ways; checks the path when it is within the cores. */
static void check_theta(pb_milp *M, double theta, int trial)
{
	pb_part_problem *P = M->P;
	pb_error err = {0};
	assert_int_equal(probe_build(M, theta, &err), PB_OK);
	int ng = 0, dp = M->n_arcs ? probe_path(M, &ng) : INT_MAX, lp = glpk_probe(M);
	if (dp != lp)
		fail_msg("trial %d theta %.9g (m=%d n=%d, %d arcs): shortest path %d, GLPK %d",
		         trial, theta, P->m, P->n, M->n_arcs, dp, lp);
	if (dp > P->n)
		return;
	int cores = 0, layers = 0;
	for (int g = 0; g < ng; g++) {
		pb_part_group gr;
		pb_part_eval_group(P, layers, layers + M->g_layers[g], M->g_cores[g], &gr);
		assert_true(gr.time <= theta * (1 + 1e-12));
		cores += M->g_cores[g];
		layers += M->g_layers[g];
	}
	assert_int_equal(cores, dp);
	assert_int_equal(layers, P->m);
}

static void test_probe_equals_glpk(void **state)
{
	(void)state;
	unsigned seed = 1717;
	int feasible = 0, infeasible = 0;
	for (int trial = 0; trial < 300; trial++) {
		int m = 2 + (int)(pb_test_rnd(&seed) % 40), n = 1 + (int)(pb_test_rnd(&seed) % 8);
		pb_manycore h = pb_test_chip("probe", n, 1e3, 1e12, 1000, 0);
		pb_part_problem *P = pb_test_random_problem(&seed, m, &h, trial % 4 == 0);
		if (trial % 2)
			P->hw.memory = P->pstore[m] / n * (0.4 + 0.3 * (trial % 5));
		pb_milp *M;
		pb_error err = {0};
		assert_int_equal(pb_milp_new_opts(P, NULL, NULL, &M, &err), PB_OK);
		check_theta(M, INFINITY, trial);
		/* between the proven bound and the first incumbent, and just below L0 */
		double lo = M->L, hi = M->U;
		for (int k = 0; k <= 4; k++) {
			double theta = lo * 0.999 + (hi - lo * 0.999) * k / 4.0;
			check_theta(M, theta, trial);
			if (M->n_arcs && probe_path(M, &(int){0}) <= n)
				feasible++;
			else
				infeasible++;
		}
		pb_milp_free(M);
		pb_part_problem_free(P);
	}
	/* the thresholds cover both outcomes */
	assert_true(feasible > 100);
	assert_true(infeasible > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_probe_equals_glpk)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
