/* test_greedy_zero_macs.c — the greedy baseline on a model without MACs
 * (chains of Add -> Relu): all time is routing, and greedy must balance it
 * (it used to balance the MACs, so every cut point tied and the first group
 * took all but k-1 layers). */
#include "pb_test.h"

#include "partition/chain/baselines.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/exact.h"

static void check_chains(int chains, int cores)
{
	int m = 2 * chains;
	double *macs = calloc((size_t)m, sizeof *macs), *par = calloc((size_t)m, sizeof *par),
	       *ob = malloc((size_t)m * sizeof *ob);
	int *from = malloc((size_t)m * sizeof *from), *to = malloc((size_t)m * sizeof *to), ne = 0;
	for (int c = 0; c < chains; c++) {
		ob[2 * c] = ob[2 * c + 1] = 128; /* 1x32 float */
		from[ne] = 2 * c;
		to[ne++] = 2 * c + 1;
	}
	pb_manycore h = pb_test_chip("zero", cores, 1e12, 1e12, 1e9, 100);
	pb_part_problem *P = NULL;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(m, macs, par, ob, ne, from, to, &h, &P, &err),
	                 PB_OK);
	assert_true(P->total_macs == 0);
	int *gr = malloc((size_t)cores * sizeof *gr);
	pb_part_greedy(P, gr);
	assert_true(pb_part_state_valid(P, gr, &err));
	pb_part_eval ev;
	pb_part_evaluate(P, gr, &ev, NULL);
	double opt;
	assert_int_equal(pb_part_exact_solve(P, &opt, NULL, NULL, &err), PB_OK);
	assert_true(opt > 0);
	/* No group holds more than twice its share of the layers. */
	int most = 0;
	for (int i = 0; i < cores; i++)
		most = gr[i] > most ? gr[i] : most;
	print_message("%d layers on %d cores: greedy %.4g s (largest group %d layers), exact %.4g "
	              "s\n",
	              m, cores, ev.max_time, most, opt);
	assert_true(most <= 2 * (m + cores - 1) / cores);
	assert_true(ev.max_time <= 1.25 * opt);
	free(gr);
	pb_part_problem_free(P);
	free(macs);
	free(par);
	free(ob);
	free(from);
	free(to);
}

static void test_greedy_balances_time_without_macs(void **state)
{
	(void)state;
	check_chains(150, 16);
	check_chains(40, 7);
	check_chains(3, 8); /* fewer layers than cores */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_greedy_balances_time_without_macs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
