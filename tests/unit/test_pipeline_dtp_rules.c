/* test_pipeline_dtp_rules.c — `shard --pipeline auto` obeys the session's Lua
 * cut and stage rules in the chunk split of the pipeline it keeps, as
 * `pipeline` obeys them in its stage split (docs/lua-api.md): before, the
 * data x tensor x pipeline search split the model at layer boundaries
 * whatever the rules said, and the kept plan broke them silently (a `stage =
 * 0` pin on bert_base_like's head MatMul left it in chunk 7 of 8). On
 * bert_base_like, cluster-2x8, --batch 8 --train: a `cut = "forbid"` rule on
 * a node whose consumer the rule-free plan puts in the next chunk keeps its
 * consumers in its chunk (the polish too), the report names the rule; the
 * pin puts the head MatMul in chunk 0. */
#include "pb_test_ok.h"

/* --pp 8: the search is held to the stage count of the best row (8 stages
 * of 2 devices, m 8); the rules act on the chunk split of the pipelines, not
 * on the operator-level plans of pp 1, whose search was nearly all of this
 * test's time (51 s CPU with --shrink, 1.5 s with --pp 8; issue 40.7).
 * Without the rules in the chunk split the pin fails as it did on 6631ccc's
 * parent: the head MatMul in chunk 7. */
#define SHARD                                                                                      \
	"shard models/bert_base_like.onnx --layout layouts/cluster-2x8.lua --batch 8 --train "     \
	"--pipeline auto --pp 8 -j 1"

static char buf[1 << 20];

/* A node of group `grp` with a consumer in a later group, -1 when none. */
static int cut_after(const pb_graph *g, const pb_plan *p, int grp)
{
	for (int v = 0; v < g->n_nodes; v++) {
		if (p->group[v] != grp)
			continue;
		const pb_node *n = &g->nodes[v];
		for (int k = 0; k < n->n_outputs; k++) {
			const pb_tensor *t = &g->tensors[n->outputs[k]];
			for (int c = 0; c < t->n_consumers; c++)
				if (p->group[t->consumers[c]] > grp)
					return v;
		}
	}
	return -1;
}

/* Every consumer of v is in v's group. */
static int kept_together(const pb_graph *g, const pb_plan *p, int v)
{
	const pb_node *n = &g->nodes[v];
	for (int k = 0; k < n->n_outputs; k++) {
		const pb_tensor *t = &g->tensors[n->outputs[k]];
		for (int c = 0; c < t->n_consumers; c++)
			if (p->group[t->consumers[c]] != p->group[v])
				return 0;
	}
	return 1;
}

static void test_cut_forbid(void **state)
{
	(void)state;
	pb_test_session t;
	pb_test_session_with(&t, buf, sizeof buf, "models/bert_base_like.onnx", SHARD);
	assert_string_equal(t.s->plan->kind, "pipeline");
	int x = cut_after(t.s->graph, t.s->plan, 0);
	assert_true(x >= 0);
	assert_false(kept_together(t.s->graph, t.s->plan, x));
	char name[256];
	snprintf(name, sizeof name, "%s", t.s->graph->nodes[x].name);

	pb_test_rule(&t, "keep", "cut = 'forbid'", x);
	pb_test_ok(&t, SHARD);
	assert_non_null(strstr(t.buf, "rules: keep (cut=forbid, 1 node); all obeyed"));
	assert_string_equal(t.s->plan->kind, "pipeline");
	if (!kept_together(t.s->graph, t.s->plan, x))
		fail_msg("a consumer of %s is in another chunk than it (group %d)", name,
		         t.s->plan->group[x]);
	/* the JSON names the rule too */
	pb_test_ok(&t, SHARD " --json");
	json_t *j = json_loads(t.buf, 0, NULL);
	assert_non_null(j);
	const json_t *r0 = json_array_get(json_object_get(j, "rules"), 0);
	assert_string_equal(json_string_value(json_object_get(r0, "name")), "keep");
	json_decref(j);
	pb_test_session_close(&t);
}

static void test_stage_pin(void **state)
{
	(void)state;
	pb_test_session t;
	pb_test_session_with(&t, buf, sizeof buf, "models/bert_base_like.onnx", SHARD);
	const pb_graph *g = t.s->graph;
	int head = -1;
	for (int v = 0; v < g->n_nodes; v++)
		if (strcmp(g->nodes[v].op, "MatMul") == 0)
			head = v;
	assert_true(head >= 0);
	assert_true(t.s->plan->group[head] > 0); /* without the rule: a later chunk */
	pb_test_rule(&t, "keep", "stage = 0", head);
	pb_test_ok(&t, SHARD);
	if (strcmp(t.s->plan->kind, "pipeline") == 0)
		assert_int_equal(t.s->plan->group[head], 0);
	pb_test_session_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cut_forbid),
	    cmocka_unit_test(test_stage_pin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
