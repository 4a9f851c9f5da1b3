/*
 * partition/chain/chain_problem.c — costs, evaluation and plans of the many-core chain partition
 * (chain_problem.h documents the time model).
 *
 * Per-layer data is reduced to prefix sums (MACs, parameter + output bytes)
 * and a predecessor list annotated with "the successor of this predecessor
 * that follows me", which lets the exact solver update in_bytes(a, b) in O(1)
 * per edge while it moves a segment's start (exact.c).
 */
#include "partition/chain/chain_problem.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pb_part_seg {
	int a, b; /* a = -1: empty slot */
	double in, own;
};

static double finite0(double v)
{
	return isfinite(v) && v > 0 ? v : 0.0;
}

/* Every figure of a plan is finite: the largest any group can reach (all layers on one
 * core) is checked once here, so a layout whose rates or weights overflow is refused,
 * naming its field, instead of reports that print "inf" and JSON that drops the value.
 * Bounds: compute <= total MACs / rate; in + own bytes <= all output bytes (a producer
 * counts once, inside or outside); storage <= all stored bytes + all output bytes. */
static int check_finite(const pb_part_problem *P, pb_error *err)
{
	const pb_manycore *h = &P->hw;
	const char *lay = h->path[0] ? h->path : h->name;
	double ob = 0;
	for (int i = 0; i < P->m; i++)
		ob += P->ob[i];
	double compute = P->pmacs[P->m] > 0 ? P->pmacs[P->m] / h->mac_rate : 0,
	       routing = ob > 0 ? ob / h->bandwidth : 0;
	double storage = P->pstore[P->m] + ob;
	if (!isfinite(P->pmacs[P->m]) || !isfinite(ob) || !isfinite(storage))
		return pb_err(err, PB_EINPUT,
		              "partition: the layers' MACs or bytes sum to infinity (%g MACs, %g "
		              "bytes stored, %g bytes out)",
		              P->pmacs[P->m], P->pstore[P->m], ob);
	if (!isfinite(compute))
		return pb_err(err, PB_EINPUT,
		              "%s: field 'mac_rate' = %g makes a group's compute time infinite (%g "
		              "MACs on one core)",
		              lay, h->mac_rate, P->pmacs[P->m]);
	if (!isfinite(routing) || !isfinite(compute + routing))
		return pb_err(
		    err, PB_EINPUT,
		    "%s: field 'bandwidth' = %g makes a group's routing time infinite (%g "
		    "bytes)",
		    lay, h->bandwidth, ob);
	/* |reward| <= objective + |b| + penalty */
	double base = fabs(h->reward_b) + h->penalty, ms = 1e3 * (compute + routing);
	if (!isfinite(base))
		return pb_err(
		    err, PB_EINPUT,
		    "%s: fields 'reward.b' = %g and 'reward.penalty' = %g make the reward "
		    "infinite",
		    lay, h->reward_b, h->penalty);
	if (h->reward_mode != PB_REWARD_WEIGHTED) {
		if (!isfinite(h->reward_a * ms + base))
			return pb_err(
			    err, PB_EINPUT,
			    "%s: field 'reward.a' = %g makes the reward infinite (reward = "
			    "-a x max(t) [ms] + b; max(t) reaches %g ms on one core)",
			    lay, h->reward_a, ms);
		return PB_OK;
	}
	const double term[3] = {h->w_compute * compute * 1e3,
	                        h->w_storage * storage / (1024.0 * 1024.0),
	                        h->w_routing * routing * 1e3};
	const double w[3] = {h->w_compute, h->w_storage, h->w_routing};
	static const char *const name[3] = {"compute", "storage", "routing"};
	for (int k = 0; k < 3; k++)
		if (!isfinite(term[k]))
			return pb_err(
			    err, PB_EINPUT,
			    "%s: field 'reward.weights.%s' = %g makes the weighted objective "
			    "infinite (the max %s of a group reaches %g %s)",
			    lay, name[k], w[k], name[k],
			    k == 1 ? storage / (1024.0 * 1024.0) : 1e3 * (k ? routing : compute),
			    k == 1 ? "MiB" : "ms");
	if (!isfinite(term[0] + term[1] + term[2] + base))
		return pb_err(
		    err, PB_EINPUT,
		    "%s: fields 'reward.weights' = {compute = %g, storage = %g, routing = "
		    "%g}: each term is finite but their sum, the weighted objective (and "
		    "the reward), is infinite",
		    lay, w[0], w[1], w[2]);
	return PB_OK;
}

static int build(int m, const double *macs, const double *params, const double *outb, int n_edges,
                 const int *from, const int *to, const pb_manycore *hw, pb_part_problem **out,
                 pb_error *err)
{
	*out = NULL;
	if (m < 1)
		return pb_err(err, PB_EINPUT, "partition: the model has no layers");
	pb_part_problem *P = calloc(1, sizeof *P);
	if (!P)
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	P->hw = *hw;
	P->m = m;
	P->n_nodes = m;
	P->n = hw->cores;
	size_t M = (size_t)m + 1;
	P->pmacs = calloc(M, sizeof *P->pmacs);
	P->pstore = calloc(M, sizeof *P->pstore);
	P->ob = calloc(M, sizeof *P->ob);
	P->min_succ = malloc(M * sizeof *P->min_succ);
	P->pred_off = calloc(M + 1, sizeof *P->pred_off);
	P->pred = malloc(((size_t)n_edges + 1) * sizeof *P->pred);
	P->pred_next = malloc(((size_t)n_edges + 1) * sizeof *P->pred_next);
	P->stamp = calloc(M, sizeof *P->stamp);
	int *succ_off = calloc(M + 1, sizeof *succ_off);
	int *succ = malloc(((size_t)n_edges + 1) * sizeof *succ);
	int *fill = calloc(M, sizeof *fill);
	if (!P->pmacs || !P->pstore || !P->ob || !P->min_succ || !P->pred_off || !P->pred ||
	    !P->pred_next || !P->stamp || !succ_off || !succ || !fill) {
		free(succ_off);
		free(succ);
		free(fill);
		pb_part_problem_free(P);
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	}
	for (int i = 0; i < m; i++) {
		P->pmacs[i + 1] = P->pmacs[i] + finite0(macs[i]);
		P->ob[i] = finite0(outb[i]);
		P->pstore[i + 1] = P->pstore[i] + finite0(params[i]) + P->ob[i];
		P->min_succ[i] = m;
	}
	P->total_macs = P->pmacs[m];
	P->lower_bound = P->total_macs / ((double)P->n * hw->mac_rate);
	/* CSR of successors and predecessors (edges sorted by construction
	 * order; sort successors per node so pred_next is well defined). */
	for (int e = 0; e < n_edges; e++) {
		succ_off[from[e] + 1]++;
		P->pred_off[to[e] + 1]++;
	}
	for (int i = 0; i < m; i++) {
		succ_off[i + 1] += succ_off[i];
		P->pred_off[i + 1] += P->pred_off[i];
	}
	for (int e = 0; e < n_edges; e++)
		succ[succ_off[from[e]] + fill[from[e]]++] = to[e];
	memset(fill, 0, M * sizeof *fill);
	for (int u = 0; u < m; u++) {
		int *s = succ + succ_off[u];
		int k = succ_off[u + 1] - succ_off[u];
		for (int i = 1; i < k; i++) /* insertion sort: lists are short */
			for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
				int t = s[j];
				s[j] = s[j - 1];
				s[j - 1] = t;
			}
		if (k > 0)
			P->min_succ[u] = s[0];
		for (int i = 0; i < k; i++) {
			int v = s[i];
			int slot = P->pred_off[v] + fill[v]++;
			P->pred[slot] = u;
			P->pred_next[slot] = i + 1 < k ? s[i + 1] : m;
		}
	}
	free(succ_off);
	free(succ);
	free(fill);
	int rc = check_finite(P, err);
	if (rc) {
		pb_part_problem_free(P);
		return rc;
	}
	*out = P;
	return PB_OK;
}

int pb_part_problem_synthetic(int m, const double *macs, const double *param_bytes,
                              const double *out_bytes, int n_edges, const int *from, const int *to,
                              const pb_manycore *hw, pb_part_problem **out, pb_error *err)
{
	for (int e = 0; e < n_edges; e++)
		if (from[e] < 0 || to[e] >= m || from[e] >= to[e])
			return pb_err(err, PB_EINPUT,
			              "partition: edge %d (%d -> %d) does not go forward", e,
			              from[e], to[e]);
	return build(m, macs, param_bytes, out_bytes, n_edges, from, to, hw, out, err);
}

int pb_part_problem_new(const pb_graph *g, const pb_manycore *hw, pb_part_problem **out,
                        pb_error *err)
{
	return pb_part_problem_new_timed(g, hw, NULL, out, err);
}

int pb_part_problem_new_timed(const pb_graph *g, const pb_manycore *hw, const double *node_time,
                              pb_part_problem **out, pb_error *err)
{
	pb_part_layers L = {0};
	int rc = pb_part_layers_new(g, &L, err);
	if (rc) {
		*out = NULL;
		return pb_err_prefix(err, "%s", g->path ? g->path : "model");
	}
	int m = L.m, ne = 0;
	if (m < 1 && L.n_nodes > 0) {
		pb_part_layers_free(&L);
		*out = NULL;
		return pb_err(err, PB_EINPUT,
		              "%s: partition: the model has no layers (its %d nodes are all "
		              "load-time constants)",
		              g->path ? g->path : "model", L.n_nodes);
	}
	for (int i = 0; i < L.n_nodes; i++)
		ne += g->nodes[i].n_succs;
	double *macs = calloc((size_t)m + 1, sizeof *macs);
	double *par = calloc((size_t)m + 1, sizeof *par);
	double *ob = calloc((size_t)m + 1, sizeof *ob);
	int *from = malloc(((size_t)ne + 1) * sizeof *from);
	int *to = malloc(((size_t)ne + 1) * sizeof *to);
	if (!macs || !par || !ob || !from || !to) {
		rc = pb_err(err, PB_ENOMEM, "partition: out of memory");
	} else {
		/* A layer's MACs, output bytes and edges are its node's; a folded
		 * node adds its bytes to its host's storage (the host holds the
		 * constant) and neither computes nor routes: its value is known
		 * before the first inference, as fuse and map assume. */
		int e = 0;
		for (int v = 0; v < L.n_nodes; v++) {
			const pb_node *nd = &g->nodes[v];
			int l = L.node_layer[v];
			if (l < 0)
				continue;
			if (L.layer_node[l] != v) {
				par[l] +=
				    finite0(nd->cost.param_bytes) + finite0(nd->cost.out_bytes);
				continue;
			}
			macs[l] = (node_time && isfinite(node_time[v]))
			              ? node_time[v] * hw->mac_rate
			              : nd->cost.macs;
			par[l] += finite0(nd->cost.param_bytes);
			ob[l] = nd->cost.out_bytes;
			for (int k = 0; k < nd->n_succs; k++) {
				int s = nd->succs[k];
				if (L.layer_node[L.node_layer[s]] != s)
					continue; /* into a folded node: no data moves */
				from[e] = l;
				to[e] = L.node_layer[s];
				e++;
			}
		}
		rc = build(m, macs, par, ob, e, from, to, hw, out, err);
		if (rc) {
			pb_err_prefix(err, "%s", g->path ? g->path : "model");
		} else {
			(*out)->n_nodes = L.n_nodes;
			(*out)->n_folded = L.n_folded;
			(*out)->layer_node = L.layer_node;
			(*out)->node_layer = L.node_layer;
			L.layer_node = L.node_layer = NULL;
		}
	}
	pb_part_layers_free(&L);
	free(macs);
	free(par);
	free(ob);
	free(from);
	free(to);
	return rc;
}

void pb_part_problem_free(pb_part_problem *P)
{
	if (!P)
		return;
	free(P->pmacs);
	free(P->pstore);
	free(P->ob);
	free(P->min_succ);
	free(P->pred_off);
	free(P->pred);
	free(P->pred_next);
	free(P->stamp);
	free(P->seg);
	free(P->cut);
	free(P->pin);
	free(P->layer_node);
	free(P->node_layer);
	json_decref(P->rules);
	free(P);
}

int pb_part_problem_cache(pb_part_problem *P, int log2_entries, pb_error *err)
{
	if (log2_entries < 4)
		log2_entries = 4;
	if (log2_entries > 24)
		log2_entries = 24;
	size_t cap = (size_t)1 << log2_entries;
	struct pb_part_seg *seg = malloc(cap * sizeof *seg);
	if (!seg)
		return pb_err(err, PB_ENOMEM, "partition: out of memory for the segment cache");
	for (size_t i = 0; i < cap; i++)
		seg[i].a = -1;
	free(P->seg);
	P->seg = seg;
	P->seg_mask = (unsigned)(cap - 1);
	return PB_OK;
}

/* in_bytes and own_bytes of [a, b), through the cache when it is on. */
static void seg_bytes(pb_part_problem *P, int a, int b, double *in, double *own)
{
	if (!P->seg) {
		*in = pb_part_in_bytes(P, a, b);
		*own = pb_part_own_bytes(P, a, b);
		return;
	}
	uint64_t h = ((uint64_t)(unsigned)a * 0x9e3779b97f4a7c15ULL) ^
	             ((uint64_t)(unsigned)b * 0xc2b2ae3d27d4eb4fULL);
	struct pb_part_seg *e = &P->seg[(unsigned)(h >> 40) & P->seg_mask];
	if (e->a == a && e->b == b) {
		P->seg_hits++;
	} else {
		P->seg_misses++;
		e->a = a;
		e->b = b;
		e->in = pb_part_in_bytes(P, a, b);
		e->own = pb_part_own_bytes(P, a, b);
	}
	*in = e->in;
	*own = e->own;
}

double pb_part_in_bytes(pb_part_problem *P, int a, int b)
{
	if (++P->stamp_gen == 0) {
		memset(P->stamp, 0, (size_t)P->m * sizeof *P->stamp);
		P->stamp_gen = 1;
	}
	double s = 0;
	for (int v = a; v < b; v++)
		for (int k = P->pred_off[v]; k < P->pred_off[v + 1]; k++) {
			int u = P->pred[k];
			if (u < a && P->stamp[u] != P->stamp_gen) {
				P->stamp[u] = P->stamp_gen;
				s += P->ob[u];
			}
		}
	return s;
}

double pb_part_own_bytes(const pb_part_problem *P, int a, int b)
{
	double s = 0;
	for (int u = a; u < b; u++)
		if (P->min_succ[u] < b)
			s += P->ob[u];
	return s;
}

void pb_part_eval_group(pb_part_problem *P, int a, int b, int cores, pb_part_group *out)
{
	memset(out, 0, sizeof *out);
	out->first_layer = a;
	out->layers = b - a;
	out->cores = cores;
	out->macs = P->pmacs[b] - P->pmacs[a];
	double in, own;
	seg_bytes(P, a, b, &in, &own);
	out->routing = (in + own) / P->hw.bandwidth;
	if (cores < 1) {
		out->compute = out->time = out->storage = INFINITY;
		return;
	}
	out->compute = out->macs / ((double)cores * P->hw.mac_rate);
	out->time = out->compute + out->routing;
	out->storage = (P->pstore[b] - P->pstore[a] + in) / cores;
}

int pb_part_furthest_end(pb_part_problem *P, int s, int emax, int cores, double T, double memory)
{
	pb_part_group g;
	pb_part_eval_group(P, s, s + 1, cores, &g);
	if (g.time > T || g.storage > memory)
		return -1;
	int lo = s + 1, hi = emax;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		pb_part_eval_group(P, s, mid, cores, &g);
		if (g.time <= T && g.storage <= memory)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int pb_part_groups(pb_part_problem *P, const int *ac, pb_part_group *groups)
{
	int ng = 0, layer = 0, first_core = 0;
	for (int i = 0; i < P->n; i++) {
		if (ac[i] == 0)
			continue;
		if (groups) {
			pb_part_eval_group(P, layer, layer + ac[i], i - first_core + 1,
			                   &groups[ng]);
			groups[ng].first_core = first_core;
		}
		ng++;
		layer += ac[i];
		first_core = i + 1;
	}
	return ng;
}

int pb_part_state_valid(const pb_part_problem *P, const int *ac, pb_error *err)
{
	long sum = 0;
	for (int i = 0; i < P->n; i++) {
		if (ac[i] < 0) {
			pb_err(err, PB_EINPUT, "arranged_core[%d] = %d is negative", i, ac[i]);
			return 0;
		}
		sum += ac[i];
	}
	if (sum != P->m) {
		pb_err(err, PB_EINPUT, "arranged_core sums to %ld layers, the model has %d", sum,
		       P->m);
		return 0;
	}
	if (ac[P->n - 1] == 0) {
		pb_err(err, PB_EINPUT,
		       "arranged_core ends with a zero: the last cores would belong to no group");
		return 0;
	}
	return 1;
}

double pb_part_reward(const pb_part_problem *P, const pb_part_eval *ev)
{
	const pb_manycore *h = &P->hw;
	double b = h->reward_b - (ev->over_memory ? h->penalty : 0.0);
	if (h->reward_mode == PB_REWARD_WEIGHTED)
		return -(h->w_compute * ev->max_compute * 1e3 +
		         h->w_storage * ev->max_storage / (1024.0 * 1024.0) +
		         h->w_routing * ev->max_routing * 1e3) +
		       b;
	return -h->reward_a * ev->max_time * 1e3 + b;
}

double pb_part_objective_value(const pb_part_problem *P, const pb_part_eval *ev)
{
	const pb_manycore *h = &P->hw;
	if (h->reward_mode == PB_REWARD_WEIGHTED)
		return h->w_compute * ev->max_compute * 1e3 +
		       h->w_storage * ev->max_storage / (1024.0 * 1024.0) +
		       h->w_routing * ev->max_routing * 1e3;
	return ev->max_time;
}

void pb_part_evaluate(pb_part_problem *P, const int *ac, pb_part_eval *ev, pb_part_group *groups)
{
	pb_part_group local[64];
	pb_part_group *gs = groups;
	pb_part_group *heap = NULL;
	if (!gs) {
		if (P->n <= 64) {
			gs = local;
		} else {
			heap = malloc((size_t)P->n * sizeof *heap);
			gs = heap;
		}
	}
	memset(ev, 0, sizeof *ev);
	ev->n_groups = pb_part_groups(P, ac, gs);
	ev->bottleneck = -1;
	for (int k = 0; k < ev->n_groups; k++) {
		const pb_part_group *g = &gs[k];
		if (ev->bottleneck < 0 || g->time > ev->max_time) {
			ev->max_time = g->time;
			ev->bottleneck = k;
		}
		ev->sum_sq_time += g->time * g->time;
		if (g->compute > ev->max_compute)
			ev->max_compute = g->compute;
		if (g->routing > ev->max_routing)
			ev->max_routing = g->routing;
		if (g->storage > ev->max_storage)
			ev->max_storage = g->storage;
	}
	ev->over_memory = ev->max_storage > P->hw.memory;
	ev->reward = pb_part_reward(P, ev);
	ev->objective = pb_part_objective_value(P, ev);
	if (P->cut || P->pin)
		for (int k = 0; k < ev->n_groups; k++)
			ev->violations += pb_part_group_violations(P, gs[k].first_layer,
			                                           gs[k].first_layer + gs[k].layers,
			                                           gs[k].first_core, gs[k].cores);
	free(heap);
}

void pb_part_arranged_macs(const pb_part_problem *P, const int *ac, double *macs)
{
	int layer = 0;
	for (int i = 0; i < P->n; i++) {
		macs[i] = P->pmacs[layer + ac[i]] - P->pmacs[layer];
		layer += ac[i];
	}
}

void pb_part_state_from_groups(int n_groups, const int *cores, const int *layers, int *ac)
{
	int c = 0;
	for (int g = 0; g < n_groups; g++) {
		for (int k = 0; k + 1 < cores[g]; k++)
			ac[c++] = 0;
		ac[c++] = layers[g];
	}
}

int pb_part_groups_of_state(int n, const int *ac, int *S, int *C)
{
	int k = 0, first = 0;
	S[0] = 0;
	for (int i = 0; i < n; i++) {
		if (ac[i] == 0)
			continue;
		C[k] = i - first + 1;
		S[k + 1] = S[k] + ac[i];
		k++;
		first = i + 1;
	}
	return k;
}

int pb_part_layer_node(const pb_part_problem *P, int l)
{
	return P->layer_node && l >= 0 && l < P->m ? P->layer_node[l] : l;
}

pb_plan *pb_part_to_plan(pb_part_problem *P, const int *ac, const char *method, double optimum)
{
	pb_part_group *gs = malloc((size_t)P->n * sizeof *gs);
	double *am = malloc((size_t)P->n * sizeof *am);
	pb_plan *p = pb_plan_new("partition", method, P->n_nodes);
	if (!gs || !am || !p) {
		free(gs);
		free(am);
		pb_plan_free(p);
		return NULL;
	}
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, gs);
	for (int k = 0; k < ev.n_groups; k++) {
		const pb_part_group *g = &gs[k];
		char label[64];
		if (g->cores == 1)
			snprintf(label, sizeof label, "core %d", g->first_core);
		else
			snprintf(label, sizeof label, "cores %d-%d", g->first_core,
			         g->first_core + g->cores - 1);
		pb_plan_group pg = {label,
		                    g->first_core,
		                    g->cores,
		                    g->time,
		                    g->compute,
		                    g->routing,
		                    g->storage,
		                    g->macs,
		                    pb_part_layer_node(P, g->first_layer),
		                    pb_part_layer_node(P, g->first_layer + g->layers - 1),
		                    k == ev.bottleneck,
		                    g->storage > P->hw.memory};
		pb_plan_add_group(p, &pg);
		if (!P->node_layer)
			for (int v = g->first_layer; v < g->first_layer + g->layers; v++)
				p->group[v] = k;
	}
	if (P->node_layer) { /* a folded node is in its host layer's group */
		int *lg = malloc(((size_t)P->m + 1) * sizeof *lg);
		if (!lg) {
			free(gs);
			free(am);
			pb_plan_free(p);
			return NULL;
		}
		for (int k = 0; k < ev.n_groups; k++)
			for (int l = gs[k].first_layer; l < gs[k].first_layer + gs[k].layers; l++)
				lg[l] = k;
		for (int v = 0; v < P->n_nodes; v++)
			p->group[v] = P->node_layer[v] >= 0 ? lg[P->node_layer[v]] : -1;
		free(lg);
	}
	pb_plan_set_metric(p, "max_time", ev.max_time);
	pb_plan_set_metric(p, "reward", ev.reward);
	pb_plan_set_metric(p, "objective", ev.objective);
	if (isfinite(optimum) && optimum > 0) {
		/* optimum and gap are of the layout's objective */
		pb_plan_set_metric(p, "optimum", optimum);
		pb_plan_set_metric(p, "gap", ev.objective / optimum - 1.0);
	}
	if (P->rules) {
		pb_plan_set_metric(p, "rule_violations", ev.violations);
		json_object_set(p->detail, "rules", P->rules);
	}
	pb_plan_set_metric(p, "lower_bound", P->lower_bound);
	pb_plan_set_metric(p, "max_storage", ev.max_storage);
	pb_plan_set_metric(p, "memory", P->hw.memory);
	pb_plan_set_metric(p, "max_compute", ev.max_compute);
	pb_plan_set_metric(p, "max_routing", ev.max_routing);
	pb_plan_set_metric(p, "cores", P->n);
	json_t *jac = json_array(), *jam = json_array();
	pb_part_arranged_macs(P, ac, am);
	for (int i = 0; i < P->n; i++) {
		json_array_append_new(jac, json_integer(ac[i]));
		json_array_append_new(jam, json_real(am[i]));
	}
	json_object_set_new(p->detail, "arranged_core", jac);
	json_object_set_new(p->detail, "arranged_macs", jam);
	json_object_set_new(p->detail, "layout", json_string(P->hw.name));
	json_object_set_new(p->detail, "cores", json_integer(P->n));
	json_object_set_new(p->detail, "layers", json_integer(P->m));
	json_object_set_new(p->detail, "folded_constants", json_integer(P->n_folded));
	json_object_set_new(
	    p->detail, "reward_mode",
	    json_string(P->hw.reward_mode == PB_REWARD_WEIGHTED ? "weighted" : "max_time"));
	free(gs);
	free(am);
	return p;
}

int pb_part_from_plan(const pb_part_problem *P, const pb_plan *plan, int *ac, pb_error *err)
{
	if (!plan)
		return pb_err(err, PB_EUSAGE, "no plan yet (run 'partition' first)");
	if (strcmp(plan->kind, "partition") != 0)
		return pb_err(err, PB_EUSAGE,
		              "the current plan is a '%s' plan; this needs a 'partition' plan "
		              "(run 'partition' first)",
		              plan->kind);
	const json_t *j = json_object_get(plan->detail, "arranged_core");
	if (!json_is_array(j))
		return pb_err(err, PB_EINPUT, "the partition plan has no detail.arranged_core");
	if ((int)json_array_size(j) != P->n)
		return pb_err(err, PB_EUSAGE,
		              "the plan was made for %d cores, the layout '%s' has %d",
		              (int)json_array_size(j), P->hw.name, P->n);
	long sum = 0;
	for (int i = 0; i < P->n; i++) {
		const json_t *v = json_array_get(j, (size_t)i);
		if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
		    json_integer_value(v) > INT32_MAX)
			return pb_err(err, PB_EINPUT, "detail.arranged_core[%d] is not an integer",
			              i);
		ac[i] = (int)json_integer_value(v);
		sum += ac[i];
	}
	/* A plan written when every node was a layer (chain_layers.h). */
	if (P->node_layer && P->n_folded > 0 && sum == P->n_nodes) {
		int ok = 1;
		for (int i = 0; i < P->n; i++)
			ok &= ac[i] >= 0;
		if (ok) {
			pb_part_layers L = {P->n_nodes, P->m, P->n_folded, P->layer_node,
			                    P->node_layer};
			int *old = malloc((size_t)P->n * sizeof *old);
			if (!old)
				return pb_err(err, PB_ENOMEM, "out of memory");
			memcpy(old, ac, (size_t)P->n * sizeof *old);
			pb_part_layers_convert(&L, P->n, old, ac);
			free(old);
		}
	}
	if (!pb_part_state_valid(P, ac, err))
		return pb_err_prefix(err, "plan");
	return PB_OK;
}

int pb_part_group_violations(const pb_part_problem *P, int a, int b, int core, int cores)
{
	int v = 0;
	if (P->cut) {
		if (a > 0 && P->cut[a] == PB_CUT_FORBID)
			v++;
		for (int p = a + 1; p < b; p++)
			v += P->cut[p] == PB_CUT_FORCE;
	}
	if (P->pin)
		for (int l = a; l < b; l++)
			v += P->pin[l] >= 0 && (P->pin[l] < core || P->pin[l] >= core + cores);
	return v;
}
