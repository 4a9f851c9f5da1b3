/*
 * test_mesh_stop.c — the placement searches stop when asked
 * (pb_mesh_cost.stop, docs/mesh.md "Cancelling"): counts, never times.
 * The local search asks before its first move and then every
 * PB_MESH_STOP_EVERY evaluations, so a stop said at the k-th question ends
 * it after exactly 1 + (k - 1) PB_MESH_STOP_EVERY evaluations, with a valid
 * placement and no claim of a local optimum; the enumeration stopped at
 * once keeps the caller's placement and claims nothing; the MILP asked at
 * its start returns the start with no bound, and stopped at GLPK's first
 * callback it does not call its placement proved (the same case unstopped
 * is proved, so the flag is what changed the answer).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pb_test.h"
#include "partition/mesh/mesh_cost.h"
#include "partition/mesh/mesh_milp.h"
#include "partition/mesh/mesh_place.h"
#include "partition/mesh/mesh_search.h"

typedef struct asker {
	int calls, stop_at; /* says stop from its stop_at-th call on (0: never) */
} asker;

static int ask(void *ud)
{
	asker *a = ud;
	a->calls++;
	return a->stop_at > 0 && a->calls >= a->stop_at;
}

static pb_manycore mesh_chip(int rows, int cols)
{
	pb_manycore h = pb_test_chip("mesh", rows * cols, 1e12, 1e12, 1e10, 100);
	h.mesh_rows = rows;
	h.mesh_cols = cols;
	h.mesh_routed = 1;
	h.mac_rate = 1e3;
	h.bandwidth = 1e4;
	h.link_bw = 150;
	h.hop_s = 1e-3;
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

/* G groups of a random 30-layer chain on a rows x cols mesh, on the snake. */
static pb_part_problem *setup(unsigned seed, int rows, int cols, int G, pb_mesh_cost *C, int *snake)
{
	pb_manycore h = mesh_chip(rows, cols);
	pb_part_problem *P = pb_test_random_problem(&seed, 30, &h, 0);
	int n = rows * cols, cores[16], layers[16], ac[64] = {0};
	for (int q = 0; q < G; q++) {
		cores[q] = n / G + (q < n % G);
		layers[q] = 30 / G + (q < 30 % G);
	}
	pb_part_state_from_groups(G, cores, layers, ac);
	pb_error err = {0};
	assert_int_equal(pb_mesh_cost_init(C, P, ac, &err), 0);
	pb_mesh_place_snake(C->n_groups, C->gsize, C->order, snake);
	return P;
}

static void test_local_stops(void **state)
{
	(void)state;
	pb_mesh_cost C;
	int snake[64], own[64];
	pb_part_problem *P = setup(7, 6, 6, 6, &C, snake);
	pb_error err = {0};
	pb_mesh_eval ev;
	pb_mesh_search_stats st;
	/* unstopped: the search has work to do (more than 3 questions' worth) */
	memcpy(own, snake, sizeof own);
	assert_int_equal(pb_mesh_search_local(&C, own, 1000000, &ev, &st, &err), 0);
	long full = st.evals;
	assert_true(full > 1 + 3 * PB_MESH_STOP_EVERY);
	assert_true(st.local_optimum && !C.stopped);
	for (int k = 1; k <= 3; k++) {
		asker a = {0, k};
		C.stop = ask;
		C.stop_ud = &a;
		C.stopped = 0;
		memcpy(own, snake, sizeof own);
		assert_int_equal(pb_mesh_search_local(&C, own, 1000000, &ev, &st, &err), 0);
		assert_true(C.stopped);
		assert_int_equal(a.calls, k);
		assert_int_equal(st.evals, 1 + (k - 1) * PB_MESH_STOP_EVERY);
		assert_false(st.local_optimum);
		check_valid(&C, own);
		pb_mesh_eval again;
		pb_mesh_cost_eval(&C, own, &again);
		assert_true(again.objective == ev.objective);
		if (k == 1)
			assert_memory_equal(own, snake, (size_t)C.n * sizeof *own);
	}
	pb_mesh_cost_free(&C);
	pb_part_problem_free(P);
}

static void test_enumerate_stops(void **state)
{
	(void)state;
	pb_mesh_cost C;
	int snake[64], own[64];
	pb_part_problem *P = setup(9, 3, 3, 3, &C, snake);
	asker a = {0, 1};
	C.stop = ask;
	C.stop_ud = &a;
	memcpy(own, snake, sizeof own);
	pb_error err = {0};
	pb_mesh_eval ev;
	long evals = -1;
	assert_int_equal(pb_mesh_search_enumerate(&C, own, &ev, &evals, &err), 0);
	assert_true(C.stopped);
	assert_int_equal(evals, 0);
	assert_memory_equal(own, snake, (size_t)C.n * sizeof *own);
	pb_mesh_cost_free(&C);
	pb_part_problem_free(P);
}

static void test_milp_stops(void **state)
{
	(void)state;
	pb_mesh_cost C;
	int snake[64], own[64];
	pb_part_problem *P = setup(11, 3, 3, 3, &C, snake);
	pb_error err = {0};
	pb_mesh_eval ev;
	pb_mesh_milp_stats st;
	/* unstopped: proved */
	memcpy(own, snake, sizeof own);
	assert_int_equal(pb_mesh_milp_place(&C, own, 600, &ev, &st, &err), 0);
	assert_true(st.proved);
	/* asked at its start: the start, no bound, no node */
	asker a = {0, 1};
	C.stop = ask;
	C.stop_ud = &a;
	memcpy(own, snake, sizeof own);
	assert_int_equal(pb_mesh_milp_place(&C, own, 600, &ev, &st, &err), 0);
	assert_true(C.stopped && !st.proved && st.nodes == 0 && isnan(st.bound));
	assert_int_equal(a.calls, 1);
	assert_memory_equal(own, snake, (size_t)C.n * sizeof *own);
	/* at GLPK's first callback: terminated there, not proved */
	asker b = {0, 2};
	C.stop_ud = &b;
	C.stopped = 0;
	memcpy(own, snake, sizeof own);
	assert_int_equal(pb_mesh_milp_place(&C, own, 600, &ev, &st, &err), 0);
	assert_true(C.stopped && !st.proved);
	assert_int_equal(b.calls, 2);
	assert_true(st.nodes <= 1);
	check_valid(&C, own);
	pb_mesh_cost_free(&C);
	pb_part_problem_free(P);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_local_stops),
	    cmocka_unit_test(test_enumerate_stops),
	    cmocka_unit_test(test_milp_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
