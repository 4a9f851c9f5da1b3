/*
 * shard/search_degrees.c — per mesh axis: batch, parameters or both
 * (search_degrees.h).
 */
#include "shard/search_degrees.h"

#include <string.h>

void pb_shard_degrees_of(const pb_shard_problem *p, const int *choice, pb_shard_degrees *d)
{
	const pb_graph *g = p->g;
	memset(d, 0, sizeof *d);
	d->n_axes = p->mesh.n_axes;
	double total = 0;
	for (int v = 0; v < g->n_nodes; v++) {
		int k = pb_shard_node_strategy(p, choice, v);
		const pb_node *n = &g->nodes[v];
		if (k < 0 || n->n_outputs < 1)
			continue;
		const pb_strat *st = &p->nodes[v].strat[k];
		int has_param = 0;
		unsigned sharded = 0; /* axes along which one of its weights is split */
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
		double f = pb_shard_node_flops(g, n);
		if (!has_param || !(f > 0))
			continue;
		total += f;
		for (int a = 0; a < d->n_axes; a++) {
			if (sharded & (1u << a))
				d->param_share[a] += f;
			else if (st->out[0][a] >= 0)
				d->batch_share[a] += f;
		}
	}
	d->dp = d->tp = 1;
	for (int a = 0; a < d->n_axes; a++) {
		d->size[a] = p->mesh.size[a];
		if (total > 0) {
			d->batch_share[a] /= total;
			d->param_share[a] /= total;
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

const char *pb_shard_axis_kind_name(int kind)
{
	return kind == PB_AXIS_BATCH ? "batch" : kind == PB_AXIS_PARAMS ? "parameters" : "both";
}

void pb_shard_degrees_json(json_t *obj, const pb_shard_degrees *d)
{
	json_object_set_new(obj, "degrees", json_string(d->mixed ? "mixed" : "megatron"));
	json_t *axes = json_array();
	for (int a = 0; a < d->n_axes; a++) {
		json_t *o = json_object();
		json_object_set_new(o, "size", json_integer(d->size[a]));
		json_object_set_new(o, "splits", json_string(pb_shard_axis_kind_name(d->kind[a])));
		json_object_set_new(o, "batch_share", json_real(d->batch_share[a]));
		json_object_set_new(o, "param_share", json_real(d->param_share[a]));
		json_array_append_new(axes, o);
	}
	json_object_set_new(obj, "axes", axes);
}

void pb_shard_degrees_text(FILE *f, const pb_shard_degrees *d)
{
	if (d->mixed)
		fprintf(f, "degrees: mixed, no Megatron dp x tp (");
	else
		fprintf(f, "degrees: dp %d x tp %d (", d->dp, d->tp);
	for (int a = 0; a < d->n_axes; a++) {
		fprintf(f, "%saxis %d: %s", a ? ", " : "", d->size[a],
		        pb_shard_axis_kind_name(d->kind[a]));
		if (d->kind[a] == PB_AXIS_BOTH)
			fprintf(f, " %.0f%% batch / %.0f%% parameters", d->batch_share[a] * 100,
			        d->param_share[a] * 100);
	}
	fprintf(f, "; by the FLOPs of operators with weights)\n");
}
