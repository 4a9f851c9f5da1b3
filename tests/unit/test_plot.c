/*
 * test_plot.c — SVG plots: training curve, tuner progress, load bars and the
 * pipeline timeline. Each chart is checked as XML (xmllint) and for its
 * parts (series, bars, limit line, legend); the 1F1B schedule is checked
 * against its definition (dependencies, one op at a time per stage) and the
 * closed-form makespan for equal stages; bad inputs give errors that name
 * the file and line or field. Also the `plot` command.
 */
#include "pb_test.h"

#include <unistd.h>

#include "commands.h"
#include "render/chart.h"
#include "render/plot.h"
#include "test_svg_xml.h"

#define SERIES(id) "count(//*[local-name()='g'][@class='series'][@id='" id "'])"
#define LEGEND "count(//*[local-name()='g'][@class='legend'])"

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *render(int kind, const char *src, const pb_plan *p, const char *out)
{
	char *svg = NULL;
	size_t len = 0;
	pb_error err = {0};
	int rc = pb_plot_render(kind, src, p, NULL, &svg, &len, &err);
	if (rc)
		fprintf(stderr, "plot: %s\n", err.msg);
	assert_int_equal(rc, PB_OK);
	spit(out, svg, len);
	assert_int_equal(xml_wellformed(out), 0);
	return svg;
}

static void test_nice_range(void **state)
{
	double lo = 0.13, hi = 9.7;
	double step = pb_nice_range(&lo, &hi, 5);
	assert_true(fabs(step - 2) < 1e-12);
	assert_true(lo == 0 && fabs(hi - 10) < 1e-12);
	lo = -3.2e-5, hi = 4.1e-4;
	step = pb_nice_range(&lo, &hi, 5);
	assert_true(fabs(step - 1e-4) < 1e-15);
	assert_true(fabs(lo + 1e-4) < 1e-15 && fabs(hi - 5e-4) < 1e-15);
	lo = hi = 7; /* empty range becomes non-empty */
	pb_nice_range(&lo, &hi, 5);
	assert_true(lo < 7 && hi > 7);
}

static void test_training(void **state)
{
	const char *log = "build-test-plot-train.jsonl";
	FILE *f = fopen(log, "w");
	assert_non_null(f);
	fprintf(f, "# header comment\n{\"type\": \"config\", \"lr\": 0.01}\n\n");
	for (int e = 1; e <= 200; e++) {
		double mt = 1e-3 * (1 + 1.0 / e);
		if (e % 2)
			fprintf(f, "{\"episode\": %d, \"reward\": %.6f, \"gap\": %.6f}\n", e,
			        -mt * 1e3, 1.0 / e);
		else /* gap derived from max_time and optimum */
			fprintf(
			    f,
			    "{\"episode\": %d, \"reward\": %.6f, \"max_time\": %.9f, \"optimum\": "
			    "0.001}\n",
			    e, -mt * 1e3, mt);
	}
	fclose(f);
	const char *out = "build-test-plot-train.svg";
	char *svg = render(PB_PLOT_TRAINING, log, NULL, out);
	assert_int_equal((int)xml_xpath_num(out, SERIES("reward")), 1);
	assert_int_equal((int)xml_xpath_num(out, SERIES("reward_avg")), 1);
	assert_int_equal((int)xml_xpath_num(out, SERIES("gap")), 1);
	assert_int_equal((int)xml_xpath_num(out, SERIES("gap_best")), 1);
	assert_int_equal((int)xml_xpath_num(out, LEGEND), 2);
	/* 200 points in the reward polyline (the config line is skipped). */
	assert_int_equal((int)xml_xpath_num(out,
	                                    "string-length(//*[@id='reward']/*/@points) - "
	                                    "string-length(translate(//*[@id='reward']/*/@points,"
	                                    "',',''))"),
	                 200);
	assert_non_null(strstr(svg, "200 episodes"));
	assert_non_null(strstr(svg, "best gap 0.5%")); /* 1/200 */
	free(svg);
	/* A broken line is reported with file and line number. */
	write_text(log, "{\"episode\": 1, \"reward\": 1}\n{\"episode\": 2, \"reward\": \n");
	char *bad = NULL;
	size_t len;
	pb_error err = {0};
	assert_int_equal(pb_plot_render(PB_PLOT_TRAINING, log, NULL, NULL, &bad, &len, &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, "build-test-plot-train.jsonl:2:"));
	write_text(log, "{\"note\": \"nothing to plot\"}\n");
	assert_int_equal(pb_plot_render(PB_PLOT_TRAINING, log, NULL, NULL, &bad, &len, &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, "no training records"));
	assert_int_equal(
	    pb_plot_render(PB_PLOT_TRAINING, "/nonexistent.jsonl", NULL, NULL, &bad, &len, &err),
	    PB_EINPUT);
	assert_non_null(strstr(err.msg, "/nonexistent.jsonl"));
	unlink(log);
	unlink(out);
}

static void test_tune(void **state)
{
	const char *log = "build-test-plot-tune.json";
	/* A whole-file JSON array works as well as JSON lines. */
	write_text(log,
	           "[{\"task\": \"conv1\", \"trial\": 1, \"gflops\": 10},"
	           " {\"task\": \"conv1\", \"trial\": 2, \"gflops\": 30},"
	           " {\"task\": \"conv1\", \"trial\": 3, \"gflops\": 20},"
	           " {\"task\": \"gemm\", \"trial\": 1, \"gflops\": 50},"
	           " {\"task\": \"gemm\", \"trial\": 2, \"gflops\": null, \"error\": \"timeout\"},"
	           " {\"task\": \"gemm\", \"trial\": 3, \"gflops\": 80}]");
	const char *out = "build-test-plot-tune.svg";
	char *svg = render(PB_PLOT_TUNE, log, NULL, out);
	assert_int_equal((int)xml_xpath_num(out, SERIES("trials_0")), 1);
	assert_int_equal((int)xml_xpath_num(out, SERIES("best_1")), 1);
	assert_int_equal((int)xml_xpath_num(out, SERIES("failed")), 1);
	assert_int_equal(
	    (int)xml_xpath_num(out, "count(//*[@id='trials_0']/*[local-name()='circle'])"), 3);
	/* gemm: 2 measured points; the failed trial is a mark, not a point. */
	assert_int_equal(
	    (int)xml_xpath_num(out, "count(//*[@id='trials_1']/*[local-name()='circle'])"), 2);
	assert_non_null(strstr(svg, "6 trials, 2 series, 1 failed, best 80 GFLOP/s"));
	assert_non_null(strstr(svg, ">conv1<"));
	free(svg);
	/* The fields `partbench tune --log` writes: key, method, valid. */
	write_text(log, "{\"key\":\"gemm:8,8,8\",\"op\":\"gemm\",\"valid\":true,\"gflops\":5,"
	                "\"method\":\"rl\"}\n"
	                "{\"key\":\"gemm:8,8,8\",\"op\":\"gemm\",\"valid\":false,\"gflops\":0,"
	                "\"method\":\"rl\",\"why\":\"bad\"}\n"
	                "{\"key\":\"gemm:8,8,8\",\"op\":\"gemm\",\"valid\":true,\"gflops\":7,"
	                "\"method\":\"random\"}\n");
	svg = render(PB_PLOT_TUNE, log, NULL, out);
	assert_non_null(strstr(svg, "3 trials, 2 series, 1 failed, best 7 GFLOP/s"));
	assert_non_null(strstr(svg, ">gemm:8,8,8 random<"));
	free(svg);
	unlink(log);
	unlink(out);
}

static pb_plan *plan3(const char *kind)
{
	pb_plan *p = pb_plan_new(kind, "milp", 6);
	const char *labels[3] = {"stage 0", "stage 1", "stage 2"};
	for (int k = 0; k < 3; k++) {
		pb_plan_group g = {.label = (char *)labels[k],
		                   .time = 1e-3 * (k + 1),
		                   .compute = 0.7e-3 * (k + 1),
		                   .routing = 0.3e-3 * (k + 1),
		                   .storage = 4e6 * (k + 1),
		                   .first_node = 2 * k,
		                   .last_node = 2 * k + 1};
		g.bottleneck = k == 2;
		pb_plan_add_group(p, &g);
		p->group[2 * k] = p->group[2 * k + 1] = k;
	}
	pb_plan_set_metric(p, "memory_limit", 10e6);
	return p;
}

static void test_load(void **state)
{
	pb_plan *p = plan3("partition");
	const char *out = "build-test-plot-load.svg";
	char *svg = render(PB_PLOT_LOAD, "plan.json", p, out);
	assert_int_equal(
	    (int)xml_xpath_num(out, "count(//*[local-name()='rect'][@class='bar compute'])"), 3);
	assert_int_equal(
	    (int)xml_xpath_num(out, "count(//*[local-name()='rect'][@class='bar bottleneck'])"), 1);
	/* storage 12 MB > limit 10 MB: one bar over */
	assert_int_equal(
	    (int)xml_xpath_num(out, "count(//*[local-name()='rect'][@class='bar storage over'])"),
	    1);
	assert_int_equal((int)xml_xpath_num(out, "count(//*[local-name()='g'][@class='limit'])"),
	                 1);
	assert_non_null(strstr(svg, "memory limit 10.0 MB, 1 over"));
	free(svg);
	pb_plan_clear_groups(p);
	char *bad;
	size_t len;
	pb_error err = {0};
	assert_int_equal(pb_plot_render(PB_PLOT_LOAD, "empty.json", p, NULL, &bad, &len, &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, "empty.json: the plan has no groups"));
	pb_plan_free(p);
	unlink(out);
}

/* Checks a schedule against the 1F1B rules; returns the makespan. */
static double check_schedule(const json_t *s, int S, int M)
{
	assert_int_equal(json_array_size(s), 2 * S * M);
	double fend[8][16], bend[8][16], fst[8][16], bst[8][16], span = 0;
	size_t i;
	const json_t *e;
	json_array_foreach(s, i, e)
	{
		int st = (int)json_integer_value(json_object_get(e, "stage"));
		int mb = (int)json_integer_value(json_object_get(e, "mb"));
		const char *k = json_string_value(json_object_get(e, "kind"));
		double a = json_real_value(json_object_get(e, "start"));
		double b = json_real_value(json_object_get(e, "end"));
		if (k[0] == 'F')
			fst[st][mb] = a, fend[st][mb] = b;
		else
			bst[st][mb] = a, bend[st][mb] = b;
		span = fmax(span, b);
	}
	for (int st = 0; st < S; st++)
		for (int mb = 0; mb < M; mb++) {
			if (st > 0)
				assert_true(fst[st][mb] >= fend[st - 1][mb] - 1e-12);
			if (st < S - 1)
				assert_true(bst[st][mb] >= bend[st + 1][mb] - 1e-12);
			else
				assert_true(bst[st][mb] >= fend[st][mb] - 1e-12);
		}
	/* One op at a time per stage. */
	json_array_foreach(s, i, e)
	{
		size_t j;
		const json_t *o;
		json_array_foreach(s, j, o)
		{
			if (j <= i || json_integer_value(json_object_get(e, "stage")) !=
			                  json_integer_value(json_object_get(o, "stage")))
				continue;
			double a0 = json_real_value(json_object_get(e, "start")),
			       a1 = json_real_value(json_object_get(e, "end"));
			double b0 = json_real_value(json_object_get(o, "start")),
			       b1 = json_real_value(json_object_get(o, "end"));
			assert_true(a1 <= b0 + 1e-12 || b1 <= a0 + 1e-12);
		}
	}
	return span;
}

static void test_schedule_1f1b(void **state)
{
	/* Equal stages: makespan = (M + S - 1) * (f + b). */
	double f[4] = {1, 1, 1, 1}, b[4] = {2, 2, 2, 2};
	json_t *s = pb_schedule_1f1b(4, 8, f, b);
	assert_true(fabs(check_schedule(s, 4, 8) - (8 + 4 - 1) * 3.0) < 1e-9);
	json_decref(s);
	/* Unequal stages still obey the rules; the slowest stage bounds it. */
	double f2[3] = {1, 3, 2}, b2[3] = {2, 6, 4};
	s = pb_schedule_1f1b(3, 5, f2, b2);
	assert_true(check_schedule(s, 3, 5) >= 5 * 9.0);
	json_decref(s);
	/* Fewer micro-batches than stages. */
	s = pb_schedule_1f1b(4, 2, f, b);
	check_schedule(s, 4, 2);
	json_decref(s);
}

static void test_timeline(void **state)
{
	/* Synthesized from a pipeline plan's stage times. */
	pb_plan *p = plan3("pipeline");
	json_object_set_new(p->detail, "micro_batches", json_integer(4));
	const char *out = "build-test-plot-timeline.svg";
	char *svg = render(PB_PLOT_TIMELINE, "pipe.json", p, out);
	assert_int_equal(
	    (int)xml_xpath_num(out, "count(//*[local-name()='rect'][@class='op fwd'])"), 12);
	assert_int_equal(
	    (int)xml_xpath_num(out, "count(//*[local-name()='rect'][@class='op bwd'])"), 12);
	assert_non_null(
	    strstr(svg, "1F1B, synthesized from stage times; 3 stages, 4 micro-batches"));
	free(svg);
	/* An explicit schedule is drawn as given. */
	json_t *sched = json_array();
	json_array_append_new(sched, json_pack("{s:i,s:i,s:s,s:f,s:f}", "stage", 0, "mb", 0, "kind",
	                                       "F", "start", 0.0, "end", 1.0));
	json_array_append_new(sched, json_pack("{s:i,s:i,s:s,s:f,s:f}", "stage", 1, "mb", 0, "kind",
	                                       "F", "start", 1.0, "end", 2.0));
	json_array_append_new(sched, json_pack("{s:i,s:i,s:s,s:f,s:f}", "stage", 1, "mb", 0, "kind",
	                                       "B", "start", 2.0, "end", 4.0));
	json_array_append_new(sched, json_pack("{s:i,s:i,s:s,s:f,s:f}", "stage", 0, "mb", 0, "kind",
	                                       "B", "start", 4.0, "end", 6.0));
	json_object_set_new(p->detail, "schedule", sched);
	json_object_set_new(p->detail, "schedule_name", json_string("1F1B"));
	svg = render(PB_PLOT_TIMELINE, "pipe.json", p, out);
	assert_int_equal(
	    (int)xml_xpath_num(out,
	                       "count(//*[local-name()='g'][@class='ops']/*[local-name()='rect'])"),
	    4);
	/* busy 6 of 2 x 6: bubble 50 % */
	assert_non_null(strstr(svg, "1F1B; 2 stages, 1 micro-batches, makespan 6 s, bubble 50.0%"));
	free(svg);
	/* A bad entry names the field. */
	json_array_append_new(sched,
	                      json_pack("{s:i,s:f,s:f}", "stage", 0, "start", 3.0, "end", 1.0));
	char *bad;
	size_t len;
	pb_error err = {0};
	assert_int_equal(pb_plot_render(PB_PLOT_TIMELINE, "pipe.json", p, NULL, &bad, &len, &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, "pipe.json: detail.schedule[4]"));
	pb_plan_free(p);
	/* A partition plan has nothing to draw. */
	p = plan3("partition");
	assert_int_equal(pb_plot_render(PB_PLOT_TIMELINE, "part.json", p, NULL, &bad, &len, &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, "no detail.schedule"));
	pb_plan_free(p);
	unlink(out);
}

static void test_plot_command(void **state)
{
	pb_session *s = pb_session_new();
	char *out = NULL;
	size_t olen = 0;
	FILE *of = open_memstream(&out, &olen);
	pb_cmd_ctx ctx = {.s = s, .out = of, .log = of};
	pb_error err = {0};
	pb_plan *p = plan3("partition");
	assert_int_equal(pb_plan_save(p, NULL, "build-test-plot-plan.json", &err), PB_OK);
	pb_plan_free(p);
	assert_int_equal(
	    pb_cmd_run_line(&ctx,
	                    "plot load build-test-plot-plan.json -o build-test-plot-cmd.svg "
	                    "--mem-limit 5e6 --title 'my load'",
	                    &err),
	    PB_OK);
	assert_int_equal(xml_wellformed("build-test-plot-cmd.svg"), 0);
	char *svg = slurp("build-test-plot-cmd.svg", NULL);
	assert_non_null(strstr(svg, "<title>my load</title>"));
	assert_non_null(strstr(svg, "memory limit 5.00 MB, 2 over"));
	free(svg);
	assert_int_equal(pb_cmd_run_line(&ctx, "plot pie x.json -o y.svg", &err), PB_EUSAGE);
	assert_int_equal(pb_cmd_run_line(&ctx, "plot load -o y.svg", &err), PB_EUSAGE);
	assert_int_equal(pb_cmd_run_line(&ctx, "plot training -o y.svg", &err), PB_EUSAGE);
	assert_int_equal(pb_cmd_run_line(&ctx, "plot load /nonexistent.json -o y.svg", &err),
	                 PB_EINPUT);
	fclose(of);
	free(out);
	unlink("build-test-plot-plan.json");
	unlink("build-test-plot-cmd.svg");
	pb_session_free(s);
}

/* The plots of real command outputs: `train --log` for the training curve,
 * `pipeline -o` (named gpipe/1f1b schedules) for the timeline, the session's
 * partition plan for the load bars. */
static void test_real_outputs(void **state)
{
	(void)state;
	pb_session *s = pb_session_new();
	char *out = NULL;
	size_t olen = 0;
	FILE *of = open_memstream(&out, &olen);
	pb_cmd_ctx ctx = {.s = s, .out = of, .log = of};
	pb_error err = {0};
	const char *log = "build-test-plot-real.jsonl", *svgp = "build-test-plot-real.svg";
	assert_int_equal(
	    pb_cmd_run_line(&ctx,
	                    "train models/resnet18.onnx --layout layouts/manycore-16.lua "
	                    "--episodes 40 -o build-test-plot-real.ckpt --log "
	                    "build-test-plot-real.jsonl",
	                    &err),
	    PB_OK);
	json_t *recs;
	assert_int_equal(pb_jsonl_load(log, &recs, &err), PB_OK);
	assert_int_equal(json_array_size(recs), 40);
	double prev_best = INFINITY;
	for (size_t i = 0; i < 40; i++) {
		const json_t *r = json_array_get(recs, i);
		assert_int_equal(json_integer_value(json_object_get(r, "episode")),
		                 (json_int_t)i + 1);
		double bg = json_number_value(json_object_get(r, "best_gap"));
		assert_true(bg >= -1e-12 &&
		            bg <= prev_best + 1e-12); /* best so far only improves */
		prev_best = bg;
		const json_t *gap = json_object_get(r, "gap");
		if (json_is_number(gap))
			assert_true(json_number_value(gap) >= bg - 1e-12);
	}
	json_decref(recs);
	assert_int_equal(pb_cmd_run_line(&ctx,
	                                 "plot training build-test-plot-real.jsonl -o "
	                                 "build-test-plot-real.svg",
	                                 &err),
	                 PB_OK);
	assert_int_equal(xml_wellformed(svgp), 0);
	char *svg = slurp(svgp, NULL);
	assert_non_null(strstr(svg, "40 episodes"));
	free(svg);
	/* The plan train left in the session: load bars, one per group. */
	int groups = s->plan->n_groups;
	assert_int_equal(pb_cmd_run_line(&ctx, "plot load -o build-test-plot-real.svg", &err),
	                 PB_OK);
	assert_int_equal(xml_wellformed(svgp), 0);
	assert_true(groups >= 2);
	assert_int_equal(
	    pb_cmd_run_line(&ctx,
	                    "pipeline models/resnet18.onnx --layout layouts/cluster-1x8.lua "
	                    "--stages 4 --batch 32 --train -o build-test-plot-pipe.json",
	                    &err),
	    PB_OK);
	static const char *names[2] = {"1f1b", "gpipe"};
	for (int k = 0; k < 2; k++) {
		char line[256];
		snprintf(line, sizeof line,
		         "plot timeline build-test-plot-pipe.json -o build-test-plot-real.svg%s",
		         k ? " --schedule gpipe" : "");
		int rc = pb_cmd_run_line(&ctx, line, &err);
		if (rc != PB_OK)
			fprintf(stderr, "%s\n", err.msg);
		assert_int_equal(rc, PB_OK);
		assert_int_equal(xml_wellformed(svgp), 0);
		svg = slurp(svgp, NULL);
		char want[64];
		snprintf(want, sizeof want, "%s; 4 stages", names[k]);
		assert_non_null(strstr(svg, want));
		free(svg);
		/* Every micro-batch has a forward and a backward box on every stage. */
		int fwd =
		    (int)xml_xpath_num(svgp, "count(//*[local-name()='rect'][@class='op fwd'])");
		int bwd =
		    (int)xml_xpath_num(svgp, "count(//*[local-name()='rect'][@class='op bwd'])");
		assert_true(fwd > 0 && fwd % 4 == 0);
		assert_int_equal(fwd, bwd);
	}
	assert_int_equal(pb_cmd_run_line(&ctx,
	                                 "plot timeline build-test-plot-pipe.json --schedule zb -o "
	                                 "build-test-plot-real.svg",
	                                 &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, "'zb'"));
	fclose(of);
	free(out);
	unlink(log);
	unlink(svgp);
	unlink("build-test-plot-real.ckpt");
	unlink("build-test-plot-pipe.json");
	pb_session_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nice_range),    cmocka_unit_test(test_training),
	    cmocka_unit_test(test_tune),          cmocka_unit_test(test_load),
	    cmocka_unit_test(test_schedule_1f1b), cmocka_unit_test(test_timeline),
	    cmocka_unit_test(test_plot_command),  cmocka_unit_test(test_real_outputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
