/* test_boundary_rules.c — hand edits and the session's Lua rules: a
 * `boundary` move (and action, merge, split) that would break a Lua `cut`
 * rule or a `core` / `stage` pin the plan obeys is refused with the rule's
 * name and the node, and the plan stays; a move that breaks nothing still
 * works. On a partition plan (resnet18, manycore-16) and a pipeline plan
 * (bert_base_like, cluster-2x8, 2 stages). On a plan of another kind the
 * refusal names the kinds `boundary` edits and the edit that kind has. */
#include "pb_test_ok.h"

static char buf[1 << 16];

/* The command is refused naming the rule and its effect; the plan stays. */
static void refused(pb_test_session *t, const char *line, const char *effect, const char *node)
{
	const pb_plan *before = t->s->plan;
	pb_error err = {0};
	int rc = pb_test_session_cmd(t, line, &err);
	if (rc == PB_OK)
		fail_msg("'%s' should be refused under %s; printed %s", line, effect, t->buf);
	assert_int_equal(rc, PB_EUSAGE);
	if (!strstr(err.msg, "Lua rule 'hand_rule'") || !strstr(err.msg, effect) ||
	    !strstr(err.msg, node) || !strstr(err.msg, "plan unchanged"))
		fail_msg("'%s': the message does not name rule, %s and '%s': %s", line, effect,
		         node, err.msg);
	assert_ptr_equal(t->s->plan, before);
}

static void test_partition_edits(void **state)
{
	(void)state;
	pb_test_session t;
	pb_test_session_with(&t, buf, sizeof buf, "models/resnet18.onnx",
	                     "partition --layout layouts/manycore-16.lua --method equal");
	const pb_plan *p = t.s->plan;
	int last0 = p->groups[0].last_node, first1 = p->groups[1].first_node;
	assert_int_equal(first1, last0 + 1);
	int core = p->groups[1].first_unit;
	const char *name1 = t.s->graph->nodes[first1].name;
	const char *name0 = t.s->graph->nodes[last0].name;

	/* no boundary after the first layer of group 1: `boundary 0 1` would make one */
	pb_test_rule(&t, "hand_rule", "cut = 'forbid'", first1);
	refused(&t, "boundary 0 1", "cut=forbid", name1);
	/* the rule does not stop a move elsewhere */
	pb_test_ok(&t, "boundary 0 -1");
	assert_int_equal(t.s->plan->groups[0].last_node, last0 - 1);
	pb_test_ok(&t, "undo");
	assert_int_equal(t.s->plan->groups[0].last_node, last0);

	/* a boundary after group 0's last layer: `boundary 0 1` and `merge 0` remove it */
	pb_test_rule(&t, "hand_rule", "cut = 'force'", last0);
	refused(&t, "boundary 0 1", "cut=force", name0);
	refused(&t, "merge 0", "cut=force", name0);

	/* the first layer of group 1 on its first core */
	char effect[32];
	snprintf(effect, sizeof effect, "core = %d", core);
	pb_test_rule(&t, "hand_rule", effect, first1);
	snprintf(effect, sizeof effect, "core=%d", core);
	refused(&t, "boundary 0 1", effect, name1);

	/* without rules the same edit goes through */
	pb_error err = {0};
	assert_int_equal(pb_test_session_lua(&t, "pb.clear()", "clear.lua", &err), PB_OK);
	pb_test_ok(&t, "boundary 0 1");
	assert_int_equal(t.s->plan->groups[0].last_node, first1);
	pb_test_session_close(&t);
}

static void test_pipeline_boundary(void **state)
{
	(void)state;
	pb_test_session t;
	pb_test_session_with(&t, buf, sizeof buf, "models/bert_base_like.onnx",
	                     "pipeline --layout layouts/cluster-2x8.lua --stages 2 --skip-oplevel");
	const pb_plan *p = t.s->plan;
	int x = -1;
	for (int v = 0; v < p->n_nodes && x < 0; v++)
		if (p->group[v] == 1)
			x = v; /* the node `boundary 0 1` moves to stage 0 */
	assert_true(x >= 0);
	const char *name = t.s->graph->nodes[x].name;

	pb_test_rule(&t, "hand_rule", "stage = 1", x);
	refused(&t, "boundary 0 1", "stage=1", name);

	/* x's consumers stay in its stage: moving x alone breaks it */
	pb_test_rule(&t, "hand_rule", "cut = 'forbid'", x);
	refused(&t, "boundary 0 1", "cut=forbid", name);
	/* moving the last node of stage 0 breaks nothing */
	pb_test_ok(&t, "boundary 0 -1");
	assert_int_equal(t.s->plan->group[x], 1);
	pb_test_session_close(&t);
}

static void test_other_kinds(void **state)
{
	(void)state;
	pb_test_session t;
	pb_test_session_with(&t, buf, sizeof buf, "models/resnet18.onnx",
	                     "map --layout layouts/hetero.lua");
	pb_error err = {0};
	assert_int_equal(pb_test_session_cmd(&t, "boundary 0 1", &err), PB_EUSAGE);
	if (!strstr(err.msg, "'partition' and 'pipeline' plans") ||
	    !strstr(err.msg, "a map plan's is 'backend'"))
		fail_msg("boundary on a map plan: %s", err.msg);
	assert_int_equal(pb_test_session_cmd(&t, "merge 0", &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "merge edits 'partition' plans"));
	pb_test_session_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_other_kinds),
	    cmocka_unit_test(test_partition_edits),
	    cmocka_unit_test(test_pipeline_boundary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
