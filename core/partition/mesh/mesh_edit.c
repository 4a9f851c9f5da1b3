/*
 * mesh_edit.c — hand edits of placed plans (mesh_edit.h). Both read the
 * placement from detail.mesh (pb_mesh_plan_owner), derive the 1-D state
 * from the region sizes (groups keep their layers) and price the result
 * with pb_mesh_plan_apply, so the figures of an edited placed plan are the
 * routed model's. The routing-free bound is carried from the plan.
 */
#include "partition/mesh/mesh_edit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition/mesh/mesh_place.h"
#include "partition/mesh/mesh_plan.h"

static double plan_bound(const pb_plan *p)
{
	return pb_plan_metric(p, "mesh_lower_bound", NAN);
}

/* The placed plan of state ac and placement own (carried figures kept). */
static int build(pb_part_problem *P, const pb_plan *before, const int *ac, const int *own,
                 const char *method, double optimum, pb_plan **out, pb_error *err)
{
	(void)optimum; /* on a routed mesh the 1-D optimum is only a bound */
	*out = pb_part_to_plan(P, ac, method, NAN);
	if (!*out)
		return pb_err(err, PB_ENOMEM, "out of memory");
	int rc = pb_mesh_plan_apply(P, ac, own, *out, plan_bound(before), err);
	if (rc) {
		pb_plan_free(*out);
		*out = NULL;
	}
	return rc;
}

/* The groups' layers of state ac (n_groups entries) and their count. */
static int layer_counts(const int *ac, int n, int *layers)
{
	int G = 0;
	for (int i = 0; i < n; i++)
		if (ac[i] > 0)
			layers[G++] = ac[i];
	return G;
}

int pb_mesh_edit_move(pb_part_problem *P, const pb_graph *g, const pb_plan *plan, int row, int col,
                      int to, pb_plan **out, char *msg, size_t len, pb_error *err)
{
	*out = NULL;
	if (len)
		msg[0] = '\0';
	if (!P->hw.mesh_routed)
		return pb_err(
		    err, PB_EUSAGE,
		    "%s has no routed mesh (mesh.link_gbs, mesh.hop_ns): no cores to move",
		    P->hw.path);
	int n = P->n, rows = P->hw.mesh_rows, cols = P->hw.mesh_cols;
	if (row < 0 || row >= rows || col < 0 || col >= cols)
		return pb_err(err, PB_EUSAGE, "core (%d,%d) is not on the %dx%d mesh", row, col,
		              rows, cols);
	int *ac = malloc((size_t)n * sizeof *ac), *own = malloc((size_t)n * sizeof *own);
	int *layers = malloc((size_t)n * sizeof *layers),
	    *sizes = malloc((size_t)n * sizeof *sizes);
	int *seen = malloc((size_t)n * sizeof *seen), *queue = malloc((size_t)n * sizeof *queue);
	int rc = PB_OK;
	if (!ac || !own || !layers || !sizes || !seen || !queue) {
		rc = pb_err(err, PB_ENOMEM, "out of memory");
		goto done;
	}
	if ((rc = pb_part_from_plan(P, plan, ac, err)))
		goto done;
	if (!pb_mesh_plan_owner(plan, n, own)) {
		rc = pb_err(err, PB_EUSAGE,
		            "the plan has no placement (detail.mesh.placement); run 'partition' "
		            "on this layout first");
		goto done;
	}
	int G = layer_counts(ac, n, layers);
	pb_mesh_grid grid;
	grid.rows = rows;
	grid.cols = cols;
	grid.yx = P->hw.routing_yx;
	int c = row * cols + col, from = own[c];
	if (to < 0 || to >= G) {
		rc = pb_err(err, PB_EUSAGE, "group %d does not exist (valid: 0..%d)", to, G - 1);
		goto done;
	}
	if (to == from) {
		rc = pb_err(err, PB_EUSAGE, "core (%d,%d) is already in group %d", row, col, to);
		goto done;
	}
	int touch = (col + 1 < cols && own[c + 1] == to) || (col > 0 && own[c - 1] == to) ||
	            (row + 1 < rows && own[c + cols] == to) || (row > 0 && own[c - cols] == to);
	for (int q = 0; q < G; q++)
		sizes[q] = 0;
	for (int k = 0; k < n; k++)
		sizes[own[k]]++;
	if (!touch) {
		rc = pb_err(err, PB_EUSAGE,
		            "core (%d,%d) of group %d does not touch group %d (a core moves to a "
		            "neighbouring group)",
		            row, col, from, to);
		goto done;
	}
	if (sizes[from] < 2 || !pb_mesh_place_connected(&grid, own, from, c, seen, queue)) {
		rc = pb_err(err, PB_EUSAGE,
		            sizes[from] < 2 ? "group %d would have no core left"
		                            : "group %d would fall apart (its region must stay "
		                              "connected)",
		            from);
		goto done;
	}
	/* a Lua pin of a layer of the donor on this core */
	if (P->pin) {
		int first = 0;
		for (int q = 0; q < from; q++)
			first += layers[q];
		int *order = seen; /* scratch: the snake */
		pb_mesh_place_snake_order(&grid, P->hw.io_row, P->hw.io_col, order);
		for (int v = first; v < first + layers[from]; v++)
			if (P->pin[v] >= 0 && P->pin[v] < n && order[P->pin[v]] == c) {
				int node = pb_part_layer_node(P, v);
				rc = pb_err(
				    err, PB_EUSAGE,
				    "the edit breaks Lua rule (core=%d): node '%s' is pinned to "
				    "core (%d,%d)",
				    P->pin[v],
				    g && node >= 0 && node < g->n_nodes && g->nodes[node].name
				        ? g->nodes[node].name
				        : "?",
				    row, col);
				goto done;
			}
	}
	double before = pb_plan_metric(plan, "max_time", NAN);
	int sf = sizes[from], st = sizes[to];
	own[c] = to;
	sizes[from]--;
	sizes[to]++;
	pb_part_state_from_groups(G, sizes, layers, ac);
	if ((rc = build(P, plan, ac, own, "manual", NAN, out, err)))
		goto done;
	snprintf(msg, len,
	         "core (%d,%d): group %d (%d -> %d cores) -> group %d (%d -> %d cores); placed "
	         "max(t) %.6f ms -> %.6f ms",
	         row, col, from, sf, sf - 1, to, st, st + 1, before * 1e3,
	         pb_plan_metric(*out, "max_time", NAN) * 1e3);
done:
	free(ac);
	free(own);
	free(layers);
	free(sizes);
	free(seen);
	free(queue);
	return rc;
}

int pb_mesh_edit_place(pb_part_problem *P, const pb_plan *before, const int *after,
                       const char *method, double optimum, pb_plan **out, pb_error *err)
{
	int n = P->n;
	int *own = malloc((size_t)n * sizeof *own), *old = malloc((size_t)n * sizeof *old);
	int *cb = calloc((size_t)n, sizeof *cb), *ca = calloc((size_t)n, sizeof *ca);
	int rc;
	if (!own || !old || !cb || !ca) {
		rc = pb_err(err, PB_ENOMEM, "out of memory");
	} else {
		/* the old placement stays when every group keeps its cores */
		pb_error ignore = {0};
		int keep = pb_part_from_plan(P, before, old, &ignore) == PB_OK &&
		           pb_mesh_plan_owner(before, n, own);
		if (keep) {
			int Gb = 0, Ga = 0, run = 0;
			for (int i = 0; i < n; i++) {
				run++;
				if (old[i] > 0)
					cb[Gb++] = run, run = 0;
			}
			run = 0;
			for (int i = 0; i < n; i++) {
				run++;
				if (after[i] > 0)
					ca[Ga++] = run, run = 0;
			}
			keep = Ga == Gb && !memcmp(ca, cb, (size_t)Ga * sizeof *ca);
			/* the sizes of the regions must be the state's */
			for (int q = 0; q < Ga && keep; q++) {
				int k = 0;
				for (int c = 0; c < n; c++)
					k += own[c] == q;
				keep = k == ca[q];
			}
		}
		rc = build(P, before, after, keep ? own : NULL, method, optimum, out, err);
	}
	free(own);
	free(old);
	free(cb);
	free(ca);
	return rc;
}
