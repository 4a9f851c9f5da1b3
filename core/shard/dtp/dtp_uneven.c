/*
 * shard/dtp/dtp_uneven.c — pipeline configurations whose stages have different
 * device groups (dtp_uneven.h, pb_dtp_uneven_search).
 *
 * An even configuration puts every stage on dp x tp devices. When one layer
 * unit outweighs the rest — a GPT's language-model head over a large
 * vocabulary — the stage holding it is the slowest however the layers are
 * cut, and the other stages idle. Here stage s gets its own tensor degree
 * tp_s (dp fixed, so the gradient all-reduce pairs the replicas of every
 * stage): dp x tp_s consecutive devices, sum over the stages = N.
 *
 * Choosing the groups: a DP over the layer units in order (cut after the
 * last operator of a repeated block, as pb_pipeline_layers_split cuts: the
 * first unit holds the embedding and the first block, the last the head),
 * the stage count j, and the degree units used k (dp devices each):
 *   best[j][i][k] = min over a < i, t of max(best[j-1][a][k-t],
 *                   FLOPs(units a..i-1) / (dp t)),
 * the slowest stage's FLOPs per device least; a degree t is allowed when it
 * divides N/dp or its group is whole nodes, and a group sits inside one node
 * or on whole nodes. Each stage count j has the bound that x the 1F1B slots
 * (m + j - 1) (FLOPs x3 when training, at the device rate); a second pass of
 * the same shape (gdp_pass) keeps j's slowest stage and minimises the sum of
 * squared per-device stage FLOPs (the other stages balanced too).
 *
 * The DP is a proxy (FLOPs, not the stage MILP's time: a stage's
 * collectives and badly sharded operators are not in it), so the degrees
 * are chosen by the stage MILPs among its answers: the stage count of the
 * least bound (the FLOPs choice) and up to two more whose bound is within
 * 1.5x of it, each with its own degrees, are costed exactly
 * (dtp_uneven_eval.c: every stage's MILP on its own sub-cluster and scheme
 * "dp x tp_s", the chunk cache answering identical (content, degree)
 * chunks) and improved by local moves — boundaries one unit, two groups
 * trading devices — kept only while the exact step improves; the best is
 * the seed's 1F1B row. A later answer is costed only when its degrees are
 * unequal and its bound is below the best step so far.
 *
 * Interleaving (Narayanan et al. 2021, section 2.2) on those groups: when m
 * is a multiple of the stage count p, V = 2, 3, ... (while p x V chunks fit
 * the units and PB_DTP_UNEVEN_MAX, and while V beats the row before; V
 * fixed by --schedule interleaved:V): chunk k on group k mod p, the chunks
 * cut by a DP of the same two-pass shape: each group keeps its 1F1B
 * stage's FLOPs, V targets of them (the end chunks at least the embedding's
 * and the head's unit), the largest chunk FLOPs over its target least, then
 * the least sum of squares; then costed and moved as above. The group's
 * time is the sum of its chunks', so the slowest device group drives the
 * interleaved bubble.
 *
 * Where it is tried (it can pay): seeds are the two best fitting pipeline
 * rows' (dp, m) of the even search (1F1B or not); a seed whose FLOPs choice
 * has equal degrees is the even search's own ground and is skipped; one
 * whose bound is not below the best fitting step known is a pruned row; the
 * DP is skipped when its table would be too large (more than 4e7 steps:
 * e.g. N/dp = 1024 with a 96-layer model).
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

#include "shard/dtp/dtp_uneven.h"
#include "shard/dtp/dtp_plan.h"
#include "shard/dtp/dtp_stage.h"
#include "shard/layer_classes.h"
#include "shard/strategy/strategy_problem.h"
#include "util/job.h"

enum { SEEDS = 2 };
#define DP_WORK_MAX 4e7
#define ALT_RATIO 1.5
enum { ALTS = 3 };

void pb_dtp_uneven_close(pb_uneven_ctx *x)
{
	free(x->cost);
	free(x->ucost);
	free(x->ublocks);
	free(x->unit_of);
	free(x->chunk_of);
	free(x->active);
	free(x->mask);
	pb_dtp_stage_cache_free(x->cache);
	json_decref(x->chunks);
	memset(x, 0, sizeof *x);
}

int pb_dtp_uneven_open(pb_uneven_ctx *x, const pb_graph *g, const pb_cluster *cl,
                       const pb_dtp_opts *o, pb_error *err)
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
	x->chunk_of = malloc(((size_t)n + 1) * sizeof(int));
	x->active = malloc((size_t)n + 1);
	x->mask = malloc((size_t)n + 1);
	x->cache = pb_dtp_stage_cache_new(g);
	if (x->cache)
		pb_dtp_stage_cache_keep_ops(x->cache); /* the plan of the best row (keep_plan) */
	if (!x->cost || !x->ucost || !x->ublocks || !x->unit_of || !x->chunk_of || !x->active ||
	    !x->mask || !x->cache)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	pb_strategy_problem_dynamic_nodes(g, x->active);
	int last = -1;
	for (int v = 0; v < n; v++) {
		x->cost[v] = x->active[v] ? pb_strategy_problem_node_flops(g, &g->nodes[v]) : -1;
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
static void shardable(const pb_uneven_ctx *x, const int *ts, int nt, unsigned char *ok)
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

/* The tables of the groups DP: [stage j][units i][degree units k]. */
typedef struct gdp {
	const pb_uneven_ctx *x;
	int dp, U, K, J, nt;
	int *ts;           /* the allowed degrees */
	unsigned char *ok; /* [unit][degree index]: shardable */
	double *pre;       /* prefix FLOPs of the units */
	double *val;       /* the pass's value */
	int *from, *fromt; /* its argmin: previous unit end, degree */
} gdp;

#define AT(d, arr, j, i, k)                                                                        \
	(d)->arr[((size_t)(j) * ((d)->U + 1) + (size_t)(i)) * ((d)->K + 1) + (size_t)(k)]

/* One pass over stages 1..J. T infinite: val = the least slowest stage's
 * FLOPs per device (max); else val = the least sum of squared per-device
 * stage FLOPs over splits whose every stage is within T. */
static void gdp_pass(gdp *d, int J, double T)
{
	const pb_cluster *cl = d->x->cl;
	size_t cells = (size_t)(d->J + 1) * (d->U + 1) * (d->K + 1);
	for (size_t q = 0; q < cells; q++)
		d->val[q] = INFINITY;
	AT(d, val, 0, 0, 0) = 0;
	for (int j = 1; j <= J; j++) {
		pb_job_tick();
		for (int i = j; i <= d->U; i++)
			for (int k = j; k <= d->K; k++)
				for (int q = 0; q < d->nt && d->ts[q] <= k; q++) {
					int t = d->ts[q];
					if (!placeable(cl, d->dp * (k - t), d->dp * t))
						continue;
					for (int a = i - 1;
					     a >= j - 1 && d->ok[(size_t)a * d->nt + q]; a--) {
						double p = AT(d, val, j - 1, a, k - t);
						double w = (d->pre[i] - d->pre[a]) / (d->dp * t);
						if (!isfinite(p) || (isfinite(T) && w > T))
							continue;
						double v =
						    isfinite(T) ? p + w * w : (p > w ? p : w);
						if (v < AT(d, val, j, i, k)) {
							AT(d, val, j, i, k) = v;
							AT(d, from, j, i, k) = a;
							AT(d, fromt, j, i, k) = t;
						}
					}
				}
	}
}

int pb_dtp_uneven_split(const pb_uneven_ctx *x, int m, int fixed_pp, pb_dtp_config *c, int na)
{
	const pb_cluster *cl = x->cl;
	int dp = c[0].dp;
	gdp d = {.x = x, .dp = dp, .U = x->U, .K = cl->n_devices / dp};
	d.J = d.U < d.K ? d.U : d.K;
	if (d.J > PB_DTP_UNEVEN_MAX)
		d.J = PB_DTP_UNEVEN_MAX;
	if (d.J < 2)
		return 0;
	size_t cells = (size_t)(d.J + 1) * (d.U + 1) * (d.K + 1);
	d.ts = malloc(((size_t)d.K + 1) * sizeof(int));
	d.pre = calloc((size_t)d.U + 1, sizeof(double));
	d.val = malloc(cells * sizeof(double));
	d.from = malloc(cells * sizeof(int));
	d.fromt = malloc(cells * sizeof(int));
	int n = -1, js[PB_DTP_UNEVEN_MAX + 1];
	double key[PB_DTP_UNEVEN_MAX + 1], tj[PB_DTP_UNEVEN_MAX + 1];
	if (!d.ts || !d.pre || !d.val || !d.from || !d.fromt)
		goto done;
	for (int t = 1; t <= d.K; t++)
		if (pb_dtp_uneven_eval_degree_ok(cl, dp, t))
			d.ts[d.nt++] = t;
	n = 0;
	if ((double)d.J * d.U * d.U * d.K * d.nt / 2 > DP_WORK_MAX)
		goto done;
	if (!(d.ok = malloc((size_t)d.U * d.nt + 1))) {
		n = -1;
		goto done;
	}
	shardable(x, d.ts, d.nt, d.ok);
	for (int i = 0; i < d.U; i++)
		d.pre[i + 1] = d.pre[i] + x->ucost[i];
	gdp_pass(&d, d.J, INFINITY);
	/* the stage counts by their bound, FLOPs x slots (ties: fewer stages) */
	int nj = 0;
	for (int j = 2; j <= d.J; j++) {
		double b = AT(&d, val, j, d.U, d.K);
		if (!isfinite(b) || (fixed_pp && j != fixed_pp))
			continue;
		int i = nj++;
		for (; i > 0 && b * (m + j - 1) < key[i - 1] * (1 - 1e-12); i--) {
			key[i] = key[i - 1];
			js[i] = js[i - 1];
			tj[i] = tj[i - 1];
		}
		key[i] = b * (m + j - 1);
		js[i] = j;
		tj[i] = b;
	}
	/* per stage count, within that slowest stage the least sum of squares */
	pb_dtp_config tmpl = c[0];
	for (int q = 0; q < nj && n < na && key[q] <= key[0] * ALT_RATIO; q++) {
		gdp_pass(&d, js[q], tj[q] * (1 + 1e-9));
		if (!isfinite(AT(&d, val, js[q], d.U, d.K)))
			continue;
		pb_dtp_config *o = &c[n++];
		*o = tmpl;
		o->pp = js[q];
		for (int j = js[q], i = d.U, k = d.K; j > 0; j--) {
			int a = AT(&d, from, j, i, k), t = AT(&d, fromt, j, i, k);
			o->stage_tp[j - 1] = (short)t;
			o->stage_end[j - 1] = (short)i;
			i = a;
			k -= t;
		}
	}
done:
	free(d.ok);
	free(d.ts);
	free(d.pre);
	free(d.val);
	free(d.from);
	free(d.fromt);
	return n;
}
#undef AT

/* One pass of the chunk split: val[k][i] over chunks 0..k-1 on units
 * 0..i-1, chunk k's weight its FLOPs over its target tgt[k]; T as in
 * gdp_pass. */
static void chunk_pass(int U, int nc, const double *pre, const double *tgt, double T, double *val,
                       int *from)
{
	for (size_t q = 0; q < (size_t)(nc + 1) * (U + 1); q++)
		val[q] = INFINITY;
	val[0] = 0;
	for (int k = 1; k <= nc; k++)
		for (int i = k; i <= U - (nc - k); i++)
			for (int a = k - 1; a < i; a++) {
				double p = val[(size_t)(k - 1) * (U + 1) + a];
				double w = (pre[i] - pre[a]) / tgt[k - 1];
				if (!isfinite(p) || (isfinite(T) && w > T))
					continue;
				double v = isfinite(T) ? p + w * w : (p > w ? p : w);
				if (v < val[(size_t)k * (U + 1) + i]) {
					val[(size_t)k * (U + 1) + i] = v;
					from[(size_t)k * (U + 1) + i] = a;
				}
			}
}

/* Chunk targets: group s keeps the FLOPs F_s of its 1F1B stage (c's
 * stage_end), F_s / V per chunk; the first chunk holds at least the first
 * unit (the embedding) and the last at least the last (the head), and the
 * other chunks of their groups share what is left (at least the lightest
 * unit each: a chunk holds one unit or more). */
static void chunk_targets(const pb_uneven_ctx *x, const pb_dtp_config *c, const double *pre,
                          double *tgt)
{
	int p = c->pp, V = c->v, nc = p * V, U = x->U;
	double unit = INFINITY; /* a chunk's least share: the lightest unit */
	for (int u = 0; u < U; u++)
		unit = x->ucost[u] > 0 && x->ucost[u] < unit ? x->ucost[u] : unit;
	if (!isfinite(unit))
		unit = 1;
	for (int k = 0; k < nc; k++) {
		int s = k % p;
		double F = pre[c->stage_end[s]] - pre[s ? c->stage_end[s - 1] : 0];
		tgt[k] = F / V;
		int edge = s == 0       ? 0
		           : s == p - 1 ? nc - 1
		                        : -1; /* the chunk holding an end unit */
		if (edge < 0)
			continue;
		double e = fmax(F / V, edge ? x->ucost[U - 1] : x->ucost[0]);
		tgt[k] = k == edge ? e : fmax((F - e) / (V - 1), unit);
	}
}

int pb_dtp_uneven_split_chunks(const pb_uneven_ctx *x, pb_dtp_config *c)
{
	int U = x->U, nc = c->pp * c->v;
	if (nc > U || nc > PB_DTP_UNEVEN_MAX || c->v < 2)
		return 1;
	size_t cells = (size_t)(nc + 1) * (U + 1);
	double *pre = calloc((size_t)U + 1, sizeof(double)), *val = malloc(cells * sizeof(double));
	double tgt[PB_DTP_UNEVEN_MAX] = {0};
	int *from = malloc(cells * sizeof(int)), rc = -1;
	if (pre && val && from) {
		for (int i = 0; i < U; i++)
			pre[i + 1] = pre[i] + x->ucost[i];
		chunk_targets(x, c, pre, tgt);
		chunk_pass(U, nc, pre, tgt, INFINITY, val, from);
		double T = val[(size_t)nc * (U + 1) + U] * (1 + 1e-9);
		chunk_pass(U, nc, pre, tgt, T, val, from);
		rc = isfinite(val[(size_t)nc * (U + 1) + U]) ? 0 : 1;
		for (int k = nc, i = U; rc == 0 && k > 0; k--) {
			c->stage_end[k - 1] = (short)i;
			i = from[(size_t)k * (U + 1) + i];
		}
	}
	free(pre);
	free(val);
	free(from);
	return rc;
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
				if (!seen && (b < 0 || pb_dtp_search_better(c, &r->cfg[b])))
					b = i;
			}
			if (b < 0)
				break;
			sdp[n] = r->cfg[b].dp;
			sm[n++] = r->cfg[b].m;
		}
	return n;
}

/* The search of one seed's state: the incumbent and the rows' counters. */
typedef struct seed_run {
	pb_uneven_ctx x;
	pb_dtp_result *r;
	double inc;  /* best fitting step known (INFINITY: none) */
	int degrees; /* choose degrees by stage MILP times too (0: the FLOPs DP's) */
} seed_run;

static int all_equal(const pb_dtp_config *c)
{
	int same = 1;
	for (int s = 1; s < c->pp; s++)
		same &= c->stage_tp[s] == c->stage_tp[0];
	return same;
}

/* The FLOPs bound of c's split: its slowest group's FLOPs per device at the
 * device rate (x3 training) times the schedule's slots. */
static double split_bound(const pb_uneven_ctx *x, const pb_dtp_config *c)
{
	double worst = 0;
	int nc = c->pp * c->v;
	for (int s = 0; s < c->pp; s++) {
		double f = 0;
		for (int k = s; k < nc; k += c->pp)
			for (int u = k ? c->stage_end[k - 1] : 0; u < c->stage_end[k]; u++)
				f += x->ucost[u];
		f /= (double)c->dp * c->stage_tp[s];
		worst = f > worst ? f : worst;
	}
	double slots = c->v > 1 ? c->m + (double)(c->pp - 1) / c->v : c->m + c->pp - 1;
	return worst * (x->o->pipe.train ? 3.0 : 1.0) / x->cl->flops * slots;
}

/* Makes c a pruned row: its bound is not below the incumbent. */
static void prune(seed_run *sr, pb_dtp_config *c)
{
	c->pruned = 1;
	c->ok = 0;
	c->tp = 0;
	for (int s = 0; s < c->pp; s++)
		c->tp = c->stage_tp[s] > c->tp ? c->stage_tp[s] : c->tp;
	pb_dtp_uneven_eval_scheme_text(c);
	snprintf(c->error, sizeof c->error, "pruned: bound %.6g s >= %.6g s of a plan that fits",
	         c->bound, sr->inc);
	sr->r->pruned++;
}

/* The best of the candidate splits c[0..n-1] (c[0] first, bounds set),
 * each costed exactly and moved (pb_dtp_uneven_eval_improve), into *out: pruned when
 * c[0]'s bound is not below the incumbent; a later candidate is tried only
 * when it has unequal degrees and its bound is below the best step so far. */
static int best_of(seed_run *sr, pb_dtp_config *c, int n, pb_dtp_config *out, pb_error *err)
{
	*out = c[0];
	if (isfinite(sr->inc) && c[0].bound >= sr->inc * (1 - 1e-12)) {
		prune(sr, out);
		return PB_OK;
	}
	int rc = PB_OK;
	for (int q = 0; q < n && rc == PB_OK; q++) {
		pb_dtp_config t = c[q];
		if (q && (all_equal(&t) || (out->ok && t.bound >= out->step_time * (1 - 1e-12)) ||
		          (isfinite(sr->inc) && t.bound >= sr->inc * (1 - 1e-12))))
			continue;
		rc = pb_dtp_uneven_eval(&sr->x, &t, err);
		if (rc == PB_OK && t.ok)
			rc = pb_dtp_uneven_eval_improve(&sr->x, &t, sr->degrees, err);
		pb_dtp_uneven_eval_scheme_text(&t);
		if (q == 0 || (t.ok && pb_dtp_search_better(&t, out)))
			*out = t;
	}
	return rc;
}

/* The plan of c, just costed, replaces r->kept: c costed again with every
 * chunk's solve recorded, from the same cache, so the plan has the row's
 * numbers (solving again later, the cache would have another history: a
 * chunk answered by a plan for more activation copies may differ). */
static int keep_plan(seed_run *sr, const pb_dtp_config *c, pb_error *err)
{
	pb_uneven_ctx *x = &sr->x;
	int nc = c->pp * (c->sched == PB_SCHED_1F1B ? 1 : c->v);
	x->chunks = json_array();
	for (int k = 0; x->chunks && k < nc; k++)
		json_array_append_new(x->chunks, json_null());
	if (!x->chunks)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	long m0, h0, m1, h1;
	pb_dtp_stage_cache_stats(x->cache, &m0, &h0);
	pb_dtp_config t = *c;
	int rc = pb_dtp_uneven_eval(x, &t, err);
	pb_dtp_stage_cache_stats(x->cache, &m1, &h1);
	x->replayed += h1 - h0;
	pb_plan *plan = NULL;
	if (rc == PB_OK && t.ok && t.step_time == c->step_time)
		rc = pb_dtp_plan_build(x->g, x->cl, c, sr->r->batch, x->o->pipe.train, x->chunk_of,
		                       x->chunks, &plan, err);
	json_decref(x->chunks);
	x->chunks = NULL;
	if (plan) {
		pb_plan_free(sr->r->kept);
		sr->r->kept = plan;
		sr->r->kept_cfg = *c;
	}
	return rc;
}

/* Appends c as a row (the incumbent follows it; the best row's plan is
 * kept). */
static int add_row(seed_run *sr, const pb_dtp_config *c, pb_error *err)
{
	pb_dtp_config *row = pb_dtp_search_result_add(sr->r);
	if (!row)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	*row = *c;
	if (c->ok && c->fits && c->step_time < sr->inc)
		sr->inc = c->step_time;
	if (c->ok && (!sr->r->kept || pb_dtp_search_better(c, &sr->r->kept_cfg)))
		return keep_plan(sr, c, err);
	return PB_OK;
}

/* Interleaved rows on base's groups: V = 2, 3, ... while pp x V chunks fit
 * the units and PB_DTP_UNEVEN_MAX, and while V beats the row before (V = 2:
 * base, the groups' 1F1B row); V fixed by --schedule interleaved:V. */
static int interleave(seed_run *sr, const pb_dtp_config *base, pb_error *err)
{
	const pb_dtp_opts *o = sr->x.o;
	int p = base->pp, rc = PB_OK;
	if (base->m % p || (o->sched >= 0 && o->sched != PB_SCHED_INTERLEAVED))
		return PB_OK;
	pb_dtp_config last = *base;
	for (int V = o->v ? o->v : 2; rc == PB_OK; V++) {
		pb_dtp_config c = *base, row;
		c.sched = PB_SCHED_INTERLEAVED;
		c.v = V;
		c.pruned = 0;
		int s = pb_dtp_uneven_split_chunks(&sr->x, &c);
		if (s < 0)
			return pb_err(err, PB_ENOMEM, "shard: out of memory");
		if (s)
			break;
		c.bound = split_bound(&sr->x, &c);
		if ((rc = best_of(sr, &c, 1, &row, err)) || (rc = add_row(sr, &row, err)))
			break;
		if (o->v || row.pruned || !row.ok || !pb_dtp_search_better(&row, &last))
			break;
		last = row;
	}
	return rc;
}

/* One seed (dp, m) on the graph at the micro-batch (sr->x open): the
 * groups' 1F1B row (not listed when interleaving is fixed), then
 * interleaved rows on its groups. */
static int run_seed(seed_run *sr, int dp, int m, pb_error *err)
{
	const pb_dtp_opts *o = sr->x.o;
	pb_dtp_config alt[ALTS], c;
	memset(alt, 0, sizeof alt);
	alt[0].dp = dp;
	alt[0].m = m;
	alt[0].sched = PB_SCHED_1F1B;
	alt[0].v = 1;
	alt[0].uneven = 1;
	int n = pb_dtp_uneven_split(&sr->x, m, o->pp, alt, sr->degrees ? ALTS : 1), rc;
	if (n < 0)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	/* equal degrees from the FLOPs DP: the even search's ground */
	if (n == 0 || all_equal(&alt[0]))
		return PB_OK;
	for (int q = 0; q < n; q++)
		alt[q].bound = split_bound(&sr->x, &alt[q]);
	if ((rc = best_of(sr, alt, n, &c, err)))
		return rc;
	if (o->sched != PB_SCHED_INTERLEAVED && (rc = add_row(sr, &c, err)))
		return rc;
	if (!c.ok) { /* pruned or failed: interleave the FLOPs DP's groups */
		c = alt[0];
		c.step_time = INFINITY;
	}
	return interleave(sr, &c, err);
}

int pb_dtp_uneven_search(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o, long B,
                         pb_dtp_result *r, pb_error *err)
{
	/* Lua cut and stage rules: only the even search obeys them */
	if (o->tp || o->pp == 1 || (o->dp && o->pp && o->m && o->sched >= 0) || o->pipe.rules)
		return PB_OK;
	int sdp[SEEDS], sm[SEEDS], ns = seeds(r, sdp, sm), rc = PB_OK;
	seed_run sr = {.r = r, .inc = o->incumbent > 0 ? o->incumbent : INFINITY, .degrees = 1};
	for (int i = 0; i < r->n; i++)
		if (r->cfg[i].ok && r->cfg[i].fits && r->cfg[i].step_time < sr.inc)
			sr.inc = r->cfg[i].step_time;
	for (int q = 0; q < ns && rc == PB_OK; q++) {
		if ((rc = pb_dtp_search_reload(o, B / sm[q], gp, err)))
			break;
		if ((rc = pb_dtp_uneven_open(&sr.x, *gp, cl, o, err)) == PB_OK && sr.x.U >= 2)
			rc = run_seed(&sr, sdp[q], sm[q], err);
		if (sr.x.cache) {
			long milps, hits;
			pb_dtp_stage_cache_stats(sr.x.cache, &milps, &hits);
			r->milps += milps;
			r->cache_hits += hits - sr.x.replayed;
		}
		pb_dtp_uneven_close(&sr.x);
	}
	r->g = *gp;
	return rc;
}

int pb_dtp_uneven_plan(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                       const pb_dtp_config *want, long B, pb_dtp_result *r, pb_plan **out,
                       pb_error *err)
{
	*out = NULL;
	int rc;
	if (r && r->kept && r->kept_cfg.uneven && r->kept_cfg.dp == want->dp &&
	    r->kept_cfg.pp == want->pp && r->kept_cfg.m == want->m &&
	    r->kept_cfg.sched == want->sched && r->kept_cfg.v == want->v &&
	    r->kept_cfg.step_time == want->step_time &&
	    !memcmp(r->kept_cfg.stage_tp, want->stage_tp, sizeof want->stage_tp) &&
	    !memcmp(r->kept_cfg.stage_end, want->stage_end, sizeof want->stage_end)) {
		*out = r->kept;
		r->kept = NULL;
		return PB_OK;
	}
	if ((rc = pb_dtp_search_reload(o, B / want->m, gp, err)))
		return rc;
	pb_uneven_ctx x;
	if ((rc = pb_dtp_uneven_open(&x, *gp, cl, o, err)))
		goto done;
	int nc = want->pp * (want->sched == PB_SCHED_1F1B ? 1 : want->v);
	x.chunks = json_array();
	for (int k = 0; x.chunks && k < nc; k++)
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
	c.sched = want->sched;
	c.v = want->v;
	c.uneven = 1;
	memcpy(c.stage_tp, want->stage_tp, sizeof c.stage_tp);
	memcpy(c.stage_end, want->stage_end, sizeof c.stage_end);
	if ((rc = pb_dtp_uneven_eval(&x, &c, err)))
		goto done;
	pb_dtp_uneven_eval_scheme_text(&c);
	if (!c.ok || fabs(c.step_time - want->step_time) > 1e-9 * want->step_time)
		rc = pb_err(
		    err, PB_EINPUT,
		    "shard: the plan of dp %d pp %d m %d %s costs %.9g s, its row %.9g s (%s)",
		    want->dp, want->pp, want->m, want->scheme, c.step_time, want->step_time,
		    c.ok ? "differs" : c.error);
	else
		rc = pb_dtp_plan_build(*gp, cl, &c, B, o->pipe.train, x.chunk_of, x.chunks, out,
		                       err);
done:
	pb_dtp_uneven_close(&x);
	return rc;
}
