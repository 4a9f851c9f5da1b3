/*
 * shard/search/search_degrees.c — per mesh axis: batch, parameters or both
 * (search_degrees.h).
 */
#include "shard/search/search_degrees.h"
#include "shard/strategy/strategy_problem.h"

#include <stdlib.h>
#include <string.h>

/* An operator with a weight, f FLOPs: its weights sharded along the axes of
 * the bit set sharded, its output split along those of split. */
static void degrees_add(pb_shard_degrees *d, double f, unsigned sharded, unsigned split)
{
	d->total += f;
	for (int a = 0; a < d->n_axes; a++) {
		if (sharded & (1u << a))
			d->param_share[a] += f;
		else if (split & (1u << a))
			d->batch_share[a] += f;
	}
}

/* The shares from the FLOPs; each axis's kind, dp, tp, mixed. */
static void degrees_finish(pb_shard_degrees *d)
{
	d->dp = d->tp = 1;
	d->mixed = 0;
	for (int a = 0; a < d->n_axes; a++) {
		if (d->total > 0) {
			d->batch_share[a] /= d->total;
			d->param_share[a] /= d->total;
		}
		if (d->batch_share[a] >= 0.9) {
			d->kind[a] = PB_AXIS_BATCH;
			d->dp *= d->size[a];
		} else if (d->param_share[a] >= 0.9) {
			d->kind[a] = PB_AXIS_PARAMS;
			d->tp *= d->size[a];
		} else {
			d->kind[a] = PB_AXIS_BOTH;
			d->mixed = 1;
		}
	}
}

void pb_search_degrees_of(const pb_shard_problem *p, const int *choice, pb_shard_degrees *d)
{
	const pb_graph *g = p->g;
	memset(d, 0, sizeof *d);
	d->n_axes = p->mesh.n_axes;
	for (int a = 0; a < d->n_axes; a++)
		d->size[a] = p->mesh.size[a];
	for (int v = 0; v < g->n_nodes; v++) {
		int k = pb_strategy_problem_node_strategy(p, choice, v);
		const pb_node *n = &g->nodes[v];
		if (k < 0 || n->n_outputs < 1)
			continue;
		const pb_strat *st = &p->nodes[v].strat[k];
		int has_param = 0;
		unsigned sharded = 0, split = 0;
		for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++) {
			int t = n->inputs[i];
			if (t < 0 || p->tkind[t] != PB_TKIND_PARAM ||
			    pb_tensor_numel(&g->tensors[t]) < 2)
				continue;
			has_param = 1;
			for (int a = 0; a < d->n_axes; a++)
				if (st->in[i][a] >= 0)
					sharded |= 1u << a;
		}
		for (int a = 0; a < d->n_axes; a++)
			if (st->out[0][a] >= 0)
				split |= 1u << a;
		double f = pb_strategy_problem_node_flops(g, n);
		if (has_param && f > 0)
			degrees_add(d, f, sharded, split);
	}
	degrees_finish(d);
}

/* The axes of a scheme name ("4x2", "8"); their count, -1 when malformed. */
static int scheme_axes(const char *s, int *size)
{
	int n = 0;
	while (s && *s) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s || v < 1 || n == PB_MESH_MAX_AXES)
			return -1;
		size[n++] = (int)v;
		s = *end == 'x' ? end + 1 : end;
		if (*end && *end != 'x')
			return -1;
	}
	return n;
}

/* The axes along which a spec string ("S0,R,P") splits a dimension. */
static unsigned spec_split(const char *spec, int n_axes)
{
	unsigned bits = 0;
	for (int a = 0; spec && a < n_axes; a++) {
		if (*spec == 'S')
			bits |= 1u << a;
		spec = strchr(spec, ',');
		spec = spec ? spec + 1 : NULL;
	}
	return bits;
}

int pb_search_degrees_of_stages(const pb_graph *g, const json_t *stages, pb_shard_degrees *d)
{
	memset(d, 0, sizeof *d);
	d->n_axes = -1;
	size_t k;
	const json_t *st;
	json_array_foreach(stages, k, st)
	{
		int size[PB_MESH_MAX_AXES];
		int na = scheme_axes(json_string_value(json_object_get(st, "scheme")), size);
		if (na < 1 ||
		    (d->n_axes >= 0 &&
		     (na != d->n_axes || memcmp(size, d->size, (size_t)na * sizeof *size))))
			return -1; /* stages on different groupings (uneven) */
		d->n_axes = na;
		memcpy(d->size, size, (size_t)na * sizeof *size);
		size_t j;
		const json_t *op;
		json_array_foreach(json_object_get(st, "ops"), j, op)
		{
			json_int_t id = json_integer_value(json_object_get(op, "id"));
			const json_t *in = json_object_get(op, "in");
			if (id < 0 || id >= g->n_nodes || !json_is_array(in))
				continue;
			const pb_node *n = &g->nodes[id];
			int has_param = 0;
			unsigned sharded = 0;
			for (int i = 0; i < n->n_inputs && i < (int)json_array_size(in); i++) {
				int t = n->inputs[i];
				const char *s = json_string_value(json_array_get(in, (size_t)i));
				if (t < 0 || !s || !g->tensors[t].is_initializer ||
				    pb_tensor_numel(&g->tensors[t]) < 2)
					continue;
				has_param = 1;
				sharded |= spec_split(s, na);
			}
			const char *o =
			    json_string_value(json_array_get(json_object_get(op, "out"), 0));
			double f = pb_strategy_problem_node_flops(g, n);
			if (has_param && f > 0)
				degrees_add(d, f, sharded, spec_split(o, na));
		}
	}
	if (d->n_axes < 1)
		return -1;
	degrees_finish(d);
	return 0;
}

const char *pb_search_degrees_axis_kind_name(int kind)
{
	return kind == PB_AXIS_BATCH ? "batch" : kind == PB_AXIS_PARAMS ? "parameters" : "both";
}

void pb_search_degrees_json(json_t *obj, const pb_shard_degrees *d)
{
	json_object_set_new(obj, "degrees", json_string(d->mixed ? "mixed" : "megatron"));
	json_t *axes = json_array();
	for (int a = 0; a < d->n_axes; a++) {
		json_t *o = json_object();
		json_object_set_new(o, "size", json_integer(d->size[a]));
		json_object_set_new(o, "splits",
		                    json_string(pb_search_degrees_axis_kind_name(d->kind[a])));
		json_object_set_new(o, "batch_share", json_real(d->batch_share[a]));
		json_object_set_new(o, "param_share", json_real(d->param_share[a]));
		json_array_append_new(axes, o);
	}
	json_object_set_new(obj, "axes", axes);
}

void pb_search_degrees_text(FILE *f, const pb_shard_degrees *d)
{
	if (d->mixed)
		fprintf(f, "degrees: mixed, no Megatron dp x tp (");
	else
		fprintf(f, "degrees: dp %d x tp %d (", d->dp, d->tp);
	for (int a = 0; a < d->n_axes; a++) {
		fprintf(f, "%saxis %d: %s", a ? ", " : "", d->size[a],
		        pb_search_degrees_axis_kind_name(d->kind[a]));
		if (d->kind[a] == PB_AXIS_BOTH)
			fprintf(f, " %.0f%% batch / %.0f%% parameters", d->batch_share[a] * 100,
			        d->param_share[a] * 100);
	}
	fprintf(f, "; by the FLOPs of operators with weights)\n");
}
