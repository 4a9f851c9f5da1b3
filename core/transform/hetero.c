/*
 * hetero.c — parsing of `kind = "hetero"` layouts (map.h).
 *
 * Every field is checked through the hw.h accessors, so a bad layout gives
 * an error naming the file and the field ("backends[2].ops.Conv.priority").
 */
#include "transform/map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pb_hetero_free(pb_hetero *h)
{
	if (!h)
		return;
	for (int i = 0; i < h->n; i++) {
		free(h->b[i].name);
		for (int k = 0; k < h->b[i].n_ops; k++)
			free(h->b[i].ops[k].op);
		free(h->b[i].ops);
		free(h->b[i].any.op);
	}
	free(h->b);
	free(h->xfer_bw);
	free(h->xfer_lat);
	free(h->path);
	free(h);
}

static int parse_op(const pb_hw *hw, const char *where, const char *op, const json_t *v,
                    pb_backend_op *out, pb_error *err)
{
	char w[256];
	snprintf(w, sizeof w, "%s.ops", where);
	long prio;
	double speed = 1;
	int rc;
	if (json_is_object(v)) {
		char w2[320];
		snprintf(w2, sizeof w2, "%s.%s", w, op);
		if ((rc = pb_hw_int(hw, v, w2, "priority", 1, 1, 1, 1000, &prio, err)) ||
		    (rc = pb_hw_num(hw, v, w2, "speed", 0, 1, 1e-9, 1e9, &speed, err)))
			return rc;
	} else {
		/* A bare number: the priority. */
		json_t *tmp = json_object();
		json_object_set(tmp, op, (json_t *)v);
		rc = pb_hw_int(hw, tmp, w, op, 1, 1, 1, 1000, &prio, err);
		json_decref(tmp);
		if (rc)
			return rc;
	}
	out->op = strdup(op);
	out->priority = (int)prio;
	out->speed = speed;
	out->time_scale = 1;
	return PB_OK;
}

int pb_hetero_parse(const pb_hw *hw, pb_hetero **out, pb_error *err)
{
	*out = NULL;
	int rc = pb_hw_expect_kind(hw, "hetero", err);
	if (rc)
		return rc;
	const json_t *bs = pb_hw_table(hw, hw->root, "", "backends", 1, err);
	if (!bs)
		return PB_EINPUT;
	if (!json_is_array(bs) || json_array_size(bs) == 0 ||
	    json_array_size(bs) > PB_MAP_MAX_BACKENDS)
		return pb_err(err, PB_EINPUT,
		              "%s: field 'backends' must be a list of 1 to %d backend tables",
		              hw->path, PB_MAP_MAX_BACKENDS);
	pb_hetero *h = calloc(1, sizeof *h);
	int n = (int)json_array_size(bs);
	h->path = strdup(hw->path);
	h->b = calloc((size_t)n, sizeof *h->b);
	h->xfer_bw = calloc((size_t)(n * n), sizeof *h->xfer_bw);
	h->xfer_lat = calloc((size_t)(n * n), sizeof *h->xfer_lat);
	for (int i = 0; i < n; i++) {
		char where[64];
		snprintf(where, sizeof where, "backends[%d]", i + 1);
		const json_t *bo = json_array_get(bs, (size_t)i);
		pb_backend *b = &h->b[i];
		h->n = i + 1;
		if (!json_is_object(bo)) {
			rc = pb_err(err, PB_EINPUT, "%s: field '%s': expected a table", hw->path,
			            where);
			goto fail;
		}
		const char *name;
		if ((rc = pb_hw_str(hw, bo, where, "name", 1, NULL, &name, err)))
			goto fail;
		b->name = strdup(name);
		for (int k = 0; k < i; k++)
			if (strcmp(h->b[k].name, name) == 0) {
				rc = pb_err(err, PB_EINPUT, "%s: backend name '%s' is used twice",
				            hw->path, name);
				goto fail;
			}
		if ((rc = pb_hw_num(hw, bo, where, "launch", 1, 0, 0, 10, &b->launch, err)) ||
		    (rc = pb_hw_num(hw, bo, where, "flops", 1, 0, 1, 1e18, &b->flops, err)) ||
		    (rc = pb_hw_num(hw, bo, where, "bandwidth", 1, 0, 1, 1e15, &b->bandwidth, err)))
			goto fail;
		const json_t *ops = pb_hw_table(hw, bo, where, "ops", 1, err);
		if (!ops) {
			rc = PB_EINPUT;
			goto fail;
		}
		if (!json_is_object(ops)) {
			rc = pb_err(err, PB_EINPUT,
			            "%s: field '%s.ops' must map operator names to priorities",
			            hw->path, where);
			goto fail;
		}
		b->ops = calloc(json_object_size(ops) + 1, sizeof *b->ops);
		const char *key;
		json_t *val;
		json_object_foreach((json_t *)ops, key, val)
		{
			pb_backend_op op;
			if ((rc = parse_op(hw, where, key, val, &op, err)))
				goto fail;
			if (strcmp(key, "*") == 0) {
				b->any = op;
				b->has_any = 1;
			} else {
				b->ops[b->n_ops++] = op;
			}
		}
	}
	for (int i = 0; i < n * n; i++)
		h->xfer_bw[i] = -1;
	const json_t *tr = pb_hw_table(hw, hw->root, "", "transfer", n > 1, err);
	if (!tr && n > 1) {
		rc = PB_EINPUT;
		goto fail;
	}
	for (size_t t = 0; tr && t < json_array_size(tr); t++) {
		char where[64];
		snprintf(where, sizeof where, "transfer[%zu]", t + 1);
		const json_t *e = json_array_get(tr, t);
		const char *from, *to;
		double bw, lat;
		if (!json_is_object(e)) {
			rc = pb_err(err, PB_EINPUT, "%s: field '%s': expected a table", hw->path,
			            where);
			goto fail;
		}
		if ((rc = pb_hw_str(hw, e, where, "from", 1, NULL, &from, err)) ||
		    (rc = pb_hw_str(hw, e, where, "to", 1, NULL, &to, err)) ||
		    (rc = pb_hw_num(hw, e, where, "bandwidth", 1, 0, 1, 1e15, &bw, err)) ||
		    (rc = pb_hw_num(hw, e, where, "latency", 0, 0, 0, 10, &lat, err)))
			goto fail;
		int fi = -1, ti = -1;
		for (int k = 0; k < n; k++) {
			if (strcmp(h->b[k].name, from) == 0)
				fi = k;
			if (strcmp(h->b[k].name, to) == 0)
				ti = k;
		}
		if (fi < 0 || ti < 0) {
			rc = pb_err(err, PB_EINPUT, "%s: field '%s': no backend named '%s'",
			            hw->path, where, fi < 0 ? from : to);
			goto fail;
		}
		h->xfer_bw[fi * n + ti] = bw;
		h->xfer_lat[fi * n + ti] = lat;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			if (i == j || h->xfer_bw[i * n + j] > 0)
				continue;
			if (h->xfer_bw[j * n + i] > 0) {
				h->xfer_bw[i * n + j] = h->xfer_bw[j * n + i];
				h->xfer_lat[i * n + j] = h->xfer_lat[j * n + i];
			} else {
				rc = pb_err(
				    err, PB_EINPUT,
				    "%s: field 'transfer': no bandwidth between '%s' and '%s'",
				    hw->path, h->b[i].name, h->b[j].name);
				goto fail;
			}
		}
	*out = h;
	return PB_OK;
fail:
	pb_hetero_free(h);
	return rc;
}

int pb_hetero_support(const pb_hetero *h, int b, const char *op, double *speed)
{
	const pb_backend *be = &h->b[b];
	for (int k = 0; k < be->n_ops; k++)
		if (strcmp(be->ops[k].op, op) == 0) {
			if (speed)
				*speed = be->ops[k].speed;
			return be->ops[k].priority;
		}
	if (be->has_any) {
		if (speed)
			*speed = be->any.speed;
		return be->any.priority;
	}
	return 0;
}

/* A node's time on a backend: the slower of its FLOPs at the backend's rate
 * (times its priority's speed factor) and its bytes at the backend's bandwidth. */
static double node_time(const pb_graph *g, const pb_backend *b, double speed, int v)
{
	const pb_cost *c = &g->nodes[v].cost;
	double fl = isfinite(c->flops) && c->flops > 0 ? c->flops : 0;
	double by =
	    (isfinite(c->in_bytes) ? c->in_bytes : 0) + (isfinite(c->out_bytes) ? c->out_bytes : 0);
	double tc = fl / (b->flops * speed), tm = by / b->bandwidth;
	return tc > tm ? tc : tm;
}

double pb_map_node_time(const pb_graph *g, const pb_hetero *h, int b, int v)
{
	const pb_backend *be = &h->b[b];
	const char *op = g->nodes[v].op;
	for (int k = 0; k < be->n_ops; k++)
		if (strcmp(be->ops[k].op, op) == 0)
			return node_time(g, be, be->ops[k].speed, v) * be->ops[k].time_scale;
	double speed = be->has_any ? be->any.speed : 1;
	double scale = be->has_any ? be->any.time_scale : 1;
	return node_time(g, be, speed, v) * scale;
}
