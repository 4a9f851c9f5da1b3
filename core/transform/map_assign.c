/*
 * map_assign.c — transfer-aware backend choice (map.h, issue 18.5).
 *
 * The seed's rule gives every node the backend of best priority. On a
 * transformer that alternates operators the GPU prefers with ones the FPGA
 * prefers (Add, Relu) every boundary costs a transfer and a launch, and the
 * mapped model ping-pongs. Here the choice minimises a modelled serial time
 * over all assignments that respect support (priority > 0) and the forced
 * backends of Lua rules:
 *
 *   E(A) = sum_v t(v, A_v)
 *        + sum_{edges u->w, A_u != A_w} (lat(A_u, A_w) + bytes(u, w) / bw(A_u, A_w)
 *                                        + launch(A_w))
 *
 * t = the node's time on the backend (map.c's node model, speed included),
 * the pairwise term = the buffer transfer of that edge plus the launch of
 * the aggregate that must start after a backend change. E is what the
 * aggregation then models, up to aggregates that a cycle keeps apart.
 *
 * Minimisation is a descent from the priority assignment with two moves,
 * each exact on E: (1) one node to another backend; (2) a whole connected
 * same-backend region (an aggregate-to-be) to another backend that supports
 * all of it. Region moves are what removes a ping-pong of several nodes
 * whose single moves each add a boundary. Rounds repeat until no move
 * lowers E (at most 64 rounds). The caller (pb_map_run) then aggregates and
 * simulates, and keeps the priority plan if that one models faster.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "transform/map.h"
#include "util/job.h"

typedef struct {
	const pb_graph *g;
	const pb_hetero *h;
	const pb_map_result *r;
	const int *force;
	int n, nb;
	double *unary; /* n x nb, INFINITY = not allowed */
	int *adj_off;  /* CSR over both directions: n + 1 */
	int *adj_node; /* the other end */
	double *adj_bytes;
	unsigned char *adj_out; /* 1 when v -> other, 0 when other -> v */
	int *A;
} assign;

static double pair_cost(const assign *s, int from_b, int to_b, double bytes)
{
	if (from_b == to_b)
		return 0;
	const pb_hetero *h = s->h;
	int k = from_b * h->n + to_b;
	return h->xfer_lat[k] + bytes / h->xfer_bw[k] + h->b[to_b].launch;
}

/* E's edge terms at v with v on backend b (the rest of A fixed). */
static double local_edges(const assign *s, int v, int b)
{
	double e = 0;
	for (int k = s->adj_off[v]; k < s->adj_off[v + 1]; k++) {
		int w = s->adj_node[k];
		e += s->adj_out[k] ? pair_cost(s, b, s->A[w], s->adj_bytes[k])
		                   : pair_cost(s, s->A[w], b, s->adj_bytes[k]);
	}
	return e;
}

static int build(assign *s, pb_error *err)
{
	const pb_graph *g = s->g;
	int n = s->n, nb = s->nb;
	size_t sz = (size_t)n + 1;
	s->unary = malloc(sz * (size_t)nb * sizeof *s->unary);
	s->adj_off = calloc(sz + 1, sizeof *s->adj_off);
	s->A = malloc(sz * sizeof *s->A);
	if (!s->unary || !s->adj_off || !s->A)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	for (int v = 0; v < n; v++) {
		s->A[v] = s->r->backend[v];
		for (int b = 0; b < nb; b++) {
			int p = s->r->prio[v * nb + b];
			int allowed = p > 0 && !s->r->folded[v] &&
			              !(s->force && s->force[v] >= 0 && s->force[v] < nb &&
			                s->r->prio[v * nb + s->force[v]] > 0 && s->force[v] != b);
			s->unary[v * nb + b] = allowed ? pb_map_node_time(g, s->h, b, v) : INFINITY;
		}
	}
	int m = 0;
	for (int u = 0; u < n; u++) {
		if (s->r->folded[u])
			continue;
		for (int j = 0; j < g->nodes[u].n_succs; j++) {
			int w = g->nodes[u].succs[j];
			if (s->r->folded[w])
				continue;
			s->adj_off[u + 1]++;
			s->adj_off[w + 1]++;
			m++;
		}
	}
	for (int v = 0; v < n; v++)
		s->adj_off[v + 1] += s->adj_off[v];
	size_t mm = (size_t)2 * (size_t)m + 1;
	s->adj_node = malloc(mm * sizeof *s->adj_node);
	s->adj_bytes = malloc(mm * sizeof *s->adj_bytes);
	s->adj_out = malloc(mm);
	int *fill = malloc(sz * sizeof *fill);
	if (!s->adj_node || !s->adj_bytes || !s->adj_out || !fill) {
		free(fill);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	}
	memcpy(fill, s->adj_off, (size_t)n * sizeof *fill);
	for (int u = 0; u < n; u++) {
		if (s->r->folded[u])
			continue;
		for (int j = 0; j < g->nodes[u].n_succs; j++) {
			int w = g->nodes[u].succs[j];
			if (s->r->folded[w])
				continue;
			double by = pb_graph_edge_bytes(g, u, w);
			int a = fill[u]++, b = fill[w]++;
			s->adj_node[a] = w;
			s->adj_bytes[a] = by;
			s->adj_out[a] = 1;
			s->adj_node[b] = u;
			s->adj_bytes[b] = by;
			s->adj_out[b] = 0;
		}
	}
	free(fill);
	return PB_OK;
}

/* One pass of single-node moves; returns the number of moves made. */
static int node_moves(assign *s)
{
	int moved = 0;
	for (int v = 0; v < s->n; v++) {
		if ((v & 255) == 0)
			pb_job_tick();
		if (s->r->folded[v])
			continue;
		int cur = s->A[v], best = cur;
		double base = s->unary[v * s->nb + cur] + local_edges(s, v, cur), best_e = base;
		for (int b = 0; b < s->nb; b++) {
			if (b == cur || !isfinite(s->unary[v * s->nb + b]))
				continue;
			double e = s->unary[v * s->nb + b] + local_edges(s, v, b);
			if (e < best_e - 1e-12 * fabs(base) - 1e-15) {
				best = b;
				best_e = e;
			}
		}
		if (best != cur) {
			s->A[v] = best;
			moved++;
		}
	}
	return moved;
}

/* E's terms that involve the region queue[0..qt) (comp = root) when it
 * runs on backend b: its nodes' times and its boundary edges. */
static double region_cost(const assign *s, const int *comp, const int *queue, int qt, int root,
                          int b)
{
	double e = 0;
	for (int q = 0; q < qt && isfinite(e); q++) {
		int x = queue[q];
		e += s->unary[x * s->nb + b];
		for (int k = s->adj_off[x]; k < s->adj_off[x + 1]; k++) {
			int y = s->adj_node[k];
			if (comp[y] == root)
				continue;
			e += s->adj_out[k] ? pair_cost(s, b, s->A[y], s->adj_bytes[k])
			                   : pair_cost(s, s->A[y], b, s->adj_bytes[k]);
		}
	}
	return e;
}

/* One pass of region moves: connected same-backend regions (through graph
 * edges), each tried on every backend that allows all its nodes. */
static int region_moves(assign *s, int *comp, int *queue)
{
	int n = s->n, nb = s->nb, moved = 0;
	for (int v = 0; v < n; v++)
		comp[v] = -1;
	for (int root = 0; root < n; root++) {
		if ((root & 255) == 0)
			pb_job_tick();
		if (s->r->folded[root] || comp[root] >= 0)
			continue;
		int b0 = s->A[root], qt = 0;
		comp[root] = root;
		queue[qt++] = root;
		for (int qh = 0; qh < qt; qh++) {
			int x = queue[qh];
			for (int k = s->adj_off[x]; k < s->adj_off[x + 1]; k++) {
				int y = s->adj_node[k];
				if (comp[y] < 0 && s->A[y] == b0) {
					comp[y] = root;
					queue[qt++] = y;
				}
			}
		}
		/* The region on each backend: unary plus its boundary edges. */
		double base = region_cost(s, comp, queue, qt, root, b0), best_e = base;
		int best = b0;
		for (int b = 0; b < nb; b++) {
			if (b == b0)
				continue;
			double e = region_cost(s, comp, queue, qt, root, b);
			if (isfinite(e) && e < best_e) {
				best = b;
				best_e = e;
			}
		}
		if (best != b0 && best_e < base - 1e-12 * fabs(base) - 1e-15) {
			for (int q = 0; q < qt; q++)
				s->A[queue[q]] = best;
			moved++;
		}
	}
	return moved;
}

int pb_map_assign_transfer(const pb_graph *g, const pb_hetero *h, const int *force,
                           pb_map_result *r, pb_error *err)
{
	assign s;
	memset(&s, 0, sizeof s);
	s.g = g;
	s.h = h;
	s.r = r;
	s.force = force;
	s.n = g->n_nodes;
	s.nb = h->n;
	size_t sz = (size_t)s.n + 1;
	int *comp = malloc(sz * sizeof *comp), *queue = malloc(sz * sizeof *queue);
	int rc =
	    comp && queue ? build(&s, err) : pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	/* The priority choice always satisfies the bounds (a forced backend
	 * included); base the descent on it. */
	for (int round = 0; rc == PB_OK && round < 64; round++, pb_job_tick()) {
		int m = node_moves(&s);
		m += region_moves(&s, comp, queue);
		if (m == 0)
			break;
	}
	if (rc == PB_OK) {
		for (int v = 0; v < s.n; v++) {
			if (r->folded[v] || r->backend[v] == s.A[v])
				continue;
			r->backend[v] = s.A[v];
			r->node_time[v] = s.unary[v * s.nb + s.A[v]];
			r->moved++;
		}
	}
	free(comp);
	free(queue);
	free(s.unary);
	free(s.adj_off);
	free(s.adj_node);
	free(s.adj_bytes);
	free(s.adj_out);
	free(s.A);
	return rc;
}
