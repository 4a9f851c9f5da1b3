/*
 * partition/milp/chain_milp_weighted.c — the weighted objective proved by a branch and bound
 * over prefixes (chain_milp_weighted.h), in slices.
 *
 * Objective: F = kc C + ks S + kr R with C, S, R the largest compute, storage and routing
 * of any group (kc = wc x 1e3 per s, ks = ws per MiB, kr = wr x 1e3 per s). It is a
 * min-max over three linked resources: one bisection on a bottleneck (the max(t) MILP's
 * probes) does not apply, because lowering one maximum raises another.
 *
 * Search. A label at position b is a partition of layers [0, b) on u cores with its three
 * maxima (C, S, R). Labels are extended by one group [b, e) on c cores. A label is kept
 * only when
 *   - no label at b uses at most as many cores with maxima at most as large (dominance:
 *     spare cores never make a group slower, larger or more talkative, and F is
 *     monotone in each maximum), and
 *   - its completion bound does not exceed the incumbent: the groups still to come cover
 *     [b, m) on at most n - u cores, so their largest compute is at least
 *     MACs(b, m) / ((n - u) rate) (a weighted mean of their computes), their largest
 *     storage at least (params + outputs)(b, m) / (n - u), and their largest routing at
 *     least the largest routing of one layer of [b, m) (routing only grows when a group
 *     takes more layers). F of the label's maxima raised to these is a lower bound of
 *     every partition through it.
 * A label is stored with its maxima already raised to these three suffix terms: every
 * completion's own maxima are at least as large, so the final objective is unchanged,
 * and labels that differ only below the suffix's unavoidable maxima become comparable
 * (swin_t x manycore-64: 547,522 labels -> 66,107). Core counts of a label and segment
 * start at the least c whose own terms kc gc + ks gs + kr r fit the incumbent (a closed
 * form), and stop once the label's maxima against the suffix on the cores left exceed
 * it (that part only grows with c). A label that cannot fit any end even on all its
 * spare cores leaves its start's list (segments only grow with the end).
 * Group costs are accumulated while the start walks down from the end, with the same
 * formulas as pb_part_eval_group; the walk stops at the first segment whose own terms on
 * all n cores exceed the incumbent (they only grow as the segment grows). For a label and
 * segment, core counts stop at the first c where the group's compute and storage are
 * within the label's maxima (more cores then change nothing but the cores left).
 *
 * Incumbent before the search: one group on all cores, greedy plus block moves, and the
 * fewest-core partitions within 24 bottleneck times between the perfect-balance bound
 * and the one-group time (each a near-linear probe, exact.h). Root bound: the three terms
 * alone (perfect balance, total storage over n, the slowest single-layer routing).
 *
 * Proof: when the last position is processed, the best label at m is optimal (every
 * pruned label was bounded above the incumbent, every dominated one by a kept label).
 * Stopped earlier (time limit, cancel, label limit) the incumbent is "best found" with
 * the root bound. Work: positions are processed in order, the walk of one end is
 * resumable at any start, so a slice returns within one start's labels.
 * Memory: when some partition fits the memory, every group must (as for exact).
 */
#include "partition/milp/chain_milp_weighted.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partition/chain/baselines.h"
#include "partition/chain/exact.h"
#include "util/grow.h"
#include "util/job.h"

#define W_LABELS_MAX 4000000L
#define W_PROBES 24
#define W_TOL 1e-12
#define W_BEAM 48 /* labels per start extended by the first (heuristic) pass */

typedef struct wlabel {
	double c, s, r; /* maxima: compute s, storage bytes, routing s */
	int u;          /* cores used */
	int prev;       /* label the group extends, -1 at the start */
	int a, cores;   /* the group that ends here: layers [a, b) on `cores` cores */
	int next;       /* next live label at the same position, -1 at the end */
} wlabel;

struct pb_milp_w {
	pb_part_problem *P;
	double kc, ks, kr;
	int use_mem, done, proven;
	int beam;    /* 1 during the first pass: only the W_BEAM best labels of a start */
	double *lbs; /* scratch: the completion bounds of one start's labels */
	long lbs_cap;
	double U, root_lb;
	int *inc, *tmp;
	double *rsuf; /* largest single-layer routing of [p, m), seconds; m + 1 entries */
	double *rc;   /* MACs of [p, m) / mac rate (core-seconds); m + 1 entries */
	double *rs;   /* storage bytes of [p, m); m + 1 entries */
	double *inv;  /* 1 / k for k = 0..n (inv[0] unused) */
	wlabel *pool;
	long n_pool, cap_pool;
	int *head;        /* per position: first live label */
	int dom_b, dom;   /* the label at position dom_b that dominated the last candidate */
	int cur_b, cur_a; /* the walk in progress: end, next start (-1: from b - 1) */
	int cur_li;       /* next label of start cur_a (-1: its first); the list of a start
	                   * does not change while an end is processed (inserts go to b) */
	char note[160];
};

static double w_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double w_obj(const pb_milp_w *W, double c, double s, double r)
{
	return W->kc * c + W->ks * s + W->kr * r;
}

/* Lower bound of every partition through a label (c, s, r) at p on u cores (the
 * suffix terms are precomputed: this runs for every candidate label). */
static inline double w_completion(const pb_milp_w *W, int p, int u, double c, double s, double r)
{
	const pb_part_problem *P = W->P;
	if (p < P->m) {
		int k = P->n - u;
		if (k < 1)
			return INFINITY;
		double cr = W->rc[p] * W->inv[k];
		double sr = W->rs[p] * W->inv[k];
		if (cr > c)
			c = cr;
		if (sr > s)
			s = sr;
		if (W->rsuf[p] > r)
			r = W->rsuf[p];
	}
	return w_obj(W, c, s, r);
}

/* The incumbent becomes ac when it fits (or memory is ignored) and is better. */
static void w_offer(pb_milp_w *W, const int *ac)
{
	pb_part_eval ev;
	pb_part_evaluate(W->P, ac, &ev, NULL);
	if (W->use_mem && ev.over_memory)
		return;
	if (ev.objective < W->U) {
		W->U = ev.objective;
		memcpy(W->inc, ac, (size_t)W->P->n * sizeof *ac);
	}
}

/* 1 inserted, 0 dominated or bounded, -1 out of labels. */
static int w_insert(pb_milp_w *W, int b, const wlabel *x0)
{
	if (w_completion(W, b, x0->u, x0->c, x0->s, x0->r) > W->U * (1 + W_TOL))
		return 0;
	/* Raised to the suffix's unavoidable maxima on the cores left: no completion
	 * can tell the label from the raised one, and dominance sees more ties. */
	wlabel xr = *x0, *x = &xr;
	if (b < W->P->m) {
		double ik = W->inv[W->P->n - x->u];
		if (W->rc[b] * ik > x->c)
			x->c = W->rc[b] * ik;
		if (W->rs[b] * ik > x->s)
			x->s = W->rs[b] * ik;
		if (W->rsuf[b] > x->r)
			x->r = W->rsuf[b];
	}
	/* The label that dominated the last candidate at b often dominates this one (it
	 * may have left the list since: then a label of the list dominates it, and x). */
	if (W->dom_b == b) {
		const wlabel *y = &W->pool[W->dom];
		if (y->u <= x->u && y->c <= x->c && y->s <= x->s && y->r <= x->r)
			return 0;
	}
	int *link = &W->head[b];
	while (*link >= 0) {
		wlabel *y = &W->pool[*link];
		if (y->u <= x->u && y->c <= x->c && y->s <= x->s && y->r <= x->r) {
			W->dom_b = b;
			W->dom = *link;
			return 0;
		}
		if (x->u <= y->u && x->c <= y->c && x->s <= y->s && x->r <= y->r)
			*link = y->next;
		else
			link = &y->next;
	}
	if (W->n_pool >= W_LABELS_MAX)
		return -1;
	if (W->n_pool == W->cap_pool) {
		wlabel *np = pb_grow(W->pool, &W->cap_pool, sizeof *np, 4096);
		if (!np)
			return -1;
		W->pool = np;
	}
	wlabel *z = &W->pool[W->n_pool];
	*z = *x;
	z->next = W->head[b];
	W->head[b] = (int)W->n_pool++;
	return 1;
}

int pb_milp_w_new(pb_part_problem *P, pb_milp_w **out, pb_error *err)
{
	*out = NULL;
	const int m = P->m, n = P->n;
	pb_milp_w *W = calloc(1, sizeof *W);
	if (!W)
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	W->P = P;
	W->kc = P->hw.w_compute * 1e3;
	W->ks = P->hw.w_storage / (1024.0 * 1024.0);
	W->kr = P->hw.w_routing * 1e3;
	W->inc = malloc((size_t)n * sizeof *W->inc);
	W->tmp = malloc((size_t)n * sizeof *W->tmp);
	W->rsuf = malloc((size_t)(m + 1) * sizeof *W->rsuf);
	W->head = malloc((size_t)(m + 1) * sizeof *W->head);
	W->rc = malloc((size_t)(m + 1) * sizeof *W->rc);
	W->rs = malloc((size_t)(m + 1) * sizeof *W->rs);
	W->inv = malloc((size_t)(n + 1) * sizeof *W->inv);
	if (!W->inc || !W->tmp || !W->rsuf || !W->head || !W->rc || !W->rs || !W->inv) {
		pb_milp_w_free(W);
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	}
	for (int p = 0; p <= m; p++) {
		/* Rounded down a little: the bound stays below the divided figure. */
		W->rc[p] = (P->pmacs[m] - P->pmacs[p]) / P->hw.mac_rate * (1 - 1e-14);
		W->rs[p] = (P->pstore[m] - P->pstore[p]) * (1 - 1e-14);
	}
	W->inv[0] = 0;
	for (int k = 1; k <= n; k++)
		W->inv[k] = 1.0 / k;
	W->rsuf[m] = 0;
	for (int p = m - 1; p >= 0; p--) {
		double r = pb_part_in_bytes(P, p, p + 1) / P->hw.bandwidth;
		W->rsuf[p] = r > W->rsuf[p + 1] ? r : W->rsuf[p + 1];
	}
	/* Memory: does any partition fit it? (the fewest-core probe with no time limit) */
	W->use_mem = isfinite(P->hw.memory) && P->hw.memory > 0 &&
	             pb_part_exact_min_cores(P, INFINITY, 1, NULL, NULL, W->tmp) <= n;
	/* Incumbent: one group, greedy + block moves, threshold probes. */
	W->U = INFINITY;
	for (int i = 0; i < n; i++)
		W->tmp[i] = i == n - 1 ? m : 0;
	if (m > 0)
		w_offer(W, W->tmp);
	pb_part_greedy(P, W->tmp);
	pb_part_local_search(P, W->tmp, 4 * n);
	w_offer(W, W->tmp);
	pb_part_group one;
	pb_part_eval_group(P, 0, m, n, &one);
	double tlo = P->lower_bound, thi = one.time;
	for (int k = 0; k < W_PROBES && tlo > 0 && thi > tlo && !pb_job_cancelled(); k++) {
		double T = tlo * pow(thi / tlo, (double)(k + 1) / W_PROBES);
		if (pb_part_exact_min_cores(P, T, W->use_mem, NULL, NULL, W->tmp) <= n)
			w_offer(W, W->tmp);
	}
	if (!isfinite(W->U)) { /* nothing fits: ignore the memory, as exact does */
		W->use_mem = 0;
		pb_part_greedy(P, W->tmp);
		w_offer(W, W->tmp);
	}
	/* Root bound: each term alone. */
	double c0 = P->lower_bound;
	for (int k = 0; k < m; k++) {
		double ck = (P->pmacs[k + 1] - P->pmacs[k]) / ((double)n * P->hw.mac_rate);
		if (ck > c0)
			c0 = ck;
	}
	W->root_lb = w_completion(W, 0, 0, c0, 0, 0);
	if (W->root_lb > W->U)
		W->root_lb = W->U;
	for (int p = 0; p <= m; p++)
		W->head[p] = -1;
	W->dom_b = -1;
	wlabel start = {0, 0, 0, 0, -1, 0, 0, -1};
	if (w_insert(W, 0, &start) < 0) {
		pb_milp_w_free(W);
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	}
	W->cur_b = 1;
	W->cur_a = W->cur_li = -1;
	W->beam = 1;
	*out = W;
	return PB_OK;
}

/* The best label at m becomes the incumbent when it beats it; the search is proven. */
static void w_finish(pb_milp_w *W)
{
	pb_part_problem *P = W->P;
	const int m = P->m, n = P->n;
	int bi = -1;
	double bo = INFINITY;
	for (int li = W->head[m]; li >= 0; li = W->pool[li].next) {
		double o = w_obj(W, W->pool[li].c, W->pool[li].s, W->pool[li].r);
		if (o < bo) {
			bo = o;
			bi = li;
		}
	}
	if (bi >= 0) {
		int ng = 0, b = m, *cores = W->tmp;
		int *layers = malloc((size_t)n * sizeof *layers);
		if (layers) {
			for (int li = bi; W->pool[li].prev >= 0; li = W->pool[li].prev) {
				cores[ng] = W->pool[li].cores;
				layers[ng] = b - W->pool[li].a;
				b = W->pool[li].a;
				ng++;
			}
			cores[0] += n - W->pool[bi].u; /* spare cores to the last group */
			for (int i = 0; i < ng / 2; i++) {
				int t = cores[i];
				cores[i] = cores[ng - 1 - i];
				cores[ng - 1 - i] = t;
				t = layers[i];
				layers[i] = layers[ng - 1 - i];
				layers[ng - 1 - i] = t;
			}
			int *ac = malloc((size_t)n * sizeof *ac);
			if (ac) {
				pb_part_state_from_groups(ng, cores, layers, ac);
				w_offer(W, ac);
				free(ac);
			}
			free(layers);
		}
	}
	W->done = W->proven = 1;
}

static int w_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* The first pass extends only the W_BEAM labels of a start with the smallest
 * completion bounds: *thr is the largest bound kept. */
static int w_beam_threshold(pb_milp_w *W, int a, double *thr)
{
	long k = 0;
	for (int li = W->head[a]; li >= 0; li = W->pool[li].next) {
		if (k == W->lbs_cap) {
			double *np = pb_grow(W->lbs, &W->lbs_cap, sizeof *np, 256);
			if (!np)
				return -1;
			W->lbs = np;
		}
		const wlabel *L = &W->pool[li];
		W->lbs[k++] = w_completion(W, a, L->u, L->c, L->s, L->r);
	}
	*thr = INFINITY;
	if (k > W_BEAM) {
		qsort(W->lbs, (size_t)k, sizeof *W->lbs, w_cmp);
		*thr = W->lbs[W_BEAM - 1];
	}
	return 0;
}

/* Drops every label and starts a pass from the empty prefix. */
static void w_restart(pb_milp_w *W)
{
	W->n_pool = 0;
	W->dom_b = -1;
	for (int p = 0; p <= W->P->m; p++)
		W->head[p] = -1;
	wlabel start = {0, 0, 0, 0, -1, 0, 0, -1};
	w_insert(W, 0, &start); /* the pool has room: it held labels before */
	W->cur_b = 1;
	W->cur_a = W->cur_li = -1;
}

int pb_milp_w_run(pb_milp_w *W, double until, pb_error *err)
{
	pb_part_problem *P = W->P;
	const int m = P->m, n = P->n;
	const double rate = P->hw.mac_rate, bw = P->hw.bandwidth, mem = P->hw.memory;
	while (!W->done) {
		if (W->cur_b > m) {
			w_finish(W);
			if (W->beam) { /* the first pass gave an incumbent: now the proof */
				W->beam = 0;
				W->done = W->proven = 0;
				w_restart(W);
				continue;
			}
			break;
		}
		const int b = W->cur_b;
		double in = 0, own = 0;
		for (int a = b - 1; a >= 0; a--) {
			if (P->min_succ[a] < b) { /* a's output now stays inside */
				in -= P->ob[a];
				own += P->ob[a];
			}
			for (int e = P->pred_off[a]; e < P->pred_off[a + 1]; e++)
				if (P->pred_next[e] >=
				    b) /* a is the producer's last consumer here */
					in += P->ob[P->pred[e]];
			if (W->cur_a >= 0 && a > W->cur_a)
				continue; /* done in an earlier slice */
			double inb = in > 0 ? in : 0;
			double macs = P->pmacs[b] - P->pmacs[a];
			double rt = (inb + own) / bw;
			double st = P->pstore[b] - P->pstore[a] + inb;
			if (w_obj(W, macs / ((double)n * rate), st / n, rt) > W->U * (1 + W_TOL))
				break;
			if (W->use_mem && st / n > mem)
				break;
			int li0 = W->head[a], prev = -1;
			if (W->cur_a == a && W->cur_li >= 0) {
				li0 = W->cur_li; /* resume inside the start's labels */
				for (int li = W->head[a]; li != li0; li = W->pool[li].next)
					prev = li;
			} else if (W->cur_a >= 0 && (pb_job_cancelled() || w_now() >= until)) {
				W->cur_a = a; /* resume here */
				W->cur_li = -1;
				return PB_OK;
			}
			W->cur_a = a;
			W->cur_li = -1;
			pb_job_tick();
			int cmin = 1;
			if (W->use_mem && st > 0) {
				cmin = (int)ceil(st / mem);
				if (cmin < 1)
					cmin = 1;
				while (cmin > 1 && st / (cmin - 1) <= mem)
					cmin--;
				while (cmin <= n && st / cmin > mem)
					cmin++;
			}
			double thr = INFINITY;
			if (W->beam && w_beam_threshold(W, a, &thr) < 0)
				return pb_err(err, PB_ENOMEM, "milp: out of memory");
			int seen = 0;
			for (int li = li0, next; li >= 0; li = next) {
				if (++seen % 256 == 0 && (pb_job_cancelled() || w_now() >= until)) {
					W->cur_li = li;
					return PB_OK;
				}
				const wlabel L = W->pool[li];
				next = L.next;
				if (W->beam && w_completion(W, a, L.u, L.c, L.s, L.r) > thr) {
					prev = li;
					continue;
				}
				int kmax = n - L.u - (b < m ? 1 : 0);
				double r = L.r > rt ? L.r : rt;
				/* The group's own terms alone: kc gc + ks gs + kr r <= U
				 * needs c >= (kc macs / rate + ks st) / (U - kr r). */
				double room = W->U * (1 + W_TOL) - W->kr * r;
				double cfit =
				    room > 0 ? (W->kc * macs / rate + W->ks * st) / room : INFINITY;
				if (cfit > n - L.u) {
					/* Nor any later end (macs, st and r only grow with
					 * b, U only falls): the label leaves its list. */
					if (prev < 0)
						W->head[a] = next;
					else
						W->pool[prev].next = next;
					continue;
				}
				prev = li;
				int c0 = cmin;
				if (cfit > kmax)
					continue;
				if ((int)cfit > c0)
					c0 = (int)cfit; /* rounded down: the test below decides */
				for (int c = c0; c <= kmax; c++) {
					/* The label's maxima against the suffix on the cores
					 * left: grows with c, so nothing past it fits. */
					if (w_completion(W, b, L.u + c, L.c, L.s, r) >
					    W->U * (1 + W_TOL))
						break;
					double gc = macs / ((double)c * rate), gs = st / c;
					wlabel x = {L.c > gc ? L.c : gc,
					            L.s > gs ? L.s : gs,
					            r,
					            L.u + c,
					            li,
					            a,
					            c,
					            -1};
					if (w_insert(W, b, &x) < 0) {
						snprintf(W->note, sizeof W->note,
						         "stopped at %ld labels (position %d of "
						         "%d): best "
						         "found, not proven",
						         W_LABELS_MAX, b, m);
						W->done = 1;
						return PB_OK;
					}
					if (gc <= L.c && gs <= L.s)
						break; /* more cores change nothing but the cores
						          left */
				}
			}
		}
		W->cur_b++;
		W->cur_a = W->cur_li = -1;
		if (pb_job_cancelled() || w_now() >= until)
			return PB_OK;
	}
	return PB_OK;
}

int pb_milp_w_done(const pb_milp_w *W)
{
	return W->done;
}

int pb_milp_w_proven(const pb_milp_w *W)
{
	return W->proven;
}

double pb_milp_w_incumbent(const pb_milp_w *W)
{
	return W->U;
}

double pb_milp_w_bound(const pb_milp_w *W)
{
	return W->proven ? W->U : W->root_lb;
}

const int *pb_milp_w_state(const pb_milp_w *W)
{
	return W->inc;
}

int pb_milp_w_memory_used(const pb_milp_w *W)
{
	return W->use_mem;
}

long pb_milp_w_labels(const pb_milp_w *W)
{
	return W->n_pool;
}

int pb_milp_w_position(const pb_milp_w *W)
{
	return W->cur_b - 1;
}

const char *pb_milp_w_note(const pb_milp_w *W)
{
	return W->note;
}

void pb_milp_w_free(pb_milp_w *W)
{
	if (!W)
		return;
	free(W->inc);
	free(W->tmp);
	free(W->rsuf);
	free(W->rc);
	free(W->rs);
	free(W->inv);
	free(W->pool);
	free(W->head);
	free(W->lbs);
	free(W);
}
