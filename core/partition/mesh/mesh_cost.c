/*
 * mesh_cost.c — prices a placed partition on a routed mesh (mesh_cost.h).
 * Init computes what the placement cannot change (segments, their 1-D
 * bytes, the traffic matrix, O(m + E)); eval routes the traffic of the
 * placement: O(sum over traffic pairs of |p| |q| + route length) plus the
 * groups' 1-D figures.
 */
#include "partition/mesh/mesh_cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition/mesh/mesh_place.h"

void pb_mesh_cost_grid(const pb_part_problem *P, pb_mesh_grid *g)
{
	g->rows = P->hw.mesh_rows;
	g->cols = P->hw.mesh_cols;
	g->yx = P->hw.routing_yx;
}

void pb_mesh_cost_free(pb_mesh_cost *C)
{
	free(C->first);
	free(C->layers);
	free(C->order);
	free(C->in_b);
	free(C->own_b);
	free(C->T);
	free(C->load);
	free(C->g);
	free(C->members);
	free(C->moff);
	free(C->route);
	free(C->gsize);
	memset(C, 0, sizeof *C);
}

int pb_mesh_cost_init(pb_mesh_cost *C, pb_part_problem *P, const int *ac, pb_error *err)
{
	memset(C, 0, sizeof *C);
	C->P = P;
	C->n = P->n;
	pb_mesh_cost_grid(P, &C->grid);
	size_t n = (size_t)P->n;
	C->first = malloc(n * sizeof *C->first);
	C->layers = malloc(n * sizeof *C->layers);
	C->order = malloc(n * sizeof *C->order);
	C->in_b = calloc(n, sizeof *C->in_b);
	C->own_b = calloc(n, sizeof *C->own_b);
	C->load = calloc(4 * n, sizeof *C->load);
	C->g = calloc(n, sizeof *C->g);
	C->members = malloc(n * sizeof *C->members);
	C->moff = malloc((n + 1) * sizeof *C->moff);
	C->route = malloc((size_t)(C->grid.rows + C->grid.cols + 1) * sizeof *C->route);
	C->gsize = malloc(n * sizeof *C->gsize);
	int *grp_of = malloc((size_t)(P->m + 1) * sizeof *grp_of);
	int *stamp = malloc((size_t)(P->m + 1) * sizeof *stamp);
	if (!C->first || !C->layers || !C->order || !C->in_b || !C->own_b || !C->load || !C->g ||
	    !C->members || !C->moff || !C->route || !C->gsize || !grp_of || !stamp) {
		free(grp_of);
		free(stamp);
		pb_mesh_cost_free(C);
		return pb_err(err, PB_ENOMEM, "mesh cost: out of memory");
	}
	pb_mesh_place_snake_order(&C->grid, P->hw.io_row, P->hw.io_col, C->order);
	/* groups of the state: a run of zeros joins the next non-zero core */
	int G = 0, run = 0, layer = 0;
	for (int i = 0; i < P->n; i++) {
		run++;
		if (ac[i] > 0) {
			C->first[G] = layer;
			C->layers[G] = ac[i];
			C->gsize[G] = run;
			layer += ac[i];
			G++;
			run = 0;
		}
	}
	C->n_groups = G;
	C->T = calloc((size_t)G * (size_t)G + 1, sizeof *C->T);
	if (!C->T) {
		free(grp_of);
		free(stamp);
		pb_mesh_cost_free(C);
		return pb_err(err, PB_ENOMEM, "mesh cost: out of memory");
	}
	for (int q = 0; q < G; q++) {
		for (int v = C->first[q]; v < C->first[q] + C->layers[q]; v++)
			grp_of[v] = q;
		C->in_b[q] = pb_part_in_bytes(P, C->first[q], C->first[q] + C->layers[q]);
		C->own_b[q] = pb_part_own_bytes(P, C->first[q], C->first[q] + C->layers[q]);
	}
	for (int v = 0; v < P->m; v++)
		stamp[v] = -1;
	/* T(p, q): each producer's output once per consumer group */
	for (int q = 0; q < G; q++) {
		int a = C->first[q], b = a + C->layers[q];
		for (int v = a; v < b; v++)
			for (int k = P->pred_off[v]; k < P->pred_off[v + 1]; k++) {
				int u = P->pred[k];
				if (u < a && stamp[u] != q) {
					stamp[u] = q;
					C->T[grp_of[u] * G + q] += P->ob[u];
				}
			}
	}
	free(grp_of);
	free(stamp);
	return PB_OK;
}

/* Nearest cores of groups p and q (mesh_cost.h says why this pair). */
static int nearest(const pb_mesh_cost *C, int p, int q, int *src, int *dst)
{
	int best = -1;
	for (int i = C->moff[p]; i < C->moff[p + 1]; i++)
		for (int j = C->moff[q]; j < C->moff[q + 1]; j++) {
			int h = pb_mesh_route_hops(&C->grid, C->members[i], C->members[j]);
			if (best < 0 || h < best) {
				best = h;
				*src = C->members[i];
				*dst = C->members[j];
			}
		}
	return best;
}

static int pin_violations(const pb_mesh_cost *C, const int *owner)
{
	const pb_part_problem *P = C->P;
	int v = 0;
	for (int q = 0; q < C->n_groups; q++) {
		int a = C->first[q], b = a + C->layers[q];
		if (P->cut) {
			if (q > 0 && P->cut[a] == PB_CUT_FORBID)
				v++;
			for (int x = a + 1; x < b; x++)
				v += P->cut[x] == PB_CUT_FORCE;
		}
		if (P->pin)
			for (int x = a; x < b; x++)
				if (P->pin[x] >= 0 && P->pin[x] < C->n &&
				    owner[C->order[P->pin[x]]] != q)
					v++;
	}
	return v;
}

void pb_mesh_cost_eval(pb_mesh_cost *C, const int *owner, pb_mesh_eval *ev)
{
	pb_part_problem *P = C->P;
	const pb_manycore *hw = &P->hw;
	int G = C->n_groups, n = C->n;
	memset(ev, 0, sizeof *ev);
	ev->hot_link = -1;
	/* members of each group, in core order */
	for (int q = 0; q <= G; q++)
		C->moff[q] = 0;
	for (int c = 0; c < n; c++)
		C->moff[owner[c] + 1]++;
	for (int q = 0; q < G; q++)
		C->moff[q + 1] += C->moff[q];
	for (int q = 0; q < G; q++)
		C->g[q].cores = 0;
	for (int c = 0; c < n; c++) {
		int q = owner[c];
		C->members[C->moff[q] + C->g[q].cores++] = c;
	}
	memset(C->load, 0, 4 * (size_t)n * sizeof *C->load);
	for (int p = 0; p < G; p++)
		for (int q = p + 1; q < G; q++) {
			double t = C->T[p * G + q];
			int s, d;
			if (t <= 0 || nearest(C, p, q, &s, &d) < 0)
				continue;
			int h = pb_mesh_route_links(&C->grid, s, d, C->route);
			for (int k = 0; k < h; k++)
				C->load[C->route[k]] += t;
			ev->hop_bytes += t * h;
		}
	for (int q = 0; q < G; q++) {
		pb_mesh_gtime *gt = &C->g[q];
		double lmax = 0;
		gt->hops = 0;
		for (int p = 0; p < q; p++) {
			int s, d;
			if (C->T[p * G + q] <= 0 || nearest(C, p, q, &s, &d) < 0)
				continue;
			int h = pb_mesh_route_links(&C->grid, s, d, C->route);
			for (int k = 0; k < h; k++)
				if (C->load[C->route[k]] > lmax)
					lmax = C->load[C->route[k]];
			if (h > gt->hops)
				gt->hops = h;
		}
		pb_part_group pg;
		int a = C->first[q];
		pb_part_eval_group(P, a, a + C->layers[q], gt->cores, &pg);
		double in_t = C->in_b[q] / hw->bandwidth, own_t = C->own_b[q] / hw->bandwidth;
		gt->compute = pg.compute;
		gt->storage = pg.storage;
		gt->macs = pg.macs;
		gt->link_time = lmax / hw->link_bw;
		gt->routing = own_t + fmax(in_t, gt->link_time) + gt->hops * hw->hop_s;
		gt->time = gt->cores > 0 ? gt->compute + gt->routing : INFINITY;
		if (q == 0 || gt->time > ev->max_time) {
			ev->max_time = gt->time;
			ev->bottleneck = q;
		}
		ev->max_compute = fmax(ev->max_compute, gt->compute);
		ev->max_routing = fmax(ev->max_routing, gt->routing);
		ev->max_storage = fmax(ev->max_storage, gt->storage);
		ev->sum_sq_time += gt->time * gt->time;
	}
	for (int l = 0; l < 4 * n; l++)
		if (C->load[l] > ev->hot_load) {
			ev->hot_load = C->load[l];
			ev->hot_link = l;
		}
	ev->over_memory = ev->max_storage > hw->memory;
	ev->violations = pin_violations(C, owner);
	if (G > 0) {
		const pb_mesh_gtime *b = &C->g[ev->bottleneck];
		double in_t = C->in_b[ev->bottleneck] / hw->bandwidth;
		double net = fmax(in_t, b->link_time) + b->hops * hw->hop_s;
		ev->link_share = b->time > 0 && isfinite(b->time) ? net / b->time : 0;
	}
	/* the objective and reward of the layout, hop-bytes as routing term */
	pb_part_eval pe = {0};
	pe.max_time = ev->max_time;
	pe.max_compute = ev->max_compute;
	pe.max_storage = ev->max_storage;
	pe.max_routing = ev->hop_bytes / hw->link_bw;
	pe.over_memory = ev->over_memory;
	ev->objective = pb_part_objective_value(P, &pe);
	ev->reward = pb_part_reward(P, &pe);
}

int pb_mesh_cost_better(const pb_mesh_eval *a, const pb_mesh_eval *b)
{
	if (a->violations != b->violations)
		return a->violations < b->violations;
	double tol = 1e-12 * fmax(fabs(a->objective), fabs(b->objective));
	if (a->objective < b->objective - tol)
		return 1;
	if (a->objective > b->objective + tol)
		return 0;
	return a->sum_sq_time < b->sum_sq_time * (1 - 1e-12);
}

int pb_mesh_cost_stop(pb_mesh_cost *C)
{
	if (!C->stopped && C->stop && C->stop(C->stop_ud))
		C->stopped = 1;
	return C->stopped;
}
