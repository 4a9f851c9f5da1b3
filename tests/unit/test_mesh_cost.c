/*
 * test_mesh_cost.c — routed 2-D mesh placement (docs/mesh.md):
 * routes and the cost model against hand-computed link loads and times,
 * the local search against enumeration on 3x3 meshes, every method's
 * placed plan valid, layouts without a routed mesh unchanged (an old plan
 * prices as it did), and the layout errors.
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
#include "partition/mesh/mesh_place.h"
#include "partition/mesh/mesh_plan.h"
#include "partition/mesh/mesh_search.h"
#include "partition/methods/partition.h"

/* |a - b| <= tol, with both values in the failure message. */
#define assert_double_equal(a, b, tol)                                                             \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		if (!(fabs(a_ - b_) <= (tol)))                                                     \
			fail_msg("%s = %.12g, expected %.12g", #a, a_, b_);                        \
	} while (0)

static pb_manycore mesh_chip(int rows, int cols)
{
	pb_manycore h = pb_test_chip("mesh", rows * cols, 1e12, 1e12, 1e10, 100);
	h.mesh_rows = rows;
	h.mesh_cols = cols;
	h.mesh_routed = 1;
	h.link_bw = 1e9;
	h.hop_s = 1e-6;
	return h;
}

static void test_routes(void **state)
{
	(void)state;
	pb_mesh_grid g = {2, 3, 0};
	int l[8];
	/* (0,0) -> (1,2): XY east, east, south */
	assert_int_equal(pb_mesh_route_links(&g, 0, 5, l), 3);
	assert_int_equal(l[0], 0 * 4 + PB_MESH_E);
	assert_int_equal(l[1], 1 * 4 + PB_MESH_E);
	assert_int_equal(l[2], 2 * 4 + PB_MESH_S);
	g.yx = 1; /* YX: south, east, east */
	assert_int_equal(pb_mesh_route_links(&g, 0, 5, l), 3);
	assert_int_equal(l[0], 0 * 4 + PB_MESH_S);
	assert_int_equal(l[1], 3 * 4 + PB_MESH_E);
	assert_int_equal(l[2], 4 * 4 + PB_MESH_E);
	/* back from (1,2) to (0,0), YX: north then west, west */
	assert_int_equal(pb_mesh_route_links(&g, 5, 0, l), 3);
	assert_int_equal(l[0], 5 * 4 + PB_MESH_N);
	assert_int_equal(l[1], 2 * 4 + PB_MESH_W);
	assert_int_equal(l[2], 1 * 4 + PB_MESH_W);
	int from, to;
	pb_mesh_route_ends(&g, 2 * 4 + PB_MESH_W, &from, &to);
	assert_int_equal(from, 2);
	assert_int_equal(to, 1);
	/* the snake from each corner */
	int o[6];
	pb_mesh_place_snake_order(&g, 0, 0, o);
	int want00[6] = {0, 1, 2, 5, 4, 3};
	assert_memory_equal(o, want00, sizeof o);
	pb_mesh_place_snake_order(&g, 1, 2, o);
	int want12[6] = {5, 4, 3, 0, 1, 2};
	assert_memory_equal(o, want12, sizeof o);
}

/* Layers 0 -> 1 -> 2 and 0 -> 2; MACs 1, 2, 4 G; outputs 1 MB, 2 MB. */
static pb_part_problem *skip_problem(const pb_manycore *h)
{
	double macs[3] = {1e9, 2e9, 4e9}, par[3] = {0, 0, 0}, ob[3] = {1e6, 2e6, 0};
	int from[3] = {0, 1, 0}, to[3] = {1, 2, 2};
	pb_part_problem *P = NULL;
	pb_error err = {0};
	assert_int_equal(pb_part_problem_synthetic(3, macs, par, ob, 3, from, to, h, &P, &err), 0);
	return P;
}

/* 2x2 mesh, groups of 1, 1 and 2 cores on the snake (0,0) (0,1) | (1,1)
 * (1,0): hand-computed loads and times (mesh_cost.h's formula). */
static void test_cost_2x2(void **state)
{
	(void)state;
	pb_manycore h = mesh_chip(2, 2);
	pb_part_problem *P = skip_problem(&h);
	int ac[4] = {1, 1, 0, 1};
	pb_mesh_cost C;
	pb_error err = {0};
	assert_int_equal(pb_mesh_cost_init(&C, P, ac, &err), 0);
	int owner[4];
	pb_mesh_place_snake(C.n_groups, C.gsize, C.order, owner);
	int want[4] = {0, 1, 2, 2};
	assert_memory_equal(owner, want, sizeof owner);
	pb_mesh_eval ev;
	pb_mesh_cost_eval(&C, owner, &ev);
	/* 0->1: core 0 east (1 MB); 0->2: nearest pair core 0 -> core 2, south
	 * (1 MB); 1->2: core 1 -> core 3, south (2 MB) */
	for (int l = 0; l < 16; l++) {
		double w = l == 0 * 4 + PB_MESH_E   ? 1e6
		           : l == 0 * 4 + PB_MESH_S ? 1e6
		           : l == 1 * 4 + PB_MESH_S ? 2e6
		                                    : 0;
		assert_double_equal(C.load[l], w, 1e-6);
	}
	assert_double_equal(ev.hop_bytes, 4e6, 1e-6);
	/* g0: 1 ms of compute; g1: 2 ms + max(0.1 ms port, 1 ms link) + 1 us;
	 * g2: 4 G / 2 cores = 2 ms + max(0.3 ms, 2 ms on link 1S) + 1 us */
	assert_double_equal(C.g[0].time, 1e-3, 1e-12);
	assert_double_equal(C.g[1].time, 3.001e-3, 1e-12);
	assert_double_equal(C.g[2].time, 4.001e-3, 1e-12);
	assert_double_equal(ev.max_time, 4.001e-3, 1e-12);
	assert_int_equal(ev.bottleneck, 2);
	assert_int_equal(ev.hot_link, 1 * 4 + PB_MESH_S);
	assert_double_equal(ev.link_share, 2.001 / 4.001, 1e-9);
	/* the 1-D time of each group is below its placed time */
	pb_part_eval e1;
	pb_part_evaluate(P, ac, &e1, NULL);
	assert_true(e1.max_time <= ev.max_time);
	assert_double_equal(e1.max_time, 2e-3 + 0.3e-3, 1e-12);
	pb_mesh_cost_free(&C);
	pb_part_problem_free(P);
}

/* 1x3 mesh, one core per group: the skip 0->2 and 1->2 share link 1E. */
static void test_cost_shared_link(void **state)
{
	(void)state;
	pb_manycore h = mesh_chip(1, 3);
	pb_part_problem *P = skip_problem(&h);
	int ac[3] = {1, 1, 1};
	pb_mesh_cost C;
	pb_error err = {0};
	assert_int_equal(pb_mesh_cost_init(&C, P, ac, &err), 0);
	int owner[3] = {0, 1, 2};
	pb_mesh_eval ev;
	pb_mesh_cost_eval(&C, owner, &ev);
	assert_double_equal(C.load[0 * 4 + PB_MESH_E], 2e6, 1e-6); /* 0->1 and 0->2 */
	assert_double_equal(C.load[1 * 4 + PB_MESH_E], 3e6, 1e-6); /* 0->2 and 1->2 */
	assert_double_equal(ev.hop_bytes, 1e6 + 2e6 + 2e6, 1e-6);
	assert_double_equal(C.g[1].time, 2e-3 + 2e-3 + 1e-6, 1e-12);
	assert_double_equal(C.g[2].time, 4e-3 + 3e-3 + 2e-6, 1e-12);
	/* YX on one row routes the same */
	P->hw.routing_yx = 1;
	pb_mesh_cost_free(&C);
	assert_int_equal(pb_mesh_cost_init(&C, P, ac, &err), 0);
	pb_mesh_eval ev2;
	pb_mesh_cost_eval(&C, owner, &ev2);
	assert_double_equal(ev2.max_time, ev.max_time, 1e-15);
	/* reversed order: group 2 in the middle, 0->1 crosses it (2 hops) */
	int rev[3] = {0, 2, 1};
	pb_mesh_cost_eval(&C, rev, &ev2);
	assert_double_equal(C.load[0 * 4 + PB_MESH_E], 2e6, 1e-6); /* 0->1, 0->2 */
	assert_double_equal(C.load[1 * 4 + PB_MESH_E], 1e6, 1e-6); /* 0->1 */
	assert_double_equal(C.load[2 * 4 + PB_MESH_W], 2e6, 1e-6); /* 1->2 */
	assert_double_equal(C.g[1].time, 2e-3 + 2e-3 + 2e-6, 1e-12);
	assert_double_equal(C.g[2].time, 4e-3 + 2e-3 + 1e-6, 1e-12);
	pb_mesh_cost_free(&C);
	pb_part_problem_free(P);
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

/* Random chains on 3x3 meshes: enumeration is at least as good as the snake
 * and the local search; the local search is at least as good as the snake. */
static void test_search_vs_enumeration(void **state)
{
	(void)state;
	unsigned seed = 41;
	int local_hits = 0;
	for (int t = 0; t < 12; t++) {
		pb_manycore h = mesh_chip(3, 3);
		h.mac_rate = 1e3;
		h.bandwidth = 1e4;
		h.link_bw = 200 + 50 * t;
		h.hop_s = 1e-3;
		h.routing_yx = t % 2;
		pb_part_problem *P = pb_test_random_problem(&seed, 12, &h, 0);
		/* 3 or 4 groups: 3^9 or 4^9 assignments */
		int G = 3 + t % 2, ac[9] = {0};
		int cores[4] = {2, 3, 2, 2}, layers[4] = {3, 3, 3, 3};
		if (G == 3) {
			cores[0] = 3, cores[1] = 3, cores[2] = 3;
			layers[0] = 4, layers[1] = 4, layers[2] = 4;
		}
		pb_part_state_from_groups(G, cores, layers, ac);
		pb_mesh_cost C;
		pb_error err = {0};
		assert_int_equal(pb_mesh_cost_init(&C, P, ac, &err), 0);
		int snake[9], loc[9], best[9];
		pb_mesh_place_snake(C.n_groups, C.gsize, C.order, snake);
		check_valid(&C, snake);
		pb_mesh_eval es, el, ee;
		pb_mesh_cost_eval(&C, snake, &es);
		memcpy(loc, snake, sizeof loc);
		pb_mesh_search_stats st;
		assert_int_equal(pb_mesh_search_local(&C, loc, 100000, &el, &st, &err), 0);
		assert_true(st.local_optimum);
		check_valid(&C, loc);
		long evals;
		assert_int_equal(pb_mesh_search_enumerate(&C, best, &ee, &evals, &err), 0);
		check_valid(&C, best);
		assert_true(el.objective <= es.objective);
		assert_true(ee.objective <= el.objective * (1 + 1e-12));
		local_hits += el.objective <= ee.objective * (1 + 1e-12);
		/* the evaluation the search returns is the placement's */
		pb_mesh_eval again;
		pb_mesh_cost_eval(&C, loc, &again);
		assert_double_equal(again.objective, el.objective, 1e-15);
		pb_mesh_cost_free(&C);
		pb_part_problem_free(P);
	}
	print_message("local search reached the enumerated optimum on %d of 12\n", local_hits);
}

/* Every method's plan on a routed mesh is a valid placed plan, and the
 * placement search keeps it valid and no worse. */
static void test_methods_placed(void **state)
{
	(void)state;
	pb_graph *g = pb_test_load_model("squeezenet1_1.onnx");
	pb_hw *hw = NULL;
	pb_error err = {0};
	assert_int_equal(pb_hw_load("layouts/manycore-16-mesh.lua", &hw, &err), 0);
	const char *methods[] = {"exact", "greedy", "equal", "local", "pack", "rl"};
	for (size_t k = 0; k < sizeof methods / sizeof *methods; k++) {
		pb_part_opts o = {0};
		o.method = methods[k];
		o.episodes = 20;
		o.agent = "none";
		o.seed = 3;
		pb_solver *sv;
		if (pb_partition_solver_new(g, hw, &o, &sv, &err))
			fail_msg("%s: %s", methods[k], err.msg);
		pb_solver_progress p = {0};
		while (!p.done)
			assert_int_equal(pb_solver_step(sv, 1000, &p, &err), 0);
		pb_part_problem *P = pb_partition_solver_problem(sv);
		const pb_plan *plan = pb_solver_incumbent(sv);
		int owner[16], sizes[16];
		assert_true(pb_mesh_plan_owner(plan, 16, owner));
		for (int i = 0; i < plan->n_groups; i++)
			sizes[i] = plan->groups[i].n_units;
		pb_mesh_grid grid;
		pb_mesh_cost_grid(P, &grid);
		assert_int_equal(pb_mesh_place_check(&grid, plan->n_groups, sizes, owner, &err), 0);
		assert_true(isnan(pb_plan_metric(plan, "optimum", NAN)));
		pb_plan *placed;
		pb_mesh_place_report rep;
		pb_mesh_place_opts po = {.how = "local", .max_evals = 50000, .seconds = 10.0};
		assert_int_equal(pb_mesh_plan_place(P, plan, &po, &placed, &rep, &err), 0);
		assert_true(rep.placed <= rep.start);
		assert_true(rep.bound <= rep.placed * (1 + 1e-12));
		assert_true(rep.bound <= rep.snake * (1 + 1e-12));
		assert_double_equal(pb_plan_metric(placed, "max_time", NAN), rep.placed, 1e-15);
		assert_true(pb_mesh_plan_owner(placed, 16, owner));
		for (int i = 0; i < placed->n_groups; i++)
			sizes[i] = placed->groups[i].n_units;
		assert_int_equal(pb_mesh_place_check(&grid, placed->n_groups, sizes, owner, &err),
		                 0);
		pb_plan_free(placed);
		pb_solver_free(sv);
	}
	pb_hw_free(hw);
	pb_graph_free(g);
}

/* A plan saved before the mesh existed (chip16, 2026-11-25) prices the same
 * on manycore-16.lua, whose mesh is a drawing hint (no link_gbs). */
static void test_old_plan_unchanged(void **state)
{
	(void)state;
	pb_graph *g = pb_test_load_model("resnet18.onnx");
	pb_hw *hw = NULL;
	pb_error err = {0};
	assert_int_equal(pb_hw_load("layouts/manycore-16.lua", &hw, &err), 0);
	pb_manycore mc;
	assert_int_equal(pb_manycore_parse(hw, &mc, &err), 0);
	assert_int_equal(mc.mesh_routed, 0);
	assert_int_equal(mc.mesh_rows, 4);
	pb_plan *old;
	assert_int_equal(
	    pb_plan_load("tests/fuzz/seeds/fuzz_plan/resnet18_exact.json", g->n_nodes, &old, &err),
	    0);
	pb_part_problem *P;
	assert_int_equal(pb_part_problem_new(g, &mc, &P, &err), 0);
	int ac[16];
	assert_int_equal(pb_part_from_plan(P, old, ac, &err), 0);
	pb_plan *again = pb_part_to_plan(P, ac, "exact", NAN);
	assert_non_null(again);
	assert_null(json_object_get(again->detail, "mesh"));
	const char *names[] = {"max_time", "reward", "max_storage", "max_compute", "max_routing"};
	for (int i = 0; i < 5; i++)
		assert_double_equal(pb_plan_metric(again, names[i], NAN),
		                    pb_plan_metric(old, names[i], NAN),
		                    1e-9 * fabs(pb_plan_metric(old, names[i], NAN)));
	pb_plan_free(again);
	pb_plan_free(old);
	pb_part_problem_free(P);
	pb_hw_free(hw);
	pb_graph_free(g);
}

static void layout_error(const char *mesh, const char *must)
{
	char text[512];
	snprintf(text, sizeof text,
	         "return { kind = 'manycore', name = 'x', cores = 6, mac_rate = 1e9, memory = 1e6, "
	         "bandwidth = 1e9, mesh = %s }",
	         mesh);
	pb_hw *hw = NULL;
	pb_error err = {0};
	assert_int_equal(pb_hw_load_string(text, "bad.lua", &hw, &err), 0);
	pb_manycore mc;
	assert_int_equal(pb_manycore_parse(hw, &mc, &err), PB_EINPUT);
	pb_test_expect_msg(&err, "bad.lua", must, NULL);
	pb_hw_free(hw);
}

static void test_layout_errors(void **state)
{
	(void)state;
	layout_error("{ rows = 2, cols = 3, link_gbs = 10 }", "only link_gbs");
	layout_error("{ rows = 2, cols = 3, routing = 'xy' }", "mesh.routing");
	layout_error("{ rows = 2, cols = 3, link_gbs = 10, hop_ns = 1, routing = 'zz' }",
	             "expected \"xy\" or \"yx\"");
	layout_error("{ rows = 2, cols = 3, link_gbs = 0, hop_ns = 1 }", "must be > 0");
	layout_error("{ rows = 2, cols = 3, link_gbs = 10, hop_ns = 1, io = { row = 0, col = 1 } }",
	             "not a corner");
	layout_error("{ rows = 2, cols = 3, link_gbs = 10, hop_ns = 1, io = { row = 2, col = 0 } }",
	             "mesh.io.row");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_routes),           cmocka_unit_test(test_cost_2x2),
	    cmocka_unit_test(test_cost_shared_link), cmocka_unit_test(test_search_vs_enumeration),
	    cmocka_unit_test(test_methods_placed),   cmocka_unit_test(test_old_plan_unchanged),
	    cmocka_unit_test(test_layout_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
