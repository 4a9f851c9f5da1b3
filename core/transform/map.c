/*
 * map.c — the mapping of one assignment (map.h): marking, aggregation,
 * transfers, the period and the simulation. The searches that choose the
 * assignment (map_throughput.c, map_assign.c) and the map command's driver
 * (map_run.c) sit above it.
 *
 * Marking: every node gets the priority of its op on every backend (0 =
 * unsupported); the chosen backend has the lowest priority number (ties:
 * the backend listed first). A node no backend supports is an error naming
 * the node, its op and the layout.
 *
 * Aggregation follows TVM's restriction-set idea (MergeCompilerRegions), not
 * ONNX Runtime's wave grouping: regions grow in topological order, a node
 * joins the regions of its same-backend parents, and a merge is refused
 * when a path leaves the merged set and comes back into it (through a node
 * of another backend or another region) — exactly the pairs TVM records in
 * its restriction sets. We compute that condition by a search instead of
 * keeping the sets: nodes after v are not yet assigned and only lead to
 * later nodes, so the search is confined to nodes 0..v-1. The search runs on
 * the contracted graph through per-aggregate out-edge lists: an edge enters
 * its source aggregate's list when its target is reached, lists are joined
 * with the aggregates and internal edges are dropped as they are met, so a
 * check costs the edges leaving the two aggregates and what they reach, not
 * their sizes (near-linear; bench/RESULTS.md). Merges happen only
 * through direct edges, so an aggregate never spans a node of another
 * backend. At the end igraph_is_dag checks the aggregate graph.
 *
 * Times: a node on backend b takes max(flops / (b.flops * speed),
 * bytes / b.bandwidth); an aggregate adds one launch of its backend.
 */
#include "transform/map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transform/folded.h"
#include "transform/quotient.h"
#include "util/job.h"

typedef struct astate {
	const pb_graph *g;
	const unsigned char *folded;
	int *cls, *next, *tail, *size; /* aggregate lists; cls = head node id */
	/* Out-edge lists per aggregate (by head): edge e ends at edst[e];
	 * an edge is added when its target is reached in topological order and
	 * dropped lazily once both ends share an aggregate. */
	int *ehead, *etail, *enext, *edst;
	int n_e;
	int *stamp, *queue;
	int mark;
} astate;

/* Walks aggregate a's out-edges, dropping those that became internal, and
 * queues the aggregates they reach. An edge to h0 or h1 is the merge itself
 * when a is one of the pair (skipped), else a way back: returns 1. */
static int scan_out(astate *s, int a, int h0, int h1, int *qt)
{
	int prev = -1, in_pair = a == h0 || a == h1;
	for (int e = s->ehead[a]; e >= 0; e = s->enext[e]) {
		int c = s->cls[s->edst[e]];
		if (c == a) { /* internal now: unlink */
			if (prev < 0)
				s->ehead[a] = s->enext[e];
			else
				s->enext[prev] = s->enext[e];
			if (s->etail[a] == e)
				s->etail[a] = prev;
			continue;
		}
		prev = e;
		if (c == h0 || c == h1) {
			if (in_pair)
				continue;
			return 1;
		}
		if (s->stamp[c] == s->mark)
			continue;
		s->stamp[c] = s->mark;
		s->queue[(*qt)++] = c;
	}
	return 0;
}

/* 1 if merging aggregates h0 and h1 (all holding nodes <= v, v among them)
 * would close a cycle: a path leaves the pair through an edge to another
 * aggregate and comes back. Only edges into nodes <= v are in the lists, so
 * the search is confined to nodes 0..v, as TVM's restriction sets are. The
 * search runs on the contracted graph (one vertex per aggregate). */
static int merge_cycles(astate *s, int h0, int h1)
{
	++s->mark;
	int qh = 0, qt = 0;
	/* Edges between h0 and h1 are the merge itself: not a way out. */
	for (int i = 0; i < 2; i++)
		scan_out(s, i ? h1 : h0, h0, h1, &qt);
	while (qh < qt)
		if (scan_out(s, s->queue[qh++], h0, h1, &qt))
			return 1;
	return 0;
}

/* Appends aggregate b's list to aggregate a's (both heads). */
static int join(astate *s, int a, int b)
{
	if (a == b)
		return a;
	if (s->size[a] < s->size[b]) {
		int t = a;
		a = b;
		b = t;
	}
	for (int y = b; y >= 0; y = s->next[y])
		s->cls[y] = a;
	s->next[s->tail[a]] = b;
	s->tail[a] = s->tail[b];
	s->size[a] += s->size[b];
	if (s->ehead[b] >= 0) {
		if (s->ehead[a] < 0)
			s->ehead[a] = s->ehead[b];
		else
			s->enext[s->etail[a]] = s->ehead[b];
		s->etail[a] = s->etail[b];
		s->ehead[b] = s->etail[b] = -1;
	}
	return a;
}

static int cmp_edge(const void *a, const void *b)
{
	const pb_map_edge *x = a, *y = b;
	if (x->from != y->from)
		return x->from - y->from;
	return x->to - y->to;
}

void pb_map_result_free(pb_map_result *r)
{
	if (!r)
		return;
	free(r->prio);
	free(r->folded);
	free(r->backend);
	free(r->node_time);
	free(r->agg);
	free(r->agg_backend);
	free(r->agg_first);
	free(r->agg_last);
	free(r->agg_size);
	free(r->agg_time);
	free(r->agg_compute);
	free(r->agg_macs);
	free(r->edges);
	free(r->events);
	free(r);
}

static int mark_backends(const pb_graph *g, const pb_hetero *h, const int *force, pb_map_result *r,
                         pb_error *err)
{
	int nb = h->n;
	for (int v = 0; v < g->n_nodes; v++) {
		if ((v & 255) == 0)
			pb_job_tick(); /* a workbench job stays live (util/job.h) */
		const pb_node *nd = &g->nodes[v];
		int best = -1, best_p = 0;
		for (int b = 0; b < nb; b++) {
			double speed = 1;
			int p = pb_hetero_support(h, b, nd->op, &speed);
			r->prio[v * nb + b] = p;
			if (p > 0 && (best < 0 || p < best_p)) {
				best = b;
				best_p = p;
			}
		}
		if (force && force[v] >= 0 && force[v] < nb && r->prio[v * nb + force[v]] > 0)
			best = force[v];
		if (r->folded[v]) {
			r->backend[v] = -1;
			r->node_time[v] = 0;
			continue;
		}
		if (best < 0)
			return pb_err(
			    err, PB_EINPUT,
			    "%s: node '%s' (op %s) is supported by no backend of %s (add it to "
			    "a backend's ops, or add \"*\")",
			    g->path, nd->name, nd->op, h->path);
		r->backend[v] = best;
		r->node_time[v] = pb_map_node_time(g, h, best, v);
	}
	return PB_OK;
}

static int aggregate(const pb_graph *g, pb_map_result *r, pb_error *err)
{
	int n = g->n_nodes;
	size_t sz = (size_t)n + 1;
	astate s = {g, r->folded};
	s.cls = malloc(sz * sizeof *s.cls);
	s.next = malloc(sz * sizeof *s.next);
	s.tail = malloc(sz * sizeof *s.tail);
	s.size = malloc(sz * sizeof *s.size);
	s.stamp = calloc(sz, sizeof *s.stamp);
	s.queue = malloc(sz * sizeof *s.queue);
	s.ehead = malloc(sz * sizeof *s.ehead);
	s.etail = malloc(sz * sizeof *s.etail);
	size_t ez = 1;
	for (int v = 0; v < n; v++)
		ez += (size_t)g->nodes[v].n_preds;
	s.enext = malloc(ez * sizeof *s.enext);
	s.edst = malloc(ez * sizeof *s.edst);
	int *heads = malloc(sz * sizeof *heads);
	int rc = PB_OK;
	if (!s.cls || !s.next || !s.tail || !s.size || !s.stamp || !s.queue || !s.ehead ||
	    !s.etail || !s.enext || !s.edst || !heads) {
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory while aggregating", g->path);
		goto out;
	}
	for (int v = 0; v < n; v++)
		s.ehead[v] = s.etail[v] = -1;
	for (int v = 0; v < n; v++) {
		s.cls[v] = v;
		s.next[v] = -1;
		s.tail[v] = v;
		s.size[v] = 1;
		if ((v & 255) == 0)
			pb_job_tick();
		const pb_node *nd = &g->nodes[v];
		if (r->folded[v])
			continue;
		/* v is reached: its in-edges join their source aggregates' lists. */
		for (int j = 0; j < nd->n_preds; j++) {
			int p = nd->preds[j];
			if (r->folded[p])
				continue;
			int a = s.cls[p], e = s.n_e++;
			s.edst[e] = v;
			s.enext[e] = -1;
			if (s.etail[a] < 0)
				s.ehead[a] = e;
			else
				s.enext[s.etail[a]] = e;
			s.etail[a] = e;
		}
		/* Candidate regions: the aggregates of same-backend parents, in
		 * id order (deterministic). */
		int cur = v;
		for (int j = 0; j < nd->n_preds; j++) {
			int p = nd->preds[j];
			if (r->folded[p] || r->backend[p] != r->backend[v])
				continue;
			int R = s.cls[p];
			if (R == s.cls[cur])
				continue;
			if (!merge_cycles(&s, s.cls[cur], R))
				cur = join(&s, s.cls[cur], R);
		}
	}
	/* Number aggregates by their first node. */
	int *id = heads;
	for (int v = 0; v < n; v++)
		id[v] = -1;
	r->n_agg = 0;
	for (int v = 0; v < n; v++) {
		int hd = s.cls[v];
		if (r->folded[v]) {
			r->agg[v] = -1;
			continue;
		}
		if (id[hd] < 0)
			id[hd] = r->n_agg++;
		r->agg[v] = id[hd];
	}
	int dag = 0;
	rc = pb_quotient_is_dag(g, r->agg, 1, &dag, err);
	if (rc == PB_OK && !dag)
		rc = pb_err(err, PB_EINTERNAL,
		            "%s: the backend aggregates form a cycle (igraph_is_dag)", g->path);
out:
	free(s.cls);
	free(s.next);
	free(s.tail);
	free(s.size);
	free(s.stamp);
	free(s.queue);
	free(s.ehead);
	free(s.etail);
	free(s.enext);
	free(s.edst);
	free(heads);
	return rc;
}

static int build_edges(const pb_graph *g, const pb_hetero *h, pb_map_result *r, pb_error *err)
{
	int cap = 16, ne = 0;
	pb_map_edge *e = malloc((size_t)cap * sizeof *e);
	if (!e)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	for (int u = 0; u < g->n_nodes; u++)
		for (int j = 0; j < g->nodes[u].n_succs; j++) {
			int w = g->nodes[u].succs[j];
			if (r->agg[u] < 0 || r->agg[w] < 0 || r->agg[u] == r->agg[w])
				continue;
			if (ne == cap) {
				cap *= 2;
				pb_map_edge *ng = realloc(e, (size_t)cap * sizeof *e);
				if (!ng) {
					free(e);
					return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
				}
				e = ng;
			}
			e[ne].from = r->agg[u];
			e[ne].to = r->agg[w];
			e[ne].bytes = pb_graph_edge_bytes(g, u, w);
			ne++;
		}
	qsort(e, (size_t)ne, sizeof *e, cmp_edge);
	int k = 0;
	for (int i = 0; i < ne; i++) {
		if (k > 0 && e[k - 1].from == e[i].from && e[k - 1].to == e[i].to) {
			e[k - 1].bytes += e[i].bytes;
			continue;
		}
		e[k++] = e[i];
	}
	for (int i = 0; i < k; i++) {
		int bf = r->agg_backend[e[i].from], bt = r->agg_backend[e[i].to];
		e[i].buffer = bf != bt;
		e[i].time =
		    bf != bt ? h->xfer_lat[bf * h->n + bt] + e[i].bytes / h->xfer_bw[bf * h->n + bt]
		             : 0;
	}
	r->edges = e;
	r->n_edges = k;
	return PB_OK;
}

double pb_map_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int pb_map_begin(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, pb_map_result **out,
                 pb_error *err)
{
	*out = NULL;
	if (o->buffers < 1 || o->stream < 1)
		return pb_err(err, PB_EUSAGE, "map: --buffers and --stream must be >= 1");
	int n = g->n_nodes, nb = h->n;
	size_t sz = (size_t)n + 1;
	pb_map_result *r = calloc(1, sizeof *r);
	if (!r)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	r->n_nodes = n;
	r->n_backends = nb;
	r->prio = calloc(sz * (size_t)nb, sizeof *r->prio);
	r->backend = malloc(sz * sizeof *r->backend);
	r->node_time = malloc(sz * sizeof *r->node_time);
	r->agg = malloc(sz * sizeof *r->agg);
	r->folded = calloc(sz, 1);
	int rc = PB_OK;
	if (!r->prio || !r->backend || !r->node_time || !r->agg || !r->folded) {
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
		goto fail;
	}
	if (!o->keep_constants)
		r->n_folded = pb_transform_folded(g, r->folded);
	if ((rc = mark_backends(g, h, o->force, r, err)))
		goto fail;
	r->transfer_aware = o->transfer_aware;
	r->objective = o->objective;
	r->single_best = -1;
	for (int b = 0; b < nb && b < PB_MAP_MAX_BACKENDS; b++)
		r->single_value[b] = INFINITY;
	*out = r;
	return PB_OK;
fail:
	pb_map_result_free(r);
	return rc;
}

int pb_map_finish(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, pb_map_result *r,
                  double t0, pb_error *err)
{
	int n = g->n_nodes, nb = h->n, rc;
	if ((rc = aggregate(g, r, err)))
		return rc;
	int na = r->n_agg;
	size_t az = (size_t)na + 1;
	r->agg_backend = malloc(az * sizeof(int));
	r->agg_first = malloc(az * sizeof(int));
	r->agg_last = malloc(az * sizeof(int));
	r->agg_size = calloc(az, sizeof(int));
	r->agg_time = calloc(az, sizeof(double));
	r->agg_compute = calloc(az, sizeof(double));
	r->agg_macs = calloc(az, sizeof(double));
	if (!r->agg_backend || !r->agg_first || !r->agg_last || !r->agg_size || !r->agg_time ||
	    !r->agg_compute || !r->agg_macs) {
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	}
	for (int a = 0; a < na; a++)
		r->agg_first[a] = -1;
	for (int v = 0; v < n; v++) {
		int a = r->agg[v];
		if (a < 0)
			continue;
		if (r->agg_first[a] < 0)
			r->agg_first[a] = v;
		r->agg_last[a] = v;
		r->agg_size[a]++;
		r->agg_backend[a] = r->backend[v];
		r->agg_compute[a] += r->node_time[v];
		r->agg_macs[a] += g->nodes[v].cost.macs;
	}
	for (int a = 0; a < na; a++) {
		r->agg_time[a] = h->b[r->agg_backend[a]].launch + r->agg_compute[a];
		r->backend_busy[r->agg_backend[a]] += r->agg_time[a];
	}
	r->launches_before = n - r->n_folded;
	r->launches_after = na;
	if ((rc = build_edges(g, h, r, err)))
		return rc;
	r->serial_input = 0;
	for (int a = 0; a < na; a++)
		r->serial_input += r->agg_time[a];
	for (int e = 0; e < r->n_edges; e++)
		r->serial_input += r->edges[e].time;
	r->buffers = o->buffers;
	r->stream = o->stream;
	r->serial_time = r->serial_input * o->stream;
	int bott = 0;
	for (int b = 1; b < nb; b++)
		if (r->backend_busy[b] > r->backend_busy[bott])
			bott = b;
	r->bottleneck = bott;
	pb_map_period(r, h);
	if (o->no_sim) {
		r->run_seconds = pb_map_now() - t0;
		return PB_OK;
	}
	pb_job_tick();
	for (int k = 1; k <= PB_MAP_SWEEP; k++, pb_job_tick())
		if ((rc = pb_map_simulate(r, h, k, o->stream, &r->sweep[k - 1], NULL, NULL, err)))
			return rc;
	if ((rc = pb_map_simulate(r, h, o->buffers, o->stream, &r->pipelined_time, &r->events,
	                          &r->n_events, err)))
		return rc;
	pb_job_tick();
	r->run_seconds = pb_map_now() - t0;
	return PB_OK;
}

void pb_map_period(pb_map_result *r, const pb_hetero *h)
{
	int nb = h->n;
	double best = 0;
	int res = 0;
	for (int b = 0; b < nb; b++)
		if (r->backend_busy[b] > best) {
			best = r->backend_busy[b];
			res = b;
		}
	double *link = calloc((size_t)nb * (size_t)nb + 1, sizeof *link);
	if (link) {
		for (int e = 0; e < r->n_edges; e++)
			if (r->edges[e].buffer)
				link[r->agg_backend[r->edges[e].from] * nb +
				     r->agg_backend[r->edges[e].to]] += r->edges[e].time;
		for (int k = 0; k < nb * nb; k++)
			if (link[k] > best) {
				best = link[k];
				res = nb + k;
			}
		free(link);
	}
	r->period = best;
	r->period_resource = res;
}

double pb_map_objective_value(const pb_map_result *r, int objective)
{
	return objective == PB_MAP_THROUGHPUT ? r->period : r->serial_input;
}

int pb_map_fixed(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, pb_map_result **out,
                 pb_error *err)
{
	double t0 = pb_map_now();
	pb_map_result *r = NULL;
	int rc = pb_map_begin(g, h, o, &r, err);
	if (rc == PB_OK && (rc = pb_map_finish(g, h, o, r, t0, err)) != PB_OK) {
		pb_map_result_free(r);
		r = NULL;
	}
	*out = r;
	return rc;
}
