/*
 * map_run.c — the map command's mappings (map.h): the objective's assignment
 * (map_throughput.c, map_assign.c) mapped by map.c, against the priority
 * rule's baseline and every single-backend mapping, with the period's LP
 * bound (map_bound.c). Above map.c and map_throughput.c, which both use
 * map.c's mapping of one assignment: no include circle.
 */
#include "transform/map.h"

#include <math.h>

/* One mapping: the priority rule's marks, the objective's assignment, then the
 * mapping of that assignment (map.c). */
static int map_run(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, pb_map_result **out,
                   pb_error *err)
{
	*out = NULL;
	double t0 = pb_map_now();
	pb_map_result *r = NULL;
	int rc = pb_map_begin(g, h, o, &r, err);
	if (rc == PB_OK && o->objective == PB_MAP_THROUGHPUT)
		rc = pb_map_assign_throughput(g, h, o, r, err);
	else if (rc == PB_OK && o->transfer_aware) {
		rc = pb_map_assign_exact(g, h, o, r, err);
		if (rc == PB_OK && !r->enumerated)
			rc = pb_map_assign_transfer(g, h, o->force, r, err);
	}
	if (rc == PB_OK)
		rc = pb_map_finish(g, h, o, r, t0, err);
	if (rc) {
		pb_map_result_free(r);
		return rc;
	}
	*out = r;
	return PB_OK;
}

/* Transfer-aware or throughput: the priority rule's plan is computed as the
 * baseline. Latency: the transfer-aware plan replaces it only when it models
 * a faster serial time (the descent minimises a model of it; aggregates kept
 * apart by a cycle could make the real figure worse, then the baseline
 * stays). Throughput: the search (map_throughput.c) has the priority plan
 * among its candidates. Both: the objective's figure of every
 * single-backend mapping (r->single_value, r->single_best). */
int pb_map_run(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, pb_map_result **out,
               pb_error *err)
{
	*out = NULL;
	if (o->objective != PB_MAP_LATENCY && o->objective != PB_MAP_THROUGHPUT)
		return pb_err(err, PB_EUSAGE, "map: unknown objective %d", o->objective);
	if (o->objective == PB_MAP_THROUGHPUT && !o->transfer_aware)
		return pb_err(err, PB_EUSAGE,
		              "map: --priority and --objective throughput exclude each other (the "
		              "priority rule chooses no assignment to optimise)");
	if (!o->transfer_aware)
		return map_run(g, h, o, out, err);
	double t0 = pb_map_now();
	pb_map_opts po = *o;
	po.transfer_aware = 0;
	po.objective = PB_MAP_LATENCY;
	pb_map_result *base = NULL, *r = NULL;
	int rc = map_run(g, h, &po, &base, err);
	if (rc == PB_OK)
		rc = map_run(g, h, o, &r, err);
	if (rc) {
		pb_map_result_free(base);
		return rc;
	}
	pb_map_baseline b = {
	    1, base->serial_input, base->serial_time, base->pipelined_time, base->launches_after,
	    0, base->run_seconds};
	for (int e = 0; e < base->n_edges; e++)
		b.n_buffers += base->edges[e].buffer;
	b.period = base->period;
	if (o->objective == PB_MAP_LATENCY && r->serial_input > base->serial_input) {
		pb_map_result_free(r);
		r = base;
		r->transfer_aware = 1;
		r->kept_priority = 1;
	} else {
		pb_map_result_free(base);
	}
	r->base = b;
	r->single_best = -1;
	for (int k = 0; k < h->n && rc == PB_OK; k++) {
		rc = pb_map_single_backend(g, h, o, k, &r->single_value[k], err);
		if (rc == PB_OK && isfinite(r->single_value[k]) &&
		    (r->single_best < 0 || r->single_value[k] < r->single_value[r->single_best]))
			r->single_best = k;
	}
	if (rc == PB_OK)
		rc = pb_map_period_lp(g, h, r, o->force, &r->period_lp, err);
	if (rc) {
		pb_map_result_free(r);
		return rc;
	}
	r->run_seconds = pb_map_now() - t0; /* both mappings */
	*out = r;
	return PB_OK;
}
