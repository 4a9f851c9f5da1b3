/* test_tune.c — tunable kernels against the naive references (every legal
 * configuration on small awkward shapes), illegal and wrong configurations,
 * shape parsing and node shapes, the tuning log (append, resume, truncated
 * last line, every kind of corrupt line, appending after an interrupted
 * write), per-node times from a log, and a short tuner
 * run with baselines. No timing assertions. */
#include "pb_test.h"
#include "load.h"

#include <unistd.h>

#include "tune/kernels.h"
#include "tune/log.h"
#include "tune/measure.h"
#include "tune/node_costs.h"
#include "tune/space.h"
#include "tune/tuner.h"
#include "tune/ukernels.h"

static const pb_tune_measure_opts FAST = {1, 1, 0};

/* Every legal configuration of the space must reproduce the reference; the
 * illegal ones must be refused without running. */
static void check_all(const char *op, const char *spec, int stride)
{
	pb_tune_shape sh;
	pb_error err = {0};
	assert_int_equal(pb_tune_shape_parse(op, spec, &sh, &err), PB_OK);
	pb_tune_space sp;
	pb_tune_space_init(&sp, &sh);
	pb_tune_bench *b;
	assert_int_equal(pb_tune_bench_new(&sh, 3, &b, &err), PB_OK);
	int64_t n = (int64_t)pb_tune_space_size(&sp), legal = 0, valid = 0;
	for (int64_t id = 0; id < n; id += stride) {
		int idx[PB_TUNE_MAX_PARAMS];
		pb_tune_space_decode(&sp, id, idx);
		assert_int_equal(pb_tune_space_encode(&sp, idx), id);
		pb_tune_result r;
		assert_int_equal(pb_tune_bench_measure(b, &sp, idx, &FAST, &r, &err), PB_OK);
		int is_legal = pb_tune_space_legal(&sp, idx, NULL, 0);
		legal += is_legal;
		if (!is_legal) {
			assert_int_equal(r.valid, 0);
			assert_int_equal(r.measured, 0);
			assert_true(r.gflops == 0);
			assert_true(strlen(r.why) > 0);
			continue;
		}
		if (!r.valid)
			fail_msg("%s %s id %lld: %s", op, spec, (long long)id, r.why);
		valid++;
		assert_true(r.gflops > 0);
	}
	assert_true(legal > 0);
	assert_int_equal(valid, legal);
	pb_tune_bench_free(b);
}

static void test_gemm_all_configs(void **state)
{
	int stride = getenv("PB_SANITIZED") ? 7 : 1;
	check_all("gemm", "37,29,45", stride); /* edges in every loop */
	check_all("gemm", "8,16,3", stride + 2);
	/* M % mr in {2, 0, 2, 2} and N % nr = 4 for every nr: the in-place edge
	 * tiles run kernels of exactly their size (2 rows, 4 columns) reading the
	 * last rows of A and B (ASan: nothing past them) */
	check_all("gemm", "26,36,20", stride + 1);
	/* N % nr = 1, M % mr odd: in place the edges have no kernel of their size
	 * and read zero-padded copies of A's last rows and B's last column */
	check_all("gemm", "27,49,19", stride + 1);
}

/* The edge kernels: the smallest compiled tile covering an edge tile, of the
 * configuration's unroll and at most its vector width (ukernels.c lists the
 * tiles: vec 4 has 2/4/6/8 x 4/8/16(/32), vec 8 has 2/4/6/8 x 8/16/32). */
static void test_gemm_edge_kernels(void **state)
{
	int mo = 0, no = 0;
	/* gemm:256,196,1024 under 6x16: 4 rows and 4 columns left */
	assert_non_null(pb_gemm_ukr_edge(8, 6, 16, 4, 4, 4, &mo, &no));
	assert_int_equal(mo, 4);
	assert_int_equal(no, 4); /* vec 4: no 8-wide vector fits 4 columns */
	assert_non_null(pb_gemm_ukr_edge(8, 6, 16, 4, 6, 4, &mo, &no));
	assert_true(mo == 6 && no == 4);
	assert_non_null(pb_gemm_ukr_edge(8, 6, 16, 1, 4, 16, &mo, &no));
	assert_true(mo == 4 && no == 16);
	assert_non_null(pb_gemm_ukr_edge(8, 6, 16, 4, 6, 5, &mo, &no));
	assert_true(mo == 6 && no == 8);
	assert_non_null(pb_gemm_ukr_edge(8, 6, 16, 4, 1, 1, &mo, &no));
	assert_true(mo == 2 && no == 4);
	assert_non_null(pb_gemm_ukr_edge(8, 6, 16, 4, 6, 16, &mo, &no));
	assert_true(mo == 6 && no == 16); /* the full tile is its own */
	/* scalar kernels have no 4-wide tile and never take a vector one */
	assert_non_null(pb_gemm_ukr_edge(1, 4, 8, 1, 3, 3, &mo, &no));
	assert_true(mo == 4 && no == 8);
	assert_null(
	    pb_gemm_ukr_edge(1, 2, 8, 1, 3, 3, &mo, &no)); /* nothing up to 2 rows covers 3 */

	/* the cost model's edge padding on gemm:256,196,1024 */
	pb_gemm_cfg c = {8, 6, 16, 4, 192, 256, 256, 1, 0};
	/* 42x12 full 6x16 tiles, 42 of 6x4 and 12 of 4x16 and one 4x4: exact, no padding */
	assert_true(fabs(pb_gemm_edge_waste(&c, 256, 196)) < 1e-12);
	c.pack = 0;
	assert_true(fabs(pb_gemm_edge_waste(&c, 256, 196)) < 1e-12);
	c.vec = 1, c.mr = 4, c.nr = 8, c.unroll = 1; /* scalar 4x8: 196 = 24 x 8 + 4 */
	assert_true(fabs(pb_gemm_edge_waste(&c, 256, 196) - 4.0 * 256 / (200.0 * 256)) < 1e-12);
	c.vec = 8, c.mr = 6, c.nr = 16, c.unroll = 4; /* 1152 x 49: 6x4 tiles for 1 column */
	assert_true(fabs(pb_gemm_edge_waste(&c, 1152, 49) - 3.0 * 1152 / (52.0 * 1152)) < 1e-12);
}

static void test_conv_all_configs(void **state)
{
	int stride = getenv("PB_SANITIZED") ? 5 : 1;
	check_all("conv2d", "1,5,11,13,7,3,3,2,1", stride);    /* stride 2, pad, odd K */
	check_all("conv2d", "2,3,9,9,9,1,1,1,0", stride + 2);  /* batch 2, 1x1 */
	check_all("conv2d", "1,2,6,20,4,5,3,1,2", stride + 4); /* non-square kernel */
}

/* The second micro-kernel set (baseline ISA) is as correct as the first. */
static void test_baseline_isa(void **state)
{
	pb_ukr_force_baseline(1);
	assert_string_equal(pb_kernels_isa(), "baseline");
	int stride = getenv("PB_SANITIZED") ? 11 : 3;
	check_all("gemm", "37,29,45", stride);
	check_all("conv2d", "1,5,11,13,7,3,3,2,1", stride);
	pb_ukr_force_baseline(0);
}

/* The AVX-512F kernels (vec 16, tiles up to 14x32) against the reference on
 * a shape with edges in every loop, packed and in place; refused with the
 * reason on a CPU without AVX-512F (and under the forced baseline set), where
 * they are never run. */
static void test_vec16_kernels(void **state)
{
	static const int mrs[] = {2, 4, 6, 8, 12, 14}, nrs[] = {16, 32};
	char why[160];
	pb_gemm_cfg g = {16, 6, 32, 4, 48, 64, 256, 1, 0};
	pb_ukr_force_baseline(1);
	assert_false(pb_gemm_legal(&g, why, sizeof why));
	assert_non_null(strstr(why, "AVX-512F"));
	pb_ukr_force_baseline(0);
	if (!pb_ukr_has_vec16()) {
		assert_false(pb_gemm_legal(&g, why, sizeof why));
		assert_non_null(strstr(why, "AVX-512F"));
		print_message("skipped: this CPU lacks AVX-512F, the vec 16 kernels were not run "
		              "(only their refusal was checked)\n");
		skip();
	}
	const int M = 37, N = 45, K = 70; /* K > kc: accumulation across k-blocks */
	float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
	float *C = malloc(sizeof(float) * M * N), *R = malloc(sizeof(float) * M * N);
	assert_non_null(A), assert_non_null(B), assert_non_null(C), assert_non_null(R);
	for (int i = 0; i < M * K; i++)
		A[i] = (float)(i % 5 - 2) * 0.25f;
	for (int i = 0; i < K * N; i++)
		B[i] = (float)(i % 7 - 3) * 0.25f;
	pb_gemm_ref(M, N, K, A, B, R);
	int ran = 0;
	for (size_t i = 0; i < sizeof mrs / sizeof *mrs; i++)
		for (size_t j = 0; j < sizeof nrs / sizeof *nrs; j++)
			for (int u = 1; u <= 4; u += 3)
				for (int pack = 0; pack <= 1; pack++) {
					pb_gemm_cfg c = {16, mrs[i], nrs[j], u, 48,
					                 64, 256,    pack,   0};
					if (!pb_gemm_legal(&c, why, sizeof why))
						fail_msg("vec 16 %dx%d: %s", c.mr, c.nr, why);
					float *ws =
					    malloc(sizeof(float) * pb_gemm_workspace(&c, M, N, K));
					assert_non_null(ws);
					for (int e = 0; e < M * N; e++)
						C[e] = 1e30f;
					assert_int_equal(pb_gemm_run(&c, M, N, K, A, B, C, ws), 0);
					assert_memory_equal(C, R, sizeof(float) * M * N);
					free(ws);
					ran++;
				}
	assert_int_equal(ran, 48);
	free(A), free(B), free(C), free(R);
}

static void test_illegal_and_wrong(void **state)
{
	pb_gemm_cfg g = {1, 8, 32, 1, 48, 64, 256, 1, 0};
	char why[160];
	assert_false(pb_gemm_legal(&g, why, sizeof why));
	assert_non_null(strstr(why, "accumulators"));
	g.vec = 8, g.nr = 12;
	assert_false(pb_gemm_legal(&g, why, sizeof why));
	assert_non_null(strstr(why, "multiple"));
	float a[4] = {0}, c[4];
	assert_int_equal(pb_gemm_run(&g, 2, 2, 1, a, a, c, c), -1);
	pb_conv_cfg cv = {8, 8, 4, 1, 8, 0, 0};
	assert_false(pb_conv_legal(&cv, why, sizeof why));
	/* a wrong result (fault injected after the kernel) gives reward 0 */
	pb_tune_shape sh;
	pb_error err = {0};
	assert_int_equal(pb_tune_shape_parse("gemm", "16,16,16", &sh, &err), PB_OK);
	pb_tune_space sp;
	pb_tune_space_init(&sp, &sh);
	pb_tune_bench *b;
	assert_int_equal(pb_tune_bench_new(&sh, 1, &b, &err), PB_OK);
	int idx[PB_TUNE_MAX_PARAMS] = {2, 1, 1, 0, 0, 0, 0, 1, 0};
	assert_true(pb_tune_space_legal(&sp, idx, NULL, 0));
	pb_tune_result r;
	pb_tune_bench_inject_fault(b, 1);
	assert_int_equal(pb_tune_bench_measure(b, &sp, idx, &FAST, &r, &err), PB_OK);
	assert_int_equal(r.valid, 0);
	assert_int_equal(r.measured, 1);
	assert_true(r.gflops == 0);
	assert_non_null(strstr(r.why, "wrong result"));
	pb_tune_bench_inject_fault(b, 0);
	assert_int_equal(pb_tune_bench_measure(b, &sp, idx, &FAST, &r, &err), PB_OK);
	assert_int_equal(r.valid, 1);
	/* a configuration slower than the cutoff is measured by its checked run */
	pb_tune_measure_opts cut = {3, 10, 0.05, 1e-12};
	assert_int_equal(pb_tune_bench_measure(b, &sp, idx, &cut, &r, &err), PB_OK);
	assert_int_equal(r.valid, 1);
	assert_true(r.seconds > 0 && r.gflops > 0);
	pb_tune_bench_free(b);
}

static void test_shape_parse(void **state)
{
	pb_tune_shape s;
	pb_error err = {0};
	assert_int_equal(pb_tune_shape_parse("gemm", "128,768,3072", &s, &err), PB_OK);
	assert_int_equal(s.m, 128);
	assert_int_equal(s.k, 3072);
	assert_true(fabs(pb_tune_shape_flops(&s) - 2.0 * 128 * 768 * 3072) < 1);
	char key[64];
	pb_tune_shape_key(&s, key, sizeof key);
	assert_string_equal(key, "gemm:128,768,3072");
	assert_int_equal(pb_tune_shape_parse("conv2d", "1,64,56,56,64,3,3,1,1", &s, &err), PB_OK);
	assert_int_equal(pb_conv_out_h(&s.conv), 56);
	assert_int_equal(pb_tune_shape_parse("gemm", "1,2", &s, &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "M,N,K"));
	assert_int_equal(pb_tune_shape_parse("conv", "1,2,3", &s, &err), PB_EUSAGE);
	assert_int_equal(pb_tune_shape_parse("gemm", "4,x,4", &s, &err), PB_EUSAGE);
	assert_int_equal(pb_tune_shape_parse("conv2d", "1,3,4,4,8,7,7,1,0", &s, &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "larger than the padded input"));
	assert_int_equal(pb_tune_shape_parse("gemm", "0,4,4", &s, &err), PB_EUSAGE);
}

/* x[1,3,8,8] -Conv(w[4,3,3,3], s2 p1)-> y -MatMul(m[16,5])-> z, reshaped in between */
static pb_graph *small_graph(void)
{
	pb_builder *b = pb_builder_new("mem.onnx", "onnx");
	const char *names[] = {"x", "w", "y", "m", "z", "y2"};
	int t[6];
	for (int i = 0; i < 6; i++)
		t[i] = pb_builder_tensor(b, names[i]);
	int64_t dx[] = {1, 3, 8, 8}, dw[] = {4, 3, 3, 3}, dy[] = {1, 4, 4, 4}, dm[] = {16, 5},
	        dz[] = {4, 5}, dy2[] = {4, 16};
	pb_builder_set_shape(b, t[0], PB_DT_FLOAT, 4, dx, NULL);
	pb_builder_set_shape(b, t[1], PB_DT_FLOAT, 4, dw, NULL);
	pb_builder_set_shape(b, t[2], PB_DT_FLOAT, 4, dy, NULL);
	pb_builder_set_shape(b, t[3], PB_DT_FLOAT, 2, dm, NULL);
	pb_builder_set_shape(b, t[4], PB_DT_FLOAT, 2, dz, NULL);
	pb_builder_set_shape(b, t[5], PB_DT_FLOAT, 2, dy2, NULL);
	pb_builder_input(b, t[0]);
	pb_builder_initializer(b, t[1], 0);
	pb_builder_initializer(b, t[3], 0);
	const char *ci[] = {"x", "w"}, *co[] = {"y"}, *ri[] = {"y"}, *ro[] = {"y2"},
	           *mi[] = {"y2", "m"}, *mo[] = {"z"};
	int conv = pb_builder_node(b, "conv", "Conv", "", ci, 2, co, 1);
	int64_t st[] = {2, 2}, pd[] = {1, 1, 1, 1};
	pb_attr a1 = {.name = "strides", .type = PB_ATTR_INTS, .n = 2, .ints = st};
	pb_attr a2 = {.name = "pads", .type = PB_ATTR_INTS, .n = 4, .ints = pd};
	pb_builder_attr(b, conv, &a1);
	pb_builder_attr(b, conv, &a2);
	pb_builder_node(b, "flat", "Flatten", "", ri, 1, ro, 1);
	pb_builder_node(b, "mm", "MatMul", "", mi, 2, mo, 1);
	pb_builder_output(b, t[4]);
	pb_graph *g = NULL;
	pb_error err = {0};
	pb_load_opts opts = {.skip_shapes = 1};
	if (pb_graph_build(b, &opts, &g, &err))
		fail_msg("%s", err.msg);
	return g;
}

static void test_node_shapes(void **state)
{
	pb_graph *g = small_graph();
	pb_tune_shape s;
	pb_error err = {0};
	assert_int_equal(pb_tune_shape_from_node(g, pb_graph_find_node(g, "conv"), &s, &err),
	                 PB_OK);
	assert_int_equal(s.op, PB_TUNE_CONV2D);
	assert_int_equal(s.conv.k, 4);
	assert_int_equal(s.conv.stride, 2);
	assert_int_equal(s.conv.pad, 1);
	assert_int_equal(s.conv.r, 3);
	assert_int_equal(pb_tune_shape_from_node(g, pb_graph_find_node(g, "mm"), &s, &err), PB_OK);
	assert_int_equal(s.op, PB_TUNE_GEMM);
	assert_int_equal(s.m, 4);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.k, 16);
	assert_int_equal(pb_tune_shape_from_node(g, pb_graph_find_node(g, "flat"), &s, &err),
	                 PB_EINPUT);
	assert_non_null(strstr(err.msg, "flat"));
	pb_graph_free(g);
}

static char *tmp_path(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof buf, "%s/pb_tune_%d_%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
	         (int)getpid(), name);
	return buf;
}

static void run_small(const pb_tune_space *sp, const char *log, int trials, int resume,
                      int baselines, pb_tune_report *r)
{
	pb_tune_opts o = {0};
	o.trials = trials;
	o.batch = 8;
	o.seed = 5;
	o.log_path = log;
	o.resume = resume;
	o.baselines = baselines;
	o.measure = FAST;
	pb_error err = {0};
	if (pb_tune_run(sp, &o, r, &err))
		fail_msg("%s", err.msg);
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;
	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

/* The GEMM 4x5x16 search space of the tuning-log tests. */
static void small_gemm_space(pb_tune_space *sp)
{
	pb_tune_shape sh;
	pb_error err = {0};
	assert_int_equal(pb_tune_shape_parse("gemm", "4,5,16", &sh, &err), PB_OK);
	pb_tune_space_init(sp, &sh);
}

static void test_log_resume_and_node_times(void **state)
{
	char log[256];
	snprintf(log, sizeof log, "%s", tmp_path("log.jsonl"));
	unlink(log);
	pb_error err = {0};
	pb_tune_space sp;
	small_gemm_space(&sp);
	pb_tune_report r;
	run_small(&sp, log, 10, 0, 0, &r);
	assert_int_equal(r.rl.measurements, 10);
	assert_int_equal(r.resumed, 0);
	assert_int_equal(count_lines(log), r.hw_runs);
	assert_int_equal(r.hw_runs, 10);
	double best1 = r.rl.best_gflops;
	pb_tune_report_free(&r);
	/* the log reads back: 10 records of this shape, all valid */
	pb_tune_record *recs;
	int n;
	assert_int_equal(pb_tune_log_load(log, &sp, &recs, &n, &err), PB_OK);
	assert_int_equal(n, 10);
	for (int i = 0; i < n; i++)
		assert_int_equal(recs[i].r.valid, 1);
	free(recs);
	/* resume to 16: 10 come from the log, 6 new measurements are appended */
	run_small(&sp, log, 16, 1, 0, &r);
	assert_int_equal(r.resumed, 10);
	assert_int_equal(r.rl.measurements, 16);
	assert_int_equal(r.hw_runs, 6);
	assert_int_equal(count_lines(log), 16);
	assert_true(r.rl.best_gflops >= best1);
	pb_tune_report_free(&r);
	/* an interrupted last line is skipped; a malformed middle line is an error */
	FILE *f = fopen(log, "a");
	fputs("{\"key\":\"gemm:4,5,16\",\"conf", f);
	fclose(f);
	assert_int_equal(pb_tune_log_load(log, &sp, &recs, &n, &err), PB_OK);
	assert_int_equal(n, 16);
	free(recs);
	f = fopen(log, "a");
	fputs("\n{\"key\":\"gemm:4,5,16\",\"valid\":true,\"gflops\":1,\"config\":{\"vec\":3}}\n",
	      f);
	fclose(f);
	assert_int_equal(pb_tune_log_load(log, &sp, &recs, &n, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, log));
	assert_non_null(strstr(err.msg, ":17:"));
	unlink(log);

	/* per-node times: a log with the graph's MatMul shape only */
	pb_graph *g = small_graph();
	pb_tune_shape mm;
	assert_int_equal(pb_tune_shape_from_node(g, pb_graph_find_node(g, "mm"), &mm, &err), PB_OK);
	pb_tune_space msp;
	pb_tune_space_init(&msp, &mm);
	run_small(&msp, log, 6, 0, 0, &r);
	double best = r.rl.best_gflops;
	pb_tune_report_free(&r);
	double times[3];
	int found = -1;
	assert_int_equal(pb_tune_node_times(g, log, times, &found, &err), PB_OK);
	assert_int_equal(found, 1);
	int k = pb_graph_find_node(g, "mm");
	assert_true(fabs(times[k] - 2.0 * 4 * 5 * 16 / (best * 1e9)) < 1e-6 * times[k]);
	assert_true(isnan(times[pb_graph_find_node(g, "conv")]));
	assert_true(isnan(times[pb_graph_find_node(g, "flat")]));
	unlink(log);
	assert_int_equal(pb_tune_node_times(g, log, times, &found, &err), PB_EINPUT);
	assert_non_null(strstr(err.msg, log));
	pb_graph_free(g);
}

/* One line appended to a copy of a good log must fail to load with an error
 * naming file:line and containing `what`. */
static void expect_bad_line(const char *log, const pb_tune_space *sp, const char *good,
                            const char *line, size_t len, const char *what)
{
	FILE *f = fopen(log, "w");
	assert_non_null(f);
	fputs(good, f);
	fwrite(line, 1, len, f);
	fclose(f);
	pb_tune_record *recs = NULL;
	int n = 0;
	pb_error err = {0};
	if (pb_tune_log_load(log, sp, &recs, &n, &err) != PB_EINPUT)
		fail_msg("accepted: %s", line);
	free(recs);
	char at[300];
	snprintf(at, sizeof at, "%s:2:", log);
	if (!strstr(err.msg, at) || !strstr(err.msg, what))
		fail_msg("'%s' should name %s and say '%s'", err.msg, at, what);
}

static void test_log_rejects_corrupt_lines(void **state)
{
	char log[256];
	snprintf(log, sizeof log, "%s", tmp_path("corrupt.jsonl"));
	pb_error err = {0};
	pb_tune_space sp;
	small_gemm_space(&sp);
	const char *good = "{\"key\":\"gemm:4,5,16\",\"config\":{\"vec\":8,\"mr\":2,\"nr\":32,"
	                   "\"unroll\":4,\"mc\":48,\"kc\":256,\"nc\":256,\"pack\":0,\"order\":0},"
	                   "\"valid\":true,\"gflops\":5,\"seconds\":1e-6}\n";
	/* the good line alone loads */
	FILE *f = fopen(log, "w");
	fputs(good, f);
	fclose(f);
	pb_tune_record *recs = NULL;
	int n = 0;
	assert_int_equal(pb_tune_log_load(log, &sp, &recs, &n, &err), PB_OK);
	assert_int_equal(n, 1);
	free(recs);
#define CFG(vec, mr, nr)                                                                           \
	"{\"key\":\"gemm:4,5,16\",\"config\":{\"vec\":" #vec ",\"mr\":" #mr ",\"nr\":" #nr         \
	",\"unroll\":4,\"mc\":48,\"kc\":256,\"nc\":256,\"pack\":0,\"order\":0},"
	static const struct {
		const char *line, *what;
	} bad[] = {
	    {"garbage\n", "not a JSON object"},
	    {"[1,2]\n", "not a JSON object"},
	    {CFG(8, 2, 16) "\"valid\":true}\n", "missing or malformed field"},
	    {"{\"key\":\"gemm:4,5,16\",\"config\":{\"vec\":3},\"valid\":true,\"gflops\":1}\n",
	     "does not belong to this search space"},
	    /* 1e300 GFLOP/s (inf as a float) used to crash the cost-model fit */
	    {CFG(8, 2, 16) "\"valid\":true,\"gflops\":1e300}\n", "not a plausible measurement"},
	    {CFG(8, 2, 16) "\"valid\":true,\"gflops\":-2}\n", "not a plausible measurement"},
	    {CFG(8, 2, 16) "\"valid\":true,\"gflops\":0}\n", "needs gflops > 0"},
	    /* an invalid measurement with a value used to become the best */
	    {CFG(8, 2, 16) "\"valid\":false,\"gflops\":999}\n", "has gflops 0"},
	    /* 8 x 32 / 4 = 64 accumulators: no kernel exists, so it cannot be valid */
	    {CFG(4, 8, 32) "\"valid\":true,\"gflops\":500}\n", "illegal (no kernel)"},
	    {CFG(8, 2, 16) "\"valid\":true,\"gflops\":5,\"seconds\":\"x\"}\n", "'seconds'"},
	    {"{\"key\":\"gemm:4,5,16\",\"config\":{\"vec\":8,\"mr\":2,\"nr\":16,\"unroll\":4,"
	     "\"mc\":48,\"kc\":256,\"nc\":256,\"pack\":0,\"order\":0,\"vec\":4},\"valid\":true,"
	     "\"gflops\":3}\n",
	     "duplicate"},
	    /* other shapes' lines are checked too (they feed --costs) */
	    {"{\"key\":\"gemm:9,9,9\",\"valid\":true,\"gflops\":1e9}\n", "not a plausible"},
	};
#undef CFG
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		expect_bad_line(log, &sp, good, bad[i].line, strlen(bad[i].line), bad[i].what);
	expect_bad_line(log, &sp, good, "\0\xff\n", 3, "NUL byte");
	unlink(log);
}

/* An interrupted write leaves a last line without newline; the next run must
 * not glue its first line to it (the log used to become unreadable). */
static void test_log_append_after_interrupted_write(void **state)
{
	char log[256];
	snprintf(log, sizeof log, "%s", tmp_path("interrupted.jsonl"));
	unlink(log);
	pb_error err = {0};
	pb_tune_space sp;
	small_gemm_space(&sp);
	pb_tune_report r;
	run_small(&sp, log, 6, 0, 0, &r);
	pb_tune_report_free(&r);
	FILE *f = fopen(log, "a");
	fputs("{\"key\":\"gemm:4,5,16\",\"conf", f);
	fclose(f);
	run_small(&sp, log, 10, 1, 0, &r);
	assert_int_equal(r.resumed, 6);
	assert_int_equal(r.hw_runs, 4);
	pb_tune_report_free(&r);
	assert_int_equal(count_lines(log), 10);
	pb_tune_record *recs = NULL;
	int n = 0;
	if (pb_tune_log_load(log, &sp, &recs, &n, &err) != PB_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 10);
	free(recs);
	/* a log that is one partial line only becomes empty */
	f = fopen(log, "w");
	fputs("{\"key\":", f);
	fclose(f);
	FILE *a = NULL;
	assert_int_equal(pb_tune_log_open(log, &a, &err), PB_OK);
	fclose(a);
	assert_int_equal(count_lines(log), 0);
	f = fopen(log, "r");
	fseek(f, 0, SEEK_END);
	assert_int_equal(ftell(f), 0);
	fclose(f);
	/* files that are not tuning logs are refused and left as they were */
	static const char *const not_logs[] = {"\x08\x07\x12\x07pytorch\n\x3a\x01",
	                                       "{\"key\":1}\nsome text without newline"};
	for (int i = 0; i < 2; i++) {
		f = fopen(log, "w");
		fputs(not_logs[i], f);
		fclose(f);
		a = NULL;
		assert_int_equal(pb_tune_log_open(log, &a, &err), PB_EINPUT);
		assert_null(a);
		assert_non_null(strstr(err.msg, log));
		assert_non_null(strstr(err.msg, "refusing to append"));
		f = fopen(log, "r");
		fseek(f, 0, SEEK_END);
		assert_int_equal(ftell(f), (long)strlen(not_logs[i]));
		fclose(f);
	}
	unlink(log);
}

static void test_tuner_with_baselines(void **state)
{
	pb_tune_shape sh;
	pb_error err = {0};
	assert_int_equal(pb_tune_shape_parse("conv2d", "1,4,6,6,4,3,3,1,1", &sh, &err), PB_OK);
	pb_tune_space sp;
	pb_tune_space_init(&sp, &sh);
	pb_tune_report r;
	run_small(&sp, NULL, 24, 0, 1, &r);
	assert_int_equal(r.rl.measurements, 24);
	assert_int_equal(r.random.measurements, 24);
	assert_int_equal(r.sa.measurements, 24);
	assert_true(r.exhaustive.ran);
	assert_int_equal(r.exhaustive.measurements, r.legal);
	/* every method's best is a measured value, so none beats exhaustive */
	assert_true(r.rl.best_gflops > 0);
	assert_true(r.rl.best_gflops <= r.exhaustive.best_gflops);
	assert_true(r.random.best_gflops <= r.exhaustive.best_gflops);
	assert_true(r.sa.best_gflops <= r.exhaustive.best_gflops);
	/* traces are monotone and end at the best */
	for (int i = 1; i < r.rl.measurements; i++)
		assert_true(r.rl.trace[i] >= r.rl.trace[i - 1]);
	assert_true(r.rl.trace[r.rl.measurements - 1] == r.rl.best_gflops);
	assert_true(r.model_fits > 0);
	assert_true(r.policy_updates > 0);
	assert_true(pb_tune_space_legal(&sp, r.rl.best_idx, NULL, 0));
	pb_tune_report_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gemm_all_configs),
	    cmocka_unit_test(test_gemm_edge_kernels),
	    cmocka_unit_test(test_conv_all_configs),
	    cmocka_unit_test(test_baseline_isa),
	    cmocka_unit_test(test_vec16_kernels),
	    cmocka_unit_test(test_illegal_and_wrong),
	    cmocka_unit_test(test_shape_parse),
	    cmocka_unit_test(test_node_shapes),
	    cmocka_unit_test(test_log_resume_and_node_times),
	    cmocka_unit_test(test_log_rejects_corrupt_lines),
	    cmocka_unit_test(test_log_append_after_interrupted_write),
	    cmocka_unit_test(test_tuner_with_baselines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
