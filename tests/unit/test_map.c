/* test_map.c — multi-backend mapping: layout parsing and its errors,
 * marking and priorities, aggregation (the method's example: no merging
 * across another backend's node, no cycles), buffers and the pipeline model,
 * the plan, the `map` and `fuse` commands, and every bundled model. */
#include "pb_test.h"
#include "load.h"

#include <unistd.h>

#include "commands.h"
#include "session.h"
#include "transform/map.h"

/* Node i (named a, b, ...): op ops[i], 1e6 FLOPs, output t{i} of `elems`
 * floats, inputs from the edges (pb_test_ops_graph). */
static pb_graph *build_ops(int n, const char *const *ops, const char *edges, int64_t elems)
{
	return pb_test_ops_graph("map.test", n, ops, edges, elems, 1e6, 1);
}

/* GPU runs G ops, FPGA runs F ops; CPU runs everything at priority 3. */
static const char *layout3 =
    "return { kind = 'hetero', backends = {\n"
    " { name = 'cpu', launch = 1e-6, flops = 1e9, bandwidth = 1e10, ops = { ['*'] = 3 } },\n"
    " { name = 'gpu', launch = 1e-5, flops = 1e12, bandwidth = 1e12, ops = { G = 1, H = 2 } },\n"
    " { name = 'fpga', launch = 2e-5, flops = 1e12, bandwidth = 1e12,\n"
    "   ops = { F = 1, H = { priority = 2, speed = 0.5 } } } },\n"
    " transfer = { { from = 'cpu', to = 'gpu', bandwidth = 1e10, latency = 1e-6 },\n"
    "  { from = 'cpu', to = 'fpga', bandwidth = 1e10 },\n"
    "  { from = 'gpu', to = 'fpga', bandwidth = 1e10, latency = 2e-6 } } }\n";

static pb_hetero *hetero(const char *text)
{
	pb_hw *hw = NULL;
	pb_error err = {0};
	if (pb_hw_load_string(text, "het.lua", &hw, &err) != PB_OK)
		fail_msg("%s", err.msg);
	pb_hetero *h = NULL;
	if (pb_hetero_parse(hw, &h, &err) != PB_OK)
		fail_msg("%s", err.msg);
	pb_hw_free(hw);
	return h;
}

static int parse_error(const char *text, const char *expect)
{
	pb_hw *hw = NULL;
	pb_error err = {0};
	if (pb_hw_load_string(text, "bad.lua", &hw, &err) != PB_OK)
		fail_msg("%s", err.msg);
	pb_hetero *h = NULL;
	int rc = pb_hetero_parse(hw, &h, &err);
	pb_hw_free(hw);
	assert_null(h);
	if (!strstr(err.msg, expect) || !strstr(err.msg, "bad.lua"))
		fail_msg("expected '%s' in: %s", expect, err.msg);
	return rc;
}

static pb_map_result *run(const pb_graph *g, const pb_hetero *h, int k, int n)
{
	pb_map_opts o = {k, n, 0};
	pb_map_result *r = NULL;
	pb_error err = {0};
	if (pb_map_run(g, h, &o, &r, &err) != PB_OK)
		fail_msg("%s", err.msg);
	return r;
}

static void test_layout_parse(void **state)
{
	pb_hetero *h = hetero(layout3);
	assert_int_equal(h->n, 3);
	double sp = 0;
	assert_int_equal(pb_hetero_support(h, 0, "Anything", &sp), 3);
	assert_int_equal(pb_hetero_support(h, 1, "G", &sp), 1);
	assert_int_equal(pb_hetero_support(h, 1, "F", &sp), 0);
	assert_int_equal(pb_hetero_support(h, 2, "H", &sp), 2);
	assert_true(fabs(sp - 0.5) < 1e-12);
	/* fpga -> gpu taken from gpu -> fpga. */
	assert_true(fabs(h->xfer_bw[2 * 3 + 1] - 1e10) < 1);
	assert_true(fabs(h->xfer_lat[2 * 3 + 1] - 2e-6) < 1e-15);
	pb_hetero_free(h);

	assert_int_equal(parse_error("return { kind = 'manycore', cores = 4 }", "'hetero'"),
	                 PB_EUSAGE);
	parse_error("return { kind = 'hetero' }", "backends");
	parse_error("return { kind = 'hetero', backends = { { name = 'a', launch = 0, "
	            "flops = 1, bandwidth = 1, ops = { X = 0 } } } }",
	            "backends[1].ops.X");
	parse_error("return { kind = 'hetero', backends = { { name = 'a', flops = 1, "
	            "bandwidth = 1, ops = { X = 1 } } } }",
	            "backends[1].launch");
	parse_error("return { kind = 'hetero', backends = {"
	            " { name = 'a', launch = 0, flops = 1, bandwidth = 1, ops = { X = 1 } },"
	            " { name = 'b', launch = 0, flops = 1, bandwidth = 1, ops = { X = 1 } } },"
	            " transfer = { { from = 'a', to = 'c', bandwidth = 1 } } }",
	            "no backend named 'c'");
	parse_error("return { kind = 'hetero', backends = {"
	            " { name = 'a', launch = 0, flops = 1, bandwidth = 1, ops = { X = 1 } },"
	            " { name = 'b', launch = 0, flops = 1, bandwidth = 1, ops = { X = 1 } },"
	            " { name = 'c', launch = 0, flops = 1, bandwidth = 1, ops = { X = 1 } } },"
	            " transfer = { { from = 'a', to = 'b', bandwidth = 1 } } }",
	            "no bandwidth between 'a' and 'c'");
	parse_error("return { kind = 'hetero', backends = {"
	            " { name = 'a', launch = 0, flops = 1, bandwidth = 1, ops = { X = 1 } },"
	            " { name = 'a', launch = 0, flops = 1, bandwidth = 1, ops = { X = 1 } } } }",
	            "used twice");
}

static void test_marking_and_priority(void **state)
{
	pb_hetero *h = hetero(layout3);
	/* G -> gpu (1 beats cpu's 3); F -> fpga; H: gpu and fpga both 2, gpu is
	 * listed first; Q: only cpu. */
	const char *ops[] = {"G", "F", "H", "Q"};
	pb_graph *g = build_ops(4, ops, "0>1 1>2 2>3", 64);
	pb_map_result *r = run(g, h, 2, 4);
	assert_int_equal(r->backend[0], 1);
	assert_int_equal(r->backend[1], 2);
	assert_int_equal(r->backend[2], 1);
	assert_int_equal(r->backend[3], 0);
	assert_int_equal(r->prio[2 * 3 + 2], 2);
	assert_int_equal(r->prio[1 * 3 + 1], 0);
	pb_map_result_free(r);
	pb_graph_free(g);

	/* An op nobody supports is an error naming the node and the layout. */
	const char *only[] = {"G", "Nope"};
	const char *lay = "return { kind = 'hetero', backends = { { name = 'gpu', launch = 0, "
	                  "flops = 1, bandwidth = 1, ops = { G = 1 } } } }";
	pb_hetero *h1 = hetero(lay);
	g = build_ops(2, only, "0>1", 8);
	pb_map_opts o = {2, 4, 0};
	pb_error err = {0};
	r = NULL;
	assert_int_equal(pb_map_run(g, h1, &o, &r, &err), PB_EINPUT);
	assert_null(r);
	assert_non_null(strstr(err.msg, "'b'"));
	assert_non_null(strstr(err.msg, "Nope"));
	assert_non_null(strstr(err.msg, "het.lua"));
	pb_graph_free(g);
	pb_hetero_free(h1);
	pb_hetero_free(h);
}

static void test_aggregation_method_example(void **state)
{
	/* The method's figure: a, b on the GPU, then d on the FPGA, then f, g on
	 * the GPU; plus a direct edge b -> f. a,b and f,g must stay apart (the
	 * merge would cross d and close the cycle {a,b,f,g} -> d -> {a,b,f,g}). */
	pb_hetero *h = hetero(layout3);
	const char *ops[] = {"G", "G", "F", "G", "G"};
	pb_graph *g = build_ops(5, ops, "0>1 1>2 2>3 1>3 3>4", 64);
	pb_map_result *r = run(g, h, 2, 4);
	assert_int_equal(r->n_agg, 3);
	assert_int_equal(r->agg[0], r->agg[1]);
	assert_int_equal(r->agg[3], r->agg[4]);
	assert_true(r->agg[1] != r->agg[3]);
	assert_true(r->agg[2] != r->agg[1] && r->agg[2] != r->agg[3]);
	assert_int_equal(r->launches_before, 5);
	assert_int_equal(r->launches_after, 3);
	/* Two buffers (gpu->fpga, fpga->gpu) and one plain gpu->gpu edge. */
	int buffers = 0, plain = 0;
	for (int e = 0; e < r->n_edges; e++) {
		buffers += r->edges[e].buffer;
		plain += !r->edges[e].buffer;
		if (!r->edges[e].buffer)
			assert_true(r->edges[e].time == 0);
	}
	assert_int_equal(buffers, 2);
	assert_int_equal(plain, 1);
	pb_map_result_free(r);
	pb_graph_free(g);

	/* Parallel same-backend branches joined by a node merge into one. */
	const char *ops2[] = {"F", "G", "G", "G"};
	g = build_ops(4, ops2, "0>1 0>2 1>3 2>3", 64);
	r = run(g, h, 2, 4);
	assert_int_equal(r->n_agg, 2);
	assert_int_equal(r->agg[1], r->agg[2]);
	assert_int_equal(r->agg[2], r->agg[3]);
	pb_map_result_free(r);
	pb_graph_free(g);
	pb_hetero_free(h);
}

static void test_pipeline_model(void **state)
{
	/* Two equal stages on two backends with free transfers: with one buffer
	 * slot nothing overlaps, with two the stream takes (N + 1) stages. */
	const char *lay =
	    "return { kind = 'hetero', backends = {\n"
	    " { name = 'p', launch = 0, flops = 1e6, bandwidth = 1e15, ops = { A = 1 } },\n"
	    " { name = 'q', launch = 0, flops = 1e6, bandwidth = 1e15, ops = { B = 1 } } },\n"
	    " transfer = { { from = 'p', to = 'q', bandwidth = 1e15 } } }";
	pb_hetero *h = hetero(lay);
	const char *ops[] = {"A", "B"};
	pb_graph *g = build_ops(2, ops, "0>1", 4);
	int N = 8;
	pb_map_result *r = run(g, h, 2, N);
	double t = 1.0; /* 1e6 flops at 1e6 FLOP/s */
	assert_true(fabs(r->agg_time[0] - t) < 1e-9);
	assert_true(fabs(r->serial_input - 2 * t) < 1e-6);
	assert_true(fabs(r->serial_time - 2 * t * N) < 1e-5);
	assert_true(fabs(r->sweep[0] - 2 * t * N) < 1e-5);   /* k = 1 */
	assert_true(fabs(r->sweep[1] - (N + 1) * t) < 1e-5); /* k = 2 */
	assert_true(fabs(r->pipelined_time - (N + 1) * t) < 1e-5);
	/* The timeline: stage q of input i runs while p computes input i+1. */
	int found = 0;
	for (int i = 0; i < r->n_events; i++) {
		const pb_map_event *e = &r->events[i];
		if (e->task == 1 && e->input == 0) {
			assert_true(fabs(e->start - t) < 1e-6);
			found++;
		}
		if (e->task == 0 && e->input == 1) {
			assert_true(fabs(e->start - t) < 1e-6);
			found++;
		}
	}
	assert_int_equal(found, 2);
	/* Buffers are respected: producer of input i never starts before the
	 * consumer finished input i - k. */
	for (int i = 0; i < r->n_events; i++)
		for (int j = 0; j < r->n_events; j++) {
			const pb_map_event *p = &r->events[i], *c = &r->events[j];
			if (p->task == 0 && c->task == 1 && c->input == p->input - 2)
				assert_true(p->start >= c->end - 1e-12);
		}
	pb_map_result_free(r);
	pb_graph_free(g);
	pb_hetero_free(h);
}

static void test_plan_and_report(void **state)
{
	pb_hetero *h = hetero(layout3);
	const char *ops[] = {"G", "G", "F", "G", "G"};
	pb_graph *g = build_ops(5, ops, "0>1 1>2 2>3 1>3 3>4", 64);
	pb_map_result *r = run(g, h, 2, 4);
	pb_plan *p = pb_map_plan(g, h, r);
	assert_string_equal(p->kind, "map");
	assert_int_equal(p->n_groups, 3);
	for (int v = 0; v < g->n_nodes; v++) {
		assert_string_equal(p->groups[p->group[v]].label, h->b[r->backend[v]].name);
		for (int w = 0; w < g->n_nodes; w++)
			assert_int_equal(p->group[v] == p->group[w], r->agg[v] == r->agg[w]);
	}
	/* Schedule rows are labelled by the groups of the same index. */
	const json_t *sched = json_object_get(p->detail, "schedule");
	assert_true(json_array_size(sched) > 0);
	for (size_t i = 0; i < json_array_size(sched); i++) {
		const json_t *e = json_array_get(sched, i);
		int row = (int)json_integer_value(json_object_get(e, "stage"));
		int grp = (int)json_integer_value(json_object_get(e, "group"));
		assert_string_equal(p->groups[row].label, p->groups[grp].label);
	}
	assert_true(pb_plan_metric(p, "launches_after", 0) == 3);
	assert_true(pb_plan_metric(p, "pipelined_time", 0) > 0);
	/* Round trip through JSON. */
	json_t *j = pb_plan_to_json(p, NULL);
	pb_plan *q = NULL;
	pb_error err = {0};
	assert_int_equal(pb_plan_from_json(j, "x", g->n_nodes, &q, &err), PB_OK);
	assert_string_equal(q->groups[0].label, p->groups[0].label);
	json_decref(j);
	pb_plan_free(q);
	pb_plan_free(p);
	json_t *rep = pb_map_report_json(g, h, r);
	assert_int_equal(json_integer_value(json_object_get(rep, "launches_before")), 5);
	assert_int_equal(json_integer_value(json_object_get(rep, "launches_after")), 3);
	assert_true(json_is_array(json_object_get(json_object_get(rep, "backends"), "c")));
	assert_int_equal(json_array_size(json_object_get(rep, "aggregates")), 3);
	assert_non_null(json_object_get(rep, "serial_time"));
	assert_non_null(json_object_get(rep, "pipelined_time"));
	json_decref(rep);
	pb_map_result_free(r);
	pb_graph_free(g);
	pb_hetero_free(h);
}

/* Union-find for the connectivity check. */
static int uf_find(int *p, int x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

static void test_all_models(void **state)
{
	const char *models[] = {"resnet18.onnx",      "googlenet.onnx",   "mobilenet_v2.onnx",
	                        "squeezenet1_1.onnx", "densenet121.onnx", "bert_base_like.onnx",
	                        "swin_t.onnx"};
	pb_hw *hw = NULL;
	pb_error err = {0};
	assert_int_equal(pb_hw_load("layouts/hetero.lua", &hw, &err), PB_OK);
	pb_hetero *h = NULL;
	assert_int_equal(pb_hetero_parse(hw, &h, &err), PB_OK);
	for (size_t m = 0; m < sizeof models / sizeof *models; m++) {
		pb_graph *g = pb_test_load_model(models[m]);
		pb_map_result *r = run(g, h, 2, 8);
		/* Aggregates: one backend each, connected through internal edges. */
		int *uf = malloc((size_t)g->n_nodes * sizeof *uf);
		for (int v = 0; v < g->n_nodes; v++)
			uf[v] = v;
		for (int v = 0; v < g->n_nodes; v++) {
			if (r->agg[v] < 0) {
				assert_true(r->folded[v]);
				continue;
			}
			assert_int_equal(r->agg_backend[r->agg[v]], r->backend[v]);
			for (int j = 0; j < g->nodes[v].n_succs; j++) {
				int w = g->nodes[v].succs[j];
				if (r->agg[w] == r->agg[v])
					uf[uf_find(uf, v)] = uf_find(uf, w);
			}
		}
		int *root = malloc((size_t)r->n_agg * sizeof *root);
		for (int a = 0; a < r->n_agg; a++)
			root[a] = -1;
		for (int v = 0; v < g->n_nodes; v++) {
			int a = r->agg[v];
			if (a < 0)
				continue;
			if (root[a] < 0)
				root[a] = uf_find(uf, v);
			assert_int_equal(uf_find(uf, v), root[a]);
		}
		free(root);
		free(uf);
		assert_true(r->launches_after <= r->launches_before);
		assert_true(r->pipelined_time <= r->serial_time * (1 + 1e-9));
		assert_true(r->pipelined_time > 0);
		pb_map_result_free(r);
		pb_graph_free(g);
	}
	pb_hetero_free(h);
	pb_hw_free(hw);
}

static void test_commands(void **state)
{
	pb_session *s = pb_session_new();
	int rc;
	char *o =
	    pb_test_run_cmd(s, "map models/googlenet.onnx --layout layouts/hetero.lua --json", &rc);
	assert_int_equal(rc, PB_OK);
	json_error_t je;
	json_t *j = json_loads(o, 0, &je);
	assert_non_null(j);
	const char *keys[] = {"backends",       "aggregates",  "launches_before",
	                      "launches_after", "serial_time", "pipelined_time"};
	for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
		assert_non_null(json_object_get(j, keys[k]));
	assert_true(json_integer_value(json_object_get(j, "launches_after")) <
	            json_integer_value(json_object_get(j, "launches_before")));
	json_decref(j);
	free(o);
	assert_non_null(s->plan);
	assert_string_equal(s->plan->kind, "map");

	char tmp[] = "/tmp/pb_fuse_XXXXXX";
	int fd = mkstemp(tmp);
	close(fd);
	char line[256];
	char tmp2[] = "/tmp/pb_fplan_XXXXXX";
	fd = mkstemp(tmp2);
	close(fd);
	snprintf(line, sizeof line, "fuse models/googlenet.onnx --json -o %s --plan %s", tmp, tmp2);
	o = pb_test_run_cmd(s, line, &rc);
	assert_int_equal(rc, PB_OK);
	j = json_loads(o, 0, &je);
	assert_non_null(j);
	int fused = (int)json_integer_value(json_object_get(j, "nodes_fused"));
	assert_true(fused > 0);
	json_decref(j);
	free(o);
	assert_string_equal(s->plan->kind, "fuse");
	/* The written graph loads back with its members. */
	pb_graph *fg = NULL;
	pb_error err = {0};
	if (pb_graph_load(tmp, NULL, &fg, &err) != PB_OK)
		fail_msg("%s", err.msg);
	int with_members = 0;
	for (int i = 0; i < fg->n_nodes; i++)
		with_members += fg->nodes[i].n_members;
	assert_int_equal(with_members, fused);
	pb_graph_free(fg);
	unlink(tmp);
	/* The saved plan is the session's 'fuse' plan of the original graph. */
	pb_plan *fp = NULL;
	if (pb_plan_load(tmp2, s->graph->n_nodes, &fp, &err) != PB_OK)
		fail_msg("%s", err.msg);
	assert_string_equal(fp->kind, "fuse");
	assert_int_equal(fp->n_groups, s->plan->n_groups);
	int in_groups = 0;
	for (int v = 0; v < fp->n_nodes; v++)
		in_groups += fp->group[v] >= 0;
	assert_int_equal(in_groups, fused);
	pb_plan_free(fp);
	unlink(tmp2);

	/* --apply swaps the session's graph for the fused one. */
	int before = s->graph->n_nodes;
	o = pb_test_run_cmd(s, "fuse --apply", &rc);
	assert_int_equal(rc, PB_OK);
	free(o);
	assert_true(s->graph->n_nodes < before);
	assert_null(s->plan);

	/* Bad input: a layout of the wrong kind. */
	o = pb_test_run_cmd(s, "map models/resnet18.onnx --layout /nonexistent.lua", &rc);
	assert_int_equal(pb_exit_code(rc), 2);
	free(o);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout_parse),
	    cmocka_unit_test(test_marking_and_priority),
	    cmocka_unit_test(test_aggregation_method_example),
	    cmocka_unit_test(test_pipeline_model),
	    cmocka_unit_test(test_plan_and_report),
	    cmocka_unit_test(test_all_models),
	    cmocka_unit_test(test_commands),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
