/*
 * test_part_plan_edit.c — the partition plan edit engine on its own
 * (partition/edit/part_plan_edit.h, part_plan_evaluate.h), without the
 * command around it: a 48-layer chain on manycore-16 split equally (3 layers
 * a core) is edited; the new plan is returned, the old one left alone, a
 * refused edit says why with "plan unchanged", and evaluate's optimum is no
 * worse than the plan.
 */
#include "pb_test.h"

#include "partition/edit/part_plan_edit.h"
#include "partition/edit/part_plan_evaluate.h"

static pb_session *chain_session(void)
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
	pb_session *s = pb_session_new();
	pb_session_set_graph(s, pb_test_chain_graph(48, macs, edges), "chain.test");
	int rc;
	char *o =
	    pb_test_run_cmd(s, "partition --layout layouts/manycore-16.lua --method equal", &rc);
	free(o);
	assert_int_equal(rc, PB_OK);
	return s;
}

static int layers(const pb_plan *p, int g)
{
	return p->groups[g].last_node - p->groups[g].first_node + 1;
}

static void boundary_makes_a_new_plan(void **state)
{
	(void)state;
	pb_session *s = chain_session();
	const pb_plan *old = s->plan;
	assert_int_equal(layers(old, 0), 3);
	pb_part_plan_edit e;
	pb_error err = {0};
	assert_int_equal(pb_part_plan_edit_begin(s->graph, s->hw, old, NULL, "t", &e, &err), PB_OK);
	double optimum = pb_part_plan_edit_optimum(&e);
	assert_true(optimum == pb_plan_metric(old, "optimum", NAN)); /* same layout */
	pb_plan *p = NULL;
	char what[1024];
	assert_int_equal(pb_part_plan_edit_apply(&e, PB_PART_PLAN_BOUNDARY, 0, 2, "t", &optimum, &p,
	                                         what, sizeof what, &err),
	                 PB_OK);
	assert_non_null(p);
	assert_string_equal(p->method, "manual");
	assert_int_equal(layers(p, 0), 5);
	assert_int_equal(layers(p, 1), 1);
	assert_int_equal(layers(old, 0), 3); /* the session's plan is not touched */
	assert_non_null(strstr(what, "->"));
	pb_plan_free(p);
	pb_part_plan_edit_free(&e);
	pb_session_free(s);
}

static void refused_edit_says_why(void **state)
{
	(void)state;
	pb_session *s = chain_session();
	pb_part_plan_edit e;
	pb_error err = {0};
	assert_int_equal(pb_part_plan_edit_begin(s->graph, s->hw, s->plan, NULL, "t", &e, &err),
	                 PB_OK);
	double optimum = NAN;
	pb_plan *p = NULL;
	char what[256];
	/* every group of the equal plan has one core: nothing to split */
	assert_int_equal(pb_part_plan_edit_apply(&e, PB_PART_PLAN_SPLIT, 2, 0, "t", &optimum, &p,
	                                         what, sizeof what, &err),
	                 PB_EUSAGE);
	assert_null(p);
	assert_memory_equal(err.msg, "t: ", 3);
	assert_non_null(strstr(err.msg, "plan unchanged"));
	pb_part_plan_edit_free(&e);
	pb_session_free(s);
}

static void evaluate_is_no_worse(void **state)
{
	(void)state;
	pb_session *s = chain_session();
	pb_part_plan_edit e;
	pb_error err = {0};
	assert_int_equal(pb_part_plan_edit_begin(s->graph, s->hw, s->plan, NULL, "t", &e, &err),
	                 PB_OK);
	pb_plan *p = NULL;
	assert_int_equal(pb_part_plan_evaluate(&e, &p, &err), PB_OK);
	assert_string_equal(p->method, s->plan->method);
	assert_true(pb_plan_metric(p, "optimum", NAN) > 0);
	assert_true(pb_plan_metric(p, "gap", -1) >= -1e-9);
	pb_plan_free(p);
	pb_part_plan_edit_free(&e);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(boundary_makes_a_new_plan),
	    cmocka_unit_test(refused_edit_says_why),
	    cmocka_unit_test(evaluate_is_no_worse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
