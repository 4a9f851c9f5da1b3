/*
 * shard/pipeline/pipeline_layers.c — the stage split at layer boundaries
 * (pipeline_layers.h).
 *
 * The operators (cost >= 0) in node order are cut only after the last
 * operator of a repeated block (layer_classes.h); the pieces between two
 * such cuts are the units (the first holds what comes before the first
 * block end: the embedding and the first block; the last the head). A DP
 * over the units minimises the slowest stage, then, among the splits with
 * that slowest stage, the sum of squared stage costs, so the middle stages
 * get equal layer counts (and identical content, one MILP for all of them)
 * while the stages with the embedding or the head get fewer layers. The
 * node order is topological, so no activation edge goes backwards. More
 * stages than layer-aligned pieces: every operator is a unit and the split
 * is the bisection + greedy packing of the node order (the slowest stage
 * least; min/max layers 0).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shard/layer_classes.h"
#include "shard/pipeline/pipeline_layers.h"
#include "util/job.h"

/* Units in order into exactly p non-empty stages, the slowest least:
 * bisection on the cap T with a greedy packing (O(U) per step; the DP below
 * is O(p U^2), too slow when every operator is a unit). */
static int packs(const double *c, int U, double T)
{
	int k = 1;
	double s = 0;
	for (int i = 0; i < U; i++) {
		if (s + c[i] > T && s > 0) {
			k++;
			s = 0;
		}
		s += c[i];
	}
	return k;
}

static void greedy_split(const double *c, int U, int p, int *ustage)
{
	double lo = 0, hi = 0;
	for (int i = 0; i < U; i++) {
		hi += c[i];
		lo = c[i] > lo ? c[i] : lo;
	}
	for (int it = 0; it < 100 && hi > lo * (1 + 1e-12); it++) {
		double mid = 0.5 * (lo + hi);
		if (packs(c, U, mid) <= p)
			hi = mid;
		else
			lo = mid;
	}
	int k = 0;
	double s = 0;
	for (int i = 0; i < U; i++) {
		/* a new stage when the cap is passed, or when the units left are
		 * just enough for the stages left */
		if (i > 0 && k < p - 1 && ((s + c[i] > hi && s > 0) || U - i <= p - 1 - k)) {
			k++;
			s = 0;
		}
		ustage[i] = k;
		s += c[i];
	}
}

int pb_pipeline_layers_split(const pb_graph *g, const double *cost, int p, pb_pipe_split *out,
                             int *min_layers, int *max_layers, pb_error *err)
{
	pb_layer_classes lc;
	int rc = pb_layer_classes_find(g, &lc, err);
	if (rc)
		return rc;
	int n = g->n_nodes, U = 0, fine = 0;
	int *unit_of = malloc(((size_t)n + 1) * sizeof(int));
	double *ucost = calloc((size_t)n + 2, sizeof(double));
	int *ublocks = calloc((size_t)n + 2, sizeof(int));
	int *stage_of = malloc(((size_t)n + 1) * sizeof(int));
	double *best = NULL, *sq = NULL, *pre = NULL;
	int *from = NULL, *ustage = NULL;
	if (!unit_of || !ucost || !ublocks || !stage_of) {
		rc = pb_err(err, PB_ENOMEM, "pipeline: out of memory");
		goto done;
	}
	int last = -1, ops = 0;
	for (int v = 0; v < n; v++)
		if (cost[v] >= 0) {
			last = v;
			ops++;
		}
	if (lc.n_runs == 0 || ops < p) {
		rc = pb_err(err, PB_EINPUT, "pipeline: %d operators%s cannot make %d stages", ops,
		            lc.n_runs ? "" : " without repeated layers", p);
		goto done;
	}
again:
	U = 0;
	for (int v = 0; v < n; v++) {
		unit_of[v] = -1;
		if (cost[v] < 0)
			continue;
		unit_of[v] = U;
		ucost[U] += cost[v];
		ublocks[U] += lc.block_end[v];
		if ((lc.block_end[v] || fine) && v != last)
			U++;
	}
	U++;
	if (U < p) { /* more stages than layers: cut between any operators (node order) */
		memset(ucost, 0, ((size_t)n + 2) * sizeof(double));
		memset(ublocks, 0, ((size_t)n + 2) * sizeof(int));
		fine = 1;
		goto again;
	}
	ustage = malloc(((size_t)U + 1) * sizeof(int));
	if (fine) {
		if (!ustage) {
			rc = pb_err(err, PB_ENOMEM, "pipeline: out of memory");
			goto done;
		}
		greedy_split(ucost, U, p, ustage);
		*min_layers = *max_layers = 0;
		goto assign;
	}
	/* pre[i] = cost of units [0, i) */
	pre = calloc((size_t)U + 1, sizeof(double));
	best = malloc((size_t)(p + 1) * (U + 1) * sizeof(double));
	sq = malloc((size_t)(p + 1) * (U + 1) * sizeof(double));
	from = malloc((size_t)(p + 1) * (U + 1) * sizeof(int));
	if (!pre || !best || !sq || !from || !ustage) {
		rc = pb_err(err, PB_ENOMEM, "pipeline: out of memory");
		goto done;
	}
	for (int i = 0; i < U; i++)
		pre[i + 1] = pre[i] + ucost[i];
#define AT(a, j, i) a[(size_t)(j) * (U + 1) + (i)]
	/* pass 1: the smallest slowest stage T */
	for (int j = 0; j <= p; j++)
		for (int i = 0; i <= U; i++)
			AT(best, j, i) = INFINITY;
	AT(best, 0, 0) = 0;
	for (int j = 1; j <= p; j++) {
		pb_job_tick();
		for (int i = j; i <= U; i++)
			for (int k = j - 1; k < i; k++) {
				double c = pre[i] - pre[k];
				double m = AT(best, j - 1, k) > c ? AT(best, j - 1, k) : c;
				if (m < AT(best, j, i))
					AT(best, j, i) = m;
			}
	}
	double T = AT(best, p, U) * (1 + 1e-9) + 1e-300;
	/* pass 2: among the splits with stages <= T, the least sum of squares */
	for (int j = 0; j <= p; j++)
		for (int i = 0; i <= U; i++)
			AT(sq, j, i) = INFINITY;
	AT(sq, 0, 0) = 0;
	for (int j = 1; j <= p; j++) {
		pb_job_tick();
		for (int i = j; i <= U; i++)
			for (int k = j - 1; k < i; k++) {
				double c = pre[i] - pre[k];
				if (c > T || !isfinite(AT(sq, j - 1, k)))
					continue;
				double s = AT(sq, j - 1, k) + c * c;
				if (s < AT(sq, j, i)) {
					AT(sq, j, i) = s;
					AT(from, j, i) = k;
				}
			}
	}
	/* unit -> stage, walking back */
	*min_layers = n;
	*max_layers = 0;
	for (int j = p, i = U; j > 0; j--) {
		int k = AT(from, j, i), blocks = 0;
		for (int u = k; u < i; u++) {
			ustage[u] = j - 1;
			blocks += ublocks[u];
		}
		if (blocks < *min_layers)
			*min_layers = blocks;
		if (blocks > *max_layers)
			*max_layers = blocks;
		i = k;
	}
#undef AT
assign:
	for (int v = 0; v < n; v++)
		stage_of[v] = unit_of[v] >= 0 ? ustage[unit_of[v]] : -1;
	rc = pb_pipeline_stages_split_given(g, cost, p, stage_of, out, err);
done:
	free(unit_of);
	free(ucost);
	free(ublocks);
	free(stage_of);
	free(best);
	free(sq);
	free(from);
	free(pre);
	free(ustage);
	pb_layer_classes_free(&lc);
	return rc;
}
