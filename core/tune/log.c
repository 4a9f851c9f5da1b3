/*
 * tune/log.c — JSON-lines tuning log (format in log.h).
 *
 * Reading validates every line of the requested shape as far as the file
 * can be checked: GFLOP/s finite and in [0, PB_TUNE_LOG_MAX_GFLOPS], 0 for
 * invalid measurements, valid ones only for legal configurations, no
 * duplicate keys. Opening for append first drops a last line cut short by an
 * interrupted write, so that new lines never get glued to it, and refuses
 * files that are not tuning logs.
 */
#include "tune/log.h"
#include "util/file_door.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tune/kernels.h"

/* The start of every line the writer produces. */
static const char line_head[] = "{\"key\":";

/* Before appending: a non-empty file must look like a tuning log (first
 * byte '{'), so that a mistaken --log MODEL.onnx is refused instead of
 * corrupted. A last line without newline (an interrupted write; the loader
 * skips it) is cut off if it starts like a log line; anything else is
 * refused. Returns 0, or -1 with a reason in why (errno kept for I/O). */
static int prepare_append(int fd, char *why, size_t len)
{
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	char buf[4096];
	if (pread(fd, buf, 1, 0) != 1) {
		snprintf(why, len, "cannot read: %s", strerror(errno));
		return -1;
	}
	if (buf[0] != '{') {
		snprintf(why, len, "not a tuning log (JSON lines); refusing to append to it");
		return -1;
	}
	off_t end = st.st_size;
	/* a log line is far shorter than 1 MiB */
	while (end > 0 && st.st_size - end < (1 << 20)) {
		off_t start = end > (off_t)sizeof buf ? end - (off_t)sizeof buf : 0;
		ssize_t n = pread(fd, buf, (size_t)(end - start), start);
		if (n != end - start) {
			snprintf(why, len, "cannot read: %s", strerror(errno));
			return -1;
		}
		for (ssize_t i = n - 1; i >= 0 || (start == 0 && i == -1); i--) {
			if (i >= 0 && buf[i] != '\n')
				continue;
			off_t keep = start + i + 1;
			if (keep == st.st_size)
				return 0;
			char head[sizeof line_head - 1];
			if (st.st_size - keep < (off_t)sizeof head ||
			    pread(fd, head, sizeof head, keep) != (ssize_t)sizeof head ||
			    memcmp(head, line_head, sizeof head) != 0) {
				snprintf(
				    why, len,
				    "the last line has no newline and is not a tuning-log line; "
				    "refusing to append");
				return -1;
			}
			if (ftruncate(fd, keep)) {
				snprintf(why, len, "cannot cut the interrupted last line: %s",
				         strerror(errno));
				return -1;
			}
			return 0;
		}
		end = start;
	}
	snprintf(why, len,
	         "the last line has no newline and is over 1 MiB long; not a tuning log?");
	return -1;
}

int pb_tune_log_open(const char *path, FILE **out, pb_error *err)
{
	int fd = pb_door_open_write(path, 1, 1, "tuning log", err);
	if (fd < 0)
		return err ? err->code : PB_EINPUT;
	char why[160];
	if (prepare_append(fd, why, sizeof why)) {
		close(fd);
		return pb_err(err, PB_EINPUT, "%s: %s", path, why);
	}
	FILE *f = fdopen(fd, "a");
	if (!f) {
		int e = errno;
		close(fd);
		return pb_err(err, PB_EINPUT, "%s: cannot open the tuning log: %s", path,
		              strerror(e));
	}
	*out = f;
	return PB_OK;
}

int pb_tune_log_close(FILE *f, const char *path, int failed, pb_error *err)
{
	if (!f)
		return PB_OK;
	struct stat a, b;
	int empty = fstat(fileno(f), &a) == 0 && S_ISREG(a.st_mode) && a.st_size == 0;
	int bad = fclose(f) != 0;
	int e = errno;
	/* still the same file under that name (never remove another one) */
	if (failed && empty && stat(path, &b) == 0 && b.st_dev == a.st_dev &&
	    b.st_ino == a.st_ino && b.st_size == 0)
		unlink(path);
	if (bad && !failed)
		return pb_err(err, PB_EINPUT, "%s: write failed: %s", path, strerror(e));
	return PB_OK;
}

char *pb_tune_log_line(const pb_tune_space *sp, const int *idx, const pb_tune_result *r,
                       const char *method)
{
	char key[128];
	pb_tune_shape_key(&sp->shape, key, sizeof key);
	json_t *o = json_object();
	json_object_set_new(o, "key", json_string(key));
	json_object_set_new(o, "op", json_string(pb_tune_op_name(sp->shape.op)));
	json_object_set_new(o, "config", pb_tune_space_config_json(sp, idx));
	json_object_set_new(o, "valid", json_boolean(r->valid));
	json_object_set_new(o, "gflops", json_real(r->gflops));
	json_object_set_new(o, "seconds", json_real(r->seconds));
	json_object_set_new(o, "method", json_string(method));
	json_object_set_new(o, "isa", json_string(pb_kernels_isa()));
	if (!r->valid)
		json_object_set_new(o, "why", json_string(r->why));
	char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(o);
	return s;
}

int pb_tune_log_append_line(FILE *f, const char *path, const char *line, pb_error *err)
{
	if (fprintf(f, "%s\n", line) < 0 || fflush(f) != 0)
		return pb_err(err, PB_EINPUT, "%s: write failed: %s", path, strerror(errno));
	return PB_OK;
}

int pb_tune_log_append(FILE *f, const char *path, const pb_tune_space *sp, const int *idx,
                       const pb_tune_result *r, const char *method, pb_error *err)
{
	char *s = pb_tune_log_line(sp, idx, r, method);
	if (!s)
		return pb_err(err, PB_ENOMEM, "%s: out of memory writing the log", path);
	int rc = pb_tune_log_append_line(f, path, s, err);
	free(s);
	return rc;
}

/* Checks the fields every line needs; fills why and returns -1 if wrong. */
static int check_common(json_t *o, char *why, size_t len)
{
	json_t *valid = json_object_get(o, "valid"), *gf = json_object_get(o, "gflops");
	json_t *sec = json_object_get(o, "seconds");
	if (!json_is_string(json_object_get(o, "key")) || !json_is_boolean(valid) ||
	    !json_is_number(gf)) {
		snprintf(why, len, "missing or malformed field (key, config, valid, gflops)");
		return -1;
	}
	double g = json_number_value(gf);
	if (!isfinite(g) || g < 0 || g > PB_TUNE_LOG_MAX_GFLOPS) {
		snprintf(why, len, "gflops = %g is not a plausible measurement (0 to %g)", g,
		         PB_TUNE_LOG_MAX_GFLOPS);
		return -1;
	}
	if (json_is_true(valid) && g <= 0) {
		snprintf(why, len, "a valid measurement needs gflops > 0");
		return -1;
	}
	if (json_is_false(valid) && g != 0) {
		snprintf(why, len, "an invalid measurement has gflops 0, not %g", g);
		return -1;
	}
	if (sec && (!json_is_number(sec) || !isfinite(json_number_value(sec)) ||
	            json_number_value(sec) < 0)) {
		snprintf(why, len, "field 'seconds' must be a number >= 0");
		return -1;
	}
	return 0;
}

/* Reads the file line by line; fn gets each parsed object and returns
 * nonzero with a reason in why to stop with an error naming the line. */
static int each_line(const char *path, int (*fn)(void *ud, json_t *o, char *why, size_t len),
                     void *ud, pb_error *err)
{
	struct stat st;
	if (lstat(path, &st) != 0 && errno == ENOENT)
		return PB_OK; /* no log yet */
	FILE *f = pb_door_fopen_read(path, PB_DOOR_DATA, "tuning log", err);
	if (!f)
		return err ? err->code : PB_EINPUT;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, rc = PB_OK;
	while ((len = getline(&line, &cap, f)) > 0) {
		lineno++;
		int complete = line[len - 1] == '\n';
		if (strlen(line) != (size_t)len) {
			if (!complete)
				break;
			rc = pb_err(err, PB_EINPUT, "%s:%d: contains a NUL byte (not a JSON line)",
			            path, lineno);
			break;
		}
		const char *p = line;
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p)
			continue;
		json_error_t je;
		json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
		if (!o || !json_is_object(o)) {
			json_decref(o);
			if (!complete)
				break; /* interrupted write: ignore the partial last line */
			rc = pb_err(err, PB_EINPUT, "%s:%d: not a JSON object: %s", path, lineno,
			            o ? "wrong type" : je.text);
			break;
		}
		char why[160] = "malformed line";
		int r = check_common(o, why, sizeof why) ? -1 : fn(ud, o, why, sizeof why);
		json_decref(o);
		if (r) {
			rc = pb_err(err, PB_EINPUT, "%s:%d: %s", path, lineno, why);
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

static int is_shape_line(const json_t *o)
{
	const char *m = json_string_value(json_object_get(o, "method"));
	return m && !strcmp(m, PB_TUNE_LOG_SHAPE_METHOD);
}

typedef struct load_ctx {
	const pb_tune_space *sp;
	char key[128];
	pb_tune_record *recs;
	int n, cap;
} load_ctx;

static int load_one(void *ud, json_t *o, char *why, size_t len)
{
	load_ctx *c = ud;
	const char *key = json_string_value(json_object_get(o, "key"));
	json_t *valid = json_object_get(o, "valid"), *gf = json_object_get(o, "gflops");
	if (strcmp(key, c->key) || is_shape_line(o))
		return 0;
	pb_tune_record rec;
	memset(&rec, 0, sizeof rec);
	if (pb_tune_space_config_from_json(c->sp, json_object_get(o, "config"), rec.idx)) {
		snprintf(why, len, "configuration does not belong to this search space");
		return -1;
	}
	rec.r.valid = json_is_true(valid);
	rec.r.measured = 1;
	rec.r.gflops = json_number_value(gf);
	rec.r.seconds = json_number_value(json_object_get(o, "seconds"));
	if (rec.r.valid && !pb_tune_space_legal(c->sp, rec.idx, NULL, 0)) {
		snprintf(why, len, "configuration is illegal (no kernel) but marked valid");
		return -1;
	}
	const char *reason = json_string_value(json_object_get(o, "why"));
	snprintf(rec.r.why, sizeof rec.r.why, "%s", reason ? reason : "");
	const char *m = json_string_value(json_object_get(o, "method"));
	snprintf(rec.method, sizeof rec.method, "%s", m ? m : "?");
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 64;
		pb_tune_record *r = realloc(c->recs, (size_t)cap * sizeof *r);
		if (!r) {
			snprintf(why, len, "out of memory");
			return -1;
		}
		c->recs = r;
		c->cap = cap;
	}
	c->recs[c->n++] = rec;
	return 0;
}

int pb_tune_log_load(const char *path, const pb_tune_space *sp, pb_tune_record **out, int *n,
                     pb_error *err)
{
	load_ctx c = {sp};
	pb_tune_shape_key(&sp->shape, c.key, sizeof c.key);
	int rc = each_line(path, load_one, &c, err);
	if (rc) {
		free(c.recs);
		return rc;
	}
	*out = c.recs;
	*n = c.n;
	return PB_OK;
}

typedef struct each_ctx {
	void (*fn)(void *ud, const char *key, double gflops, double seconds);
	void *ud;
} each_ctx;

static int each_one(void *ud, json_t *o, char *why, size_t len)
{
	(void)why;
	(void)len;
	each_ctx *c = ud;
	const char *key = json_string_value(json_object_get(o, "key"));
	json_t *valid = json_object_get(o, "valid"), *gf = json_object_get(o, "gflops");
	if (json_is_true(valid))
		c->fn(c->ud, key, json_number_value(gf),
		      json_number_value(json_object_get(o, "seconds")));
	return 0;
}

int pb_tune_log_foreach(const char *path,
                        void (*fn)(void *ud, const char *key, double gflops, double seconds),
                        void *ud, pb_error *err)
{
	each_ctx c = {fn, ud};
	return each_line(path, each_one, &c, err);
}

typedef struct shape_ctx {
	void (*fn)(void *ud, const char *key, const json_t *line);
	void *ud;
} shape_ctx;

static int shape_one(void *ud, json_t *o, char *why, size_t len)
{
	(void)why;
	(void)len;
	shape_ctx *c = ud;
	if (is_shape_line(o))
		c->fn(c->ud, json_string_value(json_object_get(o, "key")), o);
	return 0;
}

int pb_tune_log_foreach_shape(const char *path,
                              void (*fn)(void *ud, const char *key, const json_t *line), void *ud,
                              pb_error *err)
{
	shape_ctx c = {fn, ud};
	return each_line(path, shape_one, &c, err);
}
