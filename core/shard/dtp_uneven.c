/*
 * shard/dtp_uneven.c — pipeline configurations whose stages have different
 * device groups (dtp_search.h, pb_dtp_uneven_search).
 *
 * An even configuration puts every stage on dp x tp devices. When one layer
 * unit outweighs the rest — a GPT's language-model head over a large
 * vocabulary — the stage holding it is the slowest however the layers are
 * cut, and the other stages idle. Here stage s gets its own tensor degree
 * tp_s (dp fixed, so the gradient all-reduce pairs the replicas of every
 * stage): dp x tp_s consecutive devices, sum over the stages = N.
 *
 * Choosing the groups: a DP over the layer units in order (cut after the
 * last operator of a repeated block, as pb_pipe_split_layers cuts: the
 * first unit holds the embedding and the first block, the last the head),
 * the stage count j, and the degree units used k (dp devices each):
 *   best[j][i][k] = min over a < i, t of max(best[j-1][a][k-t],
 *                   FLOPs(units a..i-1) / (dp t)),
 * the slowest stage's FLOPs per device least; a degree t is allowed when it
 * divides N/dp or its group is whole nodes, and a group sits inside one node
 * or on whole nodes. The stage count j minimises that x the 1F1B slots (m +
 * j - 1): the configuration's bound (FLOPs x3 when training at the device
 * rate). A second pass keeps that slowest stage and minimises the sum of
 * squared per-device stage FLOPs (the other stages balanced too). The DP is
 * a proxy (FLOPs, not the stage MILP's time); its one answer per seed is
 * then costed exactly as the even rows are, and its boundaries moved one
 * layer unit at a time while that exact step improves: every stage's MILP on its own
 * sub-cluster and scheme "dp x tp_s" (dtp_stage.c's cache, so identical
 * (content, degree) chunks solve once), the activation copies of 1F1B,
 * step = (t + p2p) x (m + p - 1) + G.
 *
 * Where it is tried (it can pay): seeds are the two best fitting pipeline
 * rows' (dp, m) of the even search (1F1B or not); a seed whose DP answer has
 * equal degrees is the even search's own ground and is skipped; one whose
 * bound is not below the best fitting step known is a pruned row; the DP is
 * skipped when its table would be too large (more than 4e7 steps: e.g.
 * N/dp = 1024 with a 96-layer model).
 *
 * Boundary transfers between groups of different sizes: the tensor is
 * resharded from d_a to d_b devices; each device of the smaller group sends
 * or receives at least 1/min(d_a, d_b) of it, so the transfer is latency +
 * bytes / min(d_a, d_b) / bandwidth (x2 in training), on the inter-node
 * link when the groups sit on different nodes or either spans nodes. (Equal
 * groups: bytes / d, the even rows' cost.)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shard/dtp_search.h"
#include "shard/layer_classes.h"
#include "util/job.h"

enum { SEEDS = 2 };
#define DP_WORK_MAX 4e7

typedef struct uctx {
	const pb_graph *g;
	const pb_cluster *cl;
	const pb_dtp_opts *o;
	int n, U;
	double *cost;  /* per node FLOPs, -1 outside the problem */
	double *ucost; /* per layer unit */
	int *ublocks;  /* per layer unit: the blocks ending in it */
	int *unit_of;  /* per node, -1 outside */
	int *stage_of; /* per node for the configuration evaluated, -1 outside */
	unsigned char *active, *mask;
	pb_dtp_cache *cache;
	json_t *chunks; /* building a plan: per stage its solve */
} uctx;

static void ctx_close(uctx *x)
{
	free(x->cost);
	free(x->ucost);
	free(x->ublocks);
	free(x->unit_of);
	free(x->stage_of);
	free(x->active);
	free(x->mask);
	pb_dtp_cache_free(x->cache);
	json_decref(x->chunks);
	memset(x, 0, sizeof *x);
}

/* Costs and layer units of g (U = 0: no repeated layers). */
static int ctx_open(uctx *x, const pb_graph *g, const pb_cluster *cl, const pb_dtp_opts *o,
                    pb_error *err)
{
	int n = g->n_nodes;
	memset(x, 0, sizeof *x);
	x->g = g;
	x->cl = cl;
	x->o = o;
	x->n = n;
	x->cost = malloc(((size_t)n + 1) * sizeof(double));
	x->ucost = calloc((size_t)n + 2, sizeof(double));
	x->ublocks = calloc((size_t)n + 2, sizeof(int));
	x->unit_of = malloc(((size_t)n + 1) * sizeof(int));
	x->stage_of = malloc(((size_t)n + 1) * sizeof(int));
	x->active = malloc((size_t)n + 1);
	x->mask = malloc((size_t)n + 1);
	x->cache = pb_dtp_cache_new(g);
	if (!x->cost || !x->ucost || !x->ublocks || !x->unit_of || !x->stage_of || !x->active ||
	    !x->mask || !x->cache)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	pb_shard_dynamic_nodes(g, x->active);
	int last = -1;
	for (int v = 0; v < n; v++) {
		x->cost[v] = x->active[v] ? pb_shard_node_flops(g, &g->nodes[v]) : -1;
		if (x->cost[v] >= 0)
			last = v;
	}
	pb_layer_classes lc;
	int rc = pb_layer_classes_find(g, &lc, err);
	if (rc)
		return rc;
	int U = 0;
	for (int v = 0; v < n; v++) {
		x->unit_of[v] = -1;
		if (x->cost[v] < 0 || lc.n_runs == 0)
			continue;
		x->unit_of[v] = U;
		x->ucost[U] += x->cost[v];
		x->ublocks[U] += lc.block_end[v];
		if (lc.block_end[v] && v != last)
			U++;
	}
	x->U = lc.n_runs ? U + 1 : 0;
	pb_layer_classes_free(&lc);
	return PB_OK;
}

/* A group of d devices from device a: inside one node, or whole nodes. */
static int placeable(const pb_cluster *cl, int a, int d)
{
	int dpn = cl->devices_per_node;
	if (d < dpn)
		return a / dpn == (a + d - 1) / dpn;
	return a % dpn == 0 && d % dpn == 0;
}

/* ok[u][q] = 1 when every weight of rank >= 2 of unit u has a dimension
 * that degree ts[q] divides: the stage MILP can split all its matrices t
 * ways (else the FLOPs per device of the DP would be far from its time). */
static void shardable(const uctx *x, const int *ts, int nt, unsigned char *ok)
{
	const pb_graph *g = x->g;
	memset(ok, 1, (size_t)x->U * nt);
	for (int v = 0; v < g->n_nodes; v++) {
		int u = x->unit_of[v];
		if (u < 0)
			continue;
		const pb_node *nd = &g->nodes[v];
		for (int e = 0; e < nd->n_inputs; e++) {
			if (nd->inputs[e] < 0)
				continue;
			const pb_tensor *t = &g->tensors[nd->inputs[e]];
			if (!t->is_initializer || t->rank < 2)
				continue;
			for (int q = 0; q < nt; q++) {
				int any = 0;
				for (int r = 0; r < t->rank; r++)
					any |= t->dims[r] > 0 && t->dims[r] % ts[q] == 0;
				if (!any)
					ok[(size_t)u * nt + q] = 0;
			}
		}
	}
}

#define AT(arr, j, i, k) arr[((size_t)(j) * (U + 1) + (size_t)(i)) * (K + 1) + (size_t)(k)]

/* The DP of the header for data-parallel degree dp: fills c's pp,
 * stage_tp, stage_end and returns the slowest stage's FLOPs per device
 * (INFINITY: no split; -1: out of memory). jmax: the most stages. */
static double split_groups(const uctx *x, int dp, int m, int jmax, int fixed_pp, pb_dtp_config *c)
{
	const pb_cluster *cl = x->cl;
	int U = x->U, K = cl->n_devices / dp;
	int J = jmax < U ? jmax : U;
	if (J > K)
		J = K;
	if (J > PB_DTP_UNEVEN_MAX)
		J = PB_DTP_UNEVEN_MAX;
	if (J < 2)
		return INFINITY;
	int *ts = malloc(((size_t)K + 1) * sizeof(int)), nt = 0;
	double *pre = calloc((size_t)U + 1, sizeof(double));
	size_t cells = (size_t)(J + 1) * (U + 1) * (K + 1);
	double *best = malloc(cells * sizeof(double)), *sq = malloc(cells * sizeof(double));
	int *from = malloc(cells * sizeof(int)), *fromt = malloc(cells * sizeof(int));
	unsigned char *ok = NULL; /* [unit][degree index] */
	double res = -1;
	if (!ts || !pre || !best || !sq || !from || !fromt)
		goto done;
	for (int t = 1; t <= K; t++)
		if (K % t == 0 || (dp * t) % cl->devices_per_node == 0)
			ts[nt++] = t;
	res = INFINITY;
	if ((double)J * U * U * K * nt / 2 > DP_WORK_MAX)
		goto done;
	if (!(ok = malloc((size_t)U * nt + 1))) {
		res = -1;
		goto done;
	}
	shardable(x, ts, nt, ok);
	for (int i = 0; i < U; i++)
		pre[i + 1] = pre[i] + x->ucost[i];
	for (size_t q = 0; q < cells; q++)
		best[q] = sq[q] = INFINITY;
	AT(best, 0, 0, 0) = 0;
	for (int j = 1; j <= J; j++) {
		pb_job_tick();
		for (int i = j; i <= U; i++)
			for (int k = j; k <= K; k++)
				for (int q = 0; q < nt && ts[q] <= k; q++) {
					int t = ts[q];
					if (!placeable(cl, dp * (k - t), dp * t))
						continue;
					for (int a = i - 1; a >= j - 1 && ok[(size_t)a * nt + q];
					     a--) {
						double p = AT(best, j - 1, a, k - t);
						if (!isfinite(p))
							continue;
						double w = (pre[i] - pre[a]) / (dp * t);
						double v = p > w ? p : w;
						if (v < AT(best, j, i, k))
							AT(best, j, i, k) = v;
					}
				}
	}
	/* the stage count: the least bound FLOPs x slots */
	int pp = 0;
	for (int j = 2; j <= J; j++) {
		double b = AT(best, j, U, K);
		if (!isfinite(b) || (fixed_pp && j != fixed_pp))
			continue;
		if (!pp || b * (m + j - 1) < AT(best, pp, U, K) * (m + pp - 1) * (1 - 1e-12))
			pp = j;
	}
	if (!pp)
		goto done;
	double T = AT(best, pp, U, K) * (1 + 1e-9);
	/* pass 2: stages within T, the least sum of squares */
	AT(sq, 0, 0, 0) = 0;
	for (int j = 1; j <= pp; j++) {
		pb_job_tick();
		for (int i = j; i <= U; i++)
			for (int k = j; k <= K; k++)
				for (int q = 0; q < nt && ts[q] <= k; q++) {
					int t = ts[q];
					if (!placeable(cl, dp * (k - t), dp * t))
						continue;
					for (int a = i - 1; a >= j - 1 && ok[(size_t)a * nt + q];
					     a--) {
						double p = AT(sq, j - 1, a, k - t);
						double w = (pre[i] - pre[a]) / (dp * t);
						if (!isfinite(p) || w > T)
							continue;
						if (p + w * w < AT(sq, j, i, k)) {
							AT(sq, j, i, k) = p + w * w;
							AT(from, j, i, k) = a;
							AT(fromt, j, i, k) = t;
						}
					}
				}
	}
	if (!isfinite(AT(sq, pp, U, K)))
		goto done;
	c->pp = pp;
	for (int j = pp, i = U, k = K; j > 0; j--) {
		int a = AT(from, j, i, k), t = AT(fromt, j, i, k);
		c->stage_tp[j - 1] = (short)t;
		c->stage_end[j - 1] = (short)i;
		i = a;
		k -= t;
	}
	res = AT(best, pp, U, K);
done:
	free(ok);
	free(ts);
	free(pre);
	free(best);
	free(sq);
	free(from);
	free(fromt);
	return res;
}
#undef AT

/* Costs c (dp, m, pp, stage_tp, stage_end set) exactly: stage MILPs, the
 * 1F1B step, memory; x->chunks gets each stage's solve when building a
 * plan. */
static int eval(uctx *x, pb_dtp_config *c, pb_error *err)
{
	const pb_cluster *cl = x->cl;
	const pb_graph *g = x->g;
	int train = x->o->pipe.train, p = c->pp, m = c->m, dpn = cl->devices_per_node, rc;
	double f = (train ? 3.0 : 1.0) / cl->flops, worst = 0;
	c->ok = 1;
	c->fits = 0;
	c->tp = 0;
	c->slowest = c->p2p = c->grad = c->memory = c->step_time = 0;
	c->error[0] = 0;
	c->layers_split = 1;
	c->min_layers = x->n;
	c->max_layers = 0;
	for (int s = 0, u = 0; s < p; s++) {
		int b = 0;
		for (; u < c->stage_end[s]; u++)
			b += x->ublocks[u];
		c->min_layers = b < c->min_layers ? b : c->min_layers;
		c->max_layers = b > c->max_layers ? b : c->max_layers;
	}
	for (int v = 0; v < g->n_nodes; v++) {
		int u = x->unit_of[v], s = 0;
		while (u >= 0 && s < p - 1 && u >= c->stage_end[s])
			s++;
		x->stage_of[v] = u >= 0 ? s : -1;
	}
	for (int s = 0; s < p; s++) {
		if (pb_job_cancelled())
			return pb_err(err, PB_ECANCEL, "shard: cancelled");
		int first, d, tp = c->stage_tp[s];
		pb_dtp_group_devices(c, s, &first, &d);
		if (tp > c->tp)
			c->tp = tp;
		char buf[48];
		const char *scheme = pb_dtp_scheme_of(c->dp, tp, buf, sizeof buf);
		pb_cluster sub = pb_dtp_sub_cluster(cl, d);
		double fl = 0;
		for (int v = 0; v < g->n_nodes; v++) {
			x->mask[v] = x->stage_of[v] == s && x->active[v];
			if (x->mask[v])
				fl += x->cost[v];
		}
		if (fl * f / d > worst)
			worst = fl * f / d;
		double a = p - s < m ? p - s : m;
		pb_dtp_chunk ch;
		/* one activation copy first (a relaxation of the memory row), as
		 * the even rows are solved */
		if ((rc = pb_dtp_chunk_solve(x->cache, &sub, scheme, &x->o->shard, x->mask, 1, &ch,
		                             err)))
			return rc;
		if (ch.ok && train && a > 1 &&
		    ch.mem_param + a * ch.mem_act > cl->memory * (1 + 1e-9)) {
			json_decref(ch.ops);
			if ((rc = pb_dtp_chunk_solve(x->cache, &sub, scheme, &x->o->shard, x->mask,
			                             a, &ch, err)))
				return rc;
		}
		if (!ch.ok) {
			json_decref(ch.ops);
			c->ok = 0;
			snprintf(c->error, sizeof c->error, "stage %d: %.140s", s, ch.error);
			return PB_OK;
		}
		double mem = ch.mem_param + (train ? a : 1) * ch.mem_act;
		if (x->chunks)
			json_array_set_new(
			    x->chunks, (size_t)s,
			    json_pack("{s:i,s:i,s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:o}", "chunk", s,
			              "group", s, "scheme", scheme ? scheme : "1", "recompute",
			              pb_recompute_names[ch.recompute], "time", ch.time - ch.grad,
			              "grad_sync", ch.grad, "param_bytes", ch.mem_param,
			              "act_bytes", ch.mem_act, "act_copies", train ? a : 1.0, "ops",
			              ch.ops ? ch.ops : json_array()));
		else
			json_decref(ch.ops);
		if (ch.time - ch.grad > c->slowest)
			c->slowest = ch.time - ch.grad;
		if (ch.grad > c->grad)
			c->grad = ch.grad;
		if (mem > c->memory)
			c->memory = mem;
	}
	c->fits = c->memory <= cl->memory * (1 + 1e-9);
	/* boundary transfers: a tensor once from its producer's stage to its
	 * last consumer's, resharded between the two groups */
	double *bytes = calloc((size_t)p + 1, sizeof(double));
	if (!bytes)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	for (int t = 0; t < g->n_tensors; t++) {
		const pb_tensor *tt = &g->tensors[t];
		int w = tt->producer;
		if (w < 0 || x->stage_of[w] < 0)
			continue;
		int last = x->stage_of[w];
		for (int k = 0; k < tt->n_consumers; k++) {
			int v = tt->consumers[k];
			if (x->stage_of[v] > last)
				last = x->stage_of[v];
		}
		for (int k = x->stage_of[w]; k < last; k++)
			bytes[k] += pb_tensor_bytes(tt);
	}
	for (int k = 0; k + 1 < p; k++) {
		int fa, na, fb, nb;
		pb_dtp_group_devices(c, k, &fa, &na);
		pb_dtp_group_devices(c, k + 1, &fb, &nb);
		const pb_link *l =
		    fa / dpn != fb / dpn || na > dpn || nb > dpn ? &cl->inter : &cl->intra;
		int dm = na < nb ? na : nb;
		double t = bytes[k] > 0 ? l->latency + bytes[k] / dm / l->bw * (train ? 2 : 1) : 0;
		if (t > c->p2p)
			c->p2p = t;
	}
	free(bytes);
	c->step_time = (c->slowest + c->p2p) * (m + p - 1) + c->grad;
	c->bubble = (double)(p - 1) / (m + p - 1);
	c->bound = worst * (m + p - 1);
	return PB_OK;
}

/* The DP's split costed by FLOPs; the stage MILPs may disagree (a stage's
 * communication, a degree that shards one operator badly). Moves each
 * boundary one layer unit either way while the exact step improves (the
 * cache answers the stages whose content was solved before), at most 4
 * passes. */
static int refine(uctx *x, pb_dtp_config *c, pb_error *err)
{
	for (int pass = 0; pass < 4; pass++) {
		int moved = 0;
		for (int k = 0; k + 1 < c->pp; k++)
			for (int dir = -1; dir <= 1; dir += 2) {
				int lo = k ? c->stage_end[k - 1] : 0, e = c->stage_end[k] + dir;
				if (e <= lo || e >= c->stage_end[k + 1])
					continue;
				pb_dtp_config t = *c;
				t.stage_end[k] = (short)e;
				int rc = eval(x, &t, err);
				if (rc)
					return rc;
				if (t.ok && pb_dtp_better(&t, c)) {
					*c = t;
					moved = 1;
				}
			}
		if (!moved)
			break;
	}
	return PB_OK;
}

static void scheme_text(pb_dtp_config *c)
{
	size_t n = sizeof c->scheme, k = (size_t)snprintf(c->scheme, n, "tp ");
	for (int s = 0; s < c->pp && k < n; s++)
		k += (size_t)snprintf(c->scheme + k, n - k, "%s%d", s ? "+" : "", c->stage_tp[s]);
}

/* Seeds: the (dp, m) of the best fitting pipeline rows (else the best
 * rows), best first, distinct. */
static int seeds(const pb_dtp_result *r, int *sdp, int *sm)
{
	int n = 0;
	for (int fit = 1; fit >= 0 && n == 0; fit--)
		while (n < SEEDS) {
			int b = -1;
			for (int i = 0; i < r->n; i++) {
				const pb_dtp_config *c = &r->cfg[i];
				if (c->pp < 2 || !c->ok || c->uneven || (fit && !c->fits))
					continue;
				int seen = 0;
				for (int k = 0; k < n; k++)
					seen |= sdp[k] == c->dp && sm[k] == c->m;
				if (!seen && (b < 0 || pb_dtp_better(c, &r->cfg[b])))
					b = i;
			}
			if (b < 0)
				break;
			sdp[n] = r->cfg[b].dp;
			sm[n++] = r->cfg[b].m;
		}
	return n;
}

int pb_dtp_uneven_search(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o, long B,
                         pb_dtp_result *r, pb_error *err)
{
	if (o->tp || o->v || o->sched == PB_SCHED_INTERLEAVED || o->pp == 1 ||
	    (o->dp && o->pp && o->m && o->sched >= 0))
		return PB_OK;
	int sdp[SEEDS], sm[SEEDS], ns = seeds(r, sdp, sm), rc = PB_OK;
	double inc = o->incumbent > 0 ? o->incumbent : INFINITY;
	for (int i = 0; i < r->n; i++)
		if (r->cfg[i].ok && r->cfg[i].fits && r->cfg[i].step_time < inc)
			inc = r->cfg[i].step_time;
	for (int q = 0; q < ns && rc == PB_OK; q++) {
		if ((rc = pb_dtp_reload(o, B / sm[q], gp, err)))
			break;
		uctx x;
		if ((rc = ctx_open(&x, *gp, cl, o, err)) || x.U < 2) {
			ctx_close(&x);
			continue;
		}
		pb_dtp_config c;
		memset(&c, 0, sizeof c);
		c.dp = sdp[q];
		c.m = sm[q];
		c.sched = PB_SCHED_1F1B;
		c.v = 1;
		c.uneven = 1;
		double w = split_groups(&x, c.dp, c.m, cl->n_devices / c.dp, o->pp, &c);
		if (w < 0) {
			rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
		} else if (isfinite(w)) {
			int same = 1;
			for (int s = 1; s < c.pp; s++)
				same &= c.stage_tp[s] == c.stage_tp[0];
			double f = (o->pipe.train ? 3.0 : 1.0) / cl->flops;
			c.bound = w * f * (c.m + c.pp - 1);
			pb_dtp_config *row = same ? NULL : pb_dtp_result_add(r);
			if (!same && !row) {
				rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
			} else if (row && isfinite(inc) && c.bound >= inc * (1 - 1e-12)) {
				*row = c;
				row->pruned = 1;
				row->tp = 0;
				for (int s = 0; s < c.pp; s++)
					row->tp = c.stage_tp[s] > row->tp ? c.stage_tp[s] : row->tp;
				scheme_text(row);
				snprintf(row->error, sizeof row->error,
				         "pruned: bound %.6g s >= %.6g s of a plan that fits",
				         c.bound, inc);
				r->pruned++;
			} else if (row) {
				rc = eval(&x, &c, err);
				if (rc == PB_OK && c.ok)
					rc = refine(&x, &c, err);
				scheme_text(&c);
				*row = c;
				if (rc == PB_OK && c.ok && c.fits && c.step_time < inc)
					inc = c.step_time;
			}
		}
		long milps, hits;
		pb_dtp_cache_stats(x.cache, &milps, &hits);
		r->milps += milps;
		r->cache_hits += hits;
		ctx_close(&x);
	}
	r->g = *gp;
	return rc;
}

int pb_dtp_uneven_plan(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                       const pb_dtp_config *want, long B, pb_plan **out, pb_error *err)
{
	*out = NULL;
	int rc;
	if ((rc = pb_dtp_reload(o, B / want->m, gp, err)))
		return rc;
	uctx x;
	if ((rc = ctx_open(&x, *gp, cl, o, err)))
		goto done;
	pb_dtp_cache_keep_ops(x.cache);
	x.chunks = json_array();
	for (int k = 0; x.chunks && k < want->pp; k++)
		json_array_append_new(x.chunks, json_null());
	if (!x.chunks) {
		rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
		goto done;
	}
	pb_dtp_config c;
	memset(&c, 0, sizeof c);
	c.dp = want->dp;
	c.m = want->m;
	c.pp = want->pp;
	c.sched = PB_SCHED_1F1B;
	c.v = 1;
	c.uneven = 1;
	memcpy(c.stage_tp, want->stage_tp, sizeof c.stage_tp);
	memcpy(c.stage_end, want->stage_end, sizeof c.stage_end);
	if ((rc = eval(&x, &c, err)))
		goto done;
	scheme_text(&c);
	if (!c.ok || fabs(c.step_time - want->step_time) > 1e-9 * want->step_time)
		rc = pb_err(
		    err, PB_EINPUT,
		    "shard: the plan of dp %d pp %d m %d %s costs %.9g s, its row %.9g s (%s)",
		    want->dp, want->pp, want->m, want->scheme, c.step_time, want->step_time,
		    c.ok ? "differs" : c.error);
	else
		rc = pb_dtp_plan_build(*gp, cl, &c, B, o->pipe.train, x.stage_of, x.chunks, out,
		                       err);
done:
	ctx_close(&x);
	return rc;
}
