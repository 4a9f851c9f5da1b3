/*
 * tune/transfer.c — cost-model rows from other shapes' measurements in a
 * tuning log (see transfer.h). The log is read once to list its shapes
 * (pb_tune_log_foreach), then once per shape of the target's operator with
 * that shape's space (pb_tune_log_load: the same validation as --resume).
 */
#include "tune/transfer.h"

#include <stdlib.h>
#include <string.h>

#include "tune/log.h"

#define KEY_MAX 96
#define SHAPES_MAX 256

typedef struct key_list {
	char keys[SHAPES_MAX][KEY_MAX];
	int n;
} key_list;

static void key_add(void *ud, const char *key, double gflops, double seconds)
{
	(void)gflops;
	(void)seconds;
	key_list *l = ud;
	if (!key || strlen(key) >= KEY_MAX)
		return;
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->keys[i], key))
			return;
	if (l->n < SHAPES_MAX)
		snprintf(l->keys[l->n++], KEY_MAX, "%s", key);
}

/* The space of a log key "op:spec" of the target's operator; 0 when usable. */
static int key_space(const char *key, const pb_tune_space *target, pb_tune_space *sp)
{
	char op[16];
	const char *colon = strchr(key, ':');
	if (!colon || colon - key >= (long)sizeof op)
		return -1;
	memcpy(op, key, (size_t)(colon - key));
	op[colon - key] = 0;
	if (strcmp(op, pb_tune_op_name(target->shape.op)))
		return -1;
	pb_tune_shape sh;
	pb_error e = {0};
	if (pb_tune_shape_parse(op, colon + 1, &sh, &e) != PB_OK)
		return -1;
	pb_tune_space_init(sp, &sh);
	return sp->n_params == target->n_params ? 0 : -1;
}

static int grow(pb_tune_transfer *t, int want, int *cap)
{
	if (want <= *cap)
		return 0;
	int c = *cap ? *cap * 2 : 256;
	while (c < want)
		c *= 2;
	float *x = realloc(t->x, (size_t)c * t->nf * sizeof *x);
	if (!x)
		return -1;
	t->x = x;
	float *y = realloc(t->y, (size_t)c * sizeof *y);
	if (!y)
		return -1;
	t->y = y;
	*cap = c;
	return 0;
}

int pb_tune_transfer_load(const char *path, const pb_tune_space *target, int max_rows,
                          pb_tune_transfer *out, pb_error *err)
{
	memset(out, 0, sizeof *out);
	float f[PB_TUNE_MAX_FEATURES];
	int idx0[PB_TUNE_MAX_PARAMS] = {0};
	out->nf = pb_tune_space_features(target, idx0, f);
	key_list *keys = calloc(1, sizeof *keys);
	if (!keys)
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	int rc = pb_tune_log_foreach(path, key_add, keys, err);
	char own[KEY_MAX];
	pb_tune_shape_key(&target->shape, own, sizeof own);
	int cap = 0, *first = calloc(SHAPES_MAX + 1, sizeof *first);
	double *best = calloc(SHAPES_MAX, sizeof *best), top = 0;
	if (!first || !best)
		rc = rc ? rc : pb_err(err, PB_ENOMEM, "tune: out of memory");
	int ns = 0;
	for (int k = 0; k < keys->n && !rc && out->n < max_rows; k++) {
		pb_tune_space sp;
		if (!strcmp(keys->keys[k], own) || key_space(keys->keys[k], target, &sp))
			continue;
		pb_tune_record *recs = NULL;
		int n = 0;
		if ((rc = pb_tune_log_load(path, &sp, &recs, &n, err)))
			break;
		if (n > max_rows - out->n)
			n = max_rows - out->n;
		if (n > 0 && grow(out, out->n + n, &cap)) {
			free(recs);
			rc = pb_err(err, PB_ENOMEM, "tune: out of memory");
			break;
		}
		first[ns] = out->n;
		best[ns] = 0;
		for (int i = 0; i < n; i++) {
			float *row = out->x + (size_t)out->n * out->nf;
			if (pb_tune_space_features(&sp, recs[i].idx, row) != out->nf)
				continue;
			double g = recs[i].r.valid ? recs[i].r.gflops : 0;
			out->y[out->n++] = (float)g;
			if (g > best[ns])
				best[ns] = g;
		}
		free(recs);
		if (out->n > first[ns] && best[ns] > 0) {
			if (best[ns] > top)
				top = best[ns];
			ns++;
		} else
			out->n = first[ns]; /* nothing valid: no rows from this shape */
	}
	first[ns] = out->n;
	/* shape-relative labels on one scale: the best over the source shapes */
	for (int s = 0; s < ns && !rc; s++)
		for (int i = first[s]; i < first[s + 1]; i++)
			out->y[i] = (float)(out->y[i] / best[s] * top);
	out->shapes = ns;
	free(first);
	free(best);
	free(keys);
	if (rc)
		pb_tune_transfer_free(out);
	return rc;
}

void pb_tune_transfer_free(pb_tune_transfer *t)
{
	free(t->x);
	free(t->y);
	t->x = t->y = NULL;
	t->n = 0;
}
