/*
 * tune/node_costs.c — best measured time per graph node from a tuning log
 * (see node_costs.h).
 */
#include "tune/node_costs.h"
#include "util/file_door.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "util/strmap.h"
#include "tune/log.h"
#include "tune/ort_profile.h"
#include "tune/space.h"

typedef struct best_ctx {
	pb_strmap *index; /* key -> slot in best[] */
	double *best;
	int n, cap;
	int oom;
} best_ctx;

static void take(void *ud, const char *key, double gflops, double seconds)
{
	best_ctx *c = ud;
	int slot = pb_strmap_get(c->index, key, -1);
	if (slot < 0) {
		if (c->n == c->cap) {
			int cap = c->cap ? 2 * c->cap : 16;
			double *b = realloc(c->best, (size_t)cap * sizeof *b);
			if (!b) {
				c->oom = 1;
				return;
			}
			c->best = b;
			c->cap = cap;
		}
		slot = c->n++;
		c->best[slot] = 0;
		if (pb_strmap_put(c->index, key, slot)) {
			c->oom = 1;
			return;
		}
	}
	if (gflops > c->best[slot])
		c->best[slot] = gflops;
}

int pb_tune_node_times(const pb_graph *g, const char *log_path, double *times, int *n_found,
                       pb_error *err)
{
	if (pb_ort_profile_sniff(log_path)) /* an ONNX Runtime profile: measured per node */
		return pb_ort_profile_times(g, log_path, times, n_found, err);
	FILE *f = pb_door_fopen_read(log_path, PB_DOOR_DATA, "tuning log", err);
	if (!f)
		return err ? err->code : PB_EINPUT;
	fclose(f);
	best_ctx c = {pb_strmap_new(64)};
	if (!c.index)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", log_path);
	int rc = pb_tune_log_foreach(log_path, take, &c, err);
	if (!rc && c.oom)
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory", log_path);
	int found = 0;
	for (int i = 0; i < g->n_nodes && !rc; i++) {
		times[i] = NAN;
		pb_tune_shape s;
		pb_error ignore = {0};
		if (pb_tune_shape_from_node(g, i, &s, &ignore))
			continue;
		char key[128];
		pb_tune_shape_key(&s, key, sizeof key);
		int slot = pb_strmap_get(c.index, key, -1);
		if (slot < 0 || c.best[slot] <= 0)
			continue;
		times[i] = s.batch * pb_tune_shape_flops(&s) / (c.best[slot] * 1e9);
		found++;
	}
	if (n_found)
		*n_found = found;
	pb_strmap_free(c.index);
	free(c.best);
	return rc;
}
