/* test_plan_edits.c — hand edits of map and fuse plans through the command
 * table (issue 18.1): `backend` moves a node or its aggregate to another
 * backend of a map plan, `fuse-in` / `fuse-out` move a node into or out of a
 * fusion group of a fuse plan; each prints the cost before and after, is
 * undoable, refuses with the reason (unsupported op, load-time constant, no
 * change, a path between the nodes, a cycle between fusion groups, a rule),
 * runs on a saved plan from the CLI form (--plan FILE -o FILE) and from Lua
 * (pb.cmd); `boundary` on a pipeline plan moves nodes between stages and
 * re-plans the stages; `pin` fixes an operator's sharding spec of a shard
 * plan and re-solves the rest. */
#include "pb_test.h"

#include <unistd.h>

#define HETERO "layouts/hetero.lua"
#define KINDS "tests/data/branch_kinds.dot"
#define RELU "/layer1/layer1.0/relu/Relu"

static char *run_fail(pb_session *s, const char *line)
{
	int rc;
	char *o = pb_test_run_cmd(s, line, &rc);
	if (rc == PB_OK)
		fail_msg("'%s' should be refused; printed %s", line, o);
	return o;
}

static void expect_refused(pb_session *s, const char *line, const char *why)
{
	double before = pb_plan_metric(s->plan, "serial_time", NAN);
	int groups = s->plan->n_groups;
	char *o = run_fail(s, line);
	if (!strstr(o, why))
		fail_msg("'%s': expected '%s' in: %s", line, why, o);
	free(o);
	/* the plan is unchanged */
	assert_int_equal(s->plan->n_groups, groups);
	double after = pb_plan_metric(s->plan, "serial_time", NAN);
	assert_true((isnan(before) && isnan(after)) || before == after);
}

static int node_backend(const pb_session *s, const char *name)
{
	int v = pb_graph_find_node(s->graph, name);
	assert_true(v >= 0);
	json_t *nb = json_object_get(s->plan->detail, "node_backend");
	return (int)json_integer_value(json_array_get(nb, (size_t)v));
}

static void test_map_backend_edits(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	json_t *m = pb_test_run_json(s, "map models/resnet18.onnx --layout " HETERO " --json");
	double transfer_aware = json_real_value(json_object_get(m, "serial_time"));
	json_decref(m);
	json_decref(pb_test_run_json(s, "map --priority --json"));
	double base = pb_plan_metric(s->plan, "serial_time", NAN);
	assert_int_equal(node_backend(s, RELU), 2); /* fpga by priority */

	/* One node to the gpu: two more aggregates, the cost reported. */
	json_t *j = pb_test_run_json(s, "backend --node " RELU " --to gpu --json");
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "map");
	double bj = json_real_value(json_object_get(json_object_get(j, "before"), "serial_time"));
	assert_true(fabs(bj - base) <= 1e-9 * base); /* JSON keeps 12 digits */
	double after = json_real_value(json_object_get(json_object_get(j, "after"), "serial_time"));
	assert_true(fabs(after - pb_plan_metric(s->plan, "serial_time", NAN)) <= 1e-9 * after);
	assert_true(after > base); /* a lone gpu node costs two transfers */
	assert_int_equal(
	    (int)json_number_value(json_object_get(json_object_get(j, "after"), "aggregates")), 4);
	json_decref(j);
	assert_int_equal(node_backend(s, RELU), 1);
	assert_string_equal(s->plan->method, "manual");

	/* Undo restores the priority plan. */
	int rc;
	free(pb_test_run_cmd(s, "undo", &rc));
	assert_int_equal(rc, PB_OK);
	assert_true(pb_plan_metric(s->plan, "serial_time", NAN) == base);
	assert_int_equal(node_backend(s, RELU), 2);

	/* Refusals leave the plan as it is and say why. */
	expect_refused(s, "backend --node /fc/Gemm --to fpga", "does not support op Gemm");
	expect_refused(s, "backend --node " RELU " --to fpga", "already runs on fpga");
	expect_refused(s, "backend --node Identity_0 --to gpu", "load-time constant");
	expect_refused(s, "backend --node nosuch --to gpu", "no node named 'nosuch'");
	expect_refused(s, "backend --node " RELU " --to tpu", "no backend named 'tpu'");

	/* The whole fpga aggregate to the gpu: the transfer-aware mapper's plan
	 * (found by another path) is exactly this one. */
	j = pb_test_run_json(s, "backend --node " RELU " --to gpu --region --json");
	double region =
	    json_real_value(json_object_get(json_object_get(j, "after"), "serial_time"));
	assert_true(fabs(region - transfer_aware) <= 1e-9 * transfer_aware);
	json_decref(j);

	/* Another plan kind: refused, naming it. */
	json_decref(pb_test_run_json(s, "fuse --json"));
	char *o = run_fail(s, "backend --node " RELU " --to gpu");
	assert_non_null(strstr(o, "'fuse' plan"));
	free(o);
	pb_session_free(s);
}

static void test_cli_on_saved_plan(void **state)
{
	(void)state;
	char in[] = "/tmp/pb_edit_in_XXXXXX.json", out[] = "/tmp/pb_edit_out_XXXXXX.json";
	int fd = mkstemps(in, 5);
	assert_true(fd >= 0);
	close(fd);
	fd = mkstemps(out, 5);
	assert_true(fd >= 0);
	close(fd);
	char line[512];
	pb_session *s = pb_session_new();
	snprintf(line, sizeof line, "map models/resnet18.onnx --layout %s --priority -o %s --json",
	         HETERO, in);
	json_decref(pb_test_run_json(s, line));
	pb_session_free(s);
	/* A fresh session, as the CLI: model, layout, saved plan, output. */
	s = pb_session_new();
	snprintf(line, sizeof line,
	         "backend models/resnet18.onnx --layout %s --plan %s --node %s --to gpu -o %s "
	         "--json",
	         HETERO, in, RELU, out);
	json_decref(pb_test_run_json(s, line));
	pb_session_free(s);
	s = pb_session_new();
	snprintf(line, sizeof line, "open models/resnet18.onnx");
	int rc;
	free(pb_test_run_cmd(s, line, &rc));
	assert_int_equal(rc, PB_OK);
	snprintf(line, sizeof line, "plan --load %s", out);
	free(pb_test_run_cmd(s, line, &rc));
	assert_int_equal(rc, PB_OK);
	assert_int_equal(node_backend(s, RELU), 1);
	assert_string_equal(s->plan->method, "manual");
	pb_session_free(s);
	unlink(in);
	unlink(out);
}

static double fuse_time(const pb_session *s)
{
	return pb_plan_metric(s->plan, "time_after", NAN);
}

static void test_fuse_edits(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	json_decref(pb_test_run_json(s, "fuse " KINDS " --json"));
	double t0 = fuse_time(s);
	int l0 = (int)pb_plan_metric(s->plan, "launches_after", -1);
	int pa1 = pb_graph_find_node(s->graph, "pa1"), pb1 = pb_graph_find_node(s->graph, "pb1");
	assert_true(s->plan->group[pa1] >= 0 && s->plan->group[pa1] == s->plan->group[pb1]);

	/* Out: one more launch, the modelled time from the same model. */
	json_t *j = pb_test_run_json(s, "fuse-out --node pa1 --json");
	assert_true(fabs(json_real_value(json_object_get(json_object_get(j, "before"), "time")) -
	                 t0) <= 1e-9 * t0);
	assert_int_equal(
	    (int)json_number_value(json_object_get(json_object_get(j, "after"), "launches")),
	    l0 + 1);
	json_decref(j);
	assert_int_equal(s->plan->group[pa1], -1);
	assert_int_equal(s->plan->group[pb1], -1); /* the pair dissolved */
	assert_true(fuse_time(s) > t0);

	/* In again: the fuse command's plan and time come back. */
	json_decref(pb_test_run_json(s, "fuse-in --node pa1 --with pb1 --json"));
	assert_true(s->plan->group[pa1] >= 0 && s->plan->group[pa1] == s->plan->group[pb1]);
	assert_true(fabs(fuse_time(s) - t0) <= 1e-12 * t0);
	assert_int_equal((int)pb_plan_metric(s->plan, "launches_after", -1), l0);

	/* Undo twice: back to the fuse plan. */
	int rc;
	free(pb_test_run_cmd(s, "undo", &rc));
	free(pb_test_run_cmd(s, "undo", &rc));
	assert_string_equal(s->plan->method, "branch-groups");

	/* Refusals. */
	expect_refused(s, "fuse-in --node pa1 --with pa2", "not parallel");
	expect_refused(s, "fuse-in --node q1 --with r1", "already in one fusion group");
	expect_refused(s, "fuse-out --node j0", "in no fusion group");
	expect_refused(s, "fuse-in --node pa1", "--with NAME is required");
	/* A Lua rule: Mul is not fusable; m1 and m2 are parallel Mul nodes
	 * (m2 first taken out of its group with q2). */
	static char buf[1 << 14];
	pb_test_session t;
	pb_test_session_open(&t, buf, sizeof buf);
	pb_error err = {0};
	assert_int_equal(pb_test_session_cmd(&t, "fuse " KINDS, &err), PB_OK);
	assert_int_equal(pb_test_session_cmd(&t, "fuse-out --node m2", &err), PB_OK);
	assert_int_equal(pb_test_session_cmd(&t, "fuse-in --node m1 --with m2", &err), PB_OK);
	assert_int_equal(pb_test_session_cmd(&t, "undo", &err), PB_OK);
	assert_int_equal(pb_test_session_lua(&t,
	                                     "pb.rule{ name = 'no_mul', fusable = false, "
	                                     "match = function(op) return op.op == 'Mul' end }",
	                                     "no_mul.lua", &err),
	                 PB_OK);
	assert_int_equal(pb_test_session_cmd(&t, "fuse-in --node m1 --with m2", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "not fusable"));
	/* From Lua through pb.cmd. */
	assert_int_equal(pb_test_session_lua(&t, "pb.cmd('fuse-out --node pa1')", "edit.lua", &err),
	                 PB_OK);
	int v = pb_graph_find_node(t.s->graph, "pa1");
	assert_int_equal(t.s->plan->group[v], -1);
	pb_test_session_close(&t);
	pb_session_free(s);
}

static void test_fuse_cycle_refused(void **state)
{
	(void)state;
	/* s -> a -> c -> t, s -> b -> d -> t: {a, d} and {b, c} are each
	 * parallel pairs, but a -> c and b -> d make the two kernels wait on
	 * each other. */
	char path[] = "/tmp/pb_edit_cycle_XXXXXX.dot";
	int fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	const char *dot = "digraph c { node [op=Relu shape=\"1x1024\" flops=1024 out_bytes=4096];\n"
	                  " s -> a -> c -> t; s -> b -> d -> t; t [op=Add]; }\n";
	assert_true(write(fd, dot, strlen(dot)) == (ssize_t)strlen(dot));
	close(fd);
	pb_session *s = pb_session_new();
	char line[256];
	snprintf(line, sizeof line, "fuse %s --json", path);
	json_decref(pb_test_run_json(s, line));
	/* Start from no fusion at all: take every fused node out. */
	const char *names[] = {"a", "b", "c", "d"};
	for (int i = 0; i < 4; i++) {
		int v = pb_graph_find_node(s->graph, names[i]);
		if (s->plan->group[v] >= 0) {
			snprintf(line, sizeof line, "fuse-out --node %s", names[i]);
			int rc;
			free(pb_test_run_cmd(s, line, &rc));
			assert_int_equal(rc, PB_OK);
		}
	}
	json_decref(pb_test_run_json(s, "fuse-in --node a --with d --json"));
	expect_refused(s, "fuse-in --node b --with c", "cycle");
	pb_session_free(s);
	unlink(path);
}

static void test_pipeline_boundary(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	json_decref(pb_test_run_json(s, "pipeline models/resnet18.onnx --layout "
	                                "layouts/cluster-1x8.lua --stages 2 --batch 8 --json"));
	const pb_plan *p0 = s->plan;
	double t0 = pb_plan_metric(p0, "step_time", NAN);
	int n = p0->n_nodes, c0 = 0;
	int *g0 = malloc((size_t)n * sizeof *g0);
	for (int v = 0; v < n; v++) {
		g0[v] = p0->group[v];
		c0 += g0[v] == 0;
	}
	/* Stage 0 takes the first 3 nodes of stage 1. */
	json_t *j = pb_test_run_json(s, "boundary 0 3 --json");
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "pipeline");
	double bj = json_real_value(json_object_get(json_object_get(j, "before"), "step_time"));
	double aj = json_real_value(json_object_get(json_object_get(j, "after"), "step_time"));
	assert_true(fabs(bj - t0) <= 1e-9 * t0);
	assert_true(fabs(aj - pb_plan_metric(s->plan, "step_time", NAN)) <= 1e-9 * aj);
	json_decref(j);
	int c1 = 0, moved = 0;
	for (int v = 0; v < n; v++) {
		c1 += s->plan->group[v] == 0;
		moved += g0[v] == 1 && s->plan->group[v] == 0;
		/* nothing else changes */
		assert_true(g0[v] == s->plan->group[v] || (g0[v] == 1 && s->plan->group[v] == 0));
	}
	assert_int_equal(c1, c0 + 3);
	assert_int_equal(moved, 3);
	assert_string_equal(s->plan->method, "manual");
	/* The planner's own split is the optimum of its objective: a moved
	 * boundary does not make the slowest stage cheaper in FLOPs. */
	assert_true(pb_plan_metric(s->plan, "step_time", NAN) > 0);
	/* Undo restores it. */
	int rc;
	free(pb_test_run_cmd(s, "undo", &rc));
	for (int v = 0; v < n; v++)
		assert_int_equal(s->plan->group[v], g0[v]);
	assert_true(pb_plan_metric(s->plan, "step_time", NAN) == t0);
	/* Refusals. */
	char line[64];
	snprintf(line, sizeof line, "boundary 0 -%d", c0);
	char *o = run_fail(s, line);
	assert_non_null(strstr(o, "each must keep at least one"));
	free(o);
	o = run_fail(s, "boundary 1 1");
	assert_non_null(strstr(o, "no next group"));
	free(o);
	free(g0);
	pb_session_free(s);
}

static const char *op_strategy(const pb_plan *p, const char *name, const pb_graph *g)
{
	int nid = pb_graph_find_node(g, name);
	const json_t *ops = json_object_get(p->detail, "ops");
	for (size_t i = 0; i < json_array_size(ops); i++) {
		const json_t *o = json_array_get(ops, i);
		if (json_integer_value(json_object_get(o, "id")) == nid)
			return json_string_value(json_object_get(o, "strategy"));
	}
	return NULL;
}

#define CONV "/layer1/layer1.0/conv1/Conv"

static void test_pin_spec(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	json_decref(pb_test_run_json(s,
	                             "shard models/resnet18.onnx --layout layouts/cluster-1x8.lua "
	                             "--scheme 8 --batch 8 --jobs 1 --json"));
	double t0 = pb_plan_metric(s->plan, "step_time", NAN);
	assert_string_equal(op_strategy(s->plan, CONV, s->graph), "b0");
	json_t *j = pb_test_run_json(s, "pin --node " CONV " --spec rep --json");
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "shard");
	json_decref(j);
	assert_string_equal(op_strategy(s->plan, CONV, s->graph), "rep");
	/* The MILP optimum with one operator's choice restricted is no better
	 * than the free optimum. */
	double t1 = pb_plan_metric(s->plan, "step_time", NAN);
	assert_true(t1 >= t0 * (1 - 1e-9));
	assert_int_equal(json_array_size(json_object_get(s->plan->detail, "pinned")), 1);
	/* A second pin keeps the first. */
	const char *gemm = op_strategy(s->plan, "/fc/Gemm", s->graph);
	assert_non_null(gemm);
	const char *other = strcmp(gemm, "rep") == 0 ? "m" : "rep";
	char line[128];
	snprintf(line, sizeof line, "pin --node /fc/Gemm --spec %s", other);
	int rc;
	free(pb_test_run_cmd(s, line, &rc));
	assert_int_equal(rc, PB_OK);
	assert_string_equal(op_strategy(s->plan, "/fc/Gemm", s->graph), other);
	assert_string_equal(op_strategy(s->plan, CONV, s->graph), "rep");
	assert_int_equal(json_array_size(json_object_get(s->plan->detail, "pinned")), 2);
	/* Refused: not a candidate; undo twice: the solver's plan again. */
	char *o = run_fail(s, "pin --node " CONV " --spec zz");
	assert_non_null(strstr(o, "not a candidate spec"));
	free(o);
	free(pb_test_run_cmd(s, "undo", &rc));
	free(pb_test_run_cmd(s, "undo", &rc));
	assert_true(pb_plan_metric(s->plan, "step_time", NAN) == t0);
	assert_string_equal(op_strategy(s->plan, CONV, s->graph), "b0");
	pb_session_free(s);
}

/* pin --list: the operator's candidates, its own cost per spec; a pinned
 * plan carries the bound of its scheme with the pins (issue 37: bound null,
 * optimal false): pinned to the spec the proven optimum already has, the
 * pinned problem's optimum is that optimum, labelled so. */
static void test_pin_bound(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	json_decref(pb_test_run_json(s,
	                             "shard models/resnet18.onnx --layout layouts/cluster-1x8.lua "
	                             "--scheme 8 --batch 8 --jobs 1 --json"));
	double t0 = pb_plan_metric(s->plan, "step_time", NAN);
	assert_true(json_is_true(json_object_get(s->plan->detail, "optimal")));
	json_t *j = pb_test_run_json(s, "pin --node " CONV " --list --json");
	const json_t *c = json_object_get(j, "candidates");
	double t_rep = NAN, t_b0 = NAN;
	int current = 0;
	for (size_t i = 0; i < json_array_size(c); i++) {
		const json_t *e = json_array_get(c, i);
		const char *l = json_string_value(json_object_get(e, "spec"));
		if (!strcmp(l, "rep"))
			t_rep = json_number_value(json_object_get(e, "time"));
		if (!strcmp(l, "b0"))
			t_b0 = json_number_value(json_object_get(e, "time"));
		if (json_is_true(json_object_get(e, "current"))) {
			current++;
			assert_string_equal(l, "b0");
		}
	}
	assert_int_equal(current, 1);
	/* inference: 8 devices each convolve 1 of the 8 images (no collective) */
	assert_true(t_b0 > 0 && fabs(t_rep - 8 * t_b0) <= 1e-9 * t_rep);
	json_decref(j);
	/* the list changes nothing */
	assert_string_equal(s->plan->method, "milp");

	int rc;
	free(pb_test_run_cmd(s, "pin --node " CONV " --spec b0", &rc));
	assert_int_equal(rc, PB_OK);
	const json_t *d = s->plan->detail;
	assert_string_equal(s->plan->method, "manual");
	assert_true(fabs(pb_plan_metric(s->plan, "step_time", NAN) - t0) <= 1e-9 * t0);
	assert_true(json_is_true(json_object_get(d, "optimal")));
	assert_true(fabs(json_number_value(json_object_get(d, "bound")) - t0) <= 1e-9 * t0);
	assert_string_equal(json_string_value(json_object_get(d, "posed")),
	                    "scheme 8 with 1 pinned spec");
	/* pinned to rep: no better than the free optimum; the bound is below
	 * the plan's step time and, proven, equal to it */
	free(pb_test_run_cmd(s, "pin --node " CONV " --spec rep", &rc));
	assert_int_equal(rc, PB_OK);
	d = s->plan->detail;
	double t1 = pb_plan_metric(s->plan, "step_time", NAN),
	       b1 = json_number_value(json_object_get(d, "bound"));
	assert_true(t1 > t0 && json_is_number(json_object_get(d, "bound")));
	assert_true(b1 <= t1 * (1 + 1e-9));
	if (json_is_true(json_object_get(d, "optimal")))
		assert_true(b1 >= t1 * (1 - 1e-9));
	pb_session_free(s);
}

/* A pin re-solves a training plan under the options it was made with (the
 * optimizer, ZeRO, recomputation; the re-solve took an Adam plan for an
 * optimizer-less one: a 2-block GPT's memory 5.53 MB -> 4.43 MB with no spec
 * changed): pinned to the spec it already has, the optimum's step time
 * stays (an equally fast plan may differ elsewhere), and the new plan was
 * costed with Adam and ZeRO 1 as the old one. */
static void test_pin_train_opts(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	json_decref(pb_test_run_json(s,
	                             "shard models/resnet18.onnx --layout layouts/cluster-1x8.lua "
	                             "--scheme 8 --batch 8 --train --zero 1 --jobs 1 --json"));
	const char *was = op_strategy(s->plan, CONV, s->graph);
	assert_non_null(was);
	assert_true(json_is_true(json_object_get(s->plan->detail, "optimal")));
	char line[160];
	snprintf(line, sizeof line, "pin --node " CONV " --spec %s", was);
	double t0 = pb_plan_metric(s->plan, "step_time", NAN);
	int rc;
	free(pb_test_run_cmd(s, line, &rc));
	assert_int_equal(rc, PB_OK);
	const json_t *d = s->plan->detail;
	assert_string_equal(s->plan->method, "manual");
	assert_true(fabs(pb_plan_metric(s->plan, "step_time", NAN) - t0) <= 1e-9 * t0);
	assert_string_equal(json_string_value(json_object_get(d, "optimizer")), "adam");
	assert_int_equal(json_integer_value(json_object_get(d, "zero")), 1);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_map_backend_edits), cmocka_unit_test(test_cli_on_saved_plan),
	    cmocka_unit_test(test_fuse_edits),        cmocka_unit_test(test_fuse_cycle_refused),
	    cmocka_unit_test(test_pipeline_boundary), cmocka_unit_test(test_pin_spec),
	    cmocka_unit_test(test_pin_bound),         cmocka_unit_test(test_pin_train_opts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
