/* test_map_transfer.c — transfer-aware backend mapping (issue 18.5): on
 * small graphs whose every assignment can be enumerated (each one run
 * through pb_map_run with every node forced), the transfer-aware plan models
 * the fastest serial time of them all, the priority rule's plan stays the
 * baseline beside it, ping-pong disappears when transfers are dear and stays
 * when they are cheap, a forced backend is kept; and the `map` command on a
 * bundled transformer reports both plans and the time saved. */
#include "pb_test.h"

#include "transform/map.h"

/* gpu runs G (1) and H (2); fpga runs H (1) faster. Transfers: `bw` B/s,
 * `lat` s. */
static pb_hetero *hetero(double bw, double lat)
{
	char text[1024];
	snprintf(text, sizeof text,
	         "return { kind = 'hetero', backends = {\n"
	         " { name = 'gpu', launch = 1e-6, flops = 1e12, bandwidth = 1e12,"
	         "   ops = { G = 1, H = 2 } },\n"
	         " { name = 'fpga', launch = 2e-6, flops = 4e12, bandwidth = 1e12,"
	         "   ops = { H = 1 } } },\n"
	         " transfer = { { from = 'gpu', to = 'fpga', bandwidth = %g, latency = %g } } }\n",
	         bw, lat);
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

static pb_map_result *run(const pb_graph *g, const pb_hetero *h, int transfer, const int *force)
{
	pb_map_opts o = {2, 4, 0, force, transfer};
	pb_map_result *r = NULL;
	pb_error err = {0};
	if (pb_map_run(g, h, &o, &r, &err) != PB_OK)
		fail_msg("%s", err.msg);
	return r;
}

/* The fastest modelled serial time over every assignment of the H nodes
 * (G nodes have only the gpu), each mapped with all nodes forced. */
static double brute_force(const pb_graph *g, const pb_hetero *h, const char *const *ops, int n)
{
	int hs[16], nh = 0;
	for (int i = 0; i < n; i++)
		if (ops[i][0] == 'H')
			hs[nh++] = i;
	double best = INFINITY;
	int force[16];
	for (unsigned m = 0; m < (1u << nh); m++) {
		for (int i = 0; i < n; i++)
			force[i] = 0;
		for (int k = 0; k < nh; k++)
			force[hs[k]] = (m >> k) & 1;
		pb_map_result *r = run(g, h, 0, force);
		if (r->serial_input < best)
			best = r->serial_input;
		pb_map_result_free(r);
	}
	return best;
}

static void check_optimal(const char *const *ops, int n, const char *edges, double bw, double lat,
                          int expect_moves)
{
	pb_hetero *h = hetero(bw, lat);
	pb_graph *g = pb_test_ops_graph("transfer.test", n, ops, edges, 16384, 1e7, 1);
	pb_map_result *p = run(g, h, 0, NULL), *t = run(g, h, 1, NULL);
	double opt = brute_force(g, h, ops, n);
	/* The baseline beside it is the priority plan. */
	assert_true(t->base.valid);
	assert_true(t->base.serial_input == p->serial_input);
	assert_int_equal(t->base.launches_after, p->launches_after);
	assert_true(t->serial_input <= p->serial_input);
	if (fabs(t->serial_input - opt) > 1e-9 * opt)
		fail_msg("transfer-aware %.9g s, best assignment %.9g s, priority %.9g s",
		         t->serial_input, opt, p->serial_input);
	if (expect_moves)
		assert_true(t->moved > 0 && !t->kept_priority && t->serial_input < p->serial_input);
	else
		assert_true(t->serial_input == p->serial_input);
	pb_map_result_free(p);
	pb_map_result_free(t);
	pb_graph_free(g);
	pb_hetero_free(h);
}

static void test_ping_pong_removed(void **state)
{
	(void)state;
	/* Alternating ops: the priority rule puts every H on the fpga. */
	const char *alt[] = {"G", "H", "G", "H", "G", "H", "G", "H", "G"};
	check_optimal(alt, 9, "0>1 1>2 2>3 3>4 4>5 5>6 6>7 7>8", 1e9, 1e-5, 1);
	/* Runs of H: moving one H of a run alone adds a boundary; the region
	 * move takes the run. */
	const char *runs[] = {"G", "H", "H", "H", "G", "H", "H", "G", "H", "G"};
	check_optimal(runs, 10, "0>1 1>2 2>3 3>4 4>5 5>6 6>7 7>8 8>9", 1e9, 1e-5, 1);
	/* Branches: H nodes in parallel between G nodes. */
	const char *br[] = {"G", "H", "H", "G", "H", "G", "H", "H", "G"};
	check_optimal(br, 9, "0>1 0>2 1>3 2>3 3>4 3>5 4>6 5>6 6>7 7>8", 1e9, 1e-5, 1);
}

static void test_cheap_transfers_keep_priority(void **state)
{
	(void)state;
	/* Transfers nearly free and big H nodes: the fpga's 4x speed wins, the
	 * priority plan is already the best. */
	const char *runs[] = {"G", "H", "H", "H", "G", "H", "H", "G"};
	check_optimal(runs, 8, "0>1 1>2 2>3 3>4 4>5 5>6 6>7", 1e15, 0, 0);
}

static void test_forced_backend_kept(void **state)
{
	(void)state;
	const char *alt[] = {"G", "H", "G", "H", "G"};
	pb_hetero *h = hetero(1e9, 1e-5);
	pb_graph *g = pb_test_ops_graph("transfer.test", 5, alt, "0>1 1>2 2>3 3>4", 16384, 1e7, 1);
	int force[5] = {-1, 1, -1, -1, -1};
	pb_map_result *t = run(g, h, 1, force);
	assert_int_equal(t->backend[1], 1); /* forced to the fpga */
	assert_int_equal(t->backend[3], 0); /* free: moved to the gpu */
	pb_map_result_free(t);
	pb_graph_free(g);
	pb_hetero_free(h);
}

static void test_map_command_reports_both(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	json_t *t = pb_test_run_json(
	    s, "map models/bert_base_like.onnx --layout layouts/hetero.lua --json");
	json_t *p = pb_test_run_json(
	    s, "map models/bert_base_like.onnx --layout layouts/hetero.lua --json --priority");
	assert_string_equal(json_string_value(json_object_get(t, "assignment")), "transfer-aware");
	assert_string_equal(json_string_value(json_object_get(p, "assignment")), "priority");
	assert_null(json_object_get(p, "priority_rule"));
	json_t *base = json_object_get(t, "priority_rule");
	assert_non_null(base);
	double ps = json_real_value(json_object_get(p, "serial_time"));
	double ts = json_real_value(json_object_get(t, "serial_time"));
	assert_true(json_real_value(json_object_get(base, "serial_time")) == ps);
	assert_true(json_real_value(json_object_get(base, "pipelined_time")) ==
	            json_real_value(json_object_get(p, "pipelined_time")));
	assert_true(ts < ps);
	assert_true(fabs(json_real_value(json_object_get(t, "serial_time_saved")) - (ps - ts)) <=
	            1e-12 * ps);
	json_decref(t);
	json_decref(p);
	int rc;
	char *txt = pb_test_run_cmd(
	    s, "map models/bert_base_like.onnx --layout layouts/hetero.lua --timeline 0", &rc);
	assert_int_equal(rc, PB_OK);
	assert_non_null(strstr(txt, "priority rule (baseline)"));
	assert_non_null(strstr(txt, "transfer-aware ("));
	free(txt);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ping_pong_removed),
	    cmocka_unit_test(test_cheap_transfers_keep_priority),
	    cmocka_unit_test(test_forced_backend_kept),
	    cmocka_unit_test(test_map_command_reports_both),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
