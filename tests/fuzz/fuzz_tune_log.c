/*
 * fuzz_tune_log.c — libFuzzer target for the tuning log reader and appender
 * (core/tune/log.h).
 *
 * The reader takes a path, so each input is written to a file under /tmp
 * (fuzz_target.h). It is read for the two shapes of the seeds (gemm 16,16,16
 * and conv2d 1,4,8,8,4,3,3,1,1) and through pb_tune_log_foreach; the records
 * are walked (indices inside the space, valid ones legal). Then the file is
 * opened for appending as `tune --log` does (which may cut an interrupted
 * last line or refuse the file) and one measurement is appended: a log that
 * read well before must read well after, ending with that measurement.
 * Seeds: tests/fuzz/seeds/fuzz_tune_log/ (`partbench tune ... --log`).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_target.h"
#include "tune/log.h"

static void count_valid(void *ud, const char *key, double gflops, double seconds)
{
	if (!key || !isfinite(gflops) || gflops <= 0 || !isfinite(seconds))
		abort(); /* foreach passes checked valid measurements only */
	(*(int *)ud)++;
}

static void walk(const pb_tune_space *sp, const pb_tune_record *recs, int n)
{
	char buf[256];
	for (int r = 0; r < n; r++) {
		for (int i = 0; i < sp->n_params; i++)
			if (recs[r].idx[i] < 0 || recs[r].idx[i] >= sp->params[i].n_values)
				abort();
		if (recs[r].r.valid && !pb_tune_space_legal(sp, recs[r].idx, NULL, 0))
			abort();
		pb_tune_space_config_str(sp, recs[r].idx, buf, sizeof buf);
		(void)pb_tune_space_encode(sp, recs[r].idx);
	}
}

/* Loads path for sp; returns the record count or -1 on error. */
static int load(const char *path, const pb_tune_space *sp, int idx_last[PB_TUNE_MAX_PARAMS])
{
	pb_tune_record *recs = NULL;
	int n = 0;
	pb_error err = {0};
	if (pb_tune_log_load(path, sp, &recs, &n, &err) != PB_OK) {
		if (!strstr(err.msg, path))
			abort(); /* errors name the file */
		return -1;
	}
	walk(sp, recs, n);
	if (n > 0 && idx_last)
		memcpy(idx_last, recs[n - 1].idx, sizeof recs[n - 1].idx);
	free(recs);
	return n;
}

/* Appends one legal configuration of sp, then reads the log again. */
static void append_and_reload(const char *path, const pb_tune_space *sp, int before)
{
	FILE *f = NULL;
	pb_error err = {0};
	if (pb_tune_log_open(path, &f, &err) != PB_OK)
		return; /* refusing a file that is no log is fine */
	int idx[PB_TUNE_MAX_PARAMS] = {0};
	for (int64_t id = 0; id < 1000; id++) {
		pb_tune_space_decode(sp, id, idx);
		if (pb_tune_space_legal(sp, idx, NULL, 0))
			break;
	}
	pb_tune_result r = {1, 1, 12.5, 1e-6, ""};
	int rc = pb_tune_log_append(f, path, sp, idx, &r, "fuzz", &err);
	fclose(f);
	if (rc != PB_OK)
		return;
	int last[PB_TUNE_MAX_PARAMS] = {0};
	int after = load(path, sp, last);
	if (before >= 0 && (after < 1 || after > before + 1 || memcmp(last, idx, sizeof idx)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static pb_tune_space gemm, conv;
	static int ready;
	if (!ready) {
		pb_tune_shape s;
		pb_error err = {0};
		if (pb_tune_shape_parse("gemm", "16,16,16", &s, &err) != PB_OK)
			abort();
		pb_tune_space_init(&gemm, &s);
		if (pb_tune_shape_parse("conv2d", "1,4,8,8,4,3,3,1,1", &s, &err) != PB_OK)
			abort();
		pb_tune_space_init(&conv, &s);
		ready = 1;
	}
	char path[64];
	if (fuzz_tmp_write(data, size, path))
		return 0;
	int n_gemm = load(path, &gemm, NULL), n_conv = load(path, &conv, NULL);
	int valid = 0;
	pb_error err = {0};
	(void)pb_tune_log_foreach(path, count_valid, &valid, &err);
	if (size % 2)
		append_and_reload(path, &conv, n_conv);
	else
		append_and_reload(path, &gemm, n_gemm);
	unlink(path);
	return 0;
}
