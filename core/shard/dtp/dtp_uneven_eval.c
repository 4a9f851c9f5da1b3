/*
 * shard/dtp/dtp_uneven_eval.c — the exact cost of a configuration with uneven
 * device groups, and the local moves that improve it (dtp_uneven_eval.h).
 *
 * Costing (as the even rows are, dtp_search.c): every chunk's stage MILP on
 * its group's sub-cluster and scheme "dp x tp_s", first with one activation
 * copy (a relaxation of the memory row), again with the group's copies when
 * that plan does not fit; the cache answers a (content, degree, copies) seen
 * before. A group's time is the sum of its chunks'. Activation copies of
 * group s: 1F1B min(p - s, m); interleaved Megatron-LM's warm-up count + 1
 * in chunks, min(V m, (V-1) p + 2 (p - s - 1) + 1), each 1/V of the group's.
 *   1F1B:        step = (t + p2p) x (m + p - 1) + G
 *   interleaved: step = (t + V p2p) x (m + (p - 1)/V) + G
 * t the slowest group per micro-batch (its chunks' forward + backward), so
 * under interleaving too the slowest device group drives the bubble; G the
 * largest group's gradient all-reduces. A boundary between groups of d_a
 * and d_b devices reshards the tensor: each device of the smaller group
 * sends or receives at least 1/min(d_a, d_b) of it, latency + bytes /
 * min(d_a, d_b) / bandwidth (x2 training), on the inter-node link when the
 * groups sit on different nodes or either spans nodes.
 *
 * Moves (pb_dtp_uneven_eval_improve): the FLOPs DP that chose the split and the
 * degrees is a proxy — a stage's collectives, a degree that shards some
 * operators badly (heads not divisible by it) are seen only by the MILPs.
 * Boundary moves shift one chunk boundary one layer unit (at most 4
 * passes). Degree moves trade devices between two groups: group s to half,
 * double, or the next allowed degree below or above its own, group r
 * taking the difference, every group still placeable and the degrees not
 * all equal (that is an even row); the best of at most 64 such trades per
 * pass is kept when it beats c (at most 4 passes). The two alternate (at
 * most 3 rounds) until a round changes nothing. Only the two changed groups
 * solve new MILPs; the rest are cache answers. The moves of one call stop
 * once they have solved 16 stage MILPs (on large models each is costly; on
 * the cases of bench/RESULTS.md a budget of 8 already found the same best
 * rows).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shard/dtp/dtp_uneven_eval.h"
#include "shard/dtp/dtp_plan.h"
#include "shard/dtp/dtp_search.h"
#include "shard/dtp/dtp_stage.h"
#include "shard/pipeline/pipeline_p2p.h"
#include "util/job.h"

enum { DEG_TRIES = 64, PASSES = 4, ROUNDS = 3, MOVE_MILPS = 16 };

int pb_dtp_uneven_eval_degree_ok(const pb_cluster *cl, int dp, int t)
{
	int K = cl->n_devices / dp;
	return t >= 1 && t <= K && (K % t == 0 || (dp * t) % cl->devices_per_node == 0);
}

int pb_dtp_uneven_eval_placeable(const pb_cluster *cl, const pb_dtp_config *c)
{
	int dpn = cl->devices_per_node, sum = 0;
	for (int s = 0; s < c->pp; s++) {
		int a, d;
		pb_dtp_plan_group_devices(c, s, &a, &d);
		if (d < 1 || (d < dpn ? a / dpn != (a + d - 1) / dpn : a % dpn || d % dpn))
			return 0;
		sum += d;
	}
	return sum == cl->n_devices;
}

void pb_dtp_uneven_eval_scheme_text(pb_dtp_config *c)
{
	size_t n = sizeof c->scheme, k = (size_t)snprintf(c->scheme, n, "tp ");
	for (int s = 0; s < c->pp && k < n; s++)
		k += (size_t)snprintf(c->scheme + k, n - k, "%s%d", s ? "+" : "", c->stage_tp[s]);
}

static int n_chunks(const pb_dtp_config *c)
{
	return c->pp * (c->sched == PB_SCHED_1F1B ? 1 : c->v);
}

/* Group s's activation copies (in units of its whole activation per
 * micro-batch). */
static double inflight(const pb_dtp_config *c, int s)
{
	int p = c->pp;
	if (c->sched == PB_SCHED_1F1B)
		return p - s < c->m ? p - s : c->m;
	int k = (c->v - 1) * p + 2 * (p - s - 1) + 1;
	if (k > c->v * c->m)
		k = c->v * c->m;
	return (double)k / c->v;
}

typedef pb_dtp_group_sum group_sum; /* dtp_search.h: as the even costing's */

/* Solves the chunks of group s with `act` activation copies. */
static int solve_group(pb_uneven_ctx *x, pb_dtp_config *c, int s, double act, group_sum *gs,
                       pb_error *err)
{
	const pb_graph *g = x->g;
	int first, d, nc = n_chunks(c), train = x->o->pipe.train;
	pb_dtp_plan_group_devices(c, s, &first, &d);
	char buf[48];
	const char *scheme = pb_dtp_search_scheme_of(c->dp, c->stage_tp[s], buf, sizeof buf);
	pb_cluster sub = pb_dtp_stage_sub_cluster(x->cl, d);
	memset(gs, 0, sizeof *gs);
	gs->ok = gs->proven = 1;
	for (int k = s; k < nc; k += c->pp) {
		int any = 0;
		for (int v = 0; v < g->n_nodes; v++) {
			x->mask[v] = x->chunk_of[v] == k && x->active[v];
			if (x->mask[v])
				gs->flops += x->cost[v];
			any |= x->mask[v];
		}
		if (!any)
			continue;
		pb_dtp_chunk ch;
		int rc = pb_dtp_stage_chunk_solve(x->cache, &sub, scheme, &x->o->shard, x->mask,
		                                  train ? act : 1, &ch, err);
		if (rc)
			return rc;
		if (!ch.ok) {
			json_decref(ch.ops);
			gs->ok = 0;
			snprintf(c->error, sizeof c->error, "chunk %d: %.140s", k, ch.error);
			return PB_OK;
		}
		if (x->chunks)
			json_array_set_new(x->chunks, (size_t)k,
			                   pb_dtp_plan_chunk_json(k, s, scheme, &ch,
			                                          train ? inflight(c, s) : 1.0));
		else
			json_decref(ch.ops);
		pb_dtp_search_group_add(gs, &ch);
	}
	return PB_OK;
}

/* The slowest chunk boundary transfer of c (chunk_of set). */
static int transfers(pb_uneven_ctx *x, pb_dtp_config *c, pb_error *err)
{
	const pb_graph *g = x->g;
	const pb_cluster *cl = x->cl;
	int nc = n_chunks(c), p = c->pp, dpn = cl->devices_per_node;
	double *bytes = calloc((size_t)nc + 1, sizeof(double));
	if (!bytes)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	/* a tensor once from its producer's chunk to its last consumer's */
	for (int t = 0; t < g->n_tensors; t++) {
		const pb_tensor *tt = &g->tensors[t];
		int w = tt->producer;
		if (w < 0 || x->chunk_of[w] < 0)
			continue;
		int last = x->chunk_of[w];
		for (int k = 0; k < tt->n_consumers; k++) {
			int v = tt->consumers[k];
			if (x->chunk_of[v] > last)
				last = x->chunk_of[v];
		}
		for (int k = x->chunk_of[w]; k < last; k++)
			bytes[k] += pb_tensor_bytes(tt);
	}
	for (int k = 0; k + 1 < nc; k++) {
		int fa, na, fb, nb;
		pb_dtp_plan_group_devices(c, k % p, &fa, &na);
		pb_dtp_plan_group_devices(c, (k + 1) % p, &fb, &nb);
		const pb_link *l =
		    fa / dpn != fb / dpn || na > dpn || nb > dpn ? &cl->inter : &cl->intra;
		int dm = na < nb ? na : nb;
		double t = bytes[k] > 0
		               ? l->latency + bytes[k] / dm / l->bw * (x->o->pipe.train ? 2 : 1)
		               : 0;
		/* the receivers' all-gather over tp (pipeline_p2p.h) */
		t += pb_pipeline_p2p_gather(cl, c->dp, nb / c->dp, bytes[k], x->o->pipe.train);
		if (t > c->p2p)
			c->p2p = t;
	}
	free(bytes);
	return PB_OK;
}

int pb_dtp_uneven_eval(pb_uneven_ctx *x, pb_dtp_config *c, pb_error *err)
{
	const pb_cluster *cl = x->cl;
	const pb_graph *g = x->g;
	int train = x->o->pipe.train, p = c->pp, m = c->m, nc = n_chunks(c), rc;
	double f = (train ? 3.0 : 1.0) / cl->flops, worst = 0;
	x->evals++;
	c->ok = c->proven = 1;
	c->fits = 0;
	c->tp = 0;
	c->slowest = c->p2p = c->grad = c->memory = c->step_time = 0;
	memset(&c->mopts, 0, sizeof c->mopts);
	c->grad_exposed = c->grad_hidden = 0;
	c->grad_buckets = 0;
	c->error[0] = 0;
	c->layers_split = 1;
	c->min_layers = x->n;
	c->max_layers = 0;
	for (int k = 0, u = 0; k < nc; k++) {
		int b = 0;
		for (; u < c->stage_end[k]; u++)
			b += x->ublocks[u];
		c->min_layers = b < c->min_layers ? b : c->min_layers;
		c->max_layers = b > c->max_layers ? b : c->max_layers;
	}
	for (int v = 0; v < g->n_nodes; v++) {
		int u = x->unit_of[v], k = 0;
		while (u >= 0 && k < nc - 1 && u >= c->stage_end[k])
			k++;
		x->chunk_of[v] = u >= 0 ? k : -1;
	}
	for (int s = 0; s < p; s++) {
		if (pb_job_cancelled())
			return pb_err(err, PB_ECANCEL, "shard: cancelled");
		int first, d;
		pb_dtp_plan_group_devices(c, s, &first, &d);
		if (c->stage_tp[s] > c->tp)
			c->tp = c->stage_tp[s];
		double a = inflight(c, s);
		group_sum gs;
		if ((rc = solve_group(x, c, s, 1, &gs, err)))
			return rc;
		if (gs.ok && train && a > 1 && gs.mp + a * gs.ma > cl->memory * (1 + 1e-9))
			if ((rc = solve_group(x, c, s, a, &gs, err)))
				return rc;
		if (!gs.ok) {
			c->ok = 0;
			char e[160];
			snprintf(e, sizeof e, "stage %d: %.140s", s, c->error);
			memcpy(c->error, e, sizeof e);
			return PB_OK;
		}
		double mem = gs.mp + (train ? a : 1) * gs.ma;
		if (gs.flops * f / d > worst)
			worst = gs.flops * f / d;
		pb_dtp_search_note_group(c, cl, &gs, mem, train ? a : 1);
	}
	c->memory = pb_memory_options_settle(&c->mopts, x->o->shard.dist_opt,
	                                     x->o->shard.seq_parallel, cl->memory);
	c->fits = c->memory <= cl->memory * (1 + 1e-9);
	if ((rc = transfers(x, c, err)))
		return rc;
	pb_dtp_stage_step_time(c, cl, &x->o->shard);
	c->bound = worst * (c->sched == PB_SCHED_1F1B ? m + p - 1 : m + (double)(p - 1) / c->v);
	return PB_OK;
}

/* 1 when the moves of this pb_dtp_uneven_eval_improve call solved MOVE_MILPS stage
 * MILPs: no further move is tried. */
static int spent(const pb_uneven_ctx *x)
{
	long milps, hits;
	pb_dtp_stage_cache_stats(x->cache, &milps, &hits);
	return milps - x->moves_from >= MOVE_MILPS;
}

/* Chunk boundaries one unit either way while the exact step improves;
 * *moved set when c changed. */
static int move_bounds(pb_uneven_ctx *x, pb_dtp_config *c, int *moved, pb_error *err)
{
	int nc = n_chunks(c);
	for (int pass = 0; pass < PASSES; pass++) {
		int any = 0;
		for (int k = 0; k + 1 < nc; k++)
			for (int dir = -1; dir <= 1; dir += 2) {
				int lo = k ? c->stage_end[k - 1] : 0, e = c->stage_end[k] + dir;
				if (e <= lo || e >= c->stage_end[k + 1] || spent(x))
					continue;
				pb_dtp_config t = *c;
				t.stage_end[k] = (short)e;
				int rc = pb_dtp_uneven_eval(x, &t, err);
				if (rc)
					return rc;
				if (t.ok && pb_dtp_search_better(&t, c)) {
					*c = t;
					any = *moved = 1;
				}
			}
		if (!any)
			break;
	}
	return PB_OK;
}

/* The degrees group s may take in a trade: half, double, the next allowed
 * below and above. */
static int candidates(const pb_uneven_ctx *x, int dp, int t, int *out)
{
	int n = 0, K = x->cl->n_devices / dp, w[4] = {t % 2 ? 0 : t / 2, 2 * t, 0, 0};
	for (int q = t - 1; q >= 1 && !w[2]; q--)
		if (pb_dtp_uneven_eval_degree_ok(x->cl, dp, q))
			w[2] = q;
	for (int q = t + 1; q <= K && !w[3]; q++)
		if (pb_dtp_uneven_eval_degree_ok(x->cl, dp, q))
			w[3] = q;
	for (int i = 0; i < 4; i++) {
		int seen = !w[i] || !pb_dtp_uneven_eval_degree_ok(x->cl, dp, w[i]);
		for (int k = 0; k < n; k++)
			seen |= out[k] == w[i];
		if (!seen)
			out[n++] = w[i];
	}
	return n;
}

/* One best degree trade per pass while it beats c; *moved set when c
 * changed. */
static int move_degrees(pb_uneven_ctx *x, pb_dtp_config *c, int *moved, pb_error *err)
{
	int p = c->pp;
	for (int pass = 0; pass < PASSES; pass++) {
		pb_dtp_config best = *c;
		int tries = 0, found = 0;
		for (int s = 0; s < p && tries < DEG_TRIES; s++) {
			int cand[4] = {0}, nq = candidates(x, c->dp, c->stage_tp[s], cand);
			for (int q = 0; q < nq && tries < DEG_TRIES; q++)
				for (int r = 0; r < p && tries < DEG_TRIES; r++) {
					int tr = c->stage_tp[r] + c->stage_tp[s] - cand[q];
					if (r == s ||
					    !pb_dtp_uneven_eval_degree_ok(x->cl, c->dp, tr))
						continue;
					pb_dtp_config t = *c;
					t.stage_tp[s] = (short)cand[q];
					t.stage_tp[r] = (short)tr;
					int same = 1;
					for (int k = 1; k < p; k++)
						same &= t.stage_tp[k] == t.stage_tp[0];
					if (same || !pb_dtp_uneven_eval_placeable(x->cl, &t) ||
					    spent(x))
						continue;
					tries++;
					int rc = pb_dtp_uneven_eval(x, &t, err);
					if (rc)
						return rc;
					if (t.ok && pb_dtp_search_better(&t, &best)) {
						best = t;
						found = 1;
					}
				}
		}
		if (!found)
			break;
		*c = best;
		*moved = 1;
	}
	return PB_OK;
}

int pb_dtp_uneven_eval_improve(pb_uneven_ctx *x, pb_dtp_config *c, int degrees, pb_error *err)
{
	long hits;
	pb_dtp_stage_cache_stats(x->cache, &x->moves_from, &hits);
	for (int round = 0; round < ROUNDS; round++) {
		int mb = 0, md = 0, rc;
		if ((rc = move_bounds(x, c, &mb, err)) ||
		    (degrees && (rc = move_degrees(x, c, &md, err))))
			return rc;
		if (!md)
			break;
	}
	pb_dtp_uneven_eval_scheme_text(c);
	return PB_OK;
}
