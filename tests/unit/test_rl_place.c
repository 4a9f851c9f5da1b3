/*
 * test_rl_place.c — the agent's placement actions (partition/mesh/rl_place.h).
 *
 * Property: on 3x3, 4x4, 5x6 and 8x8 meshes, from snakes of random group
 * sizes, 3000 random actions each: the mask says exactly which actions
 * pb_rl_place_apply accepts, an invalid one leaves the placement as it was,
 * and after every action every core is in one group, every group keeps a
 * non-empty connected region (pb_mesh_place_check) and no group vanishes.
 * Learning: squeezenet1_1's exact 1-D groups on manycore-16-mesh with
 * 2 GB/s links, where the snake is 16.2% above the placement the MILP
 * proves optimal (bench/RESULTS.md): a fresh agent's placement beats the
 * snake by more than 5%, is valid, and is not below the MILP's proved
 * optimum (a bound the agent never sees). Checkpoints: a placement agent
 * saves and loads; a 1-D partition agent (agents/manycore-16.ckpt) is
 * refused as a placement agent and a placement agent as a partition agent,
 * each naming the kind; the 1-D agent run on manycore-16.lua (no routed mesh)
 * and on manycore-16-mesh.lua (placement actions after it) reaches the same
 * 1-D partition: the placement actions leave its episodes alone.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pb_test.h"
#include "partition/mesh/mesh_cost.h"
#include "partition/mesh/mesh_milp.h"
#include "partition/mesh/mesh_place.h"
#include "partition/mesh/mesh_plan.h"
#include "partition/methods/partition.h"
#include "partition/mesh/rl_place.h"
#include "partition/rl/rl_reinforce.h"

static void check_placement(const pb_mesh_grid *g, int G, const int *owner)
{
	int n = g->rows * g->cols, sizes[128] = {0};
	for (int c = 0; c < n; c++) {
		assert_true(owner[c] >= 0 && owner[c] < G);
		sizes[owner[c]]++;
	}
	for (int q = 0; q < G; q++)
		assert_true(sizes[q] >= 1);
	pb_error err = {0};
	if (pb_mesh_place_check(g, G, sizes, owner, &err))
		fail_msg("%s", err.msg);
}

static void test_actions_keep_regions(void **state)
{
	(void)state;
	const int shapes[4][2] = {{3, 3}, {4, 4}, {5, 6}, {8, 8}};
	unsigned seed = 4101;
	for (int s = 0; s < 4; s++) {
		pb_mesh_grid g = {shapes[s][0], shapes[s][1], 0};
		int n = g.rows * g.cols, order[64], owner[64], before[64], sizes[64], seen[64],
		    queue[64];
		unsigned char mask[8 * 64];
		for (int trial = 0; trial < 3; trial++) {
			int G = 2 + rand_r(&seed) % (n / 2 < 9 ? n / 2 : 9);
			for (int q = 0; q < G; q++)
				sizes[q] = 1;
			for (int k = G; k < n; k++)
				sizes[rand_r(&seed) % G]++;
			pb_mesh_place_snake_order(&g, 0, 0, order);
			pb_mesh_place_snake(G, sizes, order, owner);
			check_placement(&g, G, owner);
			int applied = 0;
			for (int step = 0; step < 1000; step++) {
				int valid = pb_rl_place_mask(&g, owner, mask, seen, queue);
				assert_true(valid > 0);
				int k = rand_r(&seed) % pb_rl_place_n_actions(n);
				assert_int_equal(mask[k],
				                 pb_rl_place_valid(&g, owner, k, seen, queue));
				memcpy(before, owner, (size_t)n * sizeof *owner);
				int ok = pb_rl_place_apply(&g, owner, k, seen, queue);
				assert_int_equal(ok, mask[k]);
				if (!ok)
					assert_memory_equal(before, owner,
					                    (size_t)n * sizeof *owner);
				applied += ok;
				check_placement(&g, G, owner);
			}
			assert_true(applied > 100);
		}
	}
}

/* squeezenet1_1's exact 1-D plan on manycore-16-mesh, links at 2 GB/s. */
static pb_solver *slow_links_case(pb_graph **gp, pb_hw **hwp, pb_mesh_cost *C)
{
	*gp = pb_test_load_model("squeezenet1_1.onnx");
	pb_error err = {0};
	assert_int_equal(pb_hw_load("layouts/manycore-16-mesh.lua", hwp, &err), 0);
	pb_part_opts o = {0};
	o.method = "exact";
	pb_solver *sv;
	assert_int_equal(pb_partition_solver_new(*gp, *hwp, &o, &sv, &err), 0);
	pb_solver_progress p = {0};
	while (!p.done)
		assert_int_equal(pb_solver_step(sv, 1000, &p, &err), 0);
	pb_part_problem *P = pb_partition_solver_problem(sv);
	P->hw.link_bw = 2e9;
	int ac[16];
	assert_int_equal(pb_part_from_plan(P, pb_solver_incumbent(sv), ac, &err), 0);
	assert_int_equal(pb_mesh_cost_init(C, P, ac, &err), 0);
	return sv;
}

static void test_agent_beats_snake(void **state)
{
	(void)state;
	pb_graph *g;
	pb_hw *hw;
	pb_mesh_cost C;
	pb_solver *sv = slow_links_case(&g, &hw, &C);
	int snake[16], own[16];
	pb_mesh_place_snake(C.n_groups, C.gsize, C.order, snake);
	pb_mesh_eval es, ev, em;
	pb_mesh_cost_eval(&C, snake, &es);
	pb_rl_policy *pol = pb_rl_place_policy_new(16, 32, 1);
	assert_non_null(pol);
	pb_rl_place_config cfg;
	pb_rl_place_config_default(&cfg);
	pb_rl_place_stats st;
	pb_error err = {0};
	memcpy(own, snake, sizeof own);
	assert_int_equal(pb_rl_place_train(&C, pol, &cfg, own, &ev, &st, &err), 0);
	check_placement(&C.grid, C.n_groups, own);
	pb_mesh_eval again;
	pb_mesh_cost_eval(&C, own, &again);
	assert_true(again.objective == ev.objective);
	assert_true(st.best == ev.objective && st.start == es.objective);
	print_message("snake %.3f us, agent %.3f us after %ld episodes (%.3f s CPU)\n",
	              es.max_time * 1e6, ev.max_time * 1e6, st.episodes, st.seconds);
	assert_true(ev.max_time < es.max_time * 0.95);
	/* the MILP's proved optimum bounds the agent's placement (started from it:
	 * the cutoff makes the proof quick) */
	int mo[16];
	memcpy(mo, own, sizeof mo);
	pb_mesh_milp_stats ms;
	assert_int_equal(pb_mesh_milp_place(&C, mo, 600, &em, &ms, &err), 0);
	assert_true(ms.proved);
	print_message("MILP (proved) %.3f us\n", em.max_time * 1e6);
	assert_true(ev.max_time >= em.max_time * (1 - 1e-9));
	/* save and load: the same network */
	char path[] = "/tmp/pb_rlp_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pb_rl_place_save(pol, 16, st.episodes, path, &err), 0);
	pb_rl_policy *back = NULL;
	long ep = 0;
	assert_int_equal(pb_rl_place_load(path, 16, &back, &ep, &err), 0);
	assert_int_equal(ep, st.episodes);
	assert_int_equal(back->n_params, pol->n_params);
	assert_memory_equal(back->w, pol->w, (size_t)pol->n_params * sizeof *pol->w);
	/* a placement agent is not a partition agent */
	pb_rl_policy *wrong = NULL;
	assert_int_equal(pb_rl_checkpoint_load(path, 16, &wrong, &ep, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "a placement agent"));
	unlink(path);
	pb_rl_policy_free(back);
	pb_rl_policy_free(pol);
	pb_mesh_cost_free(&C);
	pb_solver_free(sv);
	pb_hw_free(hw);
	pb_graph_free(g);
}

/* The 1-D agent's run: its best 1-D state and max(t). */
static double run_1d_agent(const pb_graph *g, const char *layout, int *ac)
{
	pb_hw *hw = NULL;
	pb_error err = {0};
	assert_int_equal(pb_hw_load(layout, &hw, &err), 0);
	pb_part_opts o = {0};
	o.method = "rl";
	o.episodes = 30;
	o.agent = "agents/manycore-16.ckpt";
	o.seed = 5;
	o.no_reference = 1;
	pb_solver *sv;
	if (pb_partition_solver_new(g, hw, &o, &sv, &err))
		fail_msg("%s", err.msg);
	pb_solver_progress p = {0};
	while (!p.done)
		assert_int_equal(pb_solver_step(sv, 1000, &p, &err), 0);
	pb_rl_report r;
	assert_true(pb_partition_solver_rl_report(sv, &r));
	assert_int_equal(
	    pb_part_from_plan(pb_partition_solver_problem(sv), pb_solver_incumbent(sv), ac, &err),
	    0);
	pb_solver_free(sv);
	pb_hw_free(hw);
	return r.best_time;
}

static void test_1d_agent_unchanged(void **state)
{
	(void)state;
	pb_error err = {0};
	pb_rl_policy *pol = NULL;
	long ep;
	/* the shipped 1-D agent loads as one, not as a placement agent */
	assert_int_equal(pb_rl_checkpoint_load("agents/manycore-16.ckpt", 16, &pol, &ep, &err), 0);
	pb_rl_policy_free(pol);
	pol = NULL;
	assert_int_equal(pb_rl_place_load("agents/manycore-16.ckpt", 16, &pol, &ep, &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, "a partition agent"));
	assert_null(pol);
	pb_graph *g = pb_test_load_model("resnet18.onnx");
	int flat[16], mesh[16];
	double tf = run_1d_agent(g, "layouts/manycore-16.lua", flat);
	double tm = run_1d_agent(g, "layouts/manycore-16-mesh.lua", mesh);
	assert_true(tf == tm);
	assert_memory_equal(flat, mesh, sizeof flat);
	pb_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_actions_keep_regions),
	    cmocka_unit_test(test_agent_beats_snake),
	    cmocka_unit_test(test_1d_agent_unchanged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
