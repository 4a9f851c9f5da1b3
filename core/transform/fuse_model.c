/*
 * fuse_model.c — the compute-cost model that decides whether a combination of
 * nodes is worth fusing (fuse.h, docs/transform.md).
 *
 * Parallel elements of a node = elements of its outputs (from the shapes;
 * out_bytes / 4 when unknown; at least 1). Work = FLOPs, at least one per
 * element (data movement). Bytes = input + output activation bytes.
 * Defaults describe a mid-range GPU: 5 us launches, 80 SMs x 2048 threads,
 * 14 TFLOP/s, 900 GB/s.
 */
#include "transform/fuse.h"

#include <math.h>

void pb_fuse_model_default(pb_fuse_model *m)
{
	m->launch = 5e-6;
	m->lanes = 80.0 * 2048.0;
	m->lane_flops = 14e12 / (80.0 * 2048.0);
	m->bandwidth = 900e9;
	m->min_gain = 0.0;
	m->max_members = 16;
}

int pb_fuse_model_from_hw(const pb_hw *hw, pb_fuse_model *m, pb_error *err)
{
	if (!hw)
		return PB_OK;
	pb_err_clear(err);
	const json_t *f = pb_hw_table(hw, hw->root, "", "fusion", 0, err);
	if (!f) {
		if (err && err->code)
			return err->code;
		return PB_OK;
	}
	long mm = m->max_members;
	int rc;
	if ((rc = pb_hw_num(hw, f, "fusion", "launch", 0, m->launch, 0, 1, &m->launch, err)) ||
	    (rc = pb_hw_num(hw, f, "fusion", "lanes", 0, m->lanes, 1, 1e12, &m->lanes, err)) ||
	    (rc = pb_hw_num(hw, f, "fusion", "lane_flops", 0, m->lane_flops, 1, 1e18,
	                    &m->lane_flops, err)) ||
	    (rc = pb_hw_num(hw, f, "fusion", "bandwidth", 0, m->bandwidth, 1, 1e18, &m->bandwidth,
	                    err)) ||
	    (rc = pb_hw_num(hw, f, "fusion", "min_gain", 0, m->min_gain, 0, 1e3, &m->min_gain,
	                    err)) ||
	    (rc = pb_hw_int(hw, f, "fusion", "max_members", 0, mm, 2, 100000, &mm, err)))
		return rc;
	m->max_members = (int)mm;
	return PB_OK;
}

static double node_elems(const pb_graph *g, int v)
{
	const pb_node *nd = &g->nodes[v];
	double e = 0;
	for (int j = 0; j < nd->n_outputs; j++) {
		if (nd->outputs[j] < 0)
			continue;
		int64_t k = pb_tensor_numel(&g->tensors[nd->outputs[j]]);
		if (k > 0)
			e += (double)k;
	}
	if (e <= 0)
		e = nd->cost.out_bytes / 4;
	return e >= 1 ? e : 1;
}

static double node_work(const pb_graph *g, int v, double e)
{
	double f = g->nodes[v].cost.flops;
	return (isfinite(f) && f > e) ? f : e;
}

static double node_bytes(const pb_graph *g, int v)
{
	const pb_cost *c = &g->nodes[v].cost;
	double b =
	    (isfinite(c->in_bytes) ? c->in_bytes : 0) + (isfinite(c->out_bytes) ? c->out_bytes : 0);
	return b > 0 ? b : 0;
}

void pb_fuse_node_parts(const pb_fuse_model *m, const pb_graph *g, int v, double *compute,
                        double *memory)
{
	double e = node_elems(g, v);
	*compute = node_work(g, v, e) / (m->lanes * m->lane_flops);
	*memory = node_bytes(g, v) / m->bandwidth;
}

double pb_fuse_node_time(const pb_fuse_model *m, const pb_graph *g, int v)
{
	return pb_fuse_set_time(m, g, &v, 1);
}

double pb_fuse_set_time(const pb_fuse_model *m, const pb_graph *g, const int *nodes, int n)
{
	double elems = 0, per_elem = 0, bytes = 0;
	for (int i = 0; i < n; i++) {
		double e = node_elems(g, nodes[i]);
		double w = node_work(g, nodes[i], e) / e;
		elems += e;
		if (w > per_elem)
			per_elem = w;
		bytes += node_bytes(g, nodes[i]);
	}
	double waves = ceil(elems / m->lanes);
	double compute = waves * per_elem / m->lane_flops;
	double memory = bytes / m->bandwidth;
	return m->launch + (compute > memory ? compute : memory);
}

double pb_fuse_set_occupancy(const pb_fuse_model *m, const pb_graph *g, const int *nodes, int n)
{
	double elems = 0;
	for (int i = 0; i < n; i++)
		elems += node_elems(g, nodes[i]);
	double waves = ceil(elems / m->lanes);
	return waves > 0 ? elems / (waves * m->lanes) : 0;
}
