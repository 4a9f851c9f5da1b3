/* test_shard.c — cluster layouts, grouping schemes, spec menus, collective
 * costs, the strategy MILP (Megatron pattern, data parallelism, brute force,
 * glpsol on the emitted LP), the command and its outputs. */
#include "pb_test.h"
#include "load.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "hw.h"
#include "session.h"
#include "shard/strategy/strategy_problem.h"
#include "shard/search/search.h"
#include "shard/strategy/strategy_milp.h"

/* ---- graph helpers ---- */

static int parse_dims(const char *s, int64_t *d)
{
	int n = 0;
	while (s && *s && n < PB_MAX_RANK) {
		char *e;
		d[n++] = strtoll(s, &e, 10);
		s = *e == 'x' ? e + 1 : e;
		if (!*e)
			break;
	}
	return n;
}

static void tens(pb_builder *b, const char *name, const char *dims, int init)
{
	int64_t d[PB_MAX_RANK];
	int r = parse_dims(dims, d);
	int t = pb_builder_tensor(b, name);
	pb_builder_set_shape(b, t, PB_DT_FLOAT, r, d, NULL);
	if (init)
		pb_builder_initializer(b, t, 1);
}

static int node(pb_builder *b, const char *name, const char *op, const char *ins, const char *out)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", ins);
	const char *in[8];
	int n = 0;
	for (char *tok = strtok(buf, ","); tok && n < 8; tok = strtok(NULL, ","))
		in[n++] = tok;
	const char *outs[1] = {out};
	return pb_builder_node(b, name, op, "", in, n, outs, 1);
}

static pb_graph *finish(pb_builder *b)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts o = {0};
	o.skip_shapes = 1;
	if (pb_graph_build(b, &o, &g, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return NULL;
	}
	return g;
}

/* x[4,128,1024] -> MatMul W1[1024,4096] -> Gelu -> MatMul W2[4096,1024] -> y */
static pb_graph *mlp_graph(void)
{
	pb_builder *b = pb_builder_new("mlp.test", "test");
	tens(b, "x", "4x128x1024", 0);
	pb_builder_input(b, pb_builder_tensor(b, "x"));
	tens(b, "W1", "1024x4096", 1);
	tens(b, "W2", "4096x1024", 1);
	tens(b, "h", "4x128x4096", 0);
	tens(b, "a", "4x128x4096", 0);
	tens(b, "y", "4x128x1024", 0);
	node(b, "fc1", "MatMul", "x,W1", "h");
	node(b, "gelu", "Gelu", "h", "a");
	node(b, "fc2", "MatMul", "a,W2", "y");
	pb_builder_output(b, pb_builder_tensor(b, "y"));
	return finish(b);
}

static void attr_i(pb_builder *b, int nid, const char *name, int64_t v)
{
	pb_attr a = {0};
	a.name = (char *)name;
	a.type = PB_ATTR_INT;
	a.i = v;
	pb_builder_attr(b, nid, &a);
}

static void attr_ints(pb_builder *b, int nid, const char *name, int n, const int64_t *v)
{
	pb_attr a = {0};
	a.name = (char *)name;
	a.type = PB_ATTR_INTS;
	a.n = n;
	a.ints = (int64_t *)v;
	pb_builder_attr(b, nid, &a);
}

/* 3 x (conv-relu), global average pool, flatten, gemm on a batch of n images */
static pb_graph *cnn_graph(int n)
{
	pb_builder *b = pb_builder_new("cnn.test", "test");
	char d[64];
	snprintf(d, sizeof d, "%dx3x32x32", n);
	tens(b, "x", d, 0);
	pb_builder_input(b, pb_builder_tensor(b, "x"));
	tens(b, "w1", "32x3x3x3", 1);
	tens(b, "w2", "64x32x3x3", 1);
	tens(b, "fw", "10x64", 1);
	tens(b, "fb", "10", 1);
	snprintf(d, sizeof d, "%dx32x32x32", n);
	tens(b, "c1", d, 0);
	tens(b, "r1", d, 0);
	snprintf(d, sizeof d, "%dx64x32x32", n);
	tens(b, "c2", d, 0);
	tens(b, "r2", d, 0);
	tens(b, "w3", "64x64x3x3", 1);
	tens(b, "c3", d, 0);
	tens(b, "r3", d, 0);
	snprintf(d, sizeof d, "%dx64x1x1", n);
	tens(b, "gp", d, 0);
	snprintf(d, sizeof d, "%dx64", n);
	tens(b, "fl", d, 0);
	snprintf(d, sizeof d, "%dx10", n);
	tens(b, "out", d, 0);
	const int64_t pads[] = {1, 1, 1, 1};
	int c = node(b, "conv1", "Conv", "x,w1", "c1");
	attr_ints(b, c, "pads", 4, pads);
	node(b, "relu1", "Relu", "c1", "r1");
	c = node(b, "conv2", "Conv", "r1,w2", "c2");
	attr_ints(b, c, "pads", 4, pads);
	node(b, "relu2", "Relu", "c2", "r2");
	c = node(b, "conv3", "Conv", "r2,w3", "c3");
	attr_ints(b, c, "pads", 4, pads);
	node(b, "relu3", "Relu", "c3", "r3");
	node(b, "gap", "GlobalAveragePool", "r3", "gp");
	node(b, "flat", "Flatten", "gp", "fl");
	c = node(b, "fc", "Gemm", "fl,fw,fb", "out");
	attr_i(b, c, "transB", 1);
	pb_builder_output(b, pb_builder_tensor(b, "out"));
	return finish(b);
}

static pb_cluster cluster_of(const char *text)
{
	pb_hw *hw = NULL;
	pb_error err = {0};
	int rc = pb_hw_load_string(text, "test-cluster.lua", &hw, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	pb_cluster c;
	rc = pb_cluster_from_hw(hw, &c, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	pb_hw_free(hw);
	return c;
}

static const char *small_1x8 =
    "return { kind='cluster', nodes=1, devices_per_node=8, device_memory_gb=0.04,"
    " device_tflops=100, intra_bw_gbs=150, intra_latency_us=5 }";
static const char *big_2x8 =
    "return { kind='cluster', nodes=2, devices_per_node=8, device_memory_gb=40,"
    " device_tflops=100, intra_bw_gbs=150, intra_latency_us=5, inter_bw_gbs=25,"
    " inter_latency_us=20 }";

/* ---- layouts and schemes ---- */

static void test_layouts_ship_and_parse(void **state)
{
	const char *files[] = {"layouts/cluster-1x8.lua", "layouts/cluster-2x8.lua",
	                       "layouts/cluster-4x8.lua"};
	const int devs[] = {8, 16, 32};
	for (int i = 0; i < 3; i++) {
		pb_hw *hw = NULL;
		pb_error err = {0};
		assert_int_equal(pb_hw_load(files[i], &hw, &err), PB_OK);
		pb_cluster c;
		assert_int_equal(pb_cluster_from_hw(hw, &c, &err), PB_OK);
		assert_int_equal(c.n_devices, devs[i]);
		assert_true(c.inter.bw < c.intra.bw);
		pb_cluster_free(&c);
		pb_hw_free(hw);
	}
}

static void test_layout_errors_name_file_and_field(void **state)
{
	pb_hw *hw = NULL;
	pb_error err = {0};
	int rc_nan;
	assert_int_equal(pb_hw_load_string("return { kind='cluster', nodes=2, devices_per_node=8,"
	                                   " device_memory_gb=16, intra_bw_gbs=100 }",
	                                   "bad.lua", &hw, &err),
	                 PB_OK);
	pb_cluster c;
	assert_int_equal(pb_cluster_from_hw(hw, &c, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "bad.lua"));
	assert_non_null(strstr(err.msg, "device_tflops"));
	pb_hw_free(hw);
	assert_int_equal(
	    pb_hw_load_string("return { kind='cluster', nodes=0, devices_per_node=8,"
	                      " device_memory_gb=16, device_tflops=1, intra_bw_gbs=1 }",
	                      "zero.lua", &hw, &err),
	    PB_OK);
	assert_int_equal(pb_cluster_from_hw(hw, &c, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "'nodes'"));
	pb_hw_free(hw);
	/* 0/0 is a Lua number but not a finite one */
	rc_nan = pb_hw_load_string("return { kind='cluster', nodes=1, devices_per_node=8,"
	                           " device_memory_gb=0/0, device_tflops=1, intra_bw_gbs=1 }",
	                           "nan.lua", &hw, &err);
	if (rc_nan == PB_OK) {
		rc_nan = pb_cluster_from_hw(hw, &c, &err);
		pb_hw_free(hw);
	}
	assert_int_equal(rc_nan, PB_EINPUT);
	assert_non_null(strstr(err.msg, "nan.lua"));
	assert_non_null(strstr(err.msg, "device_memory_gb"));
	assert_non_null(strstr(err.msg, "not a finite number"));
	assert_int_equal(
	    pb_hw_load_string("return { kind='manycore', cores=4 }", "mc.lua", &hw, &err), PB_OK);
	assert_int_not_equal(pb_cluster_from_hw(hw, &c, &err), PB_OK);
	assert_non_null(strstr(err.msg, "cluster"));
	pb_hw_free(hw);
}

static void test_schemes(void **state)
{
	pb_cluster c = cluster_of(big_2x8);
	pb_mesh m[64];
	char dropped[64][64];
	int nd = 0;
	int n = pb_cluster_mesh_schemes(&c, 2, m, 64, dropped, &nd, 64);
	/* 16, 2x8, 4x4, 8x2: 2x8 and 8x2 put different axes on the inter-node link */
	assert_int_equal(n, 4);
	assert_string_equal(m[0].name, "16");
	assert_string_equal(m[1].name, "2x8");
	assert_string_equal(m[2].name, "4x4");
	assert_string_equal(m[3].name, "8x2");
	assert_int_equal(nd, 0);
	assert_true(m[1].inter[0] && !m[1].inter[1]);
	assert_true(m[2].inter[0] && !m[2].inter[1]);
	assert_true(m[0].inter[0]);
	n = pb_cluster_mesh_schemes(&c, 4, m, 64, dropped, &nd, 64);
	int has2222 = 0, has224 = 0, has242 = 0, mirror242 = 0;
	for (int i = 0; i < n; i++) {
		has2222 |= !strcmp(m[i].name, "2x2x2x2");
		has224 |= !strcmp(m[i].name, "2x2x4");
		has242 |= !strcmp(m[i].name, "2x4x2");
	}
	for (int i = 0; i < nd; i++)
		mirror242 |= !strcmp(dropped[i], "2x4x2=2x2x4");
	/* 2x4x2 and 2x2x4 both put one 2 across nodes and 2, 4 inside a node */
	assert_true(has2222 && has224 && !has242 && mirror242);
	/* inside one node every axis is intra-node: 4x2 mirrors 2x4 */
	pb_cluster one = cluster_of(small_1x8);
	n = pb_cluster_mesh_schemes(&one, 2, m, 64, dropped, &nd, 16);
	assert_int_equal(n, 2);
	assert_string_equal(m[1].name, "2x4");
	assert_int_equal(nd, 1);
	assert_string_equal(dropped[0], "4x2=2x4");
	pb_mesh x;
	pb_error err = {0};
	assert_int_equal(pb_cluster_mesh_parse(&x, &c, "4x4", &err), PB_OK);
	assert_int_equal(pb_cluster_mesh_parse(&x, &c, "3x5", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "16 devices"));
	assert_int_equal(pb_cluster_mesh_parse(&x, &c, "4x4x", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "missing after the last 'x'"));
	/* nodes of 6 devices: a 4-axis group {4,5,6,7} spans two nodes, a 3-axis
	 * or a 6-axis stays inside one */
	pb_cluster six =
	    cluster_of("return { kind='cluster', nodes=2, devices_per_node=6, device_memory_gb=40,"
	               " device_tflops=100, intra_bw_gbs=150, inter_bw_gbs=25 }");
	assert_int_equal(pb_cluster_mesh_parse(&x, &six, "3x4", &err), PB_OK);
	assert_true(x.inter[0] && x.inter[1]);
	assert_int_equal(pb_cluster_mesh_parse(&x, &six, "4x3", &err), PB_OK);
	assert_true(x.inter[0] && !x.inter[1]);
	assert_int_equal(pb_cluster_mesh_parse(&x, &six, "2x6", &err), PB_OK);
	assert_true(x.inter[0] && !x.inter[1]);
	assert_int_equal(pb_cluster_mesh_parse(&x, &six, "2x2x3", &err), PB_OK);
	assert_true(x.inter[0] && !x.inter[1] && !x.inter[2]);
	assert_int_equal(pb_cluster_mesh_parse(&x, &six, "3x2x2", &err), PB_OK);
	assert_true(x.inter[0] && x.inter[1] && !x.inter[2]);
	pb_cluster_free(&six);
	pb_cluster_free(&c);
	pb_cluster_free(&one);
}

static void test_collective_costs(void **state)
{
	pb_link l = {100e9, 1e-5};
	double B = 8e6;
	assert_true(fabs(pb_spec_coll_time(PB_COLL_ALLGATHER, B, 8, &l) -
	                 (1e-5 + 7.0 / 8 * B / 100e9)) < 1e-15);
	assert_true(fabs(pb_spec_coll_time(PB_COLL_ALLREDUCE, B, 8, &l) -
	                 (1e-5 + 14.0 / 8 * B / 100e9)) < 1e-15);
	assert_true(fabs(pb_spec_coll_time(PB_COLL_REDUCESCATTER, B, 4, &l) -
	                 (1e-5 + 3.0 / 4 * B / 100e9)) < 1e-15);
	assert_true(fabs(pb_spec_coll_time(PB_COLL_ALLTOALL, B, 4, &l) -
	                 (1e-5 + 3.0 / 16 * B / 100e9)) < 1e-15);
	pb_cluster c = cluster_of(big_2x8);
	pb_mesh m;
	pb_error err = {0};
	assert_int_equal(pb_cluster_mesh_parse(&m, &c, "2x8", &err), PB_OK);
	signed char from[PB_MESH_MAX_AXES] = {0, PB_SPEC_P}, to[PB_MESH_MAX_AXES] = {0, PB_SPEC_R};
	pb_coll cl[4];
	int nc = 0;
	double t = pb_spec_reshard_cost(&m, 16e6, from, to, cl, &nc);
	/* P->R on the intra-node axis of the batch shard: all-reduce of 16 MB / 2 */
	assert_int_equal(nc, 1);
	assert_int_equal(cl[0].kind, PB_COLL_ALLREDUCE);
	assert_int_equal(cl[0].axis, 1);
	assert_true(fabs(cl[0].bytes - 8e6) < 1);
	assert_true(fabs(t - pb_spec_coll_time(PB_COLL_ALLREDUCE, 8e6, 8, &m.link[1])) < 1e-15);
	/* same spec: free; R -> S: a local slice, free */
	assert_true(pb_spec_reshard_cost(&m, 16e6, to, to, NULL, NULL) == 0);
	signed char rr[PB_MESH_MAX_AXES] = {PB_SPEC_R, PB_SPEC_R};
	assert_true(pb_spec_reshard_cost(&m, 16e6, rr, to, NULL, NULL) == 0);
	pb_cluster_free(&c);
}

static int find_label(const pb_strat1 *m, int n, const char *lab)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(m[i].label, lab))
			return i;
	return -1;
}

static void test_spec_menus(void **state)
{
	pb_builder *b = pb_builder_new("menu.test", "test");
	tens(b, "x", "4x128x768", 0);
	pb_builder_input(b, pb_builder_tensor(b, "x"));
	tens(b, "w", "768x768", 1);
	tens(b, "q", "4x128x768", 0);
	tens(b, "shp", "4", 1);
	tens(b, "r", "4x128x12x64", 0);
	tens(b, "t", "4x12x128x64", 0);
	tens(b, "s", "4x12x128x64", 0);
	node(b, "mm", "MatMul", "x,w", "q");
	node(b, "rs", "Reshape", "q,shp", "r");
	int tr = node(b, "tp", "Transpose", "r", "t");
	const int64_t perm[] = {0, 2, 1, 3};
	attr_ints(b, tr, "perm", 4, perm);
	int sm = node(b, "sm", "Softmax", "t", "s");
	attr_i(b, sm, "axis", -1);
	pb_builder_output(b, pb_builder_tensor(b, "s"));
	pb_graph *g = finish(b);
	assert_non_null(g);
	pb_strat1 m[64];
	int n = pb_spec_menu(g, 0, 1u, m, 64);
	/* rep, b0 (the only batch dim), m, n, k */
	assert_int_equal(n, 5);
	int k = find_label(m, n, "k");
	assert_true(k >= 0);
	assert_int_equal(m[k].in[0], 2);
	assert_int_equal(m[k].in[1], 0);
	assert_int_equal(m[k].out[0], PB_SPEC_P);
	int c = find_label(m, n, "n");
	assert_int_equal(m[c].in[0], PB_SPEC_R);
	assert_int_equal(m[c].in[1], 1);
	assert_int_equal(m[c].out[0], 2);
	/* reshape [4,128,768] -> [4,128,12,64]: d2 maps to the head dim 2 */
	n = pb_spec_menu(g, 1, 1u, m, 64);
	int d2 = find_label(m, n, "d2");
	assert_true(d2 >= 0);
	assert_int_equal(m[d2].out[0], 2);
	assert_true(find_label(m, n, "p") >= 0);
	/* transpose perm 0,2,1,3: input dim 1 -> output dim 2 */
	n = pb_spec_menu(g, 2, 1u, m, 64);
	int d1 = find_label(m, n, "d1");
	assert_int_equal(m[d1].out[0], 2);
	/* softmax over the last dim: never split dim 3 */
	n = pb_spec_menu(g, 3, 1u, m, 64);
	assert_true(find_label(m, n, "d3") < 0);
	assert_true(find_label(m, n, "d1") >= 0);
	/* divisibility: neither the batch of 4 nor the 12 heads divide over 8 devices */
	pb_cluster cl = cluster_of(small_1x8);
	pb_mesh mesh;
	pb_error err = {0};
	assert_int_equal(pb_cluster_mesh_parse(&mesh, &cl, "8", &err), PB_OK);
	pb_strat st[64];
	int ns = pb_spec_combine(g, 3, &mesh, m, n, 0, st, 64);
	for (int i = 0; i < ns; i++)
		assert_true(st[i].out[0][0] != 1 && st[i].out[0][0] != 0);
	assert_int_equal(ns, 2); /* replicate and the sequence dim */
	pb_cluster_free(&cl);
	pb_graph_free(g);
}

/* ---- solving ---- */

static int strategy_of(const pb_shard_problem *p, const pb_shard_result *r, const char *name)
{
	int nid = pb_graph_find_node(p->g, name);
	assert_true(nid >= 0);
	return pb_strategy_problem_node_strategy(p, r->choice, nid);
}

static void test_megatron_mlp(void **state)
{
	pb_graph *g = mlp_graph();
	assert_non_null(g);
	pb_cluster c = cluster_of(small_1x8);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	pb_shard_search *s = NULL;
	pb_error err = {0};
	assert_int_equal(pb_search_rows_new(g, &c, &o, "8", 2, NULL, &s, &err), PB_OK);
	int rc = pb_search_finish(s, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	const pb_shard_problem *p = s->best_problem;
	assert_true(p->forced); /* 32 MB of weights > 70% of 40 MB */
	const pb_shard_result *r = &s->best_result;
	assert_true(r->feasible);
	const pb_node *n = &g->nodes[0];
	(void)n;
	int f1 = pb_graph_find_node(g, "fc1"), f2 = pb_graph_find_node(g, "fc2");
	const pb_strat *s1 = &p->nodes[f1].strat[strategy_of(p, r, "fc1")];
	const pb_strat *s2 = &p->nodes[f2].strat[strategy_of(p, r, "fc2")];
	/* column split of W1, row (contraction) split of W2 */
	assert_string_equal(s1->label, "n");
	assert_int_equal(s1->in[1][0], 1);
	assert_string_equal(s2->label, "k");
	assert_int_equal(s2->in[1][0], 0);
	assert_int_equal(s2->out[0][0], PB_SPEC_P);
	json_t *rep = pb_search_report(s);
	json_t *colls = json_object_get(rep, "collectives");
	/* exactly one collective: the all-reduce of the partial output */
	assert_int_equal(json_array_size(colls), 1);
	json_t *c0 = json_array_get(colls, 0);
	assert_string_equal(json_string_value(json_object_get(c0, "kind")), "all-reduce");
	assert_string_equal(json_string_value(json_object_get(c0, "tensor")), "y");
	assert_true(json_is_number(json_object_get(rep, "step_time")));
	assert_string_equal(json_string_value(json_object_get(rep, "scheme")), "8");
	json_decref(rep);
	/* the plan is filled for the views */
	assert_non_null(s->plan);
	assert_string_equal(s->plan->kind, "shard");
	assert_true(pb_plan_metric(s->plan, "step_time", -1) > 0);
	assert_true(s->plan->group[f1] >= 0);
	assert_non_null(json_object_get(s->plan->detail, "ops"));
	pb_search_rows_free(s);
	/* with ample memory and this small batch nothing forces sharding the weights */
	pb_cluster_free(&c);
	pb_graph_free(g);
}

static void check_data_parallel(const pb_shard_search *s)
{
	const pb_shard_problem *p = s->best_problem;
	const pb_graph *g = p->g;
	for (int i = 0; i < g->n_nodes; i++) {
		if (!p->nodes[i].active)
			continue;
		const pb_strat *st =
		    &p->nodes[i]
		         .strat[pb_strategy_problem_node_strategy(p, s->best_result.choice, i)];
		if (st->share != s->cl.n_devices)
			fprintf(stderr, "%s: %s share %d scheme %s\n", g->nodes[i].name, st->label,
			        st->share, p->mesh.name);
		assert_int_equal(st->share, s->cl.n_devices);
		for (int a = 0; a < p->mesh.n_axes; a++) {
			if (st->out[0][a] != 0)
				fprintf(stderr, "%s: %s\n", g->nodes[i].name, st->label);
			assert_int_equal(st->out[0][a], 0);
		}
		for (int k = 0; k < g->nodes[i].n_inputs; k++) {
			int t = g->nodes[i].inputs[k];
			if (t >= 0 && p->tkind[t] == PB_TKIND_PARAM)
				for (int a = 0; a < p->mesh.n_axes; a++)
					assert_int_equal(st->in[k][a], PB_SPEC_R);
		}
	}
}

static void test_cnn_data_parallel(void **state)
{
	pb_graph *g = cnn_graph(512);
	assert_non_null(g);
	pb_cluster c = cluster_of(big_2x8);
	for (int train = 0; train < 2; train++) {
		pb_shard_opts o;
		pb_strategy_problem_opts_default(&o);
		o.train = train;
		pb_shard_search *s = NULL;
		pb_error err = {0};
		assert_int_equal(pb_search_rows_new(g, &c, &o, NULL, 2, NULL, &s, &err), PB_OK);
		assert_int_equal(pb_search_finish(s, &err), PB_OK);
		assert_int_equal(s->n_rows, 4);
		check_data_parallel(s);
		assert_true(s->rows[s->best].feasible);
		pb_search_rows_free(s);
	}
	pb_cluster_free(&c);
	pb_graph_free(g);
}

/* A small DAG: two matmuls feeding an add, a relu, a matmul (brute-forceable). */
static pb_graph *dag_graph(void)
{
	pb_builder *b = pb_builder_new("dag.test", "test");
	tens(b, "x", "8x64", 0);
	pb_builder_input(b, pb_builder_tensor(b, "x"));
	tens(b, "wa", "64x128", 1);
	tens(b, "wb", "64x128", 1);
	tens(b, "wc", "128x32", 1);
	tens(b, "a", "8x128", 0);
	tens(b, "bb", "8x128", 0);
	tens(b, "s", "8x128", 0);
	tens(b, "r", "8x128", 0);
	tens(b, "y", "8x32", 0);
	node(b, "ma", "MatMul", "x,wa", "a");
	node(b, "mb", "MatMul", "x,wb", "bb");
	node(b, "add", "Add", "a,bb", "s");
	node(b, "relu", "Relu", "s", "r");
	node(b, "mc", "MatMul", "r,wc", "y");
	pb_builder_output(b, pb_builder_tensor(b, "y"));
	return finish(b);
}

static double glpsol_objective(const char *lp)
{
	char cmd[512], out[256];
	snprintf(out, sizeof out, "%s.out", lp);
	snprintf(cmd, sizeof cmd, "glpsol --lp %s -o %s >/dev/null 2>&1", lp, out);
	if (system(cmd) != 0)
		return NAN;
	FILE *f = fopen(out, "r");
	if (!f)
		return NAN;
	char line[512];
	double v = NAN;
	while (fgets(line, sizeof line, f)) {
		char *p = strstr(line, "Objective:");
		if (p) {
			p = strchr(p, '=');
			if (p)
				v = strtod(p + 1, NULL);
		}
	}
	fclose(f);
	unlink(out);
	return v;
}

static void test_milp_equals_brute_force_and_glpsol(void **state)
{
	pb_graph *g = dag_graph();
	assert_non_null(g);
	const char *layouts[] = {
	    "return { kind='cluster', nodes=1, devices_per_node=4, device_memory_gb=1,"
	    " device_tflops=0.001, intra_bw_gbs=10, intra_latency_us=2 }",
	    /* tight memory: the weights must be split */
	    "return { kind='cluster', nodes=2, devices_per_node=2, device_memory_gb=0.00008,"
	    " device_tflops=0.0001, intra_bw_gbs=10, intra_latency_us=1, inter_bw_gbs=1,"
	    " inter_latency_us=10 }"};
	const char *schemes[] = {"4", "2x2"};
	int checked = 0;
	for (int li = 0; li < 2; li++) {
		pb_cluster c = cluster_of(layouts[li]);
		for (int si = 0; si < 2; si++) {
			for (int shrink = 0; shrink < 2; shrink++) {
				for (int train = 0; train < 2; train++) {
					pb_mesh m;
					pb_error err = {0};
					assert_int_equal(
					    pb_cluster_mesh_parse(&m, &c, schemes[si], &err),
					    PB_OK);
					pb_shard_opts o;
					pb_strategy_problem_opts_default(&o);
					o.no_shrink = !shrink;
					o.train = train;
					pb_shard_problem *p = NULL;
					assert_int_equal(
					    pb_strategy_problem_build(g, &c, &m, &o, &p, &err),
					    PB_OK);
					pb_shard_result bf, mi;
					int rb =
					    pb_strategy_milp_brute_force(p, 3000000, &bf, &err);
					if (rb ==
					    PB_EUSAGE) { /* space too large for this combination */
						pb_strategy_problem_free(p);
						continue;
					}
					assert_int_equal(rb, PB_OK);
					char lp[64];
					snprintf(lp, sizeof lp, "/tmp/pb_test_shard_%d.lp",
					         (int)getpid());
					assert_int_equal(
					    pb_strategy_milp_solve(p, lp, NULL, NULL, &mi, &err),
					    PB_OK);
					assert_true(mi.feasible);
					assert_true(fabs(mi.objective - bf.objective) <=
					            1e-9 * bf.objective + 1e-12);
					double gs = glpsol_objective(lp);
					assert_false(isnan(gs));
					assert_true(fabs(gs - mi.objective * 1e6) <=
					            1e-5 * fabs(gs) + 1e-6);
					unlink(lp);
					checked++;
					pb_strategy_problem_result_free(&bf);
					pb_strategy_problem_result_free(&mi);
					pb_strategy_problem_free(p);
				}
			}
		}
		pb_cluster_free(&c);
	}
	assert_true(checked >= 8);
	pb_graph_free(g);
}

static void test_opt_levels_and_rules(void **state)
{
	pb_graph *g = mlp_graph();
	pb_cluster c = cluster_of(big_2x8);
	double prev_cols = 1e300;
	double best0 = 0;
	for (int lvl = 0; lvl <= 3; lvl++) {
		pb_shard_opts o;
		pb_strategy_problem_opts_default(&o);
		o.opt_level = lvl;
		o.chunk = 1; /* level 3: one group per sub-MILP */
		pb_shard_search *s = NULL;
		pb_error err = {0};
		assert_int_equal(pb_search_rows_new(g, &c, &o, "2x8", 2, NULL, &s, &err), PB_OK);
		assert_int_equal(pb_search_finish(s, &err), PB_OK);
		double cols = (double)s->rows[0].size.cols;
		assert_true(cols <= prev_cols);
		prev_cols = cols;
		if (lvl == 0)
			best0 = s->rows[0].step_time;
		else /* pruning can only lose, never beat the full search */
			assert_true(s->rows[0].step_time >= best0 * (1 - 1e-9));
		pb_search_rows_free(s);
	}
	pb_cluster_free(&c);
	pb_graph_free(g);
}

static int keep_replicate(const pb_graph *g, int nid, const pb_strat *s, const pb_mesh *m, void *ud)
{
	(*(int *)ud)++;
	return s->share == 1;
}

static void test_user_rule(void **state)
{
	pb_graph *g = mlp_graph();
	pb_cluster c = cluster_of(big_2x8);
	pb_shard_rules *lib = pb_rules_new(1);
	int calls = 0;
	pb_shard_rule r = {"all-replicated", "test rule", NULL, keep_replicate, &calls, NULL};
	pb_error err = {0};
	assert_int_equal(pb_rules_add(lib, &r, &err), PB_OK);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	o.opt_level = 1;
	o.rules = lib;
	pb_shard_search *s = NULL;
	assert_int_equal(pb_search_rows_new(g, &c, &o, "16", 2, NULL, &s, &err), PB_OK);
	assert_int_equal(pb_search_finish(s, &err), PB_OK);
	assert_true(calls > 0);
	for (int i = 0; i < g->n_nodes; i++)
		assert_int_equal(s->best_problem->nodes[i].n_strat, 1);
	pb_search_rows_free(s);
	pb_rules_free(lib);
	pb_cluster_free(&c);
	pb_graph_free(g);
}

/* The root LP of a real model is solved in chunks: with yield_after = 0 the
 * steps come back while it runs (bound only once the basis is dual feasible),
 * then with the incumbent; the plan is the one-shot search's. */
static void test_solver_steps_in_root_lp(void **state)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_load("models/bert_base_like.onnx", NULL, &g, &err), PB_OK);
	pb_cluster c = cluster_of(big_2x8);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	o.bound = -1; /* GLPK's root LP, not the dual bound that usually replaces it */
	pb_shard_search *s = NULL;
	assert_int_equal(pb_search_rows_new(g, &c, &o, "16", 2, NULL, &s, &err), PB_OK);
	s->yield_after = 0;
	pb_solver *sv = pb_search_solver_new(s);
	pb_solver_progress pr;
	int in_lp = 0, steps = 0, bounds = 0;
	double maxb = -INFINITY;
	do {
		assert_int_equal(pb_solver_step(sv, 1, &pr, &err), PB_OK);
		steps++;
		if (s->co && s->n_events == 0) {
			in_lp++;
			assert_false(pr.improved);
			assert_false(isfinite(pr.incumbent));
			assert_non_null(strstr(pr.message, "incumbent -"));
			if (isfinite(pr.bound)) {
				bounds++;
				if (pr.bound > maxb)
					maxb = pr.bound;
			}
		}
	} while (!pr.done);
	assert_true(in_lp >= 2);
	assert_true(s->n_events >= 1);
	/* a dual-feasible basis gives a lower bound that holds */
	assert_true(bounds == 0 || maxb <= s->rows[0].step_time * (1 + 1e-9));
	pb_shard_search *ref = NULL;
	assert_int_equal(pb_search_rows_new(g, &c, &o, "16", 2, NULL, &ref, &err), PB_OK);
	assert_int_equal(pb_search_finish(ref, &err), PB_OK);
	assert_true(ref->rows[0].step_time == s->rows[0].step_time);
	assert_memory_equal(ref->best_result.choice, s->best_result.choice,
	                    (size_t)s->best_problem->n_groups * sizeof(int));
	pb_search_rows_free(ref);
	pb_solver_free(sv);
	pb_cluster_free(&c);
	pb_graph_free(g);
}

static void test_solver_steps(void **state)
{
	pb_graph *g = cnn_graph(64);
	pb_cluster c = cluster_of(big_2x8);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	pb_shard_search *s = NULL;
	pb_error err = {0};
	assert_int_equal(pb_search_rows_new(g, &c, &o, NULL, 2, NULL, &s, &err), PB_OK);
	pb_solver *sv = pb_search_solver_new(s);
	pb_solver_progress pr;
	int steps = 0, improved = 0, live = 0;
	do {
		int ev0 = s->n_events, next0 = s->next;
		assert_int_equal(pb_solver_step(sv, 1, &pr, &err), PB_OK);
		steps++;
		improved += pr.improved;
		assert_true(pr.fraction > 0);
		assert_true(s->n_events - ev0 <= 1); /* one incumbent per step at most */
		if (s->n_events > ev0) {
			/* reported while its scheme is still running, with its bound */
			assert_non_null(s->co);
			assert_int_equal(s->next, next0);
			assert_int_equal(s->events[ev0].scheme, s->next);
			assert_true(pr.incumbent == s->events[ev0].objective);
			assert_true(isfinite(pr.bound));
			assert_true(pr.bound <= pr.incumbent * (1 + 1e-9));
			assert_non_null(strstr(pr.message, "incumbent"));
			live++;
		}
	} while (!pr.done);
	assert_non_null(pb_solver_incumbent(sv));
	assert_true(improved >= 1);
	assert_true(s->n_events >= 4); /* GLPK reported an incumbent per scheme */
	assert_int_equal(live, s->n_events);
	assert_true(steps >= s->n_rows + live);
	/* the stepped search gives the plan of the one-shot search */
	pb_shard_search *ref = NULL;
	assert_int_equal(pb_search_rows_new(g, &c, &o, NULL, 2, NULL, &ref, &err), PB_OK);
	assert_int_equal(pb_search_finish(ref, &err), PB_OK);
	assert_int_equal(ref->best, s->best);
	assert_memory_equal(ref->best_result.choice, s->best_result.choice,
	                    (size_t)s->best_problem->n_groups * sizeof(int));
	pb_search_rows_free(ref);
	pb_solver_free(sv);
	/* freed in the middle of a scheme: GLPK unwinds, nothing leaks */
	assert_int_equal(pb_search_rows_new(g, &c, &o, NULL, 2, NULL, &s, &err), PB_OK);
	sv = pb_search_solver_new(s);
	do
		assert_int_equal(pb_solver_step(sv, 1, &pr, &err), PB_OK);
	while (!s->co && !pr.done);
	assert_non_null(s->co);
	pb_solver_free(sv);
	/* and a search stepped halfway is finished by pb_search_finish */
	assert_int_equal(pb_search_rows_new(g, &c, &o, NULL, 2, NULL, &s, &err), PB_OK);
	sv = pb_search_solver_new(s);
	do
		assert_int_equal(pb_solver_step(sv, 1, &pr, &err), PB_OK);
	while (!s->co && !pr.done);
	s->jobs = 2;
	assert_int_equal(pb_search_finish(s, &err), PB_OK);
	assert_null(s->co);
	assert_int_equal(s->next, s->n_rows);
	for (int i = 0; i < s->n_rows; i++)
		assert_int_equal(s->rows[i].status, 1);
	pb_solver_free(sv);
	pb_cluster_free(&c);
	pb_graph_free(g);
}

/* x[m,k] (input) . W[k,n] (parameter) -> y (model output) */
static pb_graph *matmul_graph(int64_t mm, int64_t k, int64_t n)
{
	pb_builder *b = pb_builder_new("mm.test", "test");
	char d[64];
	snprintf(d, sizeof d, "%ldx%ld", (long)mm, (long)k);
	tens(b, "x", d, 0);
	pb_builder_input(b, pb_builder_tensor(b, "x"));
	snprintf(d, sizeof d, "%ldx%ld", (long)k, (long)n);
	tens(b, "W", d, 1);
	snprintf(d, sizeof d, "%ldx%ld", (long)mm, (long)n);
	tens(b, "y", d, 0);
	node(b, "mm", "MatMul", "x,W", "y");
	pb_builder_output(b, pb_builder_tensor(b, "y"));
	return finish(b);
}

static const char *slow_1x8 =
    "return { kind='cluster', nodes=1, devices_per_node=8, device_memory_gb=40,"
    " device_tflops=1, intra_bw_gbs=150, intra_latency_us=5 }";

static double solve_scheme8(pb_graph *g, int pad, pb_shard_search **out)
{
	pb_cluster c = cluster_of(slow_1x8);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	o.pad = pad;
	pb_error err = {0};
	pb_shard_search *s = NULL;
	assert_int_equal(pb_search_rows_new(g, &c, &o, "8", 2, NULL, &s, &err), PB_OK);
	assert_int_equal(pb_search_finish(s, &err), PB_OK);
	pb_cluster_free(&c);
	double t = s->rows[0].step_time;
	*out = s;
	return t;
}

static void test_pad(void **state)
{
	/* 9 x 4001 . 4001 x 4001 on 8 devices: nothing divides by 8. Without
	 * padding the MatMul is replicated; with --pad it splits N into 8 x 501
	 * columns (4008 / 4001 padded), 8 / (4008 / 4001) times faster. */
	pb_graph *g = matmul_graph(9, 4001, 4001);
	pb_shard_search *a, *b;
	double t0 = solve_scheme8(g, 0, &a), t1 = solve_scheme8(g, 1, &b);
	const pb_shard_problem *pa = a->best_problem, *pb = b->best_problem;
	int mm = 0;
	while (strcmp(g->nodes[mm].name, "mm") != 0)
		mm++;
	const pb_strat *sa =
	    &pa->nodes[mm].strat[pb_strategy_problem_node_strategy(pa, a->best_result.choice, mm)];
	const pb_strat *sb =
	    &pb->nodes[mm].strat[pb_strategy_problem_node_strategy(pb, b->best_result.choice, mm)];
	assert_int_equal(sa->share, 1);
	assert_int_equal(pa->nodes[mm].n_strat, 1); /* only replicate divides */
	assert_int_equal(sb->share, 8);
	assert_int_equal(sb->out[0][0], 1); /* columns */
	assert_true(fabs(sb->pad - 4008.0 / 4001.0) < 1e-12);
	assert_true(fabs(t0 / t1 - 8.0 / (4008.0 / 4001.0)) < 1e-9);
	/* memory uses the padded shard of W: 4001 x 501 floats */
	assert_true(
	    fabs(pb->nodes[mm]
	             .mem_param[pb_strategy_problem_node_strategy(pb, b->best_result.choice, mm)] -
	         4001.0 * 501 * 4) < 1);
	/* the task list of the last device shows the padded local shape */
	char dir[64];
	snprintf(dir, sizeof dir, "/tmp/pb_test_shard_pad_%d", (int)getpid());
	pb_error err = {0};
	assert_int_equal(pb_search_report_emit_tasks(b, dir, &err), PB_OK);
	char path[128];
	snprintf(path, sizeof path, "%s/device_7.json", dir);
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);
	assert_non_null(j);
	json_t *y = json_array_get(
	    json_object_get(json_array_get(json_object_get(j, "ops"), 0), "outputs"), 0);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(y, "shape"), 1)), 501);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(y, "offset"), 1)), 3507);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(y, "pad"), 1)), 7);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(y, "pad"), 0)), 0);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(y, "padded_shape"), 1)),
	                 4008);
	json_decref(j);
	for (int d = 0; d < 8; d++) {
		snprintf(path, sizeof path, "%s/device_%d.json", dir, d);
		unlink(path);
	}
	rmdir(dir);
	pb_search_rows_free(a);
	pb_search_rows_free(b);
	pb_graph_free(g);

	/* 64 x 4096 . 4096 x 9: M splits exactly, N = 9 only with padding
	 * (16 / 9): --pad offers it, but the exact M split stays optimal. */
	g = matmul_graph(64, 4096, 9);
	t0 = solve_scheme8(g, 0, &a);
	t1 = solve_scheme8(g, 1, &b);
	assert_true(t0 == t1);
	pa = a->best_problem;
	pb = b->best_problem;
	mm = 0;
	while (strcmp(g->nodes[mm].name, "mm") != 0)
		mm++;
	sb = &pb->nodes[mm].strat[pb_strategy_problem_node_strategy(pb, b->best_result.choice, mm)];
	assert_true(sb->pad == 1);
	int padded = 0;
	for (int s = 0; s < pb->nodes[mm].n_strat; s++)
		if (pb->nodes[mm].strat[s].pad > 1) {
			padded++;
			assert_true(pb->nodes[mm].cost[s] > t1);
		}
	assert_true(padded >= 1);
	assert_true(pb->nodes[mm].n_strat > pa->nodes[mm].n_strat);
	pb_search_rows_free(a);
	pb_search_rows_free(b);
	pb_graph_free(g);
}

static int count_progress(void *ud, int done, int total)
{
	int *calls = ud;
	assert_true(done >= 0 && done <= total);
	(*calls)++;
	return 0;
}

static int cancel_progress(void *ud, int done, int total)
{
	(void)ud;
	(void)done;
	(void)total;
	return 1;
}

/* Worker processes give the serial result: table, best scheme, choice per
 * group, report and incumbents (objectives in scheme order). */
static void check_parallel_equals_serial(pb_graph *g, const char *layout_kind)
{
	pb_cluster c = cluster_of(layout_kind);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	pb_error err = {0};
	pb_shard_search *a = NULL, *b = NULL;
	assert_int_equal(pb_search_rows_new(g, &c, &o, NULL, 2, NULL, &a, &err), PB_OK);
	assert_int_equal(pb_search_rows_new(g, &c, &o, NULL, 2, NULL, &b, &err), PB_OK);
	assert_true(a->n_rows >= 3);
	assert_int_equal(pb_search_finish(a, &err), PB_OK);
	int calls = 0;
	assert_int_equal(pb_search_run_parallel(b, 3, count_progress, &calls, &err), PB_OK);
	assert_true(calls >= 1);
	assert_int_equal(pb_search_finish(b, &err), PB_OK);
	assert_int_equal(a->n_rows, b->n_rows);
	for (int i = 0; i < a->n_rows; i++) {
		const pb_shard_row *x = &a->rows[i], *y = &b->rows[i];
		assert_string_equal(x->mesh.name, y->mesh.name);
		assert_int_equal(x->status, y->status);
		assert_true(x->step_time == y->step_time);
		assert_true(x->memory == y->memory);
		assert_int_equal(x->feasible, y->feasible);
		assert_int_equal(x->optimal, y->optimal);
		assert_int_equal(x->size.cols, y->size.cols);
		assert_int_equal(x->groups, y->groups);
		assert_int_equal(x->incumbents, y->incumbents);
	}
	assert_int_equal(a->best, b->best);
	assert_int_equal(a->best_problem->n_groups, b->best_problem->n_groups);
	assert_memory_equal(a->best_result.choice, b->best_result.choice,
	                    (size_t)a->best_problem->n_groups * sizeof(int));
	assert_true(a->best_result.objective == b->best_result.objective);
	assert_int_equal(a->n_events, b->n_events);
	for (int k = 0; k < a->n_events; k++) {
		assert_int_equal(a->events[k].scheme, b->events[k].scheme);
		assert_true(a->events[k].objective == b->events[k].objective);
	}
	json_t *ra = pb_search_report(a), *rb = pb_search_report(b);
	assert_true(json_equal(json_object_get(ra, "ops"), json_object_get(rb, "ops")));
	assert_true(
	    json_equal(json_object_get(ra, "collectives"), json_object_get(rb, "collectives")));
	json_decref(ra);
	json_decref(rb);
	pb_search_rows_free(a);
	pb_search_rows_free(b);
	pb_cluster_free(&c);
}

static void test_parallel_equals_serial(void **state)
{
	pb_graph *g = cnn_graph(64);
	check_parallel_equals_serial(g, big_2x8);
	pb_graph_free(g);
	g = mlp_graph();
	check_parallel_equals_serial(g, big_2x8);
	pb_graph_free(g);
	/* cancelling kills the workers and leaves no child behind */
	g = mlp_graph();
	pb_cluster c = cluster_of(big_2x8);
	pb_shard_opts o;
	pb_strategy_problem_opts_default(&o);
	pb_error err = {0};
	pb_shard_search *s = NULL;
	assert_int_equal(pb_search_rows_new(g, &c, &o, NULL, 2, NULL, &s, &err), PB_OK);
	assert_int_equal(pb_search_run_parallel(s, 2, cancel_progress, NULL, &err), PB_ECANCEL);
	assert_true(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
	pb_search_rows_free(s);
	pb_cluster_free(&c);
	pb_graph_free(g);
}

/* shard --start attaches the search; 'step' advances it one incumbent at a
 * time (the output names the running scheme's incumbent) until done, and the
 * session's plan is the one `shard` computes in one go. */
static void test_command_start_step(void **state)
{
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, cnn_graph(64), "cnn.test");
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	pb_cmd_ctx ctx = {s, out, stderr, 0, 0, NULL, NULL};
	pb_error err = {0};
	assert_int_equal(pb_cmd_run_line(&ctx, "shard --layout layouts/cluster-2x8.lua", &err),
	                 PB_OK);
	double ref = pb_plan_metric(s->plan, "step_time", NAN);
	assert_true(isfinite(ref));
	assert_int_equal(
	    pb_cmd_run_line(&ctx, "shard --layout layouts/cluster-2x8.lua --start", &err), PB_OK);
	assert_non_null(s->solver);
	int steps = 0, live = 0;
	for (;;) {
		fflush(out);
		size_t at = len;
		assert_int_equal(pb_cmd_run_line(&ctx, "step", &err), PB_OK);
		fflush(out);
		steps++;
		live +=
		    strstr(buf + at, "incumbent ") != NULL && strstr(buf + at, "bound ") != NULL;
		if (strstr(buf + at, "(done)"))
			break;
		assert_true(steps < 10000);
	}
	assert_true(live >= 1);
	assert_true(pb_plan_metric(s->plan, "step_time", NAN) == ref);
	assert_int_equal(pb_cmd_run_line(&ctx,
	                                 "shard --layout layouts/cluster-2x8.lua --start "
	                                 "--pipeline auto",
	                                 &err),
	                 PB_EUSAGE);
	fclose(out);
	free(buf);
	pb_session_free(s);
}

static void test_command_outputs(void **state)
{
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, mlp_graph(), "mlp.test");
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	pb_cmd_ctx ctx = {s, out, stderr, 0, 0, NULL, NULL};
	pb_error err = {0};
	char dir[64];
	snprintf(dir, sizeof dir, "/tmp/pb_test_shard_tasks_%d", (int)getpid());
	char line[512];
	snprintf(line, sizeof line,
	         "shard --layout layouts/cluster-1x8.lua --json "
	         "--emit-tasks %s -o /tmp/pb_test_shard_plan.json",
	         dir);
	int rc = pb_cmd_run_line(&ctx, line, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	fclose(out);
	json_error_t je;
	json_t *j = json_loads(buf, 0, &je);
	assert_non_null(j);
	assert_true(json_is_number(json_object_get(j, "step_time")));
	assert_true(json_is_string(json_object_get(j, "scheme")));
	assert_int_equal(json_array_size(json_object_get(j, "schemes")), 2);
	assert_int_equal(json_array_size(json_object_get(j, "ops")), 3);
	json_decref(j);
	free(buf);
	assert_non_null(s->plan);
	assert_string_equal(s->plan->kind, "shard");
	pb_plan *loaded = NULL;
	assert_int_equal(
	    pb_plan_load("/tmp/pb_test_shard_plan.json", s->graph->n_nodes, &loaded, &err), PB_OK);
	pb_plan_free(loaded);
	for (int d = 0; d < 8; d++) {
		char path[128];
		snprintf(path, sizeof path, "%s/device_%d.json", dir, d);
		json_t *t = json_load_file(path, 0, &je);
		assert_non_null(t);
		assert_int_equal(json_integer_value(json_object_get(t, "device")), d);
		assert_int_equal(json_array_size(json_object_get(t, "ops")), 3);
		json_decref(t);
		unlink(path);
	}
	rmdir(dir);
	unlink("/tmp/pb_test_shard_plan.json");
	/* bad input: a non-cluster layout */
	out = open_memstream(&buf, &len);
	ctx.out = out;
	rc = pb_cmd_run_line(&ctx, "shard --scheme 3x3", &err);
	fclose(out);
	free(buf);
	assert_int_equal(rc, PB_EUSAGE);
	assert_non_null(strstr(err.msg, "3x3"));
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layouts_ship_and_parse),
	    cmocka_unit_test(test_layout_errors_name_file_and_field),
	    cmocka_unit_test(test_schemes),
	    cmocka_unit_test(test_collective_costs),
	    cmocka_unit_test(test_spec_menus),
	    cmocka_unit_test(test_megatron_mlp),
	    cmocka_unit_test(test_cnn_data_parallel),
	    cmocka_unit_test(test_milp_equals_brute_force_and_glpsol),
	    cmocka_unit_test(test_opt_levels_and_rules),
	    cmocka_unit_test(test_user_rule),
	    cmocka_unit_test(test_solver_steps),
	    cmocka_unit_test(test_solver_steps_in_root_lp),
	    cmocka_unit_test(test_parallel_equals_serial),
	    cmocka_unit_test(test_pad),
	    cmocka_unit_test(test_command_outputs),
	    cmocka_unit_test(test_command_start_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
