/*
 * tune/log.c — JSON-lines tuning log (format in log.h).
 */
#include "tune/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tune/kernels.h"

int pb_tune_log_open(const char *path, FILE **out, pb_error *err)
{
	FILE *f = fopen(path, "a");
	if (!f)
		return pb_err(err, PB_EINPUT, "%s: cannot open the tuning log: %s", path,
		              strerror(errno));
	*out = f;
	return PB_OK;
}

int pb_tune_log_append(FILE *f, const char *path, const pb_tune_space *sp, const int *idx,
                       const pb_tune_result *r, const char *method, pb_error *err)
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
	if (!s)
		return pb_err(err, PB_ENOMEM, "%s: out of memory writing the log", path);
	int bad = fprintf(f, "%s\n", s) < 0 || fflush(f) != 0;
	free(s);
	if (bad)
		return pb_err(err, PB_EINPUT, "%s: write failed: %s", path, strerror(errno));
	return PB_OK;
}

/* Reads the file line by line; fn gets each parsed object. */
static int each_line(const char *path, int (*fn)(void *ud, json_t *o), void *ud, pb_error *err)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return PB_OK;
		return pb_err(err, PB_EINPUT, "%s: cannot read the tuning log: %s", path,
		              strerror(errno));
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, rc = PB_OK;
	while ((len = getline(&line, &cap, f)) > 0) {
		lineno++;
		int complete = line[len - 1] == '\n';
		const char *p = line;
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p)
			continue;
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		if (!o || !json_is_object(o)) {
			json_decref(o);
			if (!complete)
				break; /* interrupted write: ignore the partial last line */
			rc = pb_err(err, PB_EINPUT, "%s:%d: not a JSON object: %s", path, lineno,
			            o ? "wrong type" : je.text);
			break;
		}
		int r = fn(ud, o);
		json_decref(o);
		if (r) {
			rc = pb_err(err, PB_EINPUT, "%s:%d: %s", path, lineno,
			            r == 1
			                ? "missing or malformed field (key, config, valid, gflops)"
			                : "configuration does not belong to this search space");
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

typedef struct load_ctx {
	const pb_tune_space *sp;
	char key[128];
	pb_tune_record *recs;
	int n, cap;
} load_ctx;

static int load_one(void *ud, json_t *o)
{
	load_ctx *c = ud;
	const char *key = json_string_value(json_object_get(o, "key"));
	json_t *valid = json_object_get(o, "valid"), *gf = json_object_get(o, "gflops");
	if (!key || !json_is_boolean(valid) || !json_is_number(gf))
		return 1;
	if (strcmp(key, c->key))
		return 0;
	pb_tune_record rec;
	memset(&rec, 0, sizeof rec);
	if (pb_tune_space_config_from_json(c->sp, json_object_get(o, "config"), rec.idx))
		return 2;
	rec.r.valid = json_is_true(valid);
	rec.r.measured = 1;
	rec.r.gflops = json_number_value(gf);
	rec.r.seconds = json_number_value(json_object_get(o, "seconds"));
	if (rec.r.gflops < 0 || (rec.r.valid && rec.r.gflops <= 0))
		return 1;
	const char *why = json_string_value(json_object_get(o, "why"));
	snprintf(rec.r.why, sizeof rec.r.why, "%s", why ? why : "");
	const char *m = json_string_value(json_object_get(o, "method"));
	snprintf(rec.method, sizeof rec.method, "%s", m ? m : "?");
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 64;
		pb_tune_record *r = realloc(c->recs, (size_t)cap * sizeof *r);
		if (!r)
			return 1;
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

static int each_one(void *ud, json_t *o)
{
	each_ctx *c = ud;
	const char *key = json_string_value(json_object_get(o, "key"));
	json_t *valid = json_object_get(o, "valid"), *gf = json_object_get(o, "gflops");
	if (!key || !json_is_boolean(valid) || !json_is_number(gf))
		return 1;
	if (json_is_true(valid) && json_number_value(gf) > 0)
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
