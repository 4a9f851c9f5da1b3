/*
 * tune/log.h — the tuning log: one JSON object per line, one line per
 * hardware measurement, appended and flushed as soon as it is known:
 *   {"key":"gemm:128,768,768","op":"gemm",
 *    "config":{"vec":8,...},"valid":true,"gflops":51.2,"seconds":0.0029,
 *    "method":"rl","isa":"avx2+fma","why":"..."(invalid only)}
 * Lines of other shapes are kept and ignored when loading one shape, so one
 * file can hold a whole model's tuning (pb_tune_node_times reads it).
 */
#ifndef PB_TUNE_LOG_H
#define PB_TUNE_LOG_H

#include <jansson.h>
#include <stdio.h>

#include "util/error.h"
#include "tune/measure.h"
#include "tune/space.h"

typedef struct pb_tune_record {
	int idx[PB_TUNE_MAX_PARAMS];
	pb_tune_result r;
	char method[16];
} pb_tune_record;

/* No single CPU core comes near this; larger values in a log are corrupt. */
#define PB_TUNE_LOG_MAX_GFLOPS 1e5

/* A shape's summary line, written by whole-model tuning (tune_all.h) when the
 * shape is finished: "method":"shape", "valid":false and "gflops":0 (so
 * readers of measurements skip it), plus "nodes" (the graph nodes sharing the
 * kernel), "measurements", "best_gflops", "best_config", "tune_seconds",
 * "rank" and "host". pb_tune_log_load skips these lines. */
#define PB_TUNE_LOG_SHAPE_METHOD "shape"

/* Opens path for appending (created if missing). A last line without a
 * newline (interrupted write) is cut off first, so appends stay readable; a
 * file that is not a tuning log (first byte not '{', or a last line without
 * newline that is not a log line) is refused and left untouched. */
int pb_tune_log_open(const char *path, FILE **out, pb_error *err);
/* Closes a log opened by pb_tune_log_open. When the run failed (a full disk:
 * the write error is the run's error) and the log is still empty, it is
 * removed instead of left as an empty file that looks like a finished run
 * with nothing measured. Returns PB_OK, or an error when the close itself
 * fails on a run that had not failed. */
int pb_tune_log_close(FILE *f, const char *path, int failed, pb_error *err);
/* One log line (no newline; malloc'd, NULL when out of memory). */
char *pb_tune_log_line(const pb_tune_space *sp, const int *idx, const pb_tune_result *r,
                       const char *method);
/* Appends a line (without its newline) and flushes. */
int pb_tune_log_append_line(FILE *f, const char *path, const char *line, pb_error *err);
/* Appends one line and flushes. */
int pb_tune_log_append(FILE *f, const char *path, const pb_tune_space *sp, const int *idx,
                       const pb_tune_result *r, const char *method, pb_error *err);
/* Records of sp's shape in path (*out malloc'd, *n count). A missing file is
 * an empty log. Malformed lines are errors naming path:line and the problem
 * (bad JSON, missing field, implausible or non-zero-when-invalid gflops, a
 * configuration outside the space or illegal but marked valid), except a
 * last line cut short by an interrupted write, which is skipped. */
int pb_tune_log_load(const char *path, const pb_tune_space *sp, pb_tune_record **out, int *n,
                     pb_error *err);

/* Calls fn for every valid measurement in the log (any shape). */
int pb_tune_log_foreach(const char *path,
                        void (*fn)(void *ud, const char *key, double gflops, double seconds),
                        void *ud, pb_error *err);

/* Calls fn for every shape summary line in the log (its parsed object). */
int pb_tune_log_foreach_shape(const char *path,
                              void (*fn)(void *ud, const char *key, const json_t *line), void *ud,
                              pb_error *err);

#endif
