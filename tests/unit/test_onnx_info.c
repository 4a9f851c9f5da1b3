/* test_onnx_info.c — the `info` command on ONNX models, run through the
 * command table as the CLI does: the per-node table and totals, --json
 * totals, the --input hint for symbolic input dims (and that following it
 * resolves the shapes), and bad files giving exit code 2 with the file named. */
#include "pb_test.h"

#include <unistd.h>

#include "commands.h"
#include "pb_onnx_build.h"
#include "session.h"

typedef struct {
	pb_session *s;
	pb_cmd_ctx ctx;
	char *buf;
	size_t len;
	FILE *log;
} runner;

static int run(runner *r, const char *line, pb_error *err)
{
	free(r->buf);
	r->buf = NULL;
	r->len = 0;
	r->ctx.out = open_memstream(&r->buf, &r->len);
	int rc = pb_cmd_run_line(&r->ctx, line, err);
	fclose(r->ctx.out);
	r->ctx.out = NULL;
	return rc;
}

static void runner_init(runner *r)
{
	memset(r, 0, sizeof *r);
	r->s = pb_session_new();
	r->log = fopen("/dev/null", "w");
	r->ctx.s = r->s;
	r->ctx.log = r->log;
}

static void runner_free(runner *r)
{
	free(r->buf);
	fclose(r->log);
	pb_session_free(r->s);
}

/* x[batch,3,h,w] -> Conv(8x3x3x3, pads 1) -> y */
static void write_symbolic_model(const char *path)
{
	mb b;
	mb_init(&b, 13);
	int64_t xd[4] = {-1, 3, -1, -1}, wd[4] = {8, 3, 3, 3}, pads[4] = {1, 1, 1, 1};
	const char *params[4] = {"batch", NULL, "h", "w"};
	mb_input(&b, "x", PB_DT_FLOAT, 4, xd, params);
	mb_weight(&b, "w", 4, wd);
	mb_node(&b, "Conv", "x,w", "y");
	mb_attr_ints(&b, "pads", 4, pads);
	mb_output(&b, "y");
	size_t len = onnx__model_proto__get_packed_size(&b.model);
	uint8_t *buf = malloc(len);
	onnx__model_proto__pack(&b.model, buf);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
	mb_free(&b);
}

static void test_symbolic_hint_and_override(void **state)
{
	char path[] = "/tmp/pb_onnx_info_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_symbolic_model(path);
	runner r;
	runner_init(&r);
	pb_error err = {0};
	char line[512];
	snprintf(line, sizeof line, "info %s", path);
	assert_int_equal(run(&r, line, &err), PB_OK);
	assert_non_null(strstr(r.buf, "unknown shape"));
	assert_non_null(strstr(r.buf, "x=batch,3,h,w"));
	assert_non_null(strstr(r.buf, "--input"));

	snprintf(line, sizeof line, "info %s --input x=2,3,32,32 --json", path);
	assert_int_equal(run(&r, line, &err), PB_OK);
	json_error_t je;
	json_t *j = json_loads(r.buf, 0, &je);
	assert_non_null(j);
	json_t *tot = json_object_get(j, "totals");
	/* 2 x 8 x 32 x 32 outputs, 3 x 3 x 3 MACs each */
	assert_true(json_real_value(json_object_get(tot, "macs")) == 2.0 * 8 * 32 * 32 * 27);
	assert_int_equal(json_integer_value(json_object_get(tot, "unknown_shapes")), 0);
	assert_null(json_object_get(tot, "unresolved_inputs"));
	json_t *nodes = json_object_get(j, "nodes");
	assert_string_equal(json_string_value(json_object_get(json_array_get(nodes, 0), "shape")),
	                    "2x8x32x32");
	json_decref(j);

	/* --input naming a weight: usage error naming the real inputs. */
	snprintf(line, sizeof line, "info %s --input w=1,2", path);
	assert_int_equal(run(&r, line, &err), PB_EUSAGE);
	assert_non_null(strstr(err.msg, "inputs: x"));
	runner_free(&r);
	unlink(path);
}

static void test_info_totals_and_table(void **state)
{
	runner r;
	runner_init(&r);
	pb_error err = {0};
	assert_int_equal(run(&r, "info models/resnet18.onnx", &err), PB_OK);
	assert_non_null(strstr(r.buf, "1x64x112x112"));
	assert_non_null(strstr(r.buf, "1.81G"));
	assert_int_equal(run(&r, "info models/swin_t.onnx --top 3 --json", &err), PB_OK);
	json_error_t je;
	json_t *j = json_loads(r.buf, 0, &je);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "nodes")), 3);
	json_t *tot = json_object_get(j, "totals");
	double macs = json_real_value(json_object_get(tot, "macs"));
	assert_true(fabs(macs / 4.49e9 - 1) < 0.01);
	assert_true(json_real_value(json_object_get(tot, "flops")) > 2 * macs);
	assert_int_equal(json_integer_value(json_object_get(tot, "nodes")), 6623);
	/* the biggest node first */
	json_t *first = json_array_get(json_object_get(j, "nodes"), 0);
	assert_string_equal(json_string_value(json_object_get(first, "op")), "MatMul");
	json_decref(j);
	runner_free(&r);
}

static void test_bad_files(void **state)
{
	char path[] = "/tmp/pb_onnx_bad_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	/* the first 1000 bytes of resnet18: a truncated model */
	FILE *in = fopen("models/resnet18.onnx", "rb");
	char buf[1000];
	assert_int_equal(fread(buf, 1, sizeof buf, in), sizeof buf);
	fclose(in);
	assert_int_equal(write(fd, buf, sizeof buf), (ssize_t)sizeof buf);
	close(fd);
	runner r;
	runner_init(&r);
	pb_error err = {0};
	char line[512];
	snprintf(line, sizeof line, "info %s", path);
	int rc = run(&r, line, &err);
	assert_int_equal(rc, PB_EINPUT);
	assert_int_equal(pb_exit_code(rc), 2);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "truncated"));
	runner_free(&r);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_symbolic_hint_and_override),
	    cmocka_unit_test(test_info_totals_and_table),
	    cmocka_unit_test(test_bad_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
