/* test_pipeline.c — pipeline stage split (key-operator intervals + MILP)
 * against the exact DP on chains, micro-batch choice, schedules, and the
 * pipeline command's JSON. */
#include "pb_test.h"
#include "load.h"

#include <unistd.h>

#include "commands.h"
#include "session.h"
#include "shard/pipeline/pipeline_stages.h"
#include "shard/strategy/strategy_problem.h"

/* A chain of n Relu/MatMul-free nodes whose activations have sizes from sz. */
static pb_graph *chain(int n, const int *sz)
{
	pb_builder *b = pb_builder_new("chain.test", "test");
	char name[32], in[32], out[32];
	int64_t d0 = sz[0];
	int t = pb_builder_tensor(b, "x");
	pb_builder_set_shape(b, t, PB_DT_FLOAT, 1, &d0, NULL);
	pb_builder_input(b, t);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "n%d", i);
		snprintf(in, sizeof in, i ? "t%d" : "x", i - 1);
		snprintf(out, sizeof out, "t%d", i);
		int64_t d = sz[i + 1];
		int to = pb_builder_tensor(b, out);
		pb_builder_set_shape(b, to, PB_DT_FLOAT, 1, &d, NULL);
		const char *ins[1] = {in}, *outs[1] = {out};
		pb_builder_node(b, name, "Relu", "", ins, 1, outs, 1);
	}
	pb_builder_output(b, pb_builder_tensor(b, out));
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts o = {0};
	o.skip_shapes = 1;
	if (pb_graph_build(b, &o, &g, &err))
		fprintf(stderr, "%s\n", err.msg);
	return g;
}

static void test_chain_milp_equals_dp(void **state)
{
	unsigned seed = 7;
	int checked = 0;
	for (int trial = 0; trial < 12; trial++) {
		int n = 8 + trial % 5;
		int sz[16];
		double cost[16];
		for (int i = 0; i <= n; i++) {
			seed = seed * 1103515245u + 12345u;
			sz[i] = 16 + (int)(seed >> 16) % 1000;
		}
		pb_graph *g = chain(n, sz);
		assert_non_null(g);
		for (int i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			cost[i] = 1 + (double)((seed >> 16) % 9);
		}
		assert_true(pb_pipeline_stages_is_chain(g, cost));
		for (int p = 2; p <= 4; p++) {
			pb_pipe_split dp, mi;
			pb_error err = {0};
			assert_int_equal(pb_pipeline_stages_split_dp(g, cost, p, &dp, &err), PB_OK);
			/* slack 1: the method's ranges widened by one stage each side */
			assert_int_equal(pb_pipeline_stages_split_milp(g, cost, p, 1, 0, &mi, &err),
			                 PB_OK);
			assert_true(mi.optimal);
			assert_true(fabs(mi.max_cost - dp.max_cost) < 1e-9);
			if (fabs(mi.cross_bytes - dp.cross_bytes) >= 1e-6) {
				fprintf(stderr, "trial %d p %d: milp %g/%g dp %g/%g\n", trial, p,
				        mi.max_cost, mi.cross_bytes, dp.max_cost, dp.cross_bytes);
				for (int v = 0; v < g->n_nodes; v++)
					fprintf(stderr, " %g:%d/%d", cost[v], mi.stage[v],
					        dp.stage[v]);
				fprintf(stderr, "\n");
			}
			assert_true(fabs(mi.cross_bytes - dp.cross_bytes) < 1e-6);
			/* no edge goes backwards, stages are contiguous */
			for (int v = 1; v < g->n_nodes; v++)
				assert_true(mi.stage[v] >= mi.stage[v - 1]);
			pb_pipeline_stages_split_free(&dp);
			pb_pipeline_stages_split_free(&mi);
			checked++;
		}
		pb_graph_free(g);
	}
	assert_int_equal(checked, 36);
}

static void test_method_intervals(void **state)
{
	/* the method's ranges alone (slack 0) on a uniform chain: balanced stages */
	int sz[13];
	double cost[12];
	for (int i = 0; i <= 12; i++)
		sz[i] = 100;
	for (int i = 0; i < 12; i++)
		cost[i] = 1;
	pb_graph *g = chain(12, sz);
	pb_pipe_split s;
	pb_error err = {0};
	assert_int_equal(pb_pipeline_stages_split_milp(g, cost, 4, 0, 0, &s, &err), PB_OK);
	for (int k = 0; k < 4; k++)
		assert_true(fabs(s.stage_cost[k] - 3) < 1e-9);
	assert_true(fabs(s.cross_bytes - 3 * 400) < 1e-6);
	assert_int_equal(s.stage[0], 0);
	assert_int_equal(s.stage[11], 3);
	pb_pipeline_stages_split_free(&s);
	pb_graph_free(g);
}

static void test_microbatches_and_schedules(void **state)
{
	assert_int_equal(pb_pipeline_stages_microbatches(32, 4, 0.2),
	                 16); /* 3/(m+3) <= .2: m >= 12 */
	assert_int_equal(pb_pipeline_stages_microbatches(12, 2, 0.2), 4);
	assert_int_equal(pb_pipeline_stages_microbatches(7, 4, 0.2), 7); /* none divides: all */
	assert_int_equal(pb_pipeline_stages_microbatches(8, 1, 0.2), 1);
	json_t *gp = pb_pipeline_stages_schedule("gpipe", 4, 8, 1.0, 0);
	assert_true(fabs(json_real_value(json_object_get(gp, "makespan")) - 11) < 1e-9);
	json_decref(gp);
	json_t *of = pb_pipeline_stages_schedule("1f1b", 4, 8, 1.0, 2.0);
	assert_true(fabs(json_real_value(json_object_get(of, "makespan")) - 11 * 3) < 1e-9);
	json_t *st = json_object_get(of, "stages");
	assert_int_equal(json_array_size(st), 4);
	/* stage 0 of 1F1B starts with p = 4 forwards, then alternates B/F */
	json_t *s0 = json_array_get(st, 0);
	assert_int_equal(json_array_size(s0), 16);
	assert_string_equal(json_string_value(json_object_get(json_array_get(s0, 3), "pass")), "F");
	assert_string_equal(json_string_value(json_object_get(json_array_get(s0, 4), "pass")), "B");
	json_decref(of);
}

static void test_schedule_text(void **state)
{
	/* GPipe, 2 stages, 2 micro-batches, training (B = 2 forward slots) */
	json_t *gp = pb_pipeline_stages_schedule("gpipe", 2, 2, 1.0, 2.0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	pb_pipeline_stages_schedule_text(f, gp, 1.0, 40);
	fclose(f);
	assert_string_equal(buf, "  stage 0  |F0 F1  .  .  . B0    B1    |\n"
	                         "  stage 1  | . F0 F1 B0    B1     .  . |\n");
	free(buf);
	/* cut after 3 slots */
	f = open_memstream(&buf, &len);
	pb_pipeline_stages_schedule_text(f, gp, 1.0, 3);
	fclose(f);
	assert_string_equal(buf, "  stage 0  |F0 F1  . |...\n"
	                         "  stage 1  | . F0 F1 |...\n");
	free(buf);
	json_decref(gp);
}

static pb_graph *mlp2(void)
{
	pb_builder *b = pb_builder_new("mlp2.test", "test");
	const char *names[] = {"x", "h1", "a1", "h2", "a2", "y"};
	const int64_t act[3] = {4, 128, 1024}, w[2] = {1024, 1024};
	for (int i = 0; i < 6; i++) {
		int t = pb_builder_tensor(b, names[i]);
		pb_builder_set_shape(b, t, PB_DT_FLOAT, 3, act, NULL);
	}
	pb_builder_input(b, pb_builder_tensor(b, "x"));
	const char *ws[] = {"W1", "W2", "W3"};
	for (int i = 0; i < 3; i++) {
		int t = pb_builder_tensor(b, ws[i]);
		pb_builder_set_shape(b, t, PB_DT_FLOAT, 2, w, NULL);
		pb_builder_initializer(b, t, 1);
	}
	const char *i1[] = {"x", "W1"}, *o1[] = {"h1"}, *i2[] = {"h1"}, *o2[] = {"a1"};
	const char *i3[] = {"a1", "W2"}, *o3[] = {"h2"}, *i4[] = {"h2"}, *o4[] = {"a2"};
	const char *i5[] = {"a2", "W3"}, *o5[] = {"y"};
	pb_builder_node(b, "fc1", "MatMul", "", i1, 2, o1, 1);
	pb_builder_node(b, "act1", "Relu", "", i2, 1, o2, 1);
	pb_builder_node(b, "fc2", "MatMul", "", i3, 2, o3, 1);
	pb_builder_node(b, "act2", "Relu", "", i4, 1, o4, 1);
	pb_builder_node(b, "fc3", "MatMul", "", i5, 2, o5, 1);
	pb_builder_output(b, pb_builder_tensor(b, "y"));
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts o = {0};
	o.skip_shapes = 1;
	assert_int_equal(pb_graph_build(b, &o, &g, &err), PB_OK);
	return g;
}

static json_t *run_json(pb_session *s, const char *line)
{
	return pb_test_run_json(s, line);
}

static void test_pipeline_command(void **state)
{
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, mlp2(), "mlp2.test");
	json_t *j = run_json(s, "pipeline --layout layouts/cluster-2x8.lua --stages 2 "
	                        "--microbatches 1 --train --json");
	json_t *st = json_object_get(j, "stages");
	assert_int_equal(json_array_size(st), 2);
	int ops = 0;
	for (int k = 0; k < 2; k++) {
		json_t *x = json_array_get(st, k);
		ops += (int)json_integer_value(json_object_get(x, "operators"));
		assert_int_equal(json_array_size(json_object_get(x, "devices")), 8);
		assert_true(json_real_value(json_object_get(x, "time")) > 0);
		assert_true(json_real_value(json_object_get(x, "memory")) > 0);
	}
	assert_int_equal(ops, 5);
	/* the stages name their operators: all five, each once, in graph order */
	json_t *n0 = json_object_get(json_array_get(st, 0), "nodes");
	json_t *n1 = json_object_get(json_array_get(st, 1), "nodes");
	assert_int_equal(json_array_size(n0) + json_array_size(n1), 5);
	assert_string_equal(json_string_value(json_array_get(n0, 0)), "fc1");
	assert_string_equal(json_string_value(json_array_get(n1, json_array_size(n1) - 1)), "fc3");
	assert_int_equal(json_integer_value(json_object_get(j, "microbatches")), 1);
	assert_true(fabs(json_real_value(json_object_get(j, "bubble")) - 0.5) < 1e-12);
	assert_true(json_real_value(json_object_get(j, "step_time")) > 0);
	assert_int_equal(json_array_size(json_object_get(j, "schemes")), 2);
	assert_non_null(json_object_get(json_object_get(j, "schedule"), "1f1b"));
	json_decref(j);
	assert_non_null(s->plan);
	assert_string_equal(s->plan->kind, "pipeline");
	assert_int_equal(s->plan->n_groups, 2);
	/* stages follow the graph order */
	assert_true(s->plan->group[0] <= s->plan->group[4]);
	pb_session_free(s);
}

/* The command on a chain uses the exact DP: its stages are the DP's. */
static void test_pipeline_chain_is_dp(void **state)
{
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, mlp2(), "mlp2.test");
	json_t *j = run_json(s, "pipeline --layout layouts/cluster-2x8.lua --stages 2 "
	                        "--microbatches 1 --skip-oplevel --json");
	assert_string_equal(json_string_value(json_object_get(j, "split")), "dp (chain)");
	json_decref(j);
	const pb_graph *g = s->graph;
	unsigned char act[16];
	double cost[16];
	assert_true(g->n_nodes <= 16);
	pb_strategy_problem_dynamic_nodes(g, act);
	for (int v = 0; v < g->n_nodes; v++)
		cost[v] = act[v] ? pb_strategy_problem_node_flops(g, &g->nodes[v]) : -1;
	pb_pipe_split dp;
	pb_error err = {0};
	assert_int_equal(pb_pipeline_stages_split_dp(g, cost, 2, &dp, &err), PB_OK);
	for (int v = 0; v < g->n_nodes; v++)
		assert_int_equal(s->plan->group[v], dp.stage[v]);
	pb_pipeline_stages_split_free(&dp);
	pb_session_free(s);
}

/* More stages than operators: the empty stages hold nothing and fit; a stage
 * count that does not divide the devices is an error naming the layout. */
static void test_pipeline_empty_stages_and_errors(void **state)
{
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, mlp2(), "mlp2.test");
	json_t *j = run_json(s, "pipeline --layout layouts/cluster-2x8.lua --stages 16 "
	                        "--microbatches 1 --skip-oplevel --json");
	json_t *st = json_object_get(j, "stages");
	assert_int_equal(json_array_size(st), 16);
	int empty = 0;
	for (size_t k = 0; k < 16; k++) {
		json_t *x = json_array_get(st, k);
		empty += json_integer_value(json_object_get(x, "operators")) == 0;
		assert_true(json_is_true(json_object_get(x, "feasible")));
	}
	assert_true(empty >= 11); /* 5 operators */
	assert_true(json_is_true(json_object_get(j, "feasible")));
	/* cluster-2x8.lua: 40 GB devices planned to 90% (device_memory_usable) */
	assert_true(fabs(json_real_value(json_object_get(j, "memory_limit")) - 36e9) <= 1);
	assert_string_equal(json_string_value(json_object_get(j, "best")), "pipeline");
	json_decref(j);
	pb_cmd_ctx ctx = {s, stdout, stderr, 0, 0, NULL, NULL};
	pb_error err = {0};
	assert_int_equal(pb_cmd_run_line(&ctx, "pipeline --stages 3", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "3 stages do not divide the 16 devices of cluster-2x8"));
	pb_session_free(s);
}

static void test_prefer(void **state)
{
	assert_true(pb_pipeline_stages_prefer(1.0, 1, 2.0, 1));  /* faster, both fit */
	assert_false(pb_pipeline_stages_prefer(2.0, 1, 1.0, 1)); /* slower, both fit */
	assert_true(pb_pipeline_stages_prefer(1.0, 1, 1.0, 1));  /* tie: the pipeline */
	assert_false(pb_pipeline_stages_prefer(1.0, 0, 2.0, 1)); /* over memory never beats a fit */
	assert_true(
	    pb_pipeline_stages_prefer(2.0, 1, 1.0, 0)); /* a fit beats a faster plan over memory */
	assert_true(pb_pipeline_stages_prefer(1.0, 0, 2.0, 0));      /* both over: the faster */
	assert_true(pb_pipeline_stages_prefer(5.0, 0, INFINITY, 1)); /* operator level not solved */
}

/* Under 1F1B stage 0 keeps two of the four micro-batches in flight; the
 * stage's sharding must see that memory and shard further to fit (30 MB per
 * device: the plan chosen for one copy of the activations needs 32.7 MB). */
static void test_stage_memory_in_flight(void **state)
{
	const char *path = "/tmp/pb_test_pipeline_30mb.lua";
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("return { kind='cluster', name='tight', nodes=2, devices_per_node=8,"
	      " device_memory_gb=0.03, device_tflops=100, intra_bw_gbs=150,"
	      " intra_latency_us=5, inter_bw_gbs=25, inter_latency_us=20 }\n",
	      f);
	fclose(f);
	pb_session *s = pb_session_new();
	pb_error err = {0};
	assert_int_equal(pb_session_open_model(s, "models/resnet18.onnx", NULL, 0, &err), PB_OK);
	char line[256];
	snprintf(line, sizeof line,
	         "pipeline --layout %s --train --batch 16 --stages 2 --skip-oplevel --json", path);
	json_t *j = run_json(s, line);
	assert_int_equal(json_integer_value(json_object_get(j, "microbatches")), 4);
	json_t *st = json_object_get(j, "stages");
	for (size_t k = 0; k < json_array_size(st); k++) {
		json_t *x = json_array_get(st, k);
		assert_true(json_real_value(json_object_get(x, "memory")) <= 0.03e9);
		assert_true(json_is_true(json_object_get(x, "feasible")));
	}
	json_decref(j);
	unlink(path);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chain_milp_equals_dp),
	    cmocka_unit_test(test_method_intervals),
	    cmocka_unit_test(test_microbatches_and_schedules),
	    cmocka_unit_test(test_pipeline_command),
	    cmocka_unit_test(test_pipeline_chain_is_dp),
	    cmocka_unit_test(test_pipeline_empty_stages_and_errors),
	    cmocka_unit_test(test_prefer),
	    cmocka_unit_test(test_schedule_text),
	    cmocka_unit_test(test_stage_memory_in_flight),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
