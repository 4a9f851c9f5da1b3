/*
 * shard/pipeline/pipeline_stages.c — stage split by key-operator intervals (GLPK MILP), the
 * exact DP for chains, micro-batches and schedules (pipeline_stages.h).
 *
 * Units inside the MILPs: costs in units of the largest node cost, bytes in
 * MB, so that both phases are well scaled.
 */
#include "shard/pipeline/pipeline_stages.h"

#include "partition/chain/chain_rules.h"
#include "util/job.h"

#include <glpk.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GLPK's branch-and-bound callback: a workbench job yields here. */
static void tick_cb(glp_tree *T, void *info)
{
	(void)T;
	(void)info;
	pb_job_tick();
}

static int is_key(const char *op)
{
	return !strcmp(op, "MatMul") || !strcmp(op, "Gemm") || !strcmp(op, "Conv") ||
	       !strcmp(op, "ConvTranspose") || !strcmp(op, "Einsum");
}

typedef struct pedge {
	int u, v;
	double bytes;
} pedge;

/* Activation edges between nodes of the problem (deduplicated per tensor). */
static int collect_edges(const pb_graph *g, const double *cost, pedge **out)
{
	int n = 0, cap = 64;
	pedge *e = malloc((size_t)cap * sizeof *e);
	if (!e)
		return -1;
	for (int v = 0; v < g->n_nodes; v++) {
		if (cost[v] < 0)
			continue;
		const pb_node *nd = &g->nodes[v];
		for (int i = 0; i < nd->n_inputs; i++) {
			int t = nd->inputs[i];
			if (t < 0)
				continue;
			int u = g->tensors[t].producer;
			if (u < 0 || cost[u] < 0 || u == v)
				continue;
			int dup = 0;
			for (int k = 0; k < i; k++)
				dup |= nd->inputs[k] == t;
			if (dup)
				continue;
			if (n == cap) {
				cap *= 2;
				pedge *ne = realloc(e, (size_t)cap * sizeof *ne);
				if (!ne) {
					free(e);
					return -1;
				}
				e = ne;
			}
			e[n++] = (pedge){u, v, pb_tensor_bytes(&g->tensors[t])};
		}
	}
	*out = e;
	return n;
}

int pb_pipeline_stages_is_chain(const pb_graph *g, const double *cost)
{
	pedge *e;
	int ne = collect_edges(g, cost, &e);
	if (ne < 0)
		return 0;
	int *in = calloc((size_t)g->n_nodes + 1, sizeof(int)),
	    *outd = calloc((size_t)g->n_nodes + 1, sizeof(int));
	int chain = in && outd;
	for (int k = 0; chain && k < ne; k++) {
		in[e[k].v]++;
		outd[e[k].u]++;
	}
	for (int v = 0; chain && v < g->n_nodes; v++)
		if (in[v] > 1 || outd[v] > 1)
			chain = 0;
	free(in);
	free(outd);
	free(e);
	return chain;
}

void pb_pipeline_stages_split_free(pb_pipe_split *s)
{
	if (!s)
		return;
	free(s->stage);
	free(s->stage_cost);
	s->stage = NULL;
	s->stage_cost = NULL;
}

static void finish_split(const pb_graph *g, const double *cost, const pedge *e, int ne,
                         pb_pipe_split *s)
{
	s->max_cost = 0;
	s->cross_bytes = 0;
	for (int k = 0; k < s->p; k++)
		s->stage_cost[k] = 0;
	for (int v = 0; v < g->n_nodes; v++)
		if (cost[v] >= 0 && s->stage[v] >= 0)
			s->stage_cost[s->stage[v]] += cost[v];
	for (int k = 0; k < s->p; k++)
		if (s->stage_cost[k] > s->max_cost)
			s->max_cost = s->stage_cost[k];
	for (int k = 0; k < ne; k++)
		s->cross_bytes += e[k].bytes * (s->stage[e[k].v] - s->stage[e[k].u]);
}

static int split_init(const pb_graph *g, int p, pb_pipe_split *s, pb_error *err)
{
	memset(s, 0, sizeof *s);
	s->p = p;
	s->stage = malloc((size_t)(g->n_nodes + 1) * sizeof(int));
	s->stage_cost = calloc((size_t)p, sizeof(double));
	if (!s->stage || !s->stage_cost) {
		pb_pipeline_stages_split_free(s);
		return pb_err(err, PB_ENOMEM, "pipeline: out of memory");
	}
	for (int v = 0; v < g->n_nodes; v++)
		s->stage[v] = -1;
	return PB_OK;
}

int pb_pipeline_stages_split_given(const pb_graph *g, const double *cost, int p,
                                   const int *stage_of, pb_pipe_split *out, pb_error *err)
{
	int rc = split_init(g, p, out, err);
	if (rc)
		return rc;
	for (int v = 0; v < g->n_nodes; v++) {
		out->stage[v] = cost[v] >= 0 ? stage_of[v] : -1;
		if (cost[v] >= 0 && (stage_of[v] < 0 || stage_of[v] >= p))
			rc = pb_err(err, PB_EUSAGE, "pipeline: node '%s' has no stage in 0..%d",
			            g->nodes[v].name, p - 1);
	}
	pedge *e = NULL;
	int ne = rc ? 0 : collect_edges(g, cost, &e);
	if (ne < 0)
		rc = pb_err(err, PB_ENOMEM, "pipeline: out of memory");
	for (int k = 0; rc == PB_OK && k < ne; k++)
		if (out->stage[e[k].u] > out->stage[e[k].v])
			rc = pb_err(
			    err, PB_EUSAGE,
			    "pipeline: the activation edge %s -> %s would go back from stage %d "
			    "to stage %d",
			    g->nodes[e[k].u].name, g->nodes[e[k].v].name, out->stage[e[k].u],
			    out->stage[e[k].v]);
	if (rc == PB_OK)
		finish_split(g, cost, e, ne, out);
	free(e);
	if (rc)
		pb_pipeline_stages_split_free(out);
	return rc;
}

/* Rules in the DP: stage k (0-based) may hold the nodes ord[j..i) (file
 * comment of pipeline_stages.h). */
static int seg_ok(const struct pb_part_rules *R, const int *ord, int n, int j, int i, int k)
{
	if (!R)
		return 1;
	if (j > 0 && R->cut[ord[j - 1] + 1] == PB_CUT_FORBID)
		return 0;
	if (i < n && R->cut[ord[i - 1] + 1] == PB_CUT_FORBID)
		return 0;
	for (int q = j; q < i; q++) {
		if (q + 1 < i && R->cut[ord[q] + 1] == PB_CUT_FORCE)
			return 0;
		if (R->pin[ord[q]] >= 0 && R->pin[ord[q]] != k)
			return 0;
	}
	return 1;
}

static int rules_check(const pb_graph *g, int p, const struct pb_part_rules *R, pb_error *err)
{
	if (!R)
		return PB_OK;
	if (R->m != g->n_nodes)
		return pb_err(err, PB_EINPUT,
		              "pipeline: the rules were made for %d nodes, the graph has %d", R->m,
		              g->n_nodes);
	for (int v = 0; v < g->n_nodes; v++)
		if (R->pin[v] >= p) {
			char effect[32];
			snprintf(effect, sizeof effect, "stage=%d", R->pin[v]);
			return pb_err(err, PB_EINPUT,
			              "rule '%s': pins node '%s' to stage %d, the pipeline has %d "
			              "stages (numbered from 0)",
			              pb_part_rules_name(R, effect), g->nodes[v].name, R->pin[v],
			              p);
		}
	return PB_OK;
}

int pb_pipeline_stages_split_dp(const pb_graph *g, const double *cost, int p, pb_pipe_split *out,
                                pb_error *err)
{
	return pb_pipeline_stages_split_dp_rules(g, cost, p, NULL, out, err);
}

int pb_pipeline_stages_split_dp_rules(const pb_graph *g, const double *cost, int p,
                                      const struct pb_part_rules *R, pb_pipe_split *out,
                                      pb_error *err)
{
	if (pb_part_rules_empty(R))
		R = NULL;
	if (rules_check(g, p, R, err))
		return err->code;
	if (p < 1)
		return pb_err(err, PB_EUSAGE, "pipeline: at least 1 stage");
	int rc = split_init(g, p, out, err);
	if (rc)
		return rc;
	int n = 0;
	int *pos = malloc((size_t)(g->n_nodes + 1) * sizeof(int)),
	    *ord = malloc((size_t)(g->n_nodes + 1) * sizeof(int));
	pedge *e = NULL;
	int ne = collect_edges(g, cost, &e);
	if (!pos || !ord || ne < 0) {
		free(pos);
		free(ord);
		free(e);
		pb_pipeline_stages_split_free(out);
		return pb_err(err, PB_ENOMEM, "pipeline: out of memory");
	}
	for (int v = 0; v < g->n_nodes; v++)
		if (cost[v] >= 0) {
			pos[v] = n;
			ord[n++] = v;
		}
	double *pre = calloc((size_t)n + 1, sizeof(double));
	double *cut = calloc((size_t)n + 2, sizeof(double)); /* bytes crossing before position j */
	double *bm = malloc((size_t)(p + 1) * (n + 1) * sizeof(double));
	double *bb = malloc((size_t)(p + 1) * (n + 1) * sizeof(double));
	int *arg = malloc((size_t)(p + 1) * (n + 1) * sizeof(int));
	if (!pre || !cut || !bm || !bb || !arg) {
		free(pre), free(cut), free(bm), free(bb), free(arg), free(pos), free(ord), free(e);
		pb_pipeline_stages_split_free(out);
		return pb_err(err, PB_ENOMEM, "pipeline: out of memory");
	}
	for (int i = 0; i < n; i++)
		pre[i + 1] = pre[i] + cost[ord[i]];
	for (int k = 0; k < ne; k++) {
		cut[pos[e[k].u] + 1] += e[k].bytes;
		cut[pos[e[k].v] + 1] -= e[k].bytes;
	}
	for (int j = 1; j <= n; j++)
		cut[j] += cut[j - 1];
		/* bm[k][i]: least slowest stage placing the first i nodes in k non-empty stages;
		 * bb[k][i]: least crossing bytes doing so with every stage <= the optimum */
#define IX(k, i) ((size_t)(k) * (n + 1) + (i))
	for (int k = 0; k <= p; k++)
		for (int i = 0; i <= n; i++) {
			bm[IX(k, i)] = INFINITY;
			bb[IX(k, i)] = INFINITY;
			arg[IX(k, i)] = -1;
		}
	/* pass 1: the smallest possible slowest stage T* (each stage non-empty) */
	bm[IX(0, 0)] = 0;
	for (int k = 1; k <= p; k++)
		for (int i = k; i <= n; i++, pb_job_tick())
			for (int j = k - 1; j < i; j++)
				if (isfinite(bm[IX(k - 1, j)]) && seg_ok(R, ord, n, j, i, k - 1)) {
					double m = fmax(bm[IX(k - 1, j)], pre[i] - pre[j]);
					if (m < bm[IX(k, i)])
						bm[IX(k, i)] = m;
				}
	int kk = p < n ? p : n;
	double T = bm[IX(kk, n)];
	if (!isfinite(T)) {
		free(pre), free(cut), free(bm), free(bb), free(arg), free(pos), free(ord), free(e);
		pb_pipeline_stages_split_free(out);
		return pb_err(err, PB_EINPUT,
		              "pipeline: no split of %s into %d stages obeys the Lua cut and stage "
		              "rules",
		              g->path, p);
	}
	double tol = 1e-12 * fmax(1, fabs(T));
	/* pass 2: least crossing bytes with every stage <= T* */
	bb[IX(0, 0)] = 0;
	for (int k = 1; k <= p; k++)
		for (int i = k; i <= n; i++, pb_job_tick())
			for (int j = k - 1; j < i; j++) {
				if (!isfinite(bb[IX(k - 1, j)]) || pre[i] - pre[j] > T + tol ||
				    !seg_ok(R, ord, n, j, i, k - 1))
					continue;
				double b = bb[IX(k - 1, j)] + (j > 0 ? cut[j] : 0);
				if (b < bb[IX(k, i)]) {
					bb[IX(k, i)] = b;
					arg[IX(k, i)] = j;
				}
			}
	int i = n;
	for (int k = kk; k >= 1; k--) {
		int j = arg[IX(k, i)];
		for (int q = j; q < i; q++)
			out->stage[ord[q]] = k - 1;
		i = j;
	}
#undef IX
	finish_split(g, cost, e, ne, out);
	out->optimal = 1;
	free(pre), free(cut), free(bm), free(bb), free(arg), free(pos), free(ord), free(e);
	return PB_OK;
}

int pb_pipeline_stages_split_rule_broken(const pb_graph *g, const double *cost, const int *stage,
                                         const int *before, const struct pb_part_rules *R,
                                         char *msg, size_t len)
{
	if (pb_part_rules_empty(R) || R->m != g->n_nodes)
		return 0;
	for (int v = 0; v < g->n_nodes; v++)
		if (cost[v] >= 0 && R->pin[v] >= 0 && stage[v] != R->pin[v] &&
		    (!before || before[v] == R->pin[v])) {
			char effect[32];
			snprintf(effect, sizeof effect, "stage=%d", R->pin[v]);
			snprintf(msg, len, "rule '%s' (%s): node '%s' would be in stage %d",
			         pb_part_rules_info_name(R->info, effect, g->nodes[v].name), effect,
			         g->nodes[v].name, stage[v]);
			return 1;
		}
	pedge *e = NULL;
	int ne = collect_edges(g, cost, &e), broken = 0;
	for (int q = 0; q < ne && !broken; q++) {
		int u = e[q].u, v = e[q].v, how = R->cut[u + 1];
		if (how == PB_CUT_FREE)
			continue;
		int forbid = how == PB_CUT_FORBID;
		if (forbid ? stage[v] == stage[u] : stage[v] > stage[u])
			continue;
		if (before && !(forbid ? before[v] == before[u] : before[v] > before[u]))
			continue; /* broken before too */
		const char *effect = forbid ? "cut=forbid" : "cut=force";
		snprintf(msg, len,
		         "rule '%s' (%s): node '%s' (stage %d) and its consumer '%s' (stage %d) "
		         "%s",
		         pb_part_rules_info_name(R->info, effect, g->nodes[u].name), effect,
		         g->nodes[u].name, stage[u], g->nodes[v].name, stage[v],
		         forbid ? "would be in different stages" : "would share a stage");
		broken = 1;
	}
	free(e);
	return broken;
}

/* Ranges [lo, hi] of every node from the key-operator intervals. */
static int stage_ranges(const pb_graph *g, const double *cost, int p, int slack, const pedge *e,
                        int ne, int *lo, int *hi, int *n_key)
{
	int n = g->n_nodes;
	int *keyid = malloc((size_t)(n + 1) * sizeof(int));
	if (!keyid)
		return -1;
	int K = 0;
	for (int v = 0; v < n; v++)
		keyid[v] = cost[v] >= 0 && cost[v] > 0 && is_key(g->nodes[v].op) ? K++ : -1;
	if (K == 0)
		for (int v = 0; v < n; v++)
			keyid[v] = cost[v] >= 0 ? K++ : -1;
	*n_key = K;
	double *kc = calloc((size_t)K + 1, sizeof(double));
	size_t W = ((size_t)K + 63) / 64;
	uint64_t *anc = calloc((size_t)n * W + 1, sizeof(uint64_t));
	uint64_t *des = calloc((size_t)n * W + 1, sizeof(uint64_t));
	if (!kc || !anc || !des) {
		free(keyid), free(kc), free(anc), free(des);
		return -1;
	}
	double C = 0;
	for (int v = 0; v < n; v++)
		if (keyid[v] >= 0) {
			kc[keyid[v]] = cost[v];
			C += cost[v];
		}
	/* edges are grouped by consumer in increasing order (collect_edges) */
	for (int k = 0; k < ne; k++) {
		uint64_t *a = &anc[(size_t)e[k].v * W], *b = &anc[(size_t)e[k].u * W];
		for (size_t w = 0; w < W; w++)
			a[w] |= b[w];
		if (keyid[e[k].u] >= 0)
			a[keyid[e[k].u] / 64] |= 1ull << (keyid[e[k].u] % 64);
	}
	for (int k = ne - 1; k >= 0; k--) {
		/* consumers come later than producers: walk producers in decreasing order */
		(void)k;
	}
	/* descendants: process edges sorted by producer descending */
	int *ordu = malloc((size_t)(ne + 1) * sizeof(int));
	if (!ordu) {
		free(keyid), free(kc), free(anc), free(des);
		return -1;
	}
	for (int k = 0; k < ne; k++)
		ordu[k] = k;
	/* counting sort by producer */
	int *cnt = calloc((size_t)n + 2, sizeof(int));
	int *tmp = malloc((size_t)(ne + 1) * sizeof(int));
	if (!cnt || !tmp) {
		free(keyid), free(kc), free(anc), free(des), free(ordu), free(cnt), free(tmp);
		return -1;
	}
	for (int k = 0; k < ne; k++)
		cnt[e[k].u + 1]++;
	for (int v = 0; v < n; v++)
		cnt[v + 1] += cnt[v];
	for (int k = 0; k < ne; k++)
		tmp[cnt[e[k].u]++] = k;
	for (int q = ne - 1; q >= 0; q--) {
		const pedge *x = &e[tmp[q]];
		uint64_t *a = &des[(size_t)x->u * W], *b = &des[(size_t)x->v * W];
		for (size_t w = 0; w < W; w++)
			a[w] |= b[w];
		if (keyid[x->v] >= 0)
			a[keyid[x->v] / 64] |= 1ull << (keyid[x->v] % 64);
	}
	double wdt = C > 0 ? C / p : 1;
	for (int v = 0; v < n; v++) {
		lo[v] = 0;
		hi[v] = p - 1;
		if (keyid[v] < 0)
			continue;
		double A = 0, D = 0;
		for (int k = 0; k < K; k++) {
			if (anc[(size_t)v * W + k / 64] >> (k % 64) & 1)
				A += kc[k];
			if (des[(size_t)v * W + k / 64] >> (k % 64) & 1)
				D += kc[k];
		}
		double endx = A + cost[v], startx = C - D - cost[v];
		int a = (int)ceil(endx / wdt - 1e-9) - 1, b = (int)floor(startx / wdt + 1e-9);
		if (a < 0)
			a = 0;
		if (b > p - 1)
			b = p - 1;
		if (a > p - 1)
			a = p - 1;
		if (b < 0)
			b = 0;
		if (a > b) {
			int t = a;
			a = b;
			b = t;
		}
		lo[v] = a - slack < 0 ? 0 : a - slack;
		hi[v] = b + slack > p - 1 ? p - 1 : b + slack;
	}
	/* other operators: union of the ranges of the key operators next to them */
	int *flo = malloc((size_t)(n + 1) * sizeof(int)),
	    *fhi = malloc((size_t)(n + 1) * sizeof(int));
	int *blo = malloc((size_t)(n + 1) * sizeof(int)),
	    *bhi = malloc((size_t)(n + 1) * sizeof(int));
	if (!flo || !fhi || !blo || !bhi) {
		free(keyid), free(kc), free(anc), free(des), free(ordu), free(cnt), free(tmp);
		free(flo), free(fhi), free(blo), free(bhi);
		return -1;
	}
	for (int v = 0; v < n; v++) {
		flo[v] = blo[v] = p;
		fhi[v] = bhi[v] = -1;
		if (keyid[v] >= 0) {
			flo[v] = blo[v] = lo[v];
			fhi[v] = bhi[v] = hi[v];
		}
	}
	for (int k = 0; k < ne; k++) {
		int u = e[k].u, v = e[k].v;
		if (keyid[v] >= 0)
			continue;
		if (flo[u] < flo[v])
			flo[v] = flo[u];
		if (fhi[u] > fhi[v])
			fhi[v] = fhi[u];
	}
	for (int q = ne - 1; q >= 0; q--) {
		int u = e[tmp[q]].u, v = e[tmp[q]].v;
		if (keyid[u] >= 0)
			continue;
		if (blo[v] < blo[u])
			blo[u] = blo[v];
		if (bhi[v] > bhi[u])
			bhi[u] = bhi[v];
	}
	for (int v = 0; v < n; v++) {
		if (keyid[v] >= 0 || cost[v] < 0)
			continue;
		int a = flo[v] < blo[v] ? flo[v] : blo[v];
		int b = fhi[v] > bhi[v] ? fhi[v] : bhi[v];
		lo[v] = a <= p - 1 ? a : 0;
		hi[v] = b >= 0 ? b : p - 1;
	}
	/* make the ranges consistent with the edge order (no edge backwards) */
	for (int k = 0; k < ne; k++)
		if (lo[e[k].v] < lo[e[k].u])
			lo[e[k].v] = lo[e[k].u];
	for (int q = ne - 1; q >= 0; q--) {
		int u = e[tmp[q]].u, v = e[tmp[q]].v;
		if (hi[u] > hi[v])
			hi[u] = hi[v];
	}
	for (int v = 0; v < n; v++)
		if (cost[v] >= 0 && lo[v] > hi[v]) {
			int t = lo[v];
			lo[v] = hi[v];
			hi[v] = t;
		}
	free(keyid), free(kc), free(anc), free(des), free(ordu), free(cnt), free(tmp);
	free(flo), free(fhi), free(blo), free(bhi);
	return 0;
}

/* Widens the key-operator ranges so the rules fit: a pinned node gets its
 * stage; a forbidden boundary u -> v the union of both ranges; then the
 * ranges are made consistent with the edges (a producer no later than its
 * consumers, one stage earlier across a forced boundary), widening a range
 * rather than emptying it. Returns 1 when two pins contradict each other. */
static int rules_ranges(const pb_graph *g, const double *cost, int p, const struct pb_part_rules *R,
                        const pedge *e, int ne, int *lo, int *hi)
{
	int n = g->n_nodes;
	for (int v = 0; v < n; v++)
		if (cost[v] >= 0 && R->pin[v] >= 0)
			lo[v] = hi[v] = R->pin[v];
	for (int q = 0; q < ne; q++)
		if (R->cut[e[q].u + 1] == PB_CUT_FORBID && R->pin[e[q].u] < 0 &&
		    R->pin[e[q].v] < 0) {
			int u = e[q].u, v = e[q].v;
			lo[u] = lo[v] = lo[u] < lo[v] ? lo[u] : lo[v];
			hi[u] = hi[v] = hi[u] > hi[v] ? hi[u] : hi[v];
		}
	/* edges are sorted by consumer: forward for lo, backward for hi, a few
	 * rounds (each widening only moves ranges apart) */
	for (int round = 0; round < 4; round++) {
		for (int q = ne - 1; q >= 0; q--) {
			int u = e[q].u, v = e[q].v, d = R->cut[u + 1] == PB_CUT_FORCE;
			if (hi[u] <= hi[v] - d)
				continue;
			if (R->pin[u] >= 0) { /* a pin stays: its consumer's range grows */
				hi[v] = hi[u] + d > p - 1 ? p - 1 : hi[u] + d;
				continue;
			}
			hi[u] = hi[v] - d < 0 ? 0 : hi[v] - d;
			if (lo[u] > hi[u])
				lo[u] = hi[u];
		}
		for (int q = 0; q < ne; q++) {
			int u = e[q].u, v = e[q].v, d = R->cut[u + 1] == PB_CUT_FORCE;
			if (lo[v] >= lo[u] + d)
				continue;
			if (R->pin[v] >= 0) { /* its producer's range grows */
				lo[u] = lo[v] - d < 0 ? 0 : lo[v] - d;
				if (hi[u] < lo[u])
					hi[u] = lo[u];
				continue;
			}
			lo[v] = lo[u] + d > p - 1 ? p - 1 : lo[u] + d;
			if (hi[v] < lo[v])
				hi[v] = lo[v];
		}
	}
	for (int v = 0; v < n; v++)
		if (cost[v] >= 0 && R->pin[v] >= 0 && (lo[v] != R->pin[v] || hi[v] != R->pin[v]))
			return 1;
	return 0;
}

/* Doubles the capacity of the MILP's triplet arrays; on failure the old
 * arrays stay valid (and are freed by the caller). */
static int grow_triplets(int **ia, int **ja, double **ar, long *cap)
{
	long nc = *cap * 2;
	int *a = realloc(*ia, (size_t)(nc + 1) * sizeof **ia);
	if (!a)
		return -1;
	*ia = a;
	int *b = realloc(*ja, (size_t)(nc + 1) * sizeof **ja);
	if (!b)
		return -1;
	*ja = b;
	double *c = realloc(*ar, (size_t)(nc + 1) * sizeof **ar);
	if (!c)
		return -1;
	*ar = c;
	*cap = nc;
	return 0;
}

int pb_pipeline_stages_split_milp(const pb_graph *g, const double *cost, int p, int slack,
                                  double time_limit, pb_pipe_split *out, pb_error *err)
{
	return pb_pipeline_stages_split_milp_rules(g, cost, p, slack, time_limit, NULL, out, err);
}

int pb_pipeline_stages_split_milp_rules(const pb_graph *g, const double *cost, int p, int slack,
                                        double time_limit, const struct pb_part_rules *R,
                                        pb_pipe_split *out, pb_error *err)
{
	if (p < 1)
		return pb_err(err, PB_EUSAGE, "pipeline: at least 1 stage");
	if (pb_part_rules_empty(R))
		R = NULL;
	if (rules_check(g, p, R, err))
		return err->code;
	int rc = split_init(g, p, out, err);
	if (rc)
		return rc;
	int n = g->n_nodes;
	pedge *e = NULL;
	int ne = collect_edges(g, cost, &e);
	int *lo = malloc((size_t)(n + 1) * sizeof(int)),
	    *hi = malloc((size_t)(n + 1) * sizeof(int));
	int *col0 = malloc((size_t)(n + 1) * sizeof(int));
	if (ne < 0 || !lo || !hi || !col0 ||
	    stage_ranges(g, cost, p, slack, e, ne, lo, hi, &out->n_key)) {
		free(e), free(lo), free(hi), free(col0);
		pb_pipeline_stages_split_free(out);
		return pb_err(err, PB_ENOMEM, "pipeline: out of memory");
	}
	if (R && rules_ranges(g, cost, p, R, e, ne, lo, hi)) {
		free(e), free(lo), free(hi), free(col0);
		pb_pipeline_stages_split_free(out);
		return pb_err(err, PB_EINPUT,
		              "pipeline: no split of %s into %d stages obeys the Lua stage pins "
		              "(a node pinned to an earlier stage than one it depends on?)",
		              g->path, p);
	}
	double cmax = 0, bsum = 0;
	for (int v = 0; v < n; v++)
		if (cost[v] > cmax)
			cmax = cost[v];
	if (cmax <= 0)
		cmax = 1;
	for (int k = 0; k < ne; k++)
		bsum += e[k].bytes;
	glp_term_out(GLP_OFF);
	glp_prob *P = glp_create_prob();
	int ncols = 0;
	for (int v = 0; v < n; v++) {
		col0[v] = 0;
		if (cost[v] < 0)
			continue;
		col0[v] = ncols + 1;
		ncols += hi[v] - lo[v] + 1;
	}
	int Tcol = ncols + 1;
	glp_add_cols(P, ncols + 1);
	for (int c = 1; c <= ncols; c++)
		glp_set_col_kind(P, c, GLP_BV);
	glp_set_col_bnds(P, Tcol, GLP_LO, 0, 0);
	long nzcap = (long)ncols * 4 + (long)ne * 8 + 16, nz = 0;
	int *ia = malloc((size_t)(nzcap + 1) * sizeof(int)),
	    *ja = malloc((size_t)(nzcap + 1) * sizeof(int));
	double *ar = malloc((size_t)(nzcap + 1) * sizeof(double));
	if (!ia || !ja || !ar) {
		free(ia), free(ja), free(ar), free(e), free(lo), free(hi), free(col0);
		glp_delete_prob(P);
		pb_pipeline_stages_split_free(out);
		return pb_err(err, PB_ENOMEM, "pipeline: out of memory");
	}
	int oom = 0;
#define NZ(r, c, v)                                                                                \
	do {                                                                                       \
		if (nz + 1 > nzcap && grow_triplets(&ia, &ja, &ar, &nzcap) != 0)                   \
			oom = 1;                                                                   \
		if (!oom) {                                                                        \
			nz++;                                                                      \
			ia[nz] = (r);                                                              \
			ja[nz] = (c);                                                              \
			ar[nz] = (v);                                                              \
		}                                                                                  \
	} while (0)
/* row r += stage(v) - stage(u), with stage(x) = sum_k k * y[x][k] */
#define STAGE_DIFF(r, u, v)                                                                        \
	do {                                                                                       \
		for (int k_ = lo[v]; k_ <= hi[v]; k_++)                                            \
			if (k_)                                                                    \
				NZ(r, col0[v] + k_ - lo[v], k_);                                   \
		for (int k_ = lo[u]; k_ <= hi[u]; k_++)                                            \
			if (k_)                                                                    \
				NZ(r, col0[u] + k_ - lo[u], -k_);                                  \
	} while (0)
	for (int v = 0; v < n; v++) {
		if (cost[v] < 0)
			continue;
		int r = glp_add_rows(P, 1);
		glp_set_row_bnds(P, r, GLP_FX, 1, 1);
		for (int k = lo[v]; k <= hi[v]; k++)
			NZ(r, col0[v] + k - lo[v], 1);
	}
	for (int q = 0; q < ne; q++) {
		int u = e[q].u, v = e[q].v;
		if (hi[u] <= lo[v])
			continue; /* always in order */
		int r = glp_add_rows(P, 1);
		glp_set_row_bnds(P, r, GLP_LO, 0, 0);
		STAGE_DIFF(r, u, v);
	}
	/* cut rules: stage(v) - stage(u) = 0 (forbid) or >= 1 (force) */
	for (int q = 0; R && q < ne; q++) {
		int u = e[q].u, v = e[q].v, how = R->cut[u + 1];
		if (how == PB_CUT_FREE)
			continue;
		int r = glp_add_rows(P, 1);
		if (how == PB_CUT_FORBID)
			glp_set_row_bnds(P, r, GLP_FX, 0, 0);
		else
			glp_set_row_bnds(P, r, GLP_LO, 1, 0);
		STAGE_DIFF(r, u, v);
	}
	int r0 = glp_add_rows(P, p);
	for (int k = 0; k < p; k++) {
		glp_set_row_bnds(P, r0 + k, GLP_UP, 0, 0);
		NZ(r0 + k, Tcol, -1);
	}
	for (int v = 0; v < n; v++)
		if (cost[v] > 0)
			for (int k = lo[v]; k <= hi[v]; k++)
				NZ(r0 + k, col0[v] + k - lo[v], cost[v] / cmax);
#undef STAGE_DIFF
#undef NZ
	if (oom) {
		free(ia), free(ja), free(ar), free(e), free(lo), free(hi), free(col0);
		glp_delete_prob(P);
		pb_pipeline_stages_split_free(out);
		return pb_err(err, PB_ENOMEM, "pipeline: out of memory");
	}
	glp_load_matrix(P, (int)nz, ia, ja, ar);
	free(ia), free(ja), free(ar);
	out->cols = ncols + 1;
	out->rows = glp_get_num_rows(P);
	glp_set_obj_dir(P, GLP_MIN);
	glp_set_obj_coef(P, Tcol, 1);
	glp_smcp sm;
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	glp_iocp io;
	glp_init_iocp(&io);
	io.msg_lev = GLP_MSG_OFF;
	io.presolve = GLP_ON;
	io.cb_func = tick_cb;
	if (time_limit > 0)
		io.tm_lim = (int)(time_limit * 1000);
	int ok = glp_intopt(P, &io);
	int st = glp_mip_status(P);
	if ((ok != 0 && ok != GLP_ETMLIM) || (st != GLP_OPT && st != GLP_FEAS)) {
		glp_delete_prob(P);
		free(e), free(lo), free(hi), free(col0);
		pb_pipeline_stages_split_free(out);
		if (R)
			return pb_err(
			    err, PB_EINPUT,
			    "pipeline: no split of %s into %d stages obeys the Lua cut and "
			    "stage rules",
			    g->path, p);
		return pb_err(err, PB_EINTERNAL,
		              "pipeline: the stage MILP has no solution (ranges too tight?)");
	}
	out->optimal = st == GLP_OPT && ok == 0;
	double T = glp_mip_obj_val(P);
	/* phase 2: slowest stage fixed, minimise the crossing bytes */
	glp_set_col_bnds(P, Tcol, GLP_DB, 0, T * (1 + 1e-9) + 1e-12);
	glp_set_obj_coef(P, Tcol, 0);
	double *coef = calloc((size_t)n + 1, sizeof(double));
	for (int q = 0; q < ne; q++) {
		coef[e[q].v] += e[q].bytes / 1e6;
		coef[e[q].u] -= e[q].bytes / 1e6;
	}
	for (int v = 0; v < n; v++)
		if (cost[v] >= 0)
			for (int k = lo[v]; k <= hi[v]; k++)
				glp_set_obj_coef(P, col0[v] + k - lo[v], coef[v] * k);
	free(coef);
	ok = glp_intopt(P, &io);
	st = glp_mip_status(P);
	if (st == GLP_OPT || st == GLP_FEAS) {
		out->optimal = out->optimal && st == GLP_OPT && ok == 0;
	}
	for (int v = 0; v < n; v++) {
		if (cost[v] < 0)
			continue;
		int best = lo[v];
		double bv = -1;
		for (int k = lo[v]; k <= hi[v]; k++) {
			double x = glp_mip_col_val(P, col0[v] + k - lo[v]);
			if (x > bv) {
				bv = x;
				best = k;
			}
		}
		out->stage[v] = best;
	}
	glp_delete_prob(P);
	finish_split(g, cost, e, ne, out);
	(void)bsum;
	free(e), free(lo), free(hi), free(col0);
	return PB_OK;
}

int pb_pipeline_stages_prefer(double pipe_time, int pipe_fits, double op_time, int op_fits)
{
	if (!isfinite(op_time))
		return 1;
	if (pipe_fits != op_fits)
		return pipe_fits;
	return pipe_time <= op_time;
}

int pb_pipeline_stages_microbatches(long batch, int p, double max_bubble)
{
	if (batch < 1)
		batch = 1;
	for (long m = 1; m <= batch; m++)
		if (batch % m == 0 && (double)(p - 1) / (double)(m + p - 1) <= max_bubble + 1e-12)
			return (int)m;
	return (int)batch;
}

json_t *pb_pipeline_stages_schedule(const char *kind, int p, int m, double tf, double tb)
{
	int onef = !strcmp(kind, "1f1b");
	int train = tb > 0;
	int per = train ? 2 * m : m;
	/* per stage: the order of (mb, is_backward) */
	int *ord_mb = malloc((size_t)p * per * sizeof(int)),
	    *ord_b = malloc((size_t)p * per * sizeof(int));
	double *fend = calloc((size_t)p * m + 1, sizeof(double)),
	       *bend = calloc((size_t)p * m + 1, sizeof(double));
	double *start = malloc((size_t)p * per * sizeof(double)),
	       *end = malloc((size_t)p * per * sizeof(double));
	json_t *j = json_object();
	if (!ord_mb || !ord_b || !fend || !bend || !start || !end) {
		free(ord_mb), free(ord_b), free(fend), free(bend), free(start), free(end);
		return j;
	}
	for (int s = 0; s < p; s++) {
		int q = 0;
		if (!train || !onef) {
			for (int i = 0; i < m; i++)
				ord_mb[s * per + q] = i, ord_b[s * per + q++] = 0;
			for (int i = 0; train && i < m; i++)
				ord_mb[s * per + q] = i, ord_b[s * per + q++] = 1;
		} else {
			int warm = p - s < m ? p - s : m, f = 0, b = 0;
			for (; f < warm; f++)
				ord_mb[s * per + q] = f, ord_b[s * per + q++] = 0;
			while (b < m) {
				ord_mb[s * per + q] = b++, ord_b[s * per + q++] = 1;
				if (f < m)
					ord_mb[s * per + q] = f++, ord_b[s * per + q++] = 0;
			}
		}
	}
	/* list scheduling in rounds until every slot has a time */
	int *next = calloc((size_t)p, sizeof(int));
	double *free_at = calloc((size_t)p, sizeof(double));
	char *fdone = calloc((size_t)p * m + 1, 1), *bdone = calloc((size_t)p * m + 1, 1);
	int remaining = p * per, guard = 0;
	while (remaining > 0 && guard++ < 4 * p * per + 8) {
		for (int s = 0; s < p; s++) {
			while (next[s] < per) {
				int k = s * per + next[s], i = ord_mb[k];
				double ready;
				if (!ord_b[k]) {
					if (s > 0 && !fdone[(s - 1) * m + i])
						break;
					ready = s > 0 ? fend[(s - 1) * m + i] : 0;
				} else {
					if (s < p - 1 ? !bdone[(s + 1) * m + i] : !fdone[s * m + i])
						break;
					ready = s < p - 1 ? bend[(s + 1) * m + i] : fend[s * m + i];
				}
				start[k] = fmax(ready, free_at[s]);
				end[k] = start[k] + (ord_b[k] ? tb : tf);
				free_at[s] = end[k];
				if (ord_b[k]) {
					bend[s * m + i] = end[k];
					bdone[s * m + i] = 1;
				} else {
					fend[s * m + i] = end[k];
					fdone[s * m + i] = 1;
				}
				next[s]++;
				remaining--;
			}
		}
	}
	double makespan = 0;
	json_t *stages = json_array();
	for (int s = 0; s < p; s++) {
		json_t *a = json_array();
		for (int q = 0; q < next[s]; q++) {
			int k = s * per + q;
			json_t *o = json_object();
			json_object_set_new(o, "mb", json_integer(ord_mb[k]));
			json_object_set_new(o, "pass", json_string(ord_b[k] ? "B" : "F"));
			json_object_set_new(o, "start", json_real(start[k]));
			json_object_set_new(o, "end", json_real(end[k]));
			json_array_append_new(a, o);
			if (end[k] > makespan)
				makespan = end[k];
		}
		json_array_append_new(stages, a);
	}
	json_object_set_new(j, "kind", json_string(onef ? "1f1b" : "gpipe"));
	json_object_set_new(j, "stages", stages);
	json_object_set_new(j, "makespan", json_real(makespan));
	free(ord_mb), free(ord_b), free(fend), free(bend), free(start), free(end);
	free(next), free(free_at), free(fdone), free(bdone);
	return j;
}

void pb_pipeline_stages_schedule_text(FILE *f, const json_t *sched, double unit, int max_units)
{
	double makespan = json_number_value(json_object_get(sched, "makespan"));
	if (!(unit > 0) || max_units < 1)
		return;
	int units = (int)lround(makespan / unit), cut = units > max_units;
	if (cut)
		units = max_units;
	char *row = malloc((size_t)units * 3 + 1);
	if (!row)
		return;
	size_t k;
	const json_t *st;
	json_array_foreach(json_object_get(sched, "stages"), k, st)
	{
		memset(row, ' ', (size_t)units * 3);
		for (int u = 0; u < units; u++)
			row[u * 3 + 1] = '.';
		size_t q;
		const json_t *x;
		json_array_foreach(st, q, x)
		{
			int a = (int)lround(json_number_value(json_object_get(x, "start")) / unit);
			int b = (int)lround(json_number_value(json_object_get(x, "end")) / unit);
			if (a >= units)
				continue;
			if (b > units)
				b = units;
			memset(row + a * 3, ' ', (size_t)(b - a) * 3);
			char lab[24];
			int n = snprintf(lab, sizeof lab, "%s%lld",
			                 json_string_value(json_object_get(x, "pass")),
			                 json_integer_value(json_object_get(x, "mb")));
			if (n > (b - a) * 3)
				n = (b - a) * 3;
			memcpy(row + a * 3, lab, (size_t)n);
		}
		row[units * 3] = '\0';
		fprintf(f, "  stage %-3zu|%s|%s\n", k, row, cut ? "..." : "");
	}
	free(row);
}
