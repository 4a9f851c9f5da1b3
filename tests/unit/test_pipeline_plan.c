/* test_pipeline_plan.c — the pipeline planner (core/shard/pipeline/pipeline_plan.c)
 * called directly: bert_base_like on cluster-2x8, its stages, device groups,
 * transfers and step time against the formula of pipeline_plan.h, its plan
 * and report; the comparison of `shard --pipeline auto` against planner runs
 * of every stage count; rows over memory; the errors. */
#include "pb_test_pipe.h"

#include "commands.h"
#include "session.h"
#include "shard/pipeline/pipeline_plan.h"
#include "shard/pipeline/pipeline_report.h"

#define MODEL "models/bert_base_like.onnx"
#define LAYOUT "layouts/cluster-2x8.lua"

static void opts_for(pb_pipe_opts *o, pb_session *s, int stages, long batch)
{
	pb_pipeline_plan_opts_default(o);
	o->stages = stages;
	o->batch = batch;
	o->train = 1;
	o->reload = pb_test_pipe_reload;
	o->reload_ud = s;
}

static int close_to(double a, double b)
{
	return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

static void test_two_stages(void **state)
{
	pb_cluster cl;
	pb_session *s = pb_test_pipe_session(MODEL, LAYOUT, &cl);
	pb_pipe_opts o;
	opts_for(&o, s, 2, 8);
	pb_pipe_result r;
	pb_error err = {0};
	int rc = pb_pipeline_plan(s->graph, &cl, &o, &r, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	assert_int_equal(cl.n_devices, 16);
	assert_int_equal(r.p, 2);
	assert_int_equal(r.d, 8);
	assert_int_equal(r.batch, 8);
	/* bubble 1/(m+1) <= 0.2: m = 4, the stages costed at batch 8/4 */
	assert_int_equal(r.m, 4);
	assert_int_equal(r.m, pb_pipeline_stages_microbatches(8, 2, 0.2));
	assert_ptr_equal(r.g, s->graph);
	assert_int_equal(pb_pipeline_plan_model_batch(r.g), 2);
	assert_true(close_to(r.bubble, 0.2));
	assert_true(close_to(r.bubble_over_m, 0.25));

	/* the device groups partition the devices, in stage order */
	int seen[16] = {0};
	for (int k = 0; k < r.p; k++) {
		assert_int_equal(r.stage[k].first_dev, k * r.d);
		assert_int_equal(r.stage[k].n_dev, r.d);
		for (int dv = 0; dv < r.stage[k].n_dev; dv++)
			seen[r.stage[k].first_dev + dv]++;
	}
	for (int dv = 0; dv < 16; dv++)
		assert_int_equal(seen[dv], 1);

	/* every operator in one stage, both stages used, no edge going back */
	const pb_graph *g = r.g;
	int ops = 0, per[2] = {0, 0};
	for (int v = 0; v < g->n_nodes; v++) {
		if (!r.active[v])
			continue;
		ops++;
		assert_in_range(r.split.stage[v], 0, 1);
		per[r.split.stage[v]]++;
		const pb_node *nd = &g->nodes[v];
		for (int i = 0; i < nd->n_inputs; i++) {
			int t = nd->inputs[i], u = t >= 0 ? g->tensors[t].producer : -1;
			if (u >= 0 && r.active[u])
				assert_true(r.split.stage[u] <= r.split.stage[v]);
		}
	}
	assert_true(per[0] > 0 && per[1] > 0);
	assert_int_equal(r.stage[0].ops, per[0]);
	assert_int_equal(r.stage[1].ops, per[1]);
	assert_int_equal(r.stage[0].ops + r.stage[1].ops, ops);

	/* the boundary crosses the two nodes: inter link, both directions */
	assert_int_equal(r.p2p_inter[0], 1);
	assert_true(r.p2p_bytes[0] > 0);
	double t = cl.inter.latency + r.p2p_bytes[0] / r.d / cl.inter.bw * 2;
	assert_true(close_to(r.p2p_time[0], t));
	assert_true(close_to(r.p2p_max, t));

	/* step time = (slowest stage + slowest transfer) x (m + P - 1) */
	double slowest = fmax(r.stage[0].time, r.stage[1].time);
	assert_true(slowest > 0);
	assert_true(close_to(r.slowest, slowest));
	assert_true(close_to(r.step_time, (slowest + t) * (r.m + r.p - 1)));
	assert_int_equal(r.fits, r.stage[0].feasible && r.stage[1].feasible);
	for (int k = 0; k < r.p; k++)
		assert_int_equal(r.stage[k].feasible, r.stage[k].memory <= cl.memory);

	/* compared with the operator-level plan on all 16 devices */
	assert_true(r.oplevel_solved);
	assert_true(r.oplevel.time > 0 && isfinite(r.oplevel.time));
	assert_int_equal(
	    r.pipeline_wins,
	    pb_pipeline_stages_prefer(r.step_time, r.fits, r.oplevel.time, r.oplevel.feasible));
	assert_int_equal(strncmp(r.name, "2 stages x ", 11), 0);

	/* the plan: group = stage, its metrics and detail are the report's */
	assert_non_null(r.plan);
	assert_string_equal(r.plan->kind, "pipeline");
	assert_int_equal(r.plan->n_groups, 2);
	for (int v = 0; v < g->n_nodes; v++)
		assert_int_equal(r.plan->group[v], r.split.stage[v]);
	/* each stage's MACs and node range, as the workbench's table and the
	 * SVG legend show them (they read 0 and "-" before) */
	double macs[2] = {0, 0};
	int lo[2] = {-1, -1}, hi[2] = {-1, -1};
	for (int v = 0; v < g->n_nodes; v++) {
		int k = r.split.stage[v];
		if (k < 0 || k > 1)
			continue;
		macs[k] += g->nodes[v].cost.macs;
		lo[k] = lo[k] < 0 ? v : lo[k];
		hi[k] = v;
	}
	for (int k = 0; k < 2; k++) {
		int range = 1; /* no node of the other stage inside */
		for (int v = lo[k]; v <= hi[k]; v++)
			range &= r.split.stage[v] < 0 || r.split.stage[v] == k;
		assert_true(macs[k] > 0);
		assert_true(close_to(r.plan->groups[k].macs, macs[k]));
		assert_int_equal(r.plan->groups[k].first_node, range ? lo[k] : -1);
		assert_int_equal(r.plan->groups[k].last_node, range ? hi[k] : -1);
	}
	/* bert's stages are node ranges */
	assert_true(r.plan->groups[0].first_node >= 0 && r.plan->groups[1].first_node >= 0);
	assert_true(close_to(pb_plan_metric(r.plan, "step_time", 0), r.step_time));
	assert_int_equal((int)pb_plan_metric(r.plan, "microbatches", 0), 4);
	json_t *j = r.plan->detail;
	assert_true(close_to(json_real_value(json_object_get(j, "step_time")), r.step_time));
	assert_int_equal(json_array_size(json_object_get(j, "stages")), 2);
	assert_int_equal(json_array_size(json_object_get(j, "p2p")), 1);
	assert_int_equal(json_array_size(json_object_get(j, "schemes")), 2);
	assert_string_equal(json_string_value(json_object_get(j, "best")),
	                    r.pipeline_wins ? "pipeline" : "operator-level");

	/* the text report names the stages and both schemes */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	pb_pipeline_report_result_text(f, &r);
	fclose(f);
	assert_non_null(strstr(buf, "2 stages x 8 devices, batch 8 = 4 micro-batches of 2"));
	assert_non_null(strstr(buf, r.name));
	assert_non_null(strstr(buf, "operator-level"));
	assert_non_null(strstr(buf, "1F1B schedule"));
	free(buf);

	pb_pipeline_plan_result_free(&r);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

static json_t *run_json(pb_session *s, const char *line)
{
	return pb_test_run_json(s, line);
}

/* pb_pipeline_plan_compare_run lists one row per stage count, each the planner's own
 * result; shard --pipeline auto keeps the best data x tensor x pipeline
 * configuration's plan (its chunk boundaries polished). */
static void test_shard_choice_is_best_row(void **state)
{
	pb_cluster cl;
	pb_session *s = pb_test_pipe_session(MODEL, LAYOUT, &cl);
	const int counts[4] = {2, 4, 8, 16};
	double step[4];
	int fits[4];
	char names[4][64];
	for (int k = 0; k < 4; k++) {
		pb_pipe_opts o;
		opts_for(&o, s, counts[k], 8);
		o.skip_oplevel = 1;
		pb_pipe_result r;
		pb_error err = {0};
		assert_int_equal(pb_pipeline_plan(s->graph, &cl, &o, &r, &err), PB_OK);
		assert_false(r.oplevel_solved);
		assert_true(r.pipeline_wins);
		step[k] = r.step_time;
		fits[k] = r.fits;
		snprintf(names[k], sizeof names[k], "%s", r.name);
		pb_pipeline_plan_result_free(&r);
	}

	/* the comparison itself, on a fresh session */
	pb_session *s2 = pb_session_new();
	pb_error err = {0};
	assert_int_equal(pb_session_open_model(s2, MODEL, NULL, 0, &err), PB_OK);
	pb_pipe_opts base;
	opts_for(&base, s2, 0, 8);
	pb_pipe_compare cmp;
	pb_pipeline_plan_compare_run(s2->graph, &cl, &base, NULL, NULL, &cmp);
	assert_int_equal(cmp.n_rows, 4);
	for (int k = 0; k < 4; k++) {
		assert_true(cmp.rows[k].ok);
		assert_int_equal(cmp.rows[k].stages, counts[k]);
		assert_true(close_to(cmp.rows[k].step_time, step[k]));
		assert_int_equal(cmp.rows[k].feasible, fits[k]);
		assert_string_equal(cmp.rows[k].scheme, names[k]);
	}
	pb_session_free(s2);

	/* the command's choice (the data x tensor x pipeline search): the best
	 * configuration, whose plan becomes the session's */
	pb_session *s3 = pb_session_new();
	json_t *j = run_json(s3, "shard " MODEL " --layout " LAYOUT " --train --batch 8 "
	                         "--max-axes 1 --pipeline auto --json");
	json_t *best = json_object_get(j, "best"), *bo = json_object_get(j, "best_overall");
	double bt = json_real_value(json_object_get(best, "step_time"));
	int pp = (int)json_integer_value(json_object_get(best, "pp"));
	json_t *cf = json_object_get(j, "configurations");
	size_t i;
	json_t *c;
	json_array_foreach(cf, i, c)
	{
		if (json_is_true(json_object_get(c, "fits")))
			assert_true(bt <= json_real_value(json_object_get(c, "step_time")));
	}
	assert_true(fabs(json_real_value(json_object_get(bo, "step_time")) - bt) <= 1e-12 * bt);
	/* bert training on two nodes: a pipeline beats the operator-level plan */
	assert_true(pp > 1);
	assert_string_equal(json_string_value(json_object_get(bo, "kind")), "pipeline");
	assert_non_null(s3->plan);
	assert_string_equal(s3->plan->kind, "pipeline");
	assert_int_equal((int)pb_plan_metric(s3->plan, "stages", 0), pp);
	/* the kept plan: the best row's with its chunk boundaries polished
	 * (dtp_polish.c), never slower; "polish" says from what to what */
	double kept = pb_plan_metric(s3->plan, "step_time", 0);
	const json_t *pj = json_object_get(j, "polish");
	assert_non_null(pj);
	assert_true(fabs(json_real_value(json_object_get(pj, "step_time_before")) - bt) <=
	            1e-9 * bt);
	assert_true(fabs(json_real_value(json_object_get(pj, "step_time")) - kept) <= 1e-9 * kept);
	assert_true(kept <= bt * (1 + 1e-9));
	json_decref(j);
	pb_session_free(s3);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

/* A pipeline over memory is a row with its numbers, feasible 0 (it was an
 * error row when the rows were parsed from the command's output), and
 * never the choice. */
static void test_rows_over_memory(void **state)
{
	pb_cluster cl;
	pb_session *s = pb_test_pipe_session(MODEL, LAYOUT, &cl);
	cl.memory = 1e6; /* 1 MB per device: no stage fits */
	pb_pipe_opts base;
	opts_for(&base, s, 0, 8);
	pb_pipe_compare cmp;
	pb_pipeline_plan_compare_run(s->graph, &cl, &base, NULL, NULL, &cmp);
	assert_int_equal(cmp.n_rows, 4);
	for (int k = 0; k < cmp.n_rows; k++) {
		assert_true(cmp.rows[k].ok);
		assert_false(cmp.rows[k].feasible);
		assert_true(cmp.rows[k].step_time > 0);
	}
	assert_int_equal(pb_pipeline_plan_compare_best(&cmp, 1.0, 0), -1);
	assert_int_equal(pb_pipeline_plan_compare_best(&cmp, 1.0, 1), -1);
	json_t *rep = json_pack("{s:f, s:s, s:[]}", "step_time", 1.0, "scheme", "16", "schemes");
	json_t *j = pb_pipeline_report_compare_json(&cmp, rep, -1);
	json_t *row = json_array_get(json_object_get(j, "pipelines"), 0);
	assert_true(json_is_false(json_object_get(row, "feasible")));
	assert_null(json_object_get(row, "error"));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(j, "best_overall"), "kind")),
	    "operator-level");
	json_decref(j);
	json_decref(rep);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

static void test_errors(void **state)
{
	pb_cluster cl;
	pb_session *s = pb_test_pipe_session(MODEL, LAYOUT, &cl);
	pb_pipe_opts o;
	pb_pipe_result r;
	pb_error err = {0};
	opts_for(&o, s, 3, 8);
	assert_int_equal(pb_pipeline_plan(s->graph, &cl, &o, &r, &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "pipeline: 3 stages do not divide the 16 devices"));
	pb_pipeline_plan_result_free(&r);
	opts_for(&o, s, 2, 8);
	o.microbatches = 3;
	assert_int_equal(pb_pipeline_plan(s->graph, &cl, &o, &r, &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "pipeline: 3 micro-batches do not divide the batch 8"));
	pb_pipeline_plan_result_free(&r);
	/* a batch change without a way to reload the model */
	opts_for(&o, s, 2, 8);
	o.reload = NULL;
	assert_int_equal(pb_pipeline_plan(s->graph, &cl, &o, &r, &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "pipeline: "));
	pb_pipeline_plan_result_free(&r);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_stages),
	    cmocka_unit_test(test_shard_choice_is_best_row),
	    cmocka_unit_test(test_rows_over_memory),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
