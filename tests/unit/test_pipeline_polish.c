/* test_pipeline_polish.c — the boundary polish of the pipeline planner
 * (core/shard/pipeline/pipeline_polish.c): on bert_base_like, cluster-2x8, batch 8,
 * training, the FLOP split can be improved by the hand edit `boundary 0 +-1`
 * (one `>` or `<` in the workbench); the polished plan cannot: every
 * single-node move of every boundary, costed as the edit costs it (the
 * planner with the moved split given), is no faster. The polished split
 * costed as an edit gives the same step time (one cost model). */
#include "pb_test_pipe.h"

#include "commands.h"
#include "session.h"
#include "shard/pipeline/pipeline_plan.h"

#define MODEL "models/bert_base_like.onnx"
#define LAYOUT "layouts/cluster-2x8.lua"
#define BATCH 8

static void opts_for(pb_pipe_opts *o, pb_session *s, int stages)
{
	pb_pipeline_plan_opts_default(o);
	o->stages = stages;
	o->batch = BATCH;
	o->train = 1;
	o->skip_oplevel = 1;
	o->reload = pb_test_pipe_reload;
	o->reload_ud = s;
}

/* The planner's plan (its step time in *t); polish_tries as pb_pipe_opts. */
static pb_plan *plan_of(pb_session *s, const pb_cluster *cl, int stages, int polish_tries,
                        const int *stage_of, pb_pipe_result *info)
{
	pb_pipe_opts o;
	opts_for(&o, s, stages);
	o.polish_tries = polish_tries;
	o.stage_of = stage_of;
	pb_pipe_result r;
	pb_error err = {0};
	int rc = pb_pipeline_plan(s->graph, cl, &o, &r, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	pb_plan *p = r.plan;
	r.plan = NULL;
	if (info) {
		*info = r;
		memset(&r, 0, sizeof r);
		info->g = NULL; /* the next reload frees it */
	}
	pb_pipeline_plan_result_free(&r);
	return p;
}

/* The step time of the hand edit `boundary k delta` on plan p (as
 * shard/pipeline/pipeline_edit.c's pb_pipeline_edit_boundary); NAN when refused. */
static double edited(pb_session *s, const pb_cluster *cl, const pb_plan *p, int k, int delta)
{
	int *stage_of = malloc((size_t)p->n_nodes * sizeof *stage_of);
	pb_error err = {0};
	double t = NAN;
	if (pb_plan_move_boundary(p, k, delta, stage_of, &err) == PB_OK) {
		pb_plan *e = plan_of(s, cl, p->n_groups, -1, stage_of, NULL);
		t = pb_plan_metric(e, "step_time", NAN);
		pb_plan_free(e);
	}
	free(stage_of);
	return t;
}

/* The fastest single-node boundary move of p (INFINITY when none). */
static double best_move(pb_session *s, const pb_cluster *cl, const pb_plan *p)
{
	double best = INFINITY;
	for (int k = 0; k + 1 < p->n_groups; k++)
		for (int d = -1; d <= 1; d += 2) {
			double t = edited(s, cl, p, k, d);
			if (t < best)
				best = t;
		}
	return best;
}

/* A session with MODEL and LAYOUT open; *cl its cluster. */
static void test_polish_two_stages(void **state)
{
	(void)state;
	pb_cluster cl;
	pb_session *s = pb_test_pipe_session(MODEL, LAYOUT, &cl);

	/* without the polish: one move beats the FLOP split (the defect) */
	pb_plan *raw = plan_of(s, &cl, 2, -1, NULL, NULL);
	double t_raw = pb_plan_metric(raw, "step_time", NAN);
	assert_true(t_raw > 0);
	assert_true(best_move(s, &cl, raw) < t_raw * (1 - 1e-6));
	assert_false(json_object_get(raw->detail, "polish"));

	/* with it: faster, reported, and no single move beats it */
	pb_pipe_result info;
	pb_plan *pol = plan_of(s, &cl, 2, 0, NULL, &info);
	double t_pol = pb_plan_metric(pol, "step_time", NAN);
	assert_true(t_pol < t_raw * (1 - 1e-6));
	assert_true(info.polish_moves >= 1);
	assert_true(info.polish_tries >= info.polish_moves);
	assert_true(info.polish_converged);
	assert_true(fabs(info.polish_before - t_raw) <= 1e-9 * t_raw);
	pb_pipeline_plan_result_free(&info);
	const json_t *pj = json_object_get(pol->detail, "polish");
	assert_non_null(pj);
	assert_true(json_is_true(json_object_get(pj, "converged")));
	assert_true(best_move(s, &cl, pol) >= t_pol * (1 - 1e-9));

	/* the polished split costed as a hand edit: the same step time */
	pb_plan *again = plan_of(s, &cl, 2, -1, pol->group, NULL);
	assert_true(fabs(pb_plan_metric(again, "step_time", NAN) - t_pol) <= 1e-9 * t_pol);

	pb_plan_free(again);
	pb_plan_free(pol);
	pb_plan_free(raw);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

/* A budget of one costed move: not converged, and it says so. */
static void test_polish_budget(void **state)
{
	(void)state;
	pb_cluster cl;
	pb_session *s = pb_test_pipe_session(MODEL, LAYOUT, &cl);
	pb_pipe_result info;
	pb_plan *p = plan_of(s, &cl, 2, 1, NULL, &info);
	assert_int_equal(info.polish_tries, 1);
	assert_false(info.polish_converged);
	assert_true(pb_plan_metric(p, "step_time", NAN) <= info.polish_before);
	pb_pipeline_plan_result_free(&info);
	pb_plan_free(p);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

/* Four stages of swin_t on cluster-4x8 (inference, batch 64): a move of a
 * boundary away from the slowest stage and the slowest transfer cannot lower
 * the step time, so the bound decides it without the stage searches (it ran
 * both searches of all 9 costed moves before). The plan is the one of costing
 * every move: converged, no single move beats it, and it equals the split
 * costed as a hand edit. */
static void test_polish_decided_by_bound(void **state)
{
	(void)state;
	pb_cluster cl;
	pb_session *s = pb_test_pipe_session("models/swin_t.onnx", "layouts/cluster-4x8.lua", &cl);
	pb_pipe_opts o;
	opts_for(&o, s, 4);
	o.batch = 64;
	o.train = 0;
	pb_pipe_result r;
	pb_error err = {0};
	assert_int_equal(pb_pipeline_plan(s->graph, &cl, &o, &r, &err), PB_OK);
	assert_true(r.polish_converged);
	assert_true(r.polish_decided > 0 && r.polish_decided <= r.polish_tries);
	double t = r.step_time;
	pb_plan *pol = r.plan;
	r.plan = NULL;
	r.g = NULL; /* the next reload frees it */
	pb_pipeline_plan_result_free(&r);
	o.polish_tries = -1;
	o.stage_of = pol->group;
	assert_int_equal(pb_pipeline_plan(s->graph, &cl, &o, &r, &err), PB_OK);
	assert_true(fabs(r.step_time - t) <= 1e-9 * t);
	r.g = NULL;
	pb_pipeline_plan_result_free(&r);
	pb_plan_free(pol);
	pb_cluster_free(&cl);
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_polish_two_stages),
	    cmocka_unit_test(test_polish_budget),
	    cmocka_unit_test(test_polish_decided_by_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
