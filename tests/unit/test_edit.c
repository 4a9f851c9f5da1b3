/* test_edit.c — manual edits of a partition plan: action, boundary, merge,
 * split, evaluate; undo after each; errors on bad input and other plan kinds. */
#include "pb_test.h"

#include "commands.h"
#include "partition/chain/chain_problem.h"
#include "session.h"

static char *run(pb_session *s, const char *line, int *rc, int *redraw)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	pb_cmd_ctx ctx = {s, out, stderr, 1, 0, NULL, NULL};
	pb_error err = {0};
	*rc = pb_cmd_run_line(&ctx, line, &err);
	if (*rc)
		fprintf(out, "ERROR %s", err.msg);
	fclose(out);
	if (redraw)
		*redraw = ctx.redraw;
	return buf;
}

static void run_ok(pb_session *s, const char *line)
{
	int rc, redraw;
	char *o = run(s, line, &rc, &redraw);
	if (rc != PB_OK)
		fail_msg("%s: %s", line, o);
	assert_true(redraw != 0);
	free(o);
}

static int run_err(pb_session *s, const char *line, const char *needle)
{
	int rc;
	char *o = run(s, line, &rc, NULL);
	if (rc == PB_OK || !strstr(o, needle))
		fail_msg("%s: expected an error with '%s', got: %s", line, needle, o);
	free(o);
	return rc;
}

static int arranged(const pb_session *s, int *ac)
{
	const json_t *j = json_object_get(s->plan->detail, "arranged_core");
	int n = (int)json_array_size(j);
	for (int i = 0; i < n; i++)
		ac[i] = (int)json_integer_value(json_array_get(j, (size_t)i));
	return n;
}

static pb_session *session(void)
{
	double macs[48];
	char edges[1024] = "";
	for (int i = 0; i < 48; i++) {
		macs[i] = 1e6 * (1 + (i * 5) % 7);
		if (i) {
			char e[16];
			snprintf(e, sizeof e, "%d>%d ", i - 1, i);
			strcat(edges, e);
		}
	}
	pb_graph *g = pb_test_chain_graph(48, macs, edges);
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, g, "chain.test");
	return s;
}

static void test_action_and_undo(void **state)
{
	pb_session *s = session();
	run_err(s, "action 3", "no plan");
	run_ok(s, "partition --layout layouts/manycore-16.lua --method equal");
	int ac[16], before[16];
	assert_int_equal(arranged(s, before), 16);
	/* equal: 3 layers per core. c(0,1) = 2*15 + 0 = 30. */
	run_ok(s, "action 30");
	arranged(s, ac);
	assert_int_equal(ac[0], before[0] - 1);
	assert_int_equal(ac[1], before[1] + 1);
	assert_string_equal(s->plan->method, "manual");
	assert_true(pb_plan_has_metric(s->plan, "optimum"));
	/* a(0,1) = 0: merge core 0's group into core 1's. */
	run_ok(s, "action 0");
	arranged(s, ac);
	assert_int_equal(ac[0], 0);
	/* Now a(0,1) is invalid: the plan stays. */
	pb_plan *p = s->plan;
	run_err(s, "action 0", "invalid");
	assert_ptr_equal(s->plan, p);
	run_err(s, "action 60", "out of range");
	run_err(s, "action x", "integer");
	/* Undo twice gets the equal plan back. */
	run_ok(s, "undo");
	run_ok(s, "undo");
	arranged(s, ac);
	assert_memory_equal(ac, before, sizeof ac);
	pb_session_free(s);
}

static void test_boundary_merge_split(void **state)
{
	pb_session *s = session();
	run_ok(s, "partition --layout layouts/manycore-16.lua --method equal");
	int n0 = s->plan->n_groups;
	int l0 = s->plan->groups[0].last_node - s->plan->groups[0].first_node + 1;
	int l1 = s->plan->groups[1].last_node - s->plan->groups[1].first_node + 1;
	run_ok(s, "boundary 0 2");
	assert_int_equal(s->plan->groups[0].last_node - s->plan->groups[0].first_node + 1, l0 + 2);
	assert_int_equal(s->plan->groups[1].last_node - s->plan->groups[1].first_node + 1, l1 - 2);
	run_ok(s, "boundary 0 -1");
	assert_int_equal(s->plan->groups[0].last_node, l0 + 1 - 1);
	run_err(s, "boundary 0 50", "cannot move");
	run_err(s, "boundary 15 1", "does not exist");
	run_ok(s, "merge 2");
	assert_int_equal(s->plan->n_groups, n0 - 1);
	assert_int_equal(s->plan->groups[2].n_units, 2);
	assert_int_equal(s->plan->groups[2].first_unit, 2);
	int ml = s->plan->groups[2].last_node - s->plan->groups[2].first_node + 1;
	assert_int_equal(ml, 6);
	run_ok(s, "split 2");
	assert_int_equal(s->plan->n_groups, n0);
	assert_int_equal(s->plan->groups[2].n_units, 1);
	assert_int_equal(s->plan->groups[3].n_units, 1);
	run_err(s, "split 2", "at least two");
	/* Every plan is still valid for the problem. */
	int ac[16], sum = 0;
	arranged(s, ac);
	for (int i = 0; i < 16; i++)
		sum += ac[i];
	assert_int_equal(sum, 48);
	run_ok(s, "evaluate");
	assert_true(pb_plan_has_metric(s->plan, "optimum"));
	assert_true(pb_plan_metric(s->plan, "gap", -1) >= -1e-9);
	pb_session_free(s);
}

static void test_other_plan_kind(void **state)
{
	pb_session *s = session();
	run_ok(s, "partition --layout layouts/manycore-16.lua --method greedy");
	pb_plan *p = pb_plan_new("shard", "x", 48);
	pb_session_set_plan(s, p);
	run_err(s, "merge 0", "'shard' plan");
	run_err(s, "evaluate", "'shard' plan");
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_action_and_undo),
	    cmocka_unit_test(test_boundary_merge_split),
	    cmocka_unit_test(test_other_plan_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
