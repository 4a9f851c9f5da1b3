/*
 * map_throughput.c — backend choice for the throughput objective (map.h,
 * issue 36.3): the assignment of least pipelined period.
 *
 * The period (pb_map_period): with the buffers of seed 003 every aggregate
 * and every transfer is a stage; in the steady state of a long stream with
 * enough buffer slots each resource — a backend running its aggregates one
 * after another, or a directed link carrying its transfers — is busy for
 * its load per input, and inputs leave at the rate of the busiest one:
 *
 *   period = max( max_b sum_{aggregates A on b} (launch_b + compute(A)),
 *                 max_{links x->y} sum_{buffered edges x->y} (lat + bytes / bw) )
 *
 * (the simulator's makespan of N inputs tends to N x period; map_sim.c).
 *
 * Search. When the allowed backends (supported, not excluded by a Lua
 * rule) give at most o->enum_limit assignments, every one is mapped and
 * the least period kept: the result is optimal (r->enumerated; the latency
 * objective enumerates the same way, pb_map_assign_exact). Otherwise a
 * descent on a surrogate of the period whose loads are
 *   backend b: sum_{v on b} t(v, b) + launch_b for every node on b with no
 *              same-backend predecessor (a region entry: an aggregate start);
 *   link x->y: sum_{edges u->w, u on x, w on y} (lat + bytes / bw),
 * minimising (max load, then total load) by single-node and whole-region
 * moves, started from: the priority rule, the transfer-aware (latency)
 * choice, every single backend that runs all nodes, and the best three
 * two-stage splits (nodes before a cut in topological order on backend X,
 * after it on Y, where they are allowed). Each start and each descent's end
 * is then mapped for real (aggregation, buffers) and the least period kept:
 * never worse than any of the starts, in particular than the best single
 * backend. Labelled best found with a bound (pb_map_period_label).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "transform/map.h"
#include "util/job.h"

#define N_SPLITS 31
#define KEEP_SPLITS 3

typedef struct {
	const pb_graph *g;
	const pb_hetero *h;
	const pb_map_result *r;
	int n, nb, R;
	double *unary; /* n x nb, INFINITY = not allowed */
	int *A;
	int *in_set, *seen; /* stamps */
	int mark_set, mark_seen;
} tp;

static int mapped(const tp *s, int v)
{
	return !s->r->folded[v];
}

static double link_time(const tp *s, int x, int y, double bytes)
{
	int k = x * s->nb + y;
	return s->h->xfer_lat[k] + bytes / s->h->xfer_bw[k];
}

/* Launch of v's region when v has no same-backend mapped predecessor. */
static double entry_launch(const tp *s, int v)
{
	const pb_node *nd = &s->g->nodes[v];
	for (int j = 0; j < nd->n_preds; j++) {
		int p = nd->preds[j];
		if (mapped(s, p) && s->A[p] == s->A[v])
			return 0;
	}
	return s->h->b[s->A[v]].launch;
}

static void full_loads(const tp *s, double *load)
{
	for (int k = 0; k < s->R; k++)
		load[k] = 0;
	for (int v = 0; v < s->n; v++) {
		if (!mapped(s, v))
			continue;
		int b = s->A[v];
		load[b] += s->unary[v * s->nb + b] + entry_launch(s, v);
		const pb_node *nd = &s->g->nodes[v];
		for (int j = 0; j < nd->n_succs; j++) {
			int w = nd->succs[j];
			if (mapped(s, w) && s->A[w] != b)
				load[s->nb + b * s->nb + s->A[w]] +=
				    link_time(s, b, s->A[w], pb_graph_edge_bytes(s->g, v, w));
		}
	}
}

/* Adds sign x every surrogate term that involves the nodes set[0..k)
 * (stamped in_set): their times, the entry launches of them and of their
 * successors, the links of their edges (each term once). */
static void set_terms(tp *s, const int *set, int k, double sign, double *load)
{
	++s->mark_seen;
	for (int i = 0; i < k; i++) {
		int x = set[i];
		int b = s->A[x];
		load[b] += sign * s->unary[x * s->nb + b];
		const pb_node *nd = &s->g->nodes[x];
		if (s->seen[x] != s->mark_seen) {
			s->seen[x] = s->mark_seen;
			load[b] += sign * entry_launch(s, x);
		}
		for (int j = 0; j < nd->n_succs; j++) {
			int w = nd->succs[j];
			if (!mapped(s, w))
				continue;
			if (s->A[w] != b)
				load[s->nb + b * s->nb + s->A[w]] +=
				    sign *
				    link_time(s, b, s->A[w], pb_graph_edge_bytes(s->g, x, w));
			if (s->seen[w] != s->mark_seen) {
				s->seen[w] = s->mark_seen;
				load[s->A[w]] += sign * entry_launch(s, w);
			}
		}
		for (int j = 0; j < nd->n_preds; j++) {
			int p = nd->preds[j];
			if (!mapped(s, p) || s->in_set[p] == s->mark_set || s->A[p] == b)
				continue;
			load[s->nb + s->A[p] * s->nb + b] +=
			    sign * link_time(s, s->A[p], b, pb_graph_edge_bytes(s->g, p, x));
		}
	}
}

static void key_of(const tp *s, const double *load, double *mx, double *sum)
{
	*mx = 0;
	*sum = 0;
	for (int k = 0; k < s->R; k++) {
		*mx = fmax(*mx, load[k]);
		*sum += load[k];
	}
}

static int better(double m1, double s1, double m0, double s0)
{
	double eps = 1e-12 * fabs(m0) + 1e-18;
	if (m1 < m0 - eps)
		return 1;
	return m1 <= m0 + eps && s1 < s0 - 1e-12 * fabs(s0) - 1e-18;
}

/* Moves the nodes set[0..k) (all on one backend) to the backend among the
 * allowed ones that lowers the key most; 1 if moved. */
static int try_move(tp *s, const int *set, int k, double *load, double *tmp)
{
	++s->mark_set;
	for (int i = 0; i < k; i++)
		s->in_set[set[i]] = s->mark_set;
	int b0 = s->A[set[0]], best = b0;
	double m0, s0, bm, bs;
	key_of(s, load, &m0, &s0);
	bm = m0;
	bs = s0;
	for (int c = 0; c < s->nb; c++) {
		if (c == b0)
			continue;
		int ok = 1;
		for (int i = 0; i < k && ok; i++)
			ok = isfinite(s->unary[set[i] * s->nb + c]);
		if (!ok)
			continue;
		memcpy(tmp, load, (size_t)s->R * sizeof *tmp);
		set_terms(s, set, k, -1, tmp);
		for (int i = 0; i < k; i++)
			s->A[set[i]] = c;
		set_terms(s, set, k, 1, tmp);
		for (int i = 0; i < k; i++)
			s->A[set[i]] = b0;
		double m1, s1;
		key_of(s, tmp, &m1, &s1);
		if (better(m1, s1, bm, bs)) {
			best = c;
			bm = m1;
			bs = s1;
		}
	}
	if (best == b0)
		return 0;
	set_terms(s, set, k, -1, load);
	for (int i = 0; i < k; i++)
		s->A[set[i]] = best;
	set_terms(s, set, k, 1, load);
	return 1;
}

/* Descent from s->A: node moves and region moves until none lowers the
 * surrogate key (at most 64 rounds). */
static void descend(tp *s, double *load, double *tmp, int *comp, int *queue)
{
	for (int round = 0; round < 64; round++, pb_job_tick()) {
		int moved = 0;
		full_loads(s, load);
		for (int v = 0; v < s->n; v++) {
			if ((v & 255) == 0)
				pb_job_tick();
			if (mapped(s, v))
				moved += try_move(s, &v, 1, load, tmp);
		}
		for (int v = 0; v < s->n; v++)
			comp[v] = -1;
		for (int root = 0; root < s->n; root++) {
			if (!mapped(s, root) || comp[root] >= 0)
				continue;
			int b0 = s->A[root], qt = 0;
			comp[root] = root;
			queue[qt++] = root;
			for (int qh = 0; qh < qt; qh++) {
				const pb_node *nd = &s->g->nodes[queue[qh]];
				for (int d = 0; d < 2; d++) {
					const int *nb = d ? nd->preds : nd->succs;
					int cnt = d ? nd->n_preds : nd->n_succs;
					for (int j = 0; j < cnt; j++) {
						int y = nb[j];
						if (mapped(s, y) && comp[y] < 0 && s->A[y] == b0) {
							comp[y] = root;
							queue[qt++] = y;
						}
					}
				}
			}
			if (qt > 1)
				moved += try_move(s, queue, qt, load, tmp);
		}
		if (!moved)
			break;
	}
}

/* The objective's real figure for assignment A (mapped, aggregated,
 * buffered): the period, or the serial time per input. */
static int real_period(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, const int *A,
                       double *period, pb_error *err)
{
	pb_map_opts e = *o;
	e.force = A;
	e.transfer_aware = 0;
	e.objective = PB_MAP_LATENCY;
	e.no_sim = 1;
	pb_map_result *r = NULL;
	int rc = pb_map_fixed(g, h, &e, &r, err);
	if (rc == PB_OK)
		*period = pb_map_objective_value(r, o->objective);
	pb_map_result_free(r);
	return rc;
}

typedef struct {
	int *best;
	double best_p;
	int count;
} keep;

static int consider(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, const int *A,
                    int n, keep *k, pb_error *err)
{
	double p;
	int rc = real_period(g, h, o, A, &p, err);
	if (rc)
		return rc;
	k->count++;
	if (p < k->best_p) {
		k->best_p = p;
		memcpy(k->best, A, (size_t)n * sizeof *A);
	}
	return PB_OK;
}

static int enumerate(tp *s, const pb_map_opts *o, keep *k, pb_error *err)
{
	int n = s->n, nb = s->nb;
	int *A = s->A;
	for (int v = 0; v < n; v++) {
		if (!mapped(s, v)) {
			A[v] = -1;
			continue;
		}
		A[v] = 0;
		while (!isfinite(s->unary[v * nb + A[v]]))
			A[v]++;
	}
	for (;;) {
		int rc = consider(s->g, s->h, o, A, n, k, err);
		if (rc)
			return rc;
		if ((k->count & 63) == 0)
			pb_job_tick();
		int v = 0;
		for (; v < n; v++) {
			if (!mapped(s, v))
				continue;
			int b = A[v] + 1;
			while (b < nb && !isfinite(s->unary[v * nb + b]))
				b++;
			if (b < nb) {
				A[v] = b;
				break;
			}
			b = 0;
			while (!isfinite(s->unary[v * nb + b]))
				b++;
			A[v] = b;
		}
		if (v == n)
			return PB_OK;
	}
}

static int search(tp *s, const pb_map_opts *o, pb_map_result *r, keep *k, pb_error *err)
{
	int n = s->n, nb = s->nb;
	size_t sz = (size_t)n + 1;
	int *prio = malloc(sz * sizeof *prio), *lat = malloc(sz * sizeof *lat);
	int *comp = malloc(sz * sizeof *comp), *queue = malloc(sz * sizeof *queue);
	double *load = malloc((size_t)s->R * sizeof *load),
	       *tmp = malloc((size_t)s->R * sizeof *tmp);
	double *save_t = malloc(sz * sizeof *save_t);
	int n_seeds = 2 + nb + KEEP_SPLITS;
	int *seeds = malloc((size_t)n_seeds * sz * sizeof *seeds);
	double split_m[KEEP_SPLITS], split_s[KEEP_SPLITS];
	int n_split = 0, rc = PB_OK;
	if (!prio || !lat || !comp || !queue || !load || !tmp || !save_t || !seeds) {
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory", s->g->path);
		goto out;
	}
	memcpy(prio, r->backend, (size_t)n * sizeof *prio);
	/* The transfer-aware (latency) choice, from the priority one. */
	memcpy(save_t, r->node_time, (size_t)n * sizeof *save_t);
	int saved_moved = r->moved;
	if ((rc = pb_map_assign_transfer(s->g, s->h, o->force, r, err)))
		goto out;
	memcpy(lat, r->backend, (size_t)n * sizeof *lat);
	memcpy(r->backend, prio, (size_t)n * sizeof *prio);
	memcpy(r->node_time, save_t, (size_t)n * sizeof *save_t);
	r->moved = saved_moved;
	int ns = 0;
	memcpy(seeds, prio, (size_t)n * sizeof *seeds);
	memcpy(seeds + sz, lat, (size_t)n * sizeof *seeds);
	ns = 2;
	for (int b = 0; b < nb; b++) {
		int ok = 1;
		for (int v = 0; v < n && ok; v++)
			ok = !mapped(s, v) || isfinite(s->unary[v * nb + b]);
		if (!ok)
			continue;
		int *A = seeds + (size_t)ns++ * sz;
		for (int v = 0; v < n; v++)
			A[v] = mapped(s, v) ? b : -1;
	}
	/* Two-stage splits: the best KEEP_SPLITS by the surrogate. */
	int fixed = ns;
	for (int i = 1; i <= N_SPLITS; i++) {
		int cut = (int)((long long)n * i / (N_SPLITS + 1));
		for (int x = 0; x < nb; x++)
			for (int y = 0; y < nb; y++) {
				if (x == y)
					continue;
				for (int v = 0; v < n; v++) {
					int b = prio[v];
					if (mapped(s, v)) {
						if (v < cut && isfinite(s->unary[v * nb + x]))
							b = x;
						else if (v >= cut && isfinite(s->unary[v * nb + y]))
							b = y;
					}
					s->A[v] = b;
				}
				double m, su;
				full_loads(s, load);
				key_of(s, load, &m, &su);
				int pos = n_split;
				while (pos > 0 && better(m, su, split_m[pos - 1], split_s[pos - 1]))
					pos--;
				if (pos >= KEEP_SPLITS)
					continue;
				int last = n_split < KEEP_SPLITS ? n_split++ : KEEP_SPLITS - 1;
				for (int q = last; q > pos; q--) {
					split_m[q] = split_m[q - 1];
					split_s[q] = split_s[q - 1];
					memcpy(seeds + (size_t)(fixed + q) * sz,
					       seeds + (size_t)(fixed + q - 1) * sz,
					       (size_t)n * sizeof *seeds);
				}
				split_m[pos] = m;
				split_s[pos] = su;
				memcpy(seeds + (size_t)(fixed + pos) * sz, s->A,
				       (size_t)n * sizeof *seeds);
			}
		pb_job_tick();
	}
	ns = fixed + n_split;
	for (int i = 0; i < ns && rc == PB_OK; i++) {
		int *A = seeds + (size_t)i * sz;
		if ((rc = consider(s->g, s->h, o, A, n, k, err)))
			break;
		memcpy(s->A, A, (size_t)n * sizeof *A);
		descend(s, load, tmp, comp, queue);
		rc = consider(s->g, s->h, o, s->A, n, k, err);
	}
out:
	free(prio);
	free(lat);
	free(comp);
	free(queue);
	free(load);
	free(tmp);
	free(save_t);
	free(seeds);
	return rc;
}

/* Enumeration when the assignments are few, else (search = 1) the
 * multi-start descent; search = 0 leaves r unchanged then. */
static int assign_best(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o,
                       pb_map_result *r, int search_too, pb_error *err)
{
	tp s;
	memset(&s, 0, sizeof s);
	s.g = g;
	s.h = h;
	s.r = r;
	s.n = g->n_nodes;
	s.nb = h->n;
	s.R = s.nb + s.nb * s.nb;
	size_t sz = (size_t)s.n + 1;
	s.unary = malloc(sz * (size_t)s.nb * sizeof *s.unary);
	s.A = malloc(sz * sizeof *s.A);
	s.in_set = calloc(sz, sizeof *s.in_set);
	s.seen = calloc(sz, sizeof *s.seen);
	keep k = {malloc(sz * sizeof(int)), INFINITY, 0};
	int rc = PB_OK;
	if (!s.unary || !s.A || !s.in_set || !s.seen || !k.best) {
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
		goto out;
	}
	double count = 1;
	for (int v = 0; v < s.n; v++) {
		int allowed = 0;
		for (int b = 0; b < s.nb; b++) {
			int p = r->prio[v * s.nb + b];
			int ok = p > 0 && !r->folded[v] &&
			         !(o->force && o->force[v] >= 0 && o->force[v] < s.nb &&
			           r->prio[v * s.nb + o->force[v]] > 0 && o->force[v] != b);
			s.unary[v * s.nb + b] = ok ? pb_map_node_time(g, h, b, v) : INFINITY;
			allowed += ok;
		}
		if (!r->folded[v])
			count *= allowed;
	}
	r->assignments = count;
	int limit = o->enum_limit == 0 ? PB_MAP_ENUM_LIMIT : o->enum_limit;
	if (limit > 0 && count <= limit) {
		rc = enumerate(&s, o, &k, err);
		r->enumerated = rc == PB_OK;
	} else if (search_too) {
		rc = search(&s, o, r, &k, err);
	}
	if (rc == PB_OK && isfinite(k.best_p)) {
		r->candidates = k.count;
		for (int v = 0; v < s.n; v++) {
			if (r->folded[v])
				continue;
			if (r->backend[v] != k.best[v])
				r->moved++;
			r->backend[v] = k.best[v];
			r->node_time[v] = s.unary[v * s.nb + k.best[v]];
		}
	}
out:
	free(s.unary);
	free(s.A);
	free(s.in_set);
	free(s.seen);
	free(k.best);
	return rc;
}

int pb_map_assign_throughput(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o,
                             pb_map_result *r, pb_error *err)
{
	return assign_best(g, h, o, r, 1, err);
}

int pb_map_assign_exact(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o,
                        pb_map_result *r, pb_error *err)
{
	return assign_best(g, h, o, r, 0, err);
}

int pb_map_single_backend(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, int b,
                          double *value, pb_error *err)
{
	*value = INFINITY;
	int n = g->n_nodes;
	int *A = malloc(((size_t)n + 1) * sizeof *A);
	if (!A)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	for (int v = 0; v < n; v++) {
		A[v] = b;
		if (o->force && o->force[v] >= 0 && o->force[v] != b &&
		    pb_hetero_support(h, o->force[v], g->nodes[v].op, NULL) > 0) {
			free(A);
			return PB_OK; /* a rule puts v elsewhere */
		}
	}
	pb_map_opts e = *o;
	e.force = A;
	e.transfer_aware = 0;
	e.objective = PB_MAP_LATENCY;
	e.no_sim = 1;
	pb_map_result *r = NULL;
	int rc = pb_map_fixed(g, h, &e, &r, err);
	if (rc == PB_OK) {
		int all = 1;
		for (int v = 0; v < n && all; v++)
			all = r->backend[v] < 0 || r->backend[v] == b;
		if (all)
			*value = pb_map_objective_value(r, o->objective);
	}
	pb_map_result_free(r);
	free(A);
	return rc;
}
