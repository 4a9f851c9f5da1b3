/* test_fuse.c — horizontal fusion: rules, cost model, the fusion loop, the
 * cycle guard (white box), the new graph, and every bundled model (igraph
 * acyclicity after every fusion; partbench finds at least as many fusible
 * nodes as the XLA-style rule). */
#include "pb_test.h"
#include "model/json_graph.h"
#include "load.h"

#include <igraph.h>
#include <unistd.h>

#include "transform/fuse.h"
/* White box: the cycle guard and the class lists. */
#include "transform/fuse.c"

/* Node i (n{i}): op ops[i] (NULL: Relu), `elems` FLOPs, output t{i} of
 * `elems` floats, inputs from the edges (pb_test_ops_graph). */
static pb_graph *build_ops(int n, const char *const *ops, const char *edges, int64_t elems)
{
	return pb_test_ops_graph("fuse.test", n, ops, edges, elems, 0, 0);
}

static int node(const pb_graph *g, int i)
{
	char name[16];
	snprintf(name, sizeof name, "n%d", i);
	return pb_graph_find_node(g, name);
}

static pb_fuse_result *run(const pb_graph *g, const pb_fuse_rules *rules)
{
	pb_fuse_opts o;
	pb_fuse_opts_default(&o);
	o.rules = rules;
	pb_fuse_result *r = NULL;
	pb_error err = {0};
	if (pb_fuse_run(g, &o, &r, &err) != PB_OK)
		fail_msg("%s", err.msg);
	return r;
}

static void test_rules(void **state)
{
	pb_fuse_rules r;
	pb_fuse_rules_default(&r);
	const char *ops[] = {"MatMul", "Gemm", "Conv", "Relu", "Add"};
	pb_graph *g = build_ops(5, ops, "", 16);
	assert_int_equal(pb_fuse_rules_fusable(&r, g, node(g, 0)), 0);
	assert_int_equal(pb_fuse_rules_fusable(&r, g, node(g, 1)), 0);
	assert_int_equal(pb_fuse_rules_fusable(&r, g, node(g, 2)), 0);
	assert_int_equal(pb_fuse_rules_fusable(&r, g, node(g, 3)), 1);
	pb_error err = {0};
	assert_int_equal(pb_fuse_rules_set_op(&r, "Conv", 1, &err), PB_OK);
	assert_int_equal(pb_fuse_rules_fusable(&r, g, node(g, 2)), 1);
	assert_int_equal(pb_fuse_rules_set_node(&r, "n3", 0, &err), PB_OK);
	assert_int_equal(pb_fuse_rules_fusable(&r, g, node(g, 3)), 0);
	assert_int_equal(pb_fuse_rules_set_op(&r, "", 0, &err), PB_EUSAGE);
	/* A session's table starts from the defaults, keeps its changes, and is
	 * its own: a new session starts from the defaults again. */
	pb_session *s = pb_session_new();
	assert_non_null(pb_fuse_rules_of(s));
	pb_fuse_rules_set_op(pb_fuse_rules_of(s), "Add", 0, &err);
	assert_int_equal(pb_fuse_rules_fusable(pb_fuse_rules_of(s), g, node(g, 4)), 0);
	pb_session *s2 = pb_session_new();
	assert_int_equal(pb_fuse_rules_fusable(pb_fuse_rules_of(s2), g, node(g, 4)), 1);
	assert_int_equal(pb_fuse_rules_fusable(pb_fuse_rules_of(s2), g, node(g, 0)), 0);
	pb_session_free(s2);
	pb_session_free(s);
	pb_graph_free(g);
}

static int no_relu(void *ud, const pb_graph *g, int v)
{
	(*(int *)ud)++;
	return strcmp(g->nodes[v].op, "Relu") == 0 ? 0 : -1;
}

static void test_rule_callback(void **state)
{
	/* Two parallel Relu chains: the callback forbids Relu, nothing fuses. */
	pb_graph *g = build_ops(5, NULL, "0>1 0>2 1>3 2>4", 64);
	pb_fuse_rules r;
	pb_fuse_rules_default(&r);
	int calls = 0;
	pb_fuse_rules_callback(&r, no_relu, &calls);
	pb_fuse_result *res = run(g, &r);
	assert_true(calls > 0);
	assert_int_equal(res->nodes_fused, 0);
	assert_true(res->nonfusable_removed >= 4);
	pb_fuse_result_free(res);
	pb_graph_free(g);
}

static void test_model_launches_and_occupancy(void **state)
{
	pb_fuse_model m;
	pb_fuse_model_default(&m);
	pb_graph *g = build_ops(3, NULL, "", 1024);
	int set[2] = {0, 1};
	double t1 = pb_fuse_node_time(&m, g, 0);
	double t2 = pb_fuse_set_time(&m, g, set, 2);
	/* Two small compute-bound kernels (one wave each, both fit in one
	 * wave together): fusing saves one launch plus part of a wave (the
	 * fused kernel becomes memory bound). */
	double wave = 1.0 / m.lane_flops;
	assert_true(t1 + t1 - t2 > m.launch);
	assert_true(t1 + t1 - t2 < m.launch + wave);
	double occ1 = pb_fuse_set_occupancy(&m, g, set, 1);
	double occ2 = pb_fuse_set_occupancy(&m, g, set, 2);
	assert_true(occ2 > occ1 * 1.99 && occ2 <= 1.0);
	/* With a huge launch-free device and heavy imbalance fusion does not pay. */
	pb_graph_free(g);
	pb_fuse_model_default(&m);
	m.launch = 0;
	m.lanes = 1024;
	const char *ops[] = {"Relu", "Exp"};
	g = build_ops(2, ops, "", 1024);
	/* Make node 1 10x heavier per element by hand. */
	g->nodes[node(g, 1)].cost.flops = 10 * 1024;
	int s2[2] = {node(g, 0), node(g, 1)};
	double solo = pb_fuse_node_time(&m, g, s2[0]) + pb_fuse_node_time(&m, g, s2[1]);
	assert_true(pb_fuse_set_time(&m, g, s2, 2) > solo);
	pb_graph_free(g);
}

static void test_model_from_layout(void **state)
{
	pb_hw *hw = NULL;
	pb_error err = {0};
	assert_int_equal(pb_hw_load_string("return { kind = 'hetero', fusion = { launch = 1e-5, "
	                                   "lanes = 1000, max_members = 3 } }",
	                                   "mem.lua", &hw, &err),
	                 PB_OK);
	pb_fuse_model m;
	pb_fuse_model_default(&m);
	double bw = m.bandwidth;
	assert_int_equal(pb_fuse_model_from_hw(hw, &m, &err), PB_OK);
	assert_true(fabs(m.launch - 1e-5) < 1e-15);
	assert_true(fabs(m.lanes - 1000) < 1e-9);
	assert_int_equal(m.max_members, 3);
	assert_true(m.bandwidth == bw);
	pb_hw_free(hw);
	assert_int_equal(pb_hw_load_string("return { kind = 'hetero', fusion = { lanes = -1 } }",
	                                   "bad.lua", &hw, &err),
	                 PB_OK);
	assert_int_equal(pb_fuse_model_from_hw(hw, &m, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "bad.lua"));
	assert_non_null(strstr(err.msg, "fusion.lanes"));
	pb_hw_free(hw);
}

static void test_fuse_parent_child(void **state)
{
	/* 0 forks into 1->2 and 3->4 which join in 5 (Add): two rounds fuse
	 * (1,3) then (2,4). */
	const char *ops[] = {"Relu", "Relu", "Sigmoid", "Relu", "Sigmoid", "Add"};
	pb_graph *g = build_ops(6, ops, "0>1 1>2 0>3 3>4 2>5 4>5", 256);
	pb_fuse_result *r = run(g, NULL);
	assert_int_equal(r->groups->per_kind[PB_BRANCH_PARENT_CHILD], 1);
	assert_int_equal(r->n_fusions, 2);
	assert_int_equal(r->nodes_fused, 4);
	assert_int_equal(r->dag_checks, 1); /* one igraph check of the final graph */
	assert_int_equal(r->launches_before, 6);
	assert_int_equal(r->launches_after, 4);
	assert_true(r->time_after < r->time_before);
	assert_int_equal(r->fusion_of[node(g, 1)], r->fusion_of[node(g, 3)]);
	assert_int_equal(r->fusion_of[node(g, 2)], r->fusion_of[node(g, 4)]);
	assert_true(r->fusion_of[node(g, 1)] != r->fusion_of[node(g, 2)]);
	/* The new graph: 4 nodes, fused ones list their members. */
	const pb_graph *f = r->fused;
	assert_int_equal(f->n_nodes, 4);
	int fused = 0;
	for (int i = 0; i < f->n_nodes; i++) {
		const pb_node *nd = &f->nodes[i];
		if (nd->n_members) {
			fused++;
			assert_string_equal(nd->op, "Fused");
			assert_int_equal(nd->n_members, 2);
			for (int k = 0; k < 2; k++) {
				int orig = nd->members[k];
				assert_string_equal(nd->member_names[k], g->nodes[orig].name);
				assert_int_equal(r->class_of[orig], i);
			}
			assert_true(fabs(nd->cost.flops - 512) < 1e-9);
		}
	}
	assert_int_equal(fused, 2);
	/* Edges: 0 -> fused(1,3) -> fused(2,4) -> 5. */
	int f13 = r->class_of[node(g, 1)], f24 = r->class_of[node(g, 2)];
	assert_int_equal(f->nodes[f13].n_preds, 1);
	assert_int_equal(f->nodes[f13].n_succs, 1);
	assert_int_equal(f->nodes[f13].succs[0], f24);
	assert_int_equal(f->nodes[f24].succs[0], r->class_of[node(g, 5)]);
	/* The plan on the original graph. */
	pb_fuse_opts o;
	pb_fuse_opts_default(&o);
	pb_plan *p = pb_fuse_plan(g, r, &o);
	assert_string_equal(p->kind, "fuse");
	assert_int_equal(p->n_groups, 2);
	assert_int_equal(p->group[node(g, 0)], -1);
	assert_int_equal(p->group[node(g, 1)], r->fusion_of[node(g, 1)]);
	assert_true(pb_plan_metric(p, "launches_after", 0) == 4);
	pb_plan_free(p);
	pb_fuse_result_free(r);
	pb_graph_free(g);
}

static void test_nonfusable_removed(void **state)
{
	/* Branches 1->2 and 3->4 where 1 and 3 are MatMul: only (2,4) fuses. */
	const char *ops[] = {"Relu", "MatMul", "Relu", "MatMul", "Relu", "Add"};
	pb_graph *g = build_ops(6, ops, "0>1 1>2 0>3 3>4 2>5 4>5", 256);
	pb_fuse_result *r = run(g, NULL);
	assert_int_equal(r->nonfusable_removed, 2);
	assert_int_equal(r->n_fusions, 1);
	assert_int_equal(r->fusion_of[node(g, 1)], -1);
	assert_true(r->fusion_of[node(g, 2)] >= 0);
	assert_int_equal(r->fusion_of[node(g, 2)], r->fusion_of[node(g, 4)]);
	pb_fuse_result_free(r);
	/* Allowing MatMul fuses both levels. */
	pb_fuse_rules rules;
	pb_fuse_rules_default(&rules);
	pb_error err = {0};
	pb_fuse_rules_set_op(&rules, "MatMul", 1, &err);
	r = run(g, &rules);
	assert_int_equal(r->n_fusions, 2);
	pb_fuse_result_free(r);
	pb_graph_free(g);
}

static void test_max_members_and_min_gain(void **state)
{
	/* One parent with 5 one-node branches. */
	pb_graph *g = build_ops(6, NULL, "0>1 0>2 0>3 0>4 0>5", 64);
	pb_fuse_opts o;
	pb_fuse_opts_default(&o);
	o.model.max_members = 2;
	pb_fuse_result *r = NULL;
	pb_error err = {0};
	assert_int_equal(pb_fuse_run(g, &o, &r, &err), PB_OK);
	for (int f = 0; f < r->n_fusions; f++)
		assert_true(r->fusion_size[f] <= 2);
	assert_int_equal(r->nodes_fused, 4);
	pb_fuse_result_free(r);
	o.model.max_members = 16;
	o.model.min_gain = 1.0; /* a second: nothing saves that much */
	assert_int_equal(pb_fuse_run(g, &o, &r, &err), PB_OK);
	assert_int_equal(r->nodes_fused, 0);
	assert_int_equal(r->fused->n_nodes, g->n_nodes);
	pb_fuse_result_free(r);
	o.model.max_members = 1;
	assert_int_equal(pb_fuse_run(g, &o, &r, &err), PB_EUSAGE);
	pb_graph_free(g);
}

static void test_cycle_guard_white_box(void **state)
{
	/* a1 -> a2 and b1 -> b2 (independent chains). Fusing (a1,b2) first
	 * makes (a2,b1) cyclic: a1 -> a2 and b1 -> b2 = a1. */
	pb_graph *g = build_ops(4, NULL, "0>1 2>3", 16);
	pb_fuse_model m;
	pb_fuse_model_default(&m);
	int n = g->n_nodes;
	fstate s = {g, &m, n, NULL, NULL, NULL, NULL, 0, NULL, NULL};
	s.cls = malloc(n * sizeof(int));
	s.next = malloc(n * sizeof(int));
	s.stamp = calloc(n, sizeof(int));
	s.in_set = calloc(n, sizeof(int));
	s.queue = malloc(n * sizeof(int));
	for (int v = 0; v < n; v++) {
		s.cls[v] = v;
		s.next[v] = -1;
	}
	int a1 = node(g, 0), a2 = node(g, 1), b1 = node(g, 2), b2 = node(g, 3);
	int first[2] = {a1, b2}, second[2] = {a2, b1}, chain[2] = {a1, a2};
	assert_int_equal(would_cycle(&s, chain, 2), 1); /* direct edge */
	assert_int_equal(would_cycle(&s, first, 2), 0);
	assert_int_equal(would_cycle(&s, second, 2), 0);
	merge(&s, first, 2);
	assert_int_equal(s.cls[b2], s.cls[a1]);
	assert_int_equal(would_cycle(&s, second, 2), 1);
	int dag = 0;
	pb_error err = {0};
	assert_int_equal(pb_quotient_is_dag(g, s.cls, 0, &dag, &err), PB_OK);
	assert_int_equal(dag, 1);
	merge(&s, second, 2); /* force it: igraph must see the cycle */
	assert_int_equal(pb_quotient_is_dag(g, s.cls, 0, &dag, &err), PB_OK);
	assert_int_equal(dag, 0);
	free(s.cls);
	free(s.next);
	free(s.stamp);
	free(s.in_set);
	free(s.queue);
	pb_graph_free(g);
}

/* igraph check of the fused graph and of the member partition. */
static void check_fused(const pb_graph *g, const pb_fuse_result *r)
{
	const pb_graph *f = r->fused;
	int *count = calloc((size_t)g->n_nodes, sizeof *count);
	for (int i = 0; i < f->n_nodes; i++) {
		const pb_node *nd = &f->nodes[i];
		if (nd->n_members) {
			assert_true(nd->n_members >= 2);
			for (int k = 0; k < nd->n_members; k++)
				count[nd->members[k]]++;
		} else {
			int v = pb_graph_find_node(g, nd->name);
			assert_true(v >= 0);
			count[v]++;
		}
	}
	for (int v = 0; v < g->n_nodes; v++)
		assert_int_equal(count[v], 1);
	free(count);
	int dag = 0;
	pb_error err = {0};
	int *ident = malloc((size_t)f->n_nodes * sizeof *ident);
	for (int i = 0; i < f->n_nodes; i++)
		ident[i] = i;
	assert_int_equal(pb_quotient_is_dag(f, ident, 0, &dag, &err), PB_OK);
	assert_int_equal(dag, 1);
	free(ident);
	assert_int_equal(f->n_nodes, g->n_nodes - r->nodes_fused + r->n_fusions);
	assert_int_equal(r->dag_checks, r->n_fusions > 0);
	assert_true(fabs(f->total.flops - g->total.flops) <= 1e-6 * (1 + g->total.flops));
}

static void test_all_models(void **state)
{
	size_t n_models;
	const char *const *models = pb_test_models(&n_models);
	for (size_t m = 0; m < n_models; m++) {
		pb_graph *g = pb_test_load_model(models[m]);
		pb_error err = {0};
		pb_fuse_opts o;
		pb_fuse_opts_default(&o);
		pb_fuse_result *r = NULL;
		if (pb_fuse_run(g, &o, &r, &err) != PB_OK)
			fail_msg("%s: %s", models[m], err.msg);
		check_fused(g, r);
		assert_true(r->time_after <= r->time_before);
		pb_fuse_baseline xb;
		assert_int_equal(pb_fuse_xla_baseline(g, &o, &xb, &err), PB_OK);
		assert_true(xb.fused <= xb.candidates);
		/* The claim of the method: at least as many fusible nodes. */
		assert_true(r->nodes_fused >= xb.fused);
		/* densenet121 has no parallel branches once weights are folded (its
		 * dense layers are sequential); googlenet and swin_t have many. */
		if (strcmp(models[m], "googlenet.onnx") == 0 ||
		    strcmp(models[m], "swin_t.onnx") == 0)
			assert_true(r->nodes_fused > xb.fused);
		/* a DOT graph has no constants: its source is the model input, and
		 * its three branch heads (Relu, Relu, MaxPool) fuse into one kernel */
		if (strcmp(models[m], "tiny_branches.dot") == 0) {
			assert_int_equal(r->n_folded, 0);
			assert_int_equal(r->launches_before, g->n_nodes);
			assert_int_equal(r->nodes_fused, 3);
			assert_int_equal(r->n_fusions, 1);
		}
		json_t *rep = pb_fuse_report_json(g, r, &o);
		assert_int_equal(json_integer_value(json_object_get(rep, "nodes_fused")),
		                 r->nodes_fused);
		assert_non_null(json_object_get(rep, "xla_baseline"));
		json_decref(rep);
		pb_fuse_result_free(r);
		/* The literal method (constants are nodes too) is acyclic as well
		 * (swin_t: ~1800 fusions, skipped under the sanitizers for time). */
		if (g->n_nodes < 1000 || !getenv("PB_SANITIZED")) {
			o.keep_constants = 1;
			if (pb_fuse_run(g, &o, &r, &err) != PB_OK)
				fail_msg("%s: %s", models[m], err.msg);
			check_fused(g, r);
			assert_int_equal(r->n_folded, 0);
			assert_int_equal(pb_fuse_xla_baseline(g, &o, &xb, &err), PB_OK);
			assert_true(r->nodes_fused >= xb.fused);
			pb_fuse_result_free(r);
		}
		pb_graph_free(g);
	}
}

/* The fused graph saved as JSON opens like any model; fusing it again keeps
 * the members of the nodes fused in the first pass (they used to be lost). */
static void test_fused_graph_round_trip(void **state)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	if (pb_graph_load("models/googlenet.onnx", NULL, &g, &err) != PB_OK)
		fail_msg("%s", err.msg);
	pb_fuse_opts o;
	pb_fuse_opts_default(&o);
	pb_fuse_result *r = NULL;
	assert_int_equal(pb_fuse_run(g, &o, &r, &err), PB_OK);
	assert_true(r->n_fusions > 0);
	char path[256];
	snprintf(path, sizeof path, "%s/pb_fuse_%d.json",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	assert_int_equal(pb_json_graph_save(r->fused, path, &err), PB_OK);
	pb_graph *f = NULL;
	if (pb_graph_load(path, NULL, &f, &err) != PB_OK)
		fail_msg("%s", err.msg);
	unlink(path);
	assert_int_equal(f->n_nodes, r->fused->n_nodes);
	pb_fuse_result *r2 = NULL;
	assert_int_equal(pb_fuse_run(f, &o, &r2, &err), PB_OK);
	int fused = 0;
	for (int i = 0; i < r2->fused->n_nodes; i++) {
		const pb_node *nd = &r2->fused->nodes[i];
		if (strcmp(nd->op, "Fused") != 0)
			continue;
		fused++;
		if (nd->n_members < 2)
			fail_msg("fused node '%s' lost its members", nd->name);
		assert_non_null(nd->member_names);
		assert_non_null(nd->member_names[0]);
	}
	assert_true(fused >= r->n_fusions);
	pb_fuse_result_free(r2);
	pb_fuse_result_free(r);
	pb_graph_free(f);
	pb_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rules),
	    cmocka_unit_test(test_rule_callback),
	    cmocka_unit_test(test_model_launches_and_occupancy),
	    cmocka_unit_test(test_model_from_layout),
	    cmocka_unit_test(test_fuse_parent_child),
	    cmocka_unit_test(test_nonfusable_removed),
	    cmocka_unit_test(test_max_members_and_min_gain),
	    cmocka_unit_test(test_cycle_guard_white_box),
	    cmocka_unit_test(test_all_models),
	    cmocka_unit_test(test_fused_graph_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
