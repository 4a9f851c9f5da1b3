/*
 * map_costs.c — backend priorities from measured times (map.h, issue 36.4).
 *
 * Seed 003 ranks backends per operator by performance ("the faster backend
 * gets the higher priority"), and the layouts type that ranking by hand.
 * Given measured per-node times on one backend (a tuning log or an ONNX
 * Runtime profile, read by the caller), every operator type with measured
 * nodes gets, on that backend, a time scale = measured / modelled time
 * summed over its measured nodes (so the model reproduces the measurement
 * on average over the type), and its priorities on every backend that
 * supports it are ranked afresh by the type's total modelled time there
 * (all its nodes in the graph; 1 = fastest, equal times share a rank).
 * Types without measurements keep the layout's table. The report says
 * which one each type used.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "transform/map.h"

/* The entry of op on backend b, created from "*" when b has none. NULL:
 * b does not run op, or out of memory (*oom set). */
static pb_backend_op *entry(pb_backend *be, const char *op, int *oom)
{
	for (int k = 0; k < be->n_ops; k++)
		if (strcmp(be->ops[k].op, op) == 0)
			return &be->ops[k];
	if (!be->has_any)
		return NULL;
	pb_backend_op *ops = realloc(be->ops, ((size_t)be->n_ops + 1) * sizeof *ops);
	char *name = strdup(op);
	if (!ops || !name) {
		if (ops)
			be->ops = ops;
		free(name);
		*oom = 1;
		return NULL;
	}
	be->ops = ops;
	pb_backend_op *e = &be->ops[be->n_ops++];
	*e = be->any;
	e->op = name;
	return e;
}

static int seen_before(const pb_graph *g, int v)
{
	for (int u = 0; u < v; u++)
		if (strcmp(g->nodes[u].op, g->nodes[v].op) == 0)
			return 1;
	return 0;
}

int pb_map_costs_apply(const pb_graph *g, pb_hetero *h, int backend, const double *times,
                       const char *source, json_t **report, pb_error *err)
{
	*report = NULL;
	if (backend < 0 || backend >= h->n)
		return pb_err(err, PB_EUSAGE, "map: --costs: no backend %d in %s", backend,
		              h->path);
	int nb = h->n, oom = 0;
	json_t *rep = json_array();
	double *tt = calloc((size_t)nb, sizeof *tt);
	if (!rep || !tt) {
		json_decref(rep);
		free(tt);
		return pb_err(err, PB_ENOMEM, "map: out of memory");
	}
	for (int v = 0; v < g->n_nodes && !oom; v++) {
		if (seen_before(g, v))
			continue;
		const char *op = g->nodes[v].op;
		double meas = 0, model = 0;
		int n_meas = 0, n_nodes = 0;
		for (int u = v; u < g->n_nodes; u++) {
			if (strcmp(g->nodes[u].op, op) != 0)
				continue;
			n_nodes++;
			if (!isfinite(times[u]) || times[u] < 0)
				continue;
			meas += times[u];
			model += pb_map_node_time(g, h, backend, u);
			n_meas++;
		}
		int supported = pb_hetero_support(h, backend, op, NULL) > 0;
		int measured = n_meas > 0 && supported && model > 0 && meas > 0;
		json_t *o = json_object();
		json_object_set_new(o, "op", json_string(op));
		json_object_set_new(o, "nodes", json_integer(n_nodes));
		json_object_set_new(o, "nodes_measured", json_integer(n_meas));
		if (measured) {
			pb_backend_op *e = entry(&h->b[backend], op, &oom);
			if (!e)
				break;
			e->time_scale *= meas / model;
			json_object_set_new(o, "measured_seconds", json_real(meas));
			json_object_set_new(o, "modelled_seconds", json_real(model));
			json_object_set_new(o, "time_scale", json_real(meas / model));
		}
		/* The type's total modelled time per supporting backend. */
		for (int b = 0; b < nb; b++) {
			tt[b] = INFINITY;
			if (pb_hetero_support(h, b, op, NULL) <= 0)
				continue;
			tt[b] = 0;
			for (int u = v; u < g->n_nodes; u++)
				if (strcmp(g->nodes[u].op, op) == 0)
					tt[b] += pb_map_node_time(g, h, b, u);
		}
		json_t *pr = json_object(), *tm = json_object();
		for (int b = 0; b < nb && !oom; b++) {
			if (!isfinite(tt[b]))
				continue;
			if (measured) {
				int rank = 1;
				for (int c = 0; c < nb; c++)
					rank += isfinite(tt[c]) && tt[c] < tt[b];
				pb_backend_op *e = entry(&h->b[b], op, &oom);
				if (!e)
					break;
				e->priority = rank;
			}
			json_object_set_new(pr, h->b[b].name,
			                    json_integer(pb_hetero_support(h, b, op, NULL)));
			json_object_set_new(tm, h->b[b].name, json_real(tt[b]));
		}
		json_object_set_new(o, "source", json_string(measured ? "measured" : "layout"));
		if (measured)
			json_object_set_new(o, "file", json_string(source));
		else if (n_meas > 0 && !supported)
			json_object_set_new(o, "why",
			                    json_string("measured, but the layout says the "
			                                "measured backend does not run it"));
		json_object_set_new(o, "priority", pr);
		json_object_set_new(o, "modelled_seconds_per_backend", tm);
		json_array_append_new(rep, o);
	}
	free(tt);
	if (oom) {
		json_decref(rep);
		return pb_err(err, PB_ENOMEM, "map: out of memory");
	}
	*report = rep;
	return PB_OK;
}

void pb_map_costs_print(FILE *out, const pb_hetero *h, const json_t *report, const char *backend)
{
	fprintf(out, "backend priorities per operator type (1 = best):\n");
	size_t i;
	const json_t *o;
	json_array_foreach(report, i, o)
	{
		const char *src = json_string_value(json_object_get(o, "source"));
		int measured = src && strcmp(src, "measured") == 0;
		fprintf(out, "  %-20.20s %s", json_string_value(json_object_get(o, "op")),
		        measured ? "measured" : "layout  ");
		const json_t *pr = json_object_get(o, "priority");
		for (int b = 0; b < h->n; b++) {
			const json_t *p = json_object_get(pr, h->b[b].name);
			if (p)
				fprintf(out, "  %s %d", h->b[b].name, (int)json_integer_value(p));
		}
		if (measured)
			fprintf(out, "  (%d of %d nodes timed on %s, x%.3g the model)",
			        (int)json_integer_value(json_object_get(o, "nodes_measured")),
			        (int)json_integer_value(json_object_get(o, "nodes")), backend,
			        json_real_value(json_object_get(o, "time_scale")));
		fputc('\n', out);
	}
}
