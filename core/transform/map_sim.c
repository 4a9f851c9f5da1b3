/*
 * transform/map_sim.c — the mapping simulator: pipelined execution of backend aggregates over a
 * stream of inputs, with k-slot buffers between backends (map.h).
 *
 * Tasks: compute (i, A) for input i and aggregate A, on A's backend; and
 * transfer (i, e) for every aggregate edge e between different backends, on
 * the link (from backend -> to backend). Dependencies:
 *   - compute (i, A) after its inputs: transfer (i, e) for buffered edges,
 *     compute (i, P) for same-backend edges;
 *   - compute (i, A) after compute (i-1, A) (an aggregate handles inputs in
 *     order);
 *   - buffers: a buffered edge A -> C has k slots; the slot of input i is
 *     free once C has consumed input i-k, so compute (i, A) also waits for
 *     compute (i-k, C).
 * Schedule: discrete-event list scheduling. Tasks whose dependencies are
 * done wait in a heap keyed on their ready time; at each decision time the
 * ready tasks move into their resource's queue, and every idle resource
 * starts the queued task of the OLDEST input (then the lowest aggregate /
 * edge id), so later inputs never overtake earlier ones on a resource —
 * first-come-first-served by ready time produced Graham-style anomalies
 * where more buffers gave longer makespans. Decision times never decrease:
 * a task started at t finishes at >= t, so no arrival is ever missed.
 * O(T (log T + R)) for T = stream x (aggregates + buffered edges) tasks and
 * R resources (backends + backend pairs).
 */
#include "transform/map.h"

#include <stdlib.h>
#include <string.h>

typedef struct hitem {
	double key;
	int task;
} hitem;

typedef struct heap {
	hitem *a;
	int n;
} heap;

static int hless(const hitem *x, const hitem *y)
{
	return x->key < y->key || (x->key == y->key && x->task < y->task);
}

static void hpush(heap *h, double key, int task)
{
	int i = h->n++;
	h->a[i].key = key;
	h->a[i].task = task;
	while (i > 0) {
		int p = (i - 1) / 2;
		if (!hless(&h->a[i], &h->a[p]))
			break;
		hitem t = h->a[i];
		h->a[i] = h->a[p];
		h->a[p] = t;
		i = p;
	}
}

static hitem hpop(heap *h)
{
	hitem top = h->a[0];
	h->a[0] = h->a[--h->n];
	int i = 0;
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && hless(&h->a[l], &h->a[m]))
			m = l;
		if (r < h->n && hless(&h->a[r], &h->a[m]))
			m = r;
		if (m == i)
			break;
		hitem t = h->a[i];
		h->a[i] = h->a[m];
		h->a[m] = t;
		i = m;
	}
	return top;
}

typedef struct sim {
	const pb_map_result *r;
	int na, ne, per, stream, k;
	int *deps;
	double *ready, *start, *end;
	heap h;
} sim;

static void notify(sim *s, int task, double t)
{
	if (t > s->ready[task])
		s->ready[task] = t;
	if (--s->deps[task] == 0)
		hpush(&s->h, s->ready[task], task);
}

int pb_map_simulate(const pb_map_result *r, const pb_hetero *h, int buffers, int stream,
                    double *makespan, pb_map_event **events, int *n_events, pb_error *err)
{
	int na = r->n_agg, ne = r->n_edges, nb = h->n;
	int per = na + ne;
	size_t T = (size_t)per * (size_t)stream;
	sim s = {r, na, ne, per, stream, buffers};
	s.deps = calloc(T + 1, sizeof *s.deps);
	s.ready = calloc(T + 1, sizeof *s.ready);
	s.start = calloc(T + 1, sizeof *s.start);
	s.end = calloc(T + 1, sizeof *s.end);
	s.h.a = malloc((T + 1) * sizeof *s.h.a);
	int n_res = nb + nb * nb;
	double *res_free = calloc((size_t)n_res + 1, sizeof *res_free);
	heap *q = calloc((size_t)n_res + 1, sizeof *q); /* per-resource queues */
	/* Per aggregate: in/out edge lists (CSR). */
	int *in_start = calloc((size_t)na + 2, sizeof(int)),
	    *out_start = calloc((size_t)na + 2, sizeof(int));
	int *in_list = malloc(((size_t)ne + 1) * sizeof(int)),
	    *out_list = malloc(((size_t)ne + 1) * sizeof(int));
	int rc = PB_OK;
	int q_fail = !q;
	if (q) {
		/* Queue capacity = tasks that use the resource. */
		size_t *cap = calloc((size_t)n_res + 1, sizeof *cap);
		q_fail = !cap;
		for (int a = 0; cap && a < na; a++)
			cap[r->agg_backend[a]] += (size_t)stream;
		for (int e = 0; cap && e < ne; e++)
			if (r->edges[e].buffer)
				cap[nb + r->agg_backend[r->edges[e].from] * nb +
				    r->agg_backend[r->edges[e].to]] += (size_t)stream;
		for (int res = 0; cap && res < n_res; res++) {
			q[res].a = malloc((cap[res] + 1) * sizeof *q[res].a);
			q_fail |= !q[res].a;
		}
		free(cap);
	}
	if (!s.deps || !s.ready || !s.start || !s.end || !s.h.a || !res_free || q_fail ||
	    !in_start || !out_start || !in_list || !out_list) {
		rc = pb_err(err, PB_ENOMEM, "map: out of memory in the pipeline model");
		goto out;
	}
	for (int e = 0; e < ne; e++) {
		in_start[r->edges[e].to + 1]++;
		out_start[r->edges[e].from + 1]++;
	}
	for (int a = 0; a < na; a++) {
		in_start[a + 1] += in_start[a];
		out_start[a + 1] += out_start[a];
	}
	{
		int *fi = calloc((size_t)na + 1, sizeof(int)),
		    *fo = calloc((size_t)na + 1, sizeof(int));
		if (!fi || !fo) {
			free(fi);
			free(fo);
			rc = pb_err(err, PB_ENOMEM, "map: out of memory in the pipeline model");
			goto out;
		}
		for (int e = 0; e < ne; e++) {
			int t = r->edges[e].to, f = r->edges[e].from;
			in_list[in_start[t] + fi[t]++] = e;
			out_list[out_start[f] + fo[f]++] = e;
		}
		free(fi);
		free(fo);
	}
	/* Dependency counts. */
	for (int i = 0; i < stream; i++) {
		for (int a = 0; a < na; a++) {
			int d = in_start[a + 1] - in_start[a] + (i > 0);
			if (i >= buffers)
				for (int q = out_start[a]; q < out_start[a + 1]; q++)
					d += r->edges[out_list[q]].buffer;
			s.deps[(size_t)i * per + a] = d;
		}
		for (int e = 0; e < ne; e++)
			s.deps[(size_t)i * per + na + e] = r->edges[e].buffer ? 1 : -1;
	}
	for (size_t t = 0; t < T; t++)
		if (s.deps[t] == 0)
			hpush(&s.h, 0, (int)t);
	size_t done = 0, expected = 0;
	for (size_t t = 0; t < T; t++)
		expected += s.deps[t] >= 0;
	double span = 0, now = 0;
	for (;;) {
		while (s.h.n > 0 && s.h.a[0].key <= now) {
			hitem it = hpop(&s.h);
			int x = it.task % per;
			int res = x < na ? r->agg_backend[x]
			                 : nb + r->agg_backend[r->edges[x - na].from] * nb +
			                       r->agg_backend[r->edges[x - na].to];
			hpush(&q[res], (double)it.task, it.task);
		}
		int started = 0;
		for (int res = 0; res < n_res; res++) {
			if (q[res].n == 0 || res_free[res] > now)
				continue;
			hitem it = hpop(&q[res]);
			int t = it.task, i = t / per, x = t % per;
			double dur = x < na ? r->agg_time[x] : r->edges[x - na].time;
			s.start[t] = now;
			s.end[t] = now + dur;
			res_free[res] = s.end[t];
			if (s.end[t] > span)
				span = s.end[t];
			done++;
			started = 1;
			double f = s.end[t];
			size_t base = (size_t)i * per;
			if (x < na) {
				for (int k2 = out_start[x]; k2 < out_start[x + 1]; k2++) {
					int e = out_list[k2];
					if (r->edges[e].buffer)
						notify(&s, (int)(base + na + e), f);
					else
						notify(&s, (int)(base + r->edges[e].to), f);
				}
				if (i + 1 < stream)
					notify(&s, (int)(base + per + x), f);
				if (i + buffers < stream)
					for (int k2 = in_start[x]; k2 < in_start[x + 1]; k2++) {
						int e = in_list[k2];
						if (r->edges[e].buffer)
							notify(&s,
							       (int)((size_t)(i + buffers) * per +
							             r->edges[e].from),
							       f);
					}
			} else {
				notify(&s, (int)(base + r->edges[x - na].to), f);
			}
		}
		if (started)
			continue; /* zero-length tasks may have made more work ready now */
		double next = -1;
		if (s.h.n > 0)
			next = s.h.a[0].key;
		for (int res = 0; res < n_res; res++)
			if (q[res].n > 0 && (next < 0 || res_free[res] < next))
				next = res_free[res];
		if (next < 0)
			break;
		now = next > now ? next : now;
	}
	if (done != expected) {
		rc = pb_err(err, PB_EINTERNAL,
		            "map: the pipeline model scheduled %zu of %zu tasks (dependency cycle)",
		            done, expected);
		goto out;
	}
	*makespan = span;
	if (events) {
		pb_map_event *ev = malloc((expected + 1) * sizeof *ev);
		if (!ev) {
			rc = pb_err(err, PB_ENOMEM, "map: out of memory");
			goto out;
		}
		int k = 0;
		for (size_t t = 0; t < T; t++)
			if (s.deps[t] >= 0 || (t % per) < (size_t)na) {
				if ((t % per) >= (size_t)na && !r->edges[t % per - na].buffer)
					continue;
				ev[k].input = (int)(t / per);
				ev[k].task = (int)(t % per);
				ev[k].start = s.start[t];
				ev[k].end = s.end[t];
				k++;
			}
		*events = ev;
		*n_events = k;
	}
out:
	free(s.deps);
	free(s.ready);
	free(s.start);
	free(s.end);
	free(s.h.a);
	free(res_free);
	for (int res = 0; q && res < n_res; res++)
		free(q[res].a);
	free(q);
	free(in_start);
	free(out_start);
	free(in_list);
	free(out_list);
	return rc;
}
