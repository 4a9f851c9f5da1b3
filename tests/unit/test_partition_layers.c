/*
 * test_partition_layers.c — load-time constants are no layers of the
 * many-core partition (docs/partition.md, "Layers"; chain_layers.h).
 *
 * tests/data/identity_resnet.onnx is a small ResNet as torchvision exports
 * it (every weight and bias through an Identity of its initializer, the 14
 * copies first in the file, and the Shape/Gather/Unsqueeze/Concat flatten);
 * identity_resnet_plain.onnx is the same network reading its weights
 * directly (tests/data/gen_identity_resnet.py writes both). The copies are
 * no-ops, so every method must give the two models the same plan: the same
 * arranged_core over 16 layers, the same times, the same group table. The
 * plans saved by the code before the rule (identity_resnet.plan-v1.json,
 * .session-v1.json: arranged_core over 37 nodes) must load and evaluate.
 */
#include "pb_test.h"

#include "hw.h"
#include "partition/chain/chain_layers.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/chain_rules.h"
#include "partition/chain/env.h"
#include "partition/chain/exact.h"
#include "partition/methods/partition.h"
#include "partition/chain/report.h"
#include "plan.h"

#define IDENT "tests/data/identity_resnet.onnx"
#define PLAIN "tests/data/identity_resnet_plain.onnx"

static pb_graph *load(const char *path)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	if (pb_graph_load(path, NULL, &g, &err) != PB_OK)
		fail_msg("%s", err.msg);
	return g;
}

static pb_hw *chip(int cores)
{
	char text[512];
	snprintf(text, sizeof text,
	         "return { kind = 'manycore', name = 'chip%d', cores = %d, mac_rate = 1.0e11,"
	         " memory = 128 * 1024 * 1024, bandwidth = 1.6e11 }",
	         cores, cores);
	pb_hw *hw = NULL;
	pb_error err = {0};
	if (pb_hw_load_string(text, "layers-test.lua", &hw, &err) != PB_OK)
		fail_msg("%s", err.msg);
	return hw;
}

static pb_hw *chip_file(const char *path)
{
	pb_hw *hw = NULL;
	pb_error err = {0};
	if (pb_hw_load(path, &hw, &err) != PB_OK)
		fail_msg("%s", err.msg);
	return hw;
}

/* Runs a method to its end; returns its plan (a copy) and arranged_core. */
static pb_plan *solve(const pb_graph *g, const pb_hw *hw, const char *method,
                      const pb_part_rules *rules, int *ac, pb_error *err_out)
{
	pb_part_opts o = {0};
	o.method = method;
	o.episodes = 30;
	o.seed = 5;
	o.rules = rules;
	pb_solver *sv;
	pb_error err = {0};
	int rc = pb_partition_solver_new(g, hw, &o, &sv, &err);
	if (err_out) {
		*err_out = err;
		if (rc)
			return NULL;
	}
	if (rc)
		fail_msg("%s: %s", method, err.msg);
	pb_solver_progress p = {0};
	while (!p.done)
		if (pb_solver_step(sv, 50, &p, &err) != PB_OK)
			fail_msg("%s: %s", method, err.msg);
	pb_plan *plan = pb_plan_copy(pb_solver_incumbent(sv));
	if (ac)
		assert_int_equal(pb_part_from_plan(pb_partition_solver_problem(sv), plan, ac, &err),
		                 PB_OK);
	pb_solver_free(sv);
	return plan;
}

static int sum(const int *ac, int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += ac[i];
	return s;
}

/* The layers are the 16 nodes that run, in the plain model's order; each
 * weight copy goes with the Conv/Gemm that reads it, the flatten's shape
 * arithmetic with the Reshape. */
static void test_layers_of_the_export(void **state)
{
	(void)state;
	pb_graph *g = load(IDENT), *gp = load(PLAIN);
	pb_part_layers L = {0}, Lp = {0};
	pb_error err = {0};
	assert_int_equal(pb_part_layers_new(g, &L, &err), PB_OK);
	assert_int_equal(pb_part_layers_new(gp, &Lp, &err), PB_OK);
	assert_int_equal(g->n_nodes, 37);
	assert_int_equal(L.m, 16);
	assert_int_equal(L.n_folded,
	                 21); /* 14 copies + Shape, Gather, Unsqueeze, Concat, 3 Constant */
	assert_int_equal(Lp.m, 16);
	for (int l = 0; l < L.m; l++)
		assert_string_equal(g->nodes[L.layer_node[l]].name,
		                    gp->nodes[Lp.layer_node[l]].name);
	int reshape = -1;
	for (int v = 0; v < g->n_nodes; v++) {
		const pb_node *nd = &g->nodes[v];
		if (!strcmp(nd->name, "/Reshape"))
			reshape = L.node_layer[v];
		if (strcmp(nd->op, "Identity") != 0)
			continue;
		assert_int_equal(nd->n_succs, 1);
		int host = L.node_layer[v];
		assert_int_equal(L.layer_node[host], nd->succs[0]);
		assert_true(!strcmp(g->nodes[nd->succs[0]].op, "Conv") ||
		            !strcmp(g->nodes[nd->succs[0]].op, "Gemm"));
	}
	assert_int_equal(reshape, 14);
	for (int v = 0; v < g->n_nodes; v++)
		if (!strcmp(g->nodes[v].op, "Shape") || !strcmp(g->nodes[v].op, "Gather") ||
		    !strcmp(g->nodes[v].op, "Constant") || !strcmp(g->nodes[v].op, "Concat") ||
		    !strcmp(g->nodes[v].op, "Unsqueeze"))
			assert_int_equal(L.node_layer[v], reshape);
	pb_part_layers_free(&L);
	pb_part_layers_free(&Lp);
	pb_graph_free(g);
	pb_graph_free(gp);
}

/* Every method gives the export and the plain model the same plan, and every
 * node of the export has the group of the layer it goes with. */
static void test_every_method_plans_layers(void **state)
{
	(void)state;
	pb_graph *g = load(IDENT), *gp = load(PLAIN);
	pb_hw *hws[2] = {chip(4), chip_file("layouts/manycore-16.lua")};
	const char *methods[] = {"exact", "equal", "greedy", "pack", "local", "milp", "rl"};
	pb_part_layers L = {0};
	pb_error err = {0};
	assert_int_equal(pb_part_layers_new(g, &L, &err), PB_OK);
	for (int h = 0; h < 2; h++)
		for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
			int ac[16], acp[16], n = h ? 16 : 4;
			pb_plan *p = solve(g, hws[h], methods[i], NULL, ac, NULL);
			pb_plan *pp = solve(gp, hws[h], methods[i], NULL, acp, NULL);
			if (memcmp(ac, acp, (size_t)n * sizeof *ac) != 0)
				fail_msg(
				    "%s on %d cores: arranged_core differs from the plain model's",
				    methods[i], n);
			assert_int_equal(sum(ac, n), 16);
			const json_t *jac = json_object_get(p->detail, "arranged_core");
			for (int c = 0; c < n; c++)
				assert_int_equal(json_integer_value(json_array_get(jac, (size_t)c)),
				                 ac[c]);
			assert_int_equal(json_integer_value(json_object_get(p->detail, "layers")),
			                 16);
			double t = pb_plan_metric(p, "max_time", NAN),
			       tp = pb_plan_metric(pp, "max_time", NAN);
			assert_true(t > 0 && fabs(t - tp) <= 1e-12 * tp);
			assert_int_equal(p->n_groups, pp->n_groups);
			assert_int_equal(p->n_nodes, g->n_nodes);
			for (int v = 0; v < g->n_nodes; v++) {
				assert_true(p->group[v] >= 0);
				assert_int_equal(p->group[v],
				                 p->group[L.layer_node[L.node_layer[v]]]);
			}
			pb_plan_free(p);
			pb_plan_free(pp);
		}
	pb_part_layers_free(&L);
	pb_hw_free(hws[0]);
	pb_hw_free(hws[1]);
	pb_graph_free(g);
	pb_graph_free(gp);
}

/* equal splits the 16 layers, not the 37 nodes: 4 per core on 4 cores. */
static void test_equal_splits_layers(void **state)
{
	(void)state;
	pb_graph *g = load(IDENT);
	pb_hw *hw = chip(4);
	int ac[4];
	pb_plan *p = solve(g, hw, "equal", NULL, ac, NULL);
	for (int c = 0; c < 4; c++)
		assert_int_equal(ac[c], 4);
	pb_plan_free(p);
	pb_hw_free(hw);
	pb_graph_free(g);
}

/* The report table of p in buf (size bytes, NUL-terminated). */
static void table_of(const pb_plan *p, char *buf, size_t size)
{
	memset(buf, 0, size);
	FILE *f = fmemopen(buf, size - 1, "w");
	pb_part_report_table(f, p);
	fclose(f);
}

/* The group table and --json number layers: the export's rows are the plain
 * model's (the first group's "0-1" is the stem Conv and Relu, not the 14
 * weight copies before them), and a line says what was folded. */
static void test_group_table_counts_layers(void **state)
{
	(void)state;
	pb_graph *g = load(IDENT), *gp = load(PLAIN);
	pb_hw *hw = chip_file("layouts/manycore-16.lua");
	pb_plan *p = solve(g, hw, "exact", NULL, NULL, NULL);
	pb_plan *pp = solve(gp, hw, "exact", NULL, NULL, NULL);
	static char t[8192], tp[8192];
	table_of(p, t, sizeof t);
	table_of(pp, tp, sizeof tp);
	/* the rows (up to the "max(t)" line) are the same */
	size_t rows = (size_t)(strstr(tp, "max(t)") - tp);
	assert_true(strlen(t) > rows);
	if (strncmp(t, tp, rows) != 0)
		fail_msg("group tables differ:\n%s\nplain:\n%s", t, tp);
	assert_non_null(strstr(t, "layers: 16 (21 load-time constants of the 37 nodes"));
	json_t *j = pb_part_report_json(p, "exact", "chip16");
	const json_t *gs = json_object_get(j, "groups");
	int next = 0;
	size_t i;
	const json_t *o;
	json_array_foreach(gs, i, o)
	{
		assert_int_equal(json_integer_value(json_object_get(o, "first_layer")), next);
		next = (int)json_integer_value(json_object_get(o, "last_layer")) + 1;
	}
	assert_int_equal(next, 16);
	assert_int_equal(json_integer_value(json_object_get(j, "folded_constants")), 21);
	/* group 0's nodes are its layers' (the stem Conv is node 14) */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(gs, 0), "first_node")),
	                 14);
	json_decref(j);
	pb_plan_free(p);
	pb_plan_free(pp);
	pb_hw_free(hw);
	pb_graph_free(g);
	pb_graph_free(gp);
}

/* Exact's optimum is the same as or better than with every node a layer
 * (the old rule, rebuilt here as a synthetic problem over all nodes): on
 * resnet18 (16 weight copies, which cost nothing) the same; where shape
 * arithmetic moved bytes between groups, not worse. */
static void test_exact_not_worse_than_all_nodes(void **state)
{
	(void)state;
	const char *models[] = {"resnet18.onnx", "squeezenet1_1.onnx", "mobilenet_v2.onnx"};
	pb_hw *hw = chip_file("layouts/manycore-16.lua");
	pb_manycore mc;
	pb_error err = {0};
	assert_int_equal(pb_manycore_parse(hw, &mc, &err), PB_OK);
	for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
		pb_graph *g = pb_test_load_model(models[k]);
		int n = g->n_nodes, ne = 0;
		for (int v = 0; v < n; v++)
			ne += g->nodes[v].n_succs;
		double *macs = malloc((size_t)n * 3 * sizeof *macs), *par = macs + n,
		       *ob = macs + 2 * n;
		int *from = malloc((size_t)ne * 2 * sizeof *from), *to = from + ne, e = 0;
		for (int v = 0; v < n; v++) {
			macs[v] = g->nodes[v].cost.macs;
			par[v] = g->nodes[v].cost.param_bytes;
			ob[v] = g->nodes[v].cost.out_bytes;
			for (int s = 0; s < g->nodes[v].n_succs; s++) {
				from[e] = v;
				to[e++] = g->nodes[v].succs[s];
			}
		}
		pb_part_problem *Pold, *P;
		assert_int_equal(
		    pb_part_problem_synthetic(n, macs, par, ob, ne, from, to, &mc, &Pold, &err),
		    PB_OK);
		assert_int_equal(pb_part_problem_new(g, &mc, &P, &err), PB_OK);
		assert_true(P->m < n && P->n_folded == n - P->m);
		double old_opt, opt;
		assert_int_equal(pb_part_exact_solve(Pold, &old_opt, NULL, NULL, &err), PB_OK);
		assert_int_equal(pb_part_exact_solve(P, &opt, NULL, NULL, &err), PB_OK);
		if (!(opt <= old_opt * (1 + 1e-12)))
			fail_msg("%s: exact %.9g s with layers, %.9g s with every node", models[k],
			         opt, old_opt);
		if (k == 0)
			assert_true(fabs(opt - old_opt) <= 1e-12 * old_opt);
		pb_part_problem_free(P);
		pb_part_problem_free(Pold);
		free(macs);
		free(from);
		pb_graph_free(g);
	}
	pb_hw_free(hw);
}

/* A plan written before the rule (by the code of 0f474e8: arranged_core
 * [16,0,0,0,2,0,0,0,2,0,3,0,0,0,2,12] over the 37 nodes) converts: core 0
 * kept nodes 0-15 (14 weight copies, the stem Conv and Relu), core 15 nodes
 * 25-36 (Add, Relu, pool, 7 nodes of shape arithmetic, Reshape, Gemm). */
static void test_old_plan_converts(void **state)
{
	(void)state;
	pb_graph *g = load(IDENT);
	pb_hw *hw = chip_file("layouts/manycore-16.lua");
	pb_manycore mc;
	pb_error err = {0};
	assert_int_equal(pb_manycore_parse(hw, &mc, &err), PB_OK);
	pb_plan *old = NULL;
	assert_int_equal(
	    pb_plan_load("tests/data/identity_resnet.plan-v1.json", g->n_nodes, &old, &err), PB_OK);
	pb_part_problem *P;
	assert_int_equal(pb_part_problem_new(g, &mc, &P, &err), PB_OK);
	int ac[16], want[16] = {2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 3, 0, 0, 0, 2, 5};
	assert_int_equal(pb_part_from_plan(P, old, ac, &err), PB_OK);
	assert_memory_equal(ac, want, sizeof want);
	/* the same partition: its bottleneck group holds no constant, so its
	 * max(t) is the one saved */
	pb_plan *now = pb_part_to_plan(P, ac, "manual", NAN);
	double saved = pb_plan_metric(old, "max_time", NAN);
	assert_true(fabs(pb_plan_metric(now, "max_time", NAN) - saved) <= 1e-12 * saved);
	for (int v = 0; v < g->n_nodes; v++)
		assert_int_equal(now->group[v] >= 0, 1);
	/* and the converted state is read back as it is */
	int back[16];
	assert_int_equal(pb_part_from_plan(P, now, back, &err), PB_OK);
	assert_memory_equal(back, want, sizeof want);
	/* a sum that is neither the layer nor the node count is refused */
	json_array_set_new(json_object_get(old->detail, "arranged_core"), 15, json_integer(11));
	assert_int_not_equal(pb_part_from_plan(P, old, ac, &err), PB_OK);
	assert_non_null(strstr(err.msg, "the model has 16"));
	pb_plan_free(now);
	pb_plan_free(old);
	pb_part_problem_free(P);
	pb_hw_free(hw);
	pb_graph_free(g);
}

/* Conversion corner cases: a core whose old range holds only constants joins
 * the next group; trailing cores left without layers go to the last group. */
static void test_convert_corners(void **state)
{
	(void)state;
	pb_graph *g = load(IDENT);
	pb_part_layers L = {0};
	pb_error err = {0};
	assert_int_equal(pb_part_layers_new(g, &L, &err), PB_OK);
	int old[4] = {14, 4, 10, 9}, ac[4], want[4] = {0, 4, 10, 2};
	pb_part_layers_convert(&L, 4, old, ac);
	assert_memory_equal(ac, want, sizeof want);
	pb_part_layers_free(&L);
	/* nodes 2 and 3 are constants nobody reads, after the last layer */
	int layer_node[2] = {0, 1}, node_layer[4] = {0, 1, 1, 1};
	pb_part_layers T = {4, 2, 2, layer_node, node_layer};
	int old2[3] = {1, 1, 2}, ac2[3], want2[3] = {1, 0, 1};
	pb_part_layers_convert(&T, 3, old2, ac2);
	assert_memory_equal(ac2, want2, sizeof want2);
	pb_graph_free(g);
}

/* The session saved before the rule loads; evaluate and an edit read its
 * plan as the converted state. */
static void test_old_session_loads(void **state)
{
	(void)state;
	static char buf[1 << 16];
	pb_test_session t;
	pb_test_session_open(&t, buf, sizeof buf);
	pb_error err = {0};
	assert_int_equal(
	    pb_test_session_cmd(&t, "load tests/data/identity_resnet.session-v1.json", &err),
	    PB_OK);
	double saved = pb_plan_metric(t.s->plan, "max_time", NAN);
	assert_int_equal(pb_test_session_cmd(&t, "evaluate --json", &err), PB_OK);
	json_t *j = json_loads(buf, 0, NULL);
	assert_non_null(j);
	const json_t *ac = json_object_get(j, "arranged_core");
	long s = 0;
	for (size_t c = 0; c < json_array_size(ac); c++)
		s += (long)json_integer_value(json_array_get(ac, c));
	assert_int_equal(s, 16);
	assert_true(fabs(json_real_value(json_object_get(j, "max_time")) - saved) <= 1e-12 * saved);
	json_decref(j);
	/* a boundary move of one layer: the stem's Relu goes to group 1 */
	assert_int_equal(
	    pb_test_session_lua(
	        &t,
	        "pb.cmd('load tests/data/identity_resnet.session-v1.json')\n"
	        "pb.cmd('boundary 0 -1')\n"
	        "local p = pb.plan()\n"
	        "assert(p.detail.arranged_core[1] == 1, 'core 0 keeps the stem Conv')\n"
	        "assert(p.assignment[16] == 1, 'the Relu (node 15) moved')\n"
	        "assert(p.assignment[1] == 0, 'its weight copy stays with the Conv')\n",
	        "edit", &err),
	    PB_OK);
	pb_test_session_close(&t);
}

/* Rules match nodes: a pin on a weight copy pins its Conv; a cut after a
 * copy is no boundary; two cores pinned on one layer are an error. */
static void test_rules_on_constants(void **state)
{
	(void)state;
	pb_graph *g = load(IDENT);
	pb_hw *hw = chip(4);
	pb_error err = {0};
	int ac_free[4], ac[4];
	pb_plan *free_plan = solve(g, hw, "exact", NULL, ac_free, NULL);
	/* Identity_12 copies the fc weight (node 12 -> /fc/Gemm, the last layer) */
	assert_string_equal(g->nodes[12].name, "Identity_12");
	pb_part_rules *r = pb_part_rules_new(g->n_nodes);
	assert_int_equal(pb_part_rules_pin(r, "fc_on_0", 12, g->nodes[12].name, 0, &err), PB_OK);
	pb_plan *p = solve(g, hw, "exact", r, ac, NULL);
	assert_int_equal(pb_plan_metric(p, "rule_violations", -1), 0);
	const pb_plan_group *gg = &p->groups[p->group[36]];
	assert_int_equal(gg->first_unit, 0); /* the Gemm's group holds core 0: all of it */
	assert_int_equal(p->n_groups, 1);
	pb_plan_free(p);
	pb_part_rules_free(r);
	/* a forced cut after a weight copy changes nothing */
	r = pb_part_rules_new(g->n_nodes);
	assert_int_equal(
	    pb_part_rules_cut(r, "after_copy", 5, g->nodes[5].name, PB_CUT_FORCE, &err), PB_OK);
	p = solve(g, hw, "exact", r, ac, NULL);
	assert_memory_equal(ac, ac_free, sizeof ac);
	pb_plan_free(p);
	pb_part_rules_free(r);
	/* Identity_0 (the stem weight) and the stem Conv on different cores */
	r = pb_part_rules_new(g->n_nodes);
	assert_int_equal(pb_part_rules_pin(r, "copy", 0, g->nodes[0].name, 1, &err), PB_OK);
	assert_int_equal(pb_part_rules_pin(r, "stem", 14, g->nodes[14].name, 2, &err), PB_OK);
	assert_null(solve(g, hw, "exact", r, NULL, &err));
	assert_int_equal(err.code, PB_EINPUT);
	assert_non_null(strstr(err.msg, "'copy'"));
	assert_non_null(strstr(err.msg, "'stem'"));
	assert_non_null(strstr(err.msg, "two cores"));
	pb_part_rules_free(r);
	pb_plan_free(free_plan);
	pb_hw_free(hw);
	pb_graph_free(g);
}

/* Lua sees layers: pb.layers(), initial_partition's n_layers and macs, and
 * the action mask's arranged_core all count the 16 layers. */
static void test_lua_sees_layers(void **state)
{
	(void)state;
	static char buf[1 << 16];
	pb_test_session t;
	pb_test_session_open(&t, buf, sizeof buf);
	pb_error err = {0};
	if (pb_test_session_lua(
	        &t,
	        "pb.cmd('open " IDENT "')\n"
	        "pb.cmd('layout layouts/manycore-16.lua')\n"
	        "local L = pb.layers()\n"
	        "assert(#L == 16, #L .. ' layers')\n"
	        "assert(pb.node(L[1]).name == '/conv1/Conv' and pb.node(L[16]).op == 'Gemm')\n"
	        "local seen, sums = nil, {}\n"
	        "pb.heuristic{ name = 'start', kind = 'initial_partition', fn = function(i)\n"
	        "  local total = 0\n"
	        "  for _, x in ipairs(i.macs) do total = total + x end\n"
	        "  seen = {i.n_layers, #i.macs, total}\n"
	        "  local ac = {}\n"
	        "  for c = 1, i.n_cores do ac[c] = 1 end\n"
	        "  return ac end }\n"
	        "pb.heuristic{ name = 'mask', kind = 'action_mask', fn = function(s)\n"
	        "  local n = 0\n"
	        "  for _, k in ipairs(s.arranged_core) do n = n + k end\n"
	        "  sums[n] = true\n"
	        "  return {} end }\n"
	        "pb.cmd('partition --method rl --episodes 2 --seed 1')\n"
	        "assert(seen[1] == 16 and seen[2] == 16, 'n_layers ' .. seen[1])\n"
	        "assert(seen[3] == pb.graph().macs, 'macs of the layers ' .. seen[3])\n"
	        "for n in pairs(sums) do assert(n == 16, 'a state of ' .. n .. ' layers') end\n"
	        "assert(next(sums), 'the mask ran')\n",
	        "layers", &err) != PB_OK)
		fail_msg("%s", err.msg);
	pb_test_session_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layers_of_the_export),
	    cmocka_unit_test(test_every_method_plans_layers),
	    cmocka_unit_test(test_equal_splits_layers),
	    cmocka_unit_test(test_group_table_counts_layers),
	    cmocka_unit_test(test_exact_not_worse_than_all_nodes),
	    cmocka_unit_test(test_old_plan_converts),
	    cmocka_unit_test(test_convert_corners),
	    cmocka_unit_test(test_old_session_loads),
	    cmocka_unit_test(test_rules_on_constants),
	    cmocka_unit_test(test_lua_sees_layers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
