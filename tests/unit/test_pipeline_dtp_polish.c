/* test_pipeline_dtp_polish.c — `shard --pipeline auto` polishes the chunk
 * boundaries of the pipeline it keeps (core/shard/dtp/dtp_polish.c), as
 * `pipeline` polishes its stage boundaries: the polished plan is never
 * slower than the row the search found (`--polish 0`), and on
 * bert_base_like, cluster-2x8, --batch 8 --train (the best row: 8 stages of
 * the layer split) single-node moves make it strictly faster; the plan, the
 * JSON and the text say so; `--polish 1` costs one move and says it did not
 * converge; a bad --polish is refused. A generated GPT on the same cluster
 * is a case where no move helps: the same step time.
 * Each search is held to the stage count of that best row (--pp 8 for bert,
 * --pp 2 for the GPT: the other rows, pp 1 above all, are the operator-level
 * search, which the polish does not touch): the same row and the same
 * polished plan, 2.7 s CPU for the test instead of 52 s (issue 40.7). */
#include "pb_test_pipe.h"

#include "shard/dtp/dtp_search.h"
#include "shard/dtp/dtp_polish.h"

#include <unistd.h>

#define BERT "models/bert_base_like.onnx"
#define LAYOUT "layouts/cluster-2x8.lua"

/* The report of `shard MODEL --layout LAYOUT OPTS --pipeline auto -j 1
 * --json` and the session's plan after it (*plan, a copy). */
static json_t *shard_auto(const char *model, const char *opts, pb_plan **plan)
{
	char line[512];
	snprintf(line, sizeof line, "shard %s --layout " LAYOUT " %s --pipeline auto -j 1 --json",
	         model, opts);
	pb_session *s = pb_session_new();
	json_t *j = pb_test_run_json(s, line);
	assert_non_null(s->plan);
	assert_string_equal(s->plan->kind, "pipeline");
	*plan = pb_plan_copy(s->plan);
	pb_session_free(s);
	return j;
}

static double step_of(const pb_plan *p)
{
	return pb_plan_metric(p, "step_time", NAN);
}

static void test_bert_better(void **state)
{
	(void)state;
	pb_plan *raw, *pol, *one;
	json_t *jr = shard_auto(BERT, "--batch 8 --train --pp 8 --polish 0", &raw);
	json_t *jp = shard_auto(BERT, "--batch 8 --train --pp 8", &pol);
	double t_raw = step_of(raw), t_pol = step_of(pol);
	assert_true(t_raw > 0 && t_pol > 0);
	/* off: the row's plan, no polish reported */
	assert_null(json_object_get(jr, "polish"));
	assert_null(json_object_get(raw->detail, "polish"));
	double row =
	    json_real_value(json_object_get(json_object_get(jr, "best_overall"), "step_time"));
	assert_true(fabs(row - t_raw) <= 1e-9 * t_raw);
	/* on: strictly faster, a split of its own, reported in both places */
	if (!(t_pol < t_raw * (1 - 1e-3)))
		fail_msg("polished %.9g s, not below the row's %.9g s", t_pol, t_raw);
	int differ = 0;
	for (int v = 0; v < pol->n_nodes; v++)
		differ += pol->group[v] != raw->group[v];
	assert_true(differ > 0);
	const json_t *pj = json_object_get(jp, "polish");
	assert_non_null(pj);
	assert_true(json_integer_value(json_object_get(pj, "moves")) >= 1);
	assert_true(json_integer_value(json_object_get(pj, "tries")) >=
	            json_integer_value(json_object_get(pj, "moves")));
	assert_true(json_is_true(json_object_get(pj, "converged")));
	assert_true(fabs(json_real_value(json_object_get(pj, "step_time_before")) - t_raw) <=
	            1e-9 * t_raw);
	assert_true(fabs(json_real_value(json_object_get(pj, "step_time")) - t_pol) <=
	            1e-9 * t_pol);
	assert_non_null(json_object_get(pol->detail, "polish"));
	/* the same configuration: only the split changed */
	assert_int_equal(pol->n_groups, raw->n_groups);
	assert_true(pb_plan_metric(pol, "dp", 0) == pb_plan_metric(raw, "dp", -1));
	assert_true(pb_plan_metric(pol, "microbatches", 0) ==
	            pb_plan_metric(raw, "microbatches", -1));

	/* a budget of one costed move */
	json_t *j1 = shard_auto(BERT, "--batch 8 --train --pp 8 --polish 1", &one);
	const json_t *p1 = json_object_get(j1, "polish");
	assert_int_equal(json_integer_value(json_object_get(p1, "tries")), 1);
	assert_false(json_is_true(json_object_get(p1, "converged")));
	assert_true(step_of(one) <= t_raw);
	assert_true(step_of(one) >= t_pol * (1 - 1e-9));
	json_decref(j1);
	pb_plan_free(one);
	json_decref(jr);
	json_decref(jp);
	pb_plan_free(raw);
	pb_plan_free(pol);
}

/* A GPT whose best pipeline no single move improves: never worse. */
static void test_gpt_never_worse(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof path, "/tmp/pb_test_dtp_polish_%d.onnx", (int)getpid());
	assert_int_equal(pb_test_small_gpt(path), PB_OK);
	pb_plan *raw, *pol;
	json_t *jr = shard_auto(path, "--batch 16 --train --pp 2 --polish 0", &raw);
	json_t *jp = shard_auto(path, "--batch 16 --train --pp 2", &pol);
	assert_true(step_of(pol) <= step_of(raw) * (1 + 1e-12));
	const json_t *pj = json_object_get(jp, "polish");
	assert_non_null(pj);
	assert_true(json_integer_value(json_object_get(pj, "tries")) >= 1);
	json_decref(jr);
	json_decref(jp);
	pb_plan_free(raw);
	pb_plan_free(pol);
	unlink(path);
}

static void test_bad_polish(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	int rc;
	char *o = pb_test_run_cmd(
	    s, "shard " BERT " --layout " LAYOUT " --pipeline auto --polish -2", &rc);
	assert_int_not_equal(rc, PB_OK);
	if (!strstr(o, "--polish"))
		fail_msg("the message does not name --polish: %s", o);
	free(o);
	pb_session_free(s);
}

/* The report line says the change in per cent: five moves that keep the
 * step time equal in four digits read "1.003 ms -> 1.003 ms (-0.00287%, ...". */
static void test_polish_line(void **state)
{
	(void)state;
	char out[512] = "";
	FILE *f = fmemopen(out, sizeof out - 1, "w");
	pb_dtp_polish_info pi = {.polished = 1,
	                         .moves = 5,
	                         .tries = 14,
	                         .converged = 1,
	                         .before = 0.00100276519104,
	                         .after = 0.00100273643712};
	pb_dtp_polish_text(f, &pi);
	fclose(f);
	if (!strstr(out, "polish: 5 chunk-boundary moves kept of 14 costed, 1.003 ms -> 1.003 ms "
	                 "(-0.00287%, no single-node boundary move lowers the step time)"))
		fail_msg("%s", out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_polish_line),
	    cmocka_unit_test(test_bad_polish),
	    cmocka_unit_test(test_bert_better),
	    cmocka_unit_test(test_gpt_never_worse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
