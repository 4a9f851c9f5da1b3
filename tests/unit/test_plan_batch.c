/* test_plan_batch.c — a plan records the batch its shapes are at
 * (pb_plan.model_batch, "model_batch" in the plan JSON): it round-trips;
 * older plan JSON without it still loads (a pipeline plan's from its
 * detail.batch / micro-batches); a bad value is an error naming the file.
 * `pipeline --batch 16 -o`, `shard --batch 8 -o` and the pipeline `shard
 * --pp 2` keeps (its micro-batch) record it, and
 * `export --plan` in a session at the model file's batch 1 draws the plan at
 * its batch (bert_base_like: 4x128x768 / 8x128x768, not 1x128x768) and says
 * so in the title block. A saved session given as the plan stands for its
 * plan; one without a plan is a clear error. */
#include "pb_test_ok.h"

#define MODEL "models/bert_base_like.onnx"
#define PLAN "build-test-plan-batch.json"
#define SVG "build-test-plan-batch.svg"

static char buf[1 << 16];

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

static long saved_batch(const char *path)
{
	json_t *j = json_load_file(path, 0, NULL);
	assert_non_null(j);
	long b = (long)json_integer_value(json_object_get(j, "model_batch"));
	json_decref(j);
	return b;
}

static void test_json(void **state)
{
	(void)state;
	pb_error err = {0};
	pb_plan *p = pb_plan_new("pipeline", "milp", 3), *q = NULL;
	p->group[0] = p->group[1] = 0;
	p->group[2] = 1;
	p->model_batch = 4;
	json_t *j = pb_plan_to_json(p, NULL);
	assert_int_equal(json_integer_value(json_object_get(j, "model_batch")), 4);
	assert_int_equal(pb_plan_from_json(j, "p.json", 3, &q, &err), PB_OK);
	assert_int_equal(q->model_batch, 4);
	pb_plan_free(q);
	pb_plan *c = pb_plan_copy(p);
	assert_int_equal(c->model_batch, 4);
	pb_plan_free(c);

	/* older JSON: no field; a pipeline plan's batch / micro-batches */
	json_object_del(j, "model_batch");
	json_object_set_new(json_object_get(j, "detail"), "batch", json_integer(16));
	json_object_set_new(json_object_get(j, "metrics"), "microbatches", json_real(4));
	assert_int_equal(pb_plan_from_json(j, "p.json", 3, &q, &err), PB_OK);
	assert_int_equal(q->model_batch, 4);
	pb_plan_free(q);
	json_object_set_new(j, "kind", json_string("partition"));
	assert_int_equal(pb_plan_from_json(j, "p.json", 3, &q, &err), PB_OK);
	assert_int_equal(q->model_batch, 0);
	pb_plan_free(q);

	/* a bad value */
	json_object_set_new(j, "model_batch", json_integer(0));
	assert_int_equal(pb_plan_from_json(j, "old.json", 3, &q, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, "old.json"));
	assert_non_null(strstr(err.msg, "model_batch"));
	assert_null(q);
	json_object_set_new(j, "model_batch", json_string("4"));
	assert_int_equal(pb_plan_from_json(j, "old.json", 3, &q, &err), PB_EINPUT);
	json_decref(j);
	pb_plan_free(p);
}

/* `export --plan` in a fresh session at the file's batch */
static char *export_fresh(const char *title)
{
	pb_test_session t;
	pb_test_session_with(&t, buf, sizeof buf, MODEL, NULL);
	assert_int_equal(pb_plan_graph_batch(t.s->graph), 1);
	char line[256];
	snprintf(line, sizeof line, "export --plan " PLAN " -o " SVG " --title %s", title);
	pb_test_ok(&t, line);
	/* the session's model is still at its batch */
	assert_int_equal(pb_plan_graph_batch(t.s->graph), 1);
	pb_test_session_close(&t);
	return slurp(SVG);
}

/* The plan saved at PLAN records batch b; `export --plan` in a fresh session
 * draws it at that batch (shape dims, not batch 1's) and says `note` (and
 * `also`, unless NULL) in its title block. */
static void check_export(const char *title, long b, const char *dims, const char *note,
                         const char *also)
{
	assert_int_equal(saved_batch(PLAN), b);
	char *svg = export_fresh(title);
	assert_non_null(strstr(svg, dims));
	assert_null(strstr(svg, "1x128x768"));
	assert_non_null(strstr(svg, note));
	if (also)
		assert_non_null(strstr(svg, also));
	free(svg);
}

/* `line` in a session at the model file's batch saves PLAN at batch b;
 * exported in a fresh session it is drawn at b (check_export). */
static void plan_and_export(const char *line, long b, const char *title, const char *dims,
                            const char *note, const char *also)
{
	pb_test_session t;
	pb_test_session_with(&t, buf, sizeof buf, MODEL, line);
	assert_int_equal(t.s->plan->model_batch, b);
	pb_test_session_close(&t);
	check_export(title, b, dims, note, also);
	remove(PLAN);
	remove(SVG);
}

static void test_export_pipeline(void **state)
{
	(void)state; /* 16 = 4 micro-batches of 4 */
	plan_and_export("pipeline --layout layouts/cluster-2x8.lua --stages 2 --batch 16 "
	                "--skip-oplevel --polish 0 -o " PLAN,
	                4, "pipe", "4x128x768", "shapes at batch 4 (a micro&#45;batch of the plan",
	                "batch 16");
}

static void test_export_shard(void **state)
{
	(void)state;
	plan_and_export("shard --layout layouts/cluster-1x8.lua --batch 8 -o " PLAN, 8, "shard",
	                "8x128x768", "shapes at batch 8", NULL);
}

/* The pipeline `shard` keeps (data x tensor x pipeline): its chunks were
 * solved at the micro-batch, so it records that batch, as `pipeline` does
 * (it recorded the session's batch 8: "shapes at batch 8" under a plan of
 * micro-batches of 4). */
static void test_export_dtp(void **state)
{
	(void)state; /* 8 = 2 micro-batches of 4 */
	plan_and_export("shard --layout layouts/cluster-2x8.lua --batch 8 --pp 2 --microbatches 2 "
	                "--dp 4 --tp 2 --schedule 1f1b -j 1 -o " PLAN,
	                4, "dtp", "4x128x768", "shapes at batch 4 (a micro&#45;batch of the plan",
	                "batch 8");
}

static void test_session_as_plan(void **state)
{
	(void)state;
	const char *sess = "build-test-plan-batch-session.json";
	pb_test_session t;
	pb_test_session_with(&t, buf, sizeof buf, "models/resnet18.onnx", NULL);
	char line[256];
	snprintf(line, sizeof line, "save %s", sess);
	pb_test_ok(&t, line); /* no plan yet */
	pb_error err = {0};
	assert_int_equal(pb_test_session_cmd(&t,
	                                     "export --plan build-test-plan-batch-session.json "
	                                     "-o " SVG,
	                                     &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, sess));
	assert_non_null(strstr(err.msg, "session without a plan"));
	pb_test_ok(&t, "partition --layout layouts/manycore-16.lua --method equal");
	int groups = t.s->plan->n_groups;
	pb_test_ok(&t, line);
	pb_test_session_close(&t);

	pb_test_session_with(&t, buf, sizeof buf, "models/resnet18.onnx",
	                     "export --plan build-test-plan-batch-session.json -o " SVG);
	assert_non_null(strstr(buf, "wrote " SVG));
	pb_plan *p = NULL;
	assert_int_equal(pb_plan_load(sess, t.s->graph->n_nodes, &p, &err), PB_OK);
	assert_int_equal(p->n_groups, groups);
	assert_int_equal(p->model_batch, 1);
	pb_plan_free(p);
	pb_test_session_close(&t);
	remove(sess);
	remove(SVG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_session_as_plan), cmocka_unit_test(test_json),
	    cmocka_unit_test(test_export_pipeline), cmocka_unit_test(test_export_shard),
	    cmocka_unit_test(test_export_dtp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
