/* test_tune_all.c — whole-model tuning (tune/tune_all.h): the distinct
 * kernel shapes of real models (deduplicated by key, shares), a short run on
 * tests/data/tiny_convs.onnx into a log (one summary line per shape, its
 * measurements, read back by --costs' reader and skipped by a single shape's
 * resume), resuming a log whose last shape has no summary line, prior
 * measurements and the time budget of the tuner. No timing assertions. */
#include "pb_test.h"
#include "load.h"

#include <math.h>
#include <unistd.h>

#include "tune/log.h"
#include "tune/node_costs.h"
#include "tune/tune_all.h"

static pb_graph *load(const char *path)
{
	pb_graph *g = NULL;
	pb_error err = {0};
	assert_int_equal(pb_graph_load(path, NULL, &g, &err), PB_OK);
	return g;
}

static void test_plan(void **state)
{
	pb_graph *g = load("models/resnet18.onnx");
	pb_tune_all a;
	pb_error err = {0};
	assert_int_equal(pb_tune_all_plan(g, &a, &err), PB_OK);
	assert_int_equal(a.n, 12);
	int nodes = 0, four = 0;
	double share = 0;
	for (int k = 0; k < a.n; k++) {
		nodes += a.shapes[k].n_nodes;
		share += a.shapes[k].share;
		for (int j = 0; j < k; j++)
			assert_string_not_equal(a.shapes[j].key, a.shapes[k].key);
		for (int i = 0; i < a.shapes[k].n_nodes; i++) {
			pb_tune_shape s;
			char key[128];
			assert_int_equal(pb_tune_shape_from_node(g, a.shapes[k].nodes[i], &s, &err),
			                 PB_OK);
			pb_tune_shape_key(&s, key, sizeof key);
			assert_string_equal(key, a.shapes[k].key);
		}
		if (!strcmp(a.shapes[k].key, "conv2d:1,64,56,56,64,3,3,1,1"))
			four = a.shapes[k].n_nodes;
	}
	assert_int_equal(nodes, 21);
	assert_int_equal(four, 4);
	assert_true(fabs(share - 1) < 1e-12);
	pb_tune_all_free(&a);
	pb_graph_free(g);
	/* bert: the 12 layers' attention MatMuls are one batched shape */
	g = load("models/bert_base_like.onnx");
	assert_int_equal(pb_tune_all_plan(g, &a, &err), PB_OK);
	int found = 0;
	for (int k = 0; k < a.n; k++)
		if (!strcmp(a.shapes[k].key, "gemm:128,128,64")) {
			found = 1;
			assert_true(a.shapes[k].n_nodes >= 12);
		}
	assert_true(found);
	pb_tune_all_free(&a);
	pb_graph_free(g);
}

static int count_lines(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	int n = 0;
	while (f && fgets(line, sizeof line, f))
		n += strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return n;
}

static void test_run_and_resume(void **state)
{
	pb_graph *g = load("tests/data/tiny_convs.onnx");
	pb_tune_all a;
	pb_error err = {0};
	assert_int_equal(pb_tune_all_plan(g, &a, &err), PB_OK);
	char log[] = "/tmp/pb_tune_all_XXXXXX";
	int fd = mkstemp(log);
	assert_true(fd >= 0);
	close(fd);
	pb_tune_all_opts o = {{0}};
	o.tune.trials = 2;
	o.tune.batch = 4;
	o.tune.seed = 1;
	o.tune.log_path = log;
	o.tune.measure = (pb_tune_measure_opts){1, 1, 0};
	o.rank_timeout = 60;
	pb_tune_all_report r;
	assert_int_equal(pb_tune_all_run(&a, &o, &r, &err), PB_OK);
	assert_int_equal(r.tuned, a.n);
	assert_int_equal(r.missing, 0);
	assert_int_equal(count_lines(log, "\"method\":\"shape\""), a.n);
	assert_int_equal(count_lines(log, "\"method\":\"rl\""), 2 * a.n);
	/* --costs reads the log: every tunable node has a time */
	double *t = malloc((size_t)g->n_nodes * sizeof *t);
	int n_found = 0, nodes = 0;
	assert_int_equal(pb_tune_node_times(g, log, t, &n_found, &err), PB_OK);
	for (int k = 0; k < a.n; k++)
		nodes += a.shapes[k].n_nodes;
	assert_int_equal(n_found, nodes);
	free(t);
	/* one shape's resume skips the summary line: 2 records */
	pb_tune_space sp;
	pb_tune_space_init(&sp, &a.shapes[0].shape);
	pb_tune_record *recs;
	int n;
	assert_int_equal(pb_tune_log_load(log, &sp, &recs, &n, &err), PB_OK);
	assert_int_equal(n, 2);
	free(recs);
	/* drop the last summary line: --resume tunes that shape only, keeping its
	 * measurements (the budget of 3 adds one) */
	FILE *f = fopen(log, "r+");
	char line[8192];
	long keep = 0, last_summary = -1, pos = 0;
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, "\"method\":\"shape\""))
			last_summary = pos;
		pos = ftell(f);
	}
	keep = last_summary;
	fclose(f);
	assert_true(keep > 0);
	assert_int_equal(truncate(log, keep), 0);
	pb_tune_all b;
	assert_int_equal(pb_tune_all_plan(g, &b, &err), PB_OK);
	o.tune.resume = 1;
	o.tune.trials = 3;
	assert_int_equal(pb_tune_all_run(&b, &o, &r, &err), PB_OK);
	assert_int_equal(r.logged, a.n - 1);
	assert_int_equal(r.tuned, 1);
	assert_int_equal(count_lines(log, "\"method\":\"shape\""), a.n);
	assert_int_equal(count_lines(log, "\"method\":\"rl\""), 2 * a.n + 1);
	pb_tune_all_free(&b);
	/* a model that is not a log is refused, the file untouched */
	o.tune.resume = 0;
	o.tune.log_path = "tests/data/tiny_convs.onnx";
	assert_int_equal(pb_tune_all_plan(g, &b, &err), PB_OK);
	assert_int_equal(pb_tune_all_run(&b, &o, &r, &err), PB_EINPUT);
	pb_test_expect_msg(&err, "tiny_convs.onnx", "not a tuning log", NULL);
	pb_tune_all_free(&b);
	remove(log);
	pb_tune_all_free(&a);
	pb_graph_free(g);
}

/* The tuner's prior measurements count like --resume's; a time budget stops
 * it once it has a valid measurement. */
static void test_prior_and_budget(void **state)
{
	pb_tune_shape sh;
	pb_error err = {0};
	assert_int_equal(pb_tune_shape_parse("gemm", "16,24,8", &sh, &err), PB_OK);
	pb_tune_space sp;
	pb_tune_space_init(&sp, &sh);
	pb_tune_opts o = {0};
	o.trials = 4;
	o.batch = 4;
	o.seed = 3;
	o.measure = (pb_tune_measure_opts){1, 1, 0};
	pb_tune_report r;
	assert_int_equal(pb_tune_run(&sp, &o, &r, &err), PB_OK);
	assert_int_equal(r.rl.measurements, 4);
	pb_tune_record prior[2];
	memset(prior, 0, sizeof prior);
	memcpy(prior[0].idx, r.rl.best_idx, sizeof prior[0].idx);
	prior[0].r.valid = 1;
	prior[0].r.gflops = 1e4; /* known before: it must be taken, not measured */
	prior[1].idx[0] = 99;    /* outside the space: ignored */
	prior[1].r.valid = 1;
	prior[1].r.gflops = 1;
	pb_tune_report_free(&r);
	o.prior = prior;
	o.n_prior = 2;
	assert_int_equal(pb_tune_run(&sp, &o, &r, &err), PB_OK);
	assert_int_equal(r.resumed, 1);
	assert_true(r.rl.best_gflops == 1e4);
	pb_tune_report_free(&r);
	o.prior = NULL;
	o.n_prior = 0;
	o.trials = 100000;
	o.time_budget = 1e-6;
	assert_int_equal(pb_tune_run(&sp, &o, &r, &err), PB_OK);
	assert_true(r.rl.best_gflops > 0);
	assert_true(r.rl.measurements < 100000);
	pb_tune_report_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plan),
	    cmocka_unit_test(test_run_and_resume),
	    cmocka_unit_test(test_prior_and_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
