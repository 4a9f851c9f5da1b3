/*
 * shard/dtp/dtp_search.c — the data x tensor x pipeline search (dtp_search.h).
 *
 * Units of work: (pp, m) pairs, pp > 1 dividing the device count, m from
 * the micro-batch candidates, and pp = 1 with m > 1: gradient accumulation
 * (Megatron-LM and PyTorch DDP: one micro-batch's activations held, the
 * gradients accumulated, one all-reduce per step), one chunk costed as a
 * 1F1B pipeline of one stage, step = m x t + G. A unit reloads the model at the micro-batch
 * B/m, then for every schedule splits it into pp x V chunks, and for every
 * (dp, tp) with dp x tp = N/pp solves the chunks on the scheme "dp x tp"
 * (dtp_stage.c, cached per content) and costs the configuration. Under
 * mpirun the units go round-robin to the ranks and the rows are gathered in
 * unit order, so every rank (and the report) sees the serial table.
 */
#include "shard/dtp/dtp_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shard/dtp/dtp_interleave.h"
#include "shard/dtp/dtp_plan.h"
#include "shard/dtp/dtp_stage.h"
#include "shard/pipeline/pipeline_layers.h"
#include "shard/pipeline/pipeline_p2p.h"
#include "shard/pipeline/pipeline_plan.h"
#include "shard/search/search.h"
#include "shard/strategy/strategy_problem.h"
#include "util/job.h"
#include "util/ranks.h"

void pb_dtp_search_opts_default(pb_dtp_opts *o)
{
	memset(o, 0, sizeof *o);
	pb_pipeline_plan_opts_default(&o->pipe);
	pb_strategy_problem_opts_default(&o->shard);
	o->sched = -1;
}

int pb_dtp_search_parse_schedule(const char *s, int *sched, int *v, pb_error *err)
{
	if (!strcmp(s, "1f1b")) {
		*sched = PB_SCHED_1F1B;
		*v = 1;
		return PB_OK;
	}
	if (!strncmp(s, "interleaved", 11) && (s[11] == 0 || s[11] == ':')) {
		*sched = PB_SCHED_INTERLEAVED;
		*v = 2;
		if (s[11] == ':') {
			char *end;
			long x = strtol(s + 12, &end, 10);
			if (*end || end == s + 12 || x < 2 || x > 64)
				return pb_err(
				    err, PB_EUSAGE,
				    "shard: --schedule interleaved:V needs V in 2..64, got '%s'",
				    s);
			*v = (int)x;
		}
		return PB_OK;
	}
	return pb_err(err, PB_EUSAGE,
	              "shard: --schedule must be 1f1b, interleaved or interleaved:V, got '%s'", s);
}

void pb_dtp_search_result_free(pb_dtp_result *r)
{
	pb_plan_free(r->kept);
	free(r->cfg);
	memset(r, 0, sizeof *r);
	r->best = -1;
}

int pb_dtp_search_better(const pb_dtp_config *a, const pb_dtp_config *b)
{
	if (a->ok != b->ok)
		return a->ok;
	if (a->fits != b->fits)
		return a->fits;
	if (a->step_time != b->step_time)
		return a->step_time < b->step_time;
	if (a->pp != b->pp)
		return a->pp < b->pp;
	return a->m < b->m;
}

pb_dtp_config *pb_dtp_search_result_add(pb_dtp_result *r)
{
	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 64;
		pb_dtp_config *c = realloc(r->cfg, (size_t)cap * sizeof *c);
		if (!c)
			return NULL;
		r->cfg = c;
		r->cap = cap;
	}
	pb_dtp_config *c = &r->cfg[r->n++];
	memset(c, 0, sizeof *c);
	c->v = 1;
	return c;
}

const char *pb_dtp_search_scheme_of(int dp, int tp, char *buf, size_t n)
{
	if (dp * tp == 1)
		return NULL;
	if (dp > 1 && tp > 1)
		snprintf(buf, n, "%dx%d", dp, tp);
	else
		snprintf(buf, n, "%d", dp * tp);
	return buf;
}

/* ---- pp = 1: the operator-level rows the caller gave ---- */

static int add_operator_level(const pb_dtp_opts *o, int n_dev, pb_dtp_result *r)
{
	for (int dp = 1; dp <= n_dev; dp++) {
		if (n_dev % dp || (o->dp && o->dp != dp) || (o->tp && o->tp != n_dev / dp))
			continue;
		int tp = n_dev / dp;
		char buf[48];
		const char *name = pb_dtp_search_scheme_of(dp, tp, buf, sizeof buf);
		pb_dtp_config *c = pb_dtp_search_result_add(r);
		if (!c)
			return -1;
		c->dp = dp;
		c->tp = tp;
		c->pp = 1;
		c->m = 1;
		snprintf(c->scheme, sizeof c->scheme, "%s", name ? name : "1");
		snprintf(c->error, sizeof c->error, "scheme %s not solved", c->scheme);
		for (int i = 0; i < o->n_op; i++)
			if (!strcmp(o->op[i].scheme, c->scheme) ||
			    (!name && !strcmp(o->op[i].scheme, "1"))) {
				c->ok = o->op[i].ok;
				c->step_time = o->op[i].step_time;
				c->memory = o->op[i].memory;
				c->mopts = o->op[i].mopts;
				c->fits = o->op[i].fits;
				c->slowest = c->step_time;
				if (c->ok)
					c->error[0] = 0;
				if (o->op[i].cut) { /* proven: cannot beat a scheme solved before */
					c->pruned = 1;
					snprintf(c->error, sizeof c->error, "%s", o->op[i].error);
					r->pruned++;
				}
				break;
			}
	}
	return 0;
}

/* ---- one unit (pp, m) ---- */

/* Activation copies device group s holds (in units of its whole activation
 * per micro-batch): 1F1B min(p - s, m); interleaved the Megatron-LM warm-up
 * count + 1 in chunks, each 1/V of the group's. */
static double inflight(const pb_dtp_unit *u, int s)
{
	if (u->sched == PB_SCHED_1F1B)
		return u->pp - s < u->m ? u->pp - s : u->m;
	int chunks = (u->v - 1) * u->pp + 2 * (u->pp - s - 1) + 1;
	if (chunks > u->v * u->m)
		chunks = u->v * u->m;
	return (double)chunks / u->v;
}

typedef pb_dtp_group_sum group_sum;

void pb_dtp_search_group_add(pb_dtp_group_sum *gs, const pb_dtp_chunk *ch)
{
	gs->proven &= ch->proven;
	gs->time += ch->time - ch->grad;
	gs->grad += ch->grad;
	gs->grad_bytes += ch->grad_bytes;
	gs->backward +=
	    (ch->time - ch->grad) * pb_grad_overlap_backward_share(ch->recompute == PB_RECOMP_FULL);
	gs->mp += ch->mem_param;
	gs->ma += ch->mem_act;
	gs->saved += ch->optim_saved;
	gs->sp_act += ch->sp_act;
	gs->sp_once += ch->sp_once;
}

static void note_overlap(pb_dtp_config *c, const pb_cluster *cl, double grad, double bytes,
                         double backward)
{
	long n = pb_grad_overlap_buckets(bytes, cl->grad_bucket);
	double e = pb_grad_overlap_exposed(grad, backward, n);
	if (e > c->grad_exposed || (e == c->grad_exposed && grad - e > c->grad_hidden)) {
		c->grad_exposed = e;
		c->grad_hidden = grad - e;
		c->grad_buckets = n;
	}
}

void pb_dtp_search_note_group(pb_dtp_config *c, const pb_cluster *cl, const pb_dtp_group_sum *gs,
                              double mem, double acts)
{
	c->proven &= gs->proven;
	if (gs->time > c->slowest)
		c->slowest = gs->time;
	if (gs->grad > c->grad)
		c->grad = gs->grad;
	note_overlap(c, cl, gs->grad, gs->grad_bytes, gs->backward);
	if (mem > c->memory)
		c->memory = mem;
	pb_memory_options_add(&c->mopts, mem, gs->saved, gs->sp_once + acts * gs->sp_act);
}

/* A lower bound of chunk c's time without its gradient all-reduces: its
 * FLOPs (x3 training) over the group's d devices at the device rate (as
 * unit_bound). */
static double chunk_flop_time(const pb_dtp_unit *u, int c)
{
	double f = 0;
	for (int v = 0; v < u->g->n_nodes; v++)
		if (u->active[v] && u->split.stage[v] == c && u->cost[v] > 0)
			f += u->cost[v];
	return f * (u->o->pipe.train ? 3 : 1) / u->d / u->cl->flops * (1 - 1e-9);
}

/* Solves the chunks of group s at act copies into gs. cut (finite): only
 * plans whose time without gradient all-reduces (the chunks solved so far
 * included) is below it, up to cut_grad x a chunk's largest gradient
 * all-reduce time, can win: a chunk proven slower is gs->cut. A chunk's
 * cutoff also leaves out the FLOP time of the group's chunks after it (they
 * add at least that), so that an interleaved group whose chunks together
 * cannot beat it is cut at its first chunk. */
static int solve_group(pb_dtp_unit *u, const pb_cluster *sub, const char *scheme, int s, double act,
                       double cut, double cut_grad, group_sum *gs, char *errbuf, pb_error *err)
{
	const pb_graph *g = u->g;
	memset(gs, 0, sizeof *gs);
	gs->ok = gs->proven = 1;
	double rest = 0; /* FLOP time of the chunks not solved yet */
	for (int c = s; isfinite(cut) && c < u->n_chunks; c += u->pp)
		rest += chunk_flop_time(u, c);
	for (int c = s; c < u->n_chunks; c += u->pp) {
		if (isfinite(cut))
			rest = fmax(rest - chunk_flop_time(u, c), 0);
		int any = 0;
		for (int v = 0; v < g->n_nodes; v++) {
			u->mask[v] = u->split.stage[v] == c && u->active[v];
			any |= u->mask[v];
		}
		if (!any)
			continue;
		pb_dtp_chunk ch;
		pb_shard_opts so = u->o->shard;
		so.mip_gap = u->o->gap;
		so.node_limit = u->o->node_limit;
		if (isfinite(cut)) {
			so.cutoff = fmax(cut - gs->time - rest, 1e-15);
			so.cutoff_grad = cut_grad;
		}
		int rc = pb_dtp_stage_chunk_solve(u->cache, sub, scheme, &so, u->mask,
		                                  u->o->pipe.train ? act : 1, &ch, err);
		if (rc)
			return rc;
		if (!ch.ok) {
			gs->ok = 0;
			gs->cut = ch.cut;
			json_decref(ch.ops);
			snprintf(errbuf, 160, "chunk %d: %.140s", c, ch.error);
			return PB_OK;
		}
		if (u->chunks)
			json_array_set_new(
			    u->chunks, (size_t)c,
			    pb_dtp_plan_chunk_json(c, s, scheme, &ch,
			                           u->o->pipe.train ? inflight(u, s) : 1.0));
		else
			json_decref(ch.ops);
		pb_dtp_search_group_add(gs, &ch);
	}
	return PB_OK;
}

/* A lower bound of the step time of every configuration of the unit's
 * schedule: a device group computes at least its chunks' FLOPs (x3 training)
 * spread over its d devices at the device rate, and the schedule runs the
 * slowest group (m + p - 1) times (interleaved: m + (p - 1)/V); the
 * transfers, collectives, recomputation and padding only add. */
static double unit_bound(const pb_dtp_unit *u, const double *cost)
{
	double worst = 0;
	for (int s = 0; s < u->pp; s++) {
		double f = 0;
		for (int v = 0; v < u->g->n_nodes; v++)
			if (u->active[v] && u->split.stage[v] >= 0 &&
			    u->split.stage[v] % u->pp == s)
				f += cost[v];
		if (f > worst)
			worst = f;
	}
	double t = worst * (u->o->pipe.train ? 3 : 1) / u->d / u->cl->flops;
	if (u->sched == PB_SCHED_1F1B)
		return t * (u->m + u->pp - 1);
	return t * (u->m + (double)(u->pp - 1) / u->v);
}

/* Costs configuration (dp, tp) of the unit. inc > 0: the step time of a
 * plan that fits; a stage proven unable to beat it makes the row pruned. */
int pb_dtp_search_unit_eval(pb_dtp_unit *u, int dp, int tp, double inc, pb_dtp_config *c,
                            pb_error *err)
{
	const pb_cluster *cl = u->cl;
	int train = u->o->pipe.train, rc;
	char buf[48];
	const char *scheme = pb_dtp_search_scheme_of(dp, tp, buf, sizeof buf);
	pb_cluster sub = pb_dtp_stage_sub_cluster(cl, u->d);
	c->dp = dp;
	c->tp = tp;
	c->pp = u->pp;
	c->m = u->m;
	c->sched = u->sched;
	c->v = u->v;
	c->layers_split = u->layers_split;
	c->min_layers = u->min_layers;
	c->max_layers = u->max_layers;
	snprintf(c->scheme, sizeof c->scheme, "%s", scheme ? scheme : "1");
	c->ok = 1;
	c->fits = 1;
	c->proven = 1;
	c->bound = unit_bound(u, u->cost);
	/* point-to-point: chunk k -> k + 1, group k mod pp -> (k + 1) mod pp,
	 * scattered over the group and all-gathered over tp (pipeline_p2p.h) */
	for (int k = 0; k + 1 < u->n_chunks; k++) {
		double t = pb_pipeline_p2p_time(cl, (k % u->pp) * u->d, ((k + 1) % u->pp) * u->d,
		                                dp, tp, u->p2p_bytes[k], train);
		if (t > c->p2p)
			c->p2p = t;
	}
	int p = u->pp, m = u->m, V = u->v;
	/* step = K (slowest + P2P) + grad >= K (a group's time + P2P) + one of
	 * its chunks' gradient all-reduces g, so a chunk whose time t (g
	 * included) has K t - (K - 1) g >= inc - K (P2P + the group's other
	 * chunks) cannot win: the stage MILPs' cutoff */
	double K = u->sched == PB_SCHED_1F1B ? m + p - 1 : m + (double)(p - 1) / V;
	double P2P = u->sched == PB_SCHED_1F1B ? c->p2p : V * c->p2p;
	if (cl->p2p_overlap) /* at least the fill and drain's (pb_pipeline_p2p_step) */
		P2P = (p - 1) * c->p2p / K;
	/* overlapped, the exposed part E of G can be anything down to 0: the
	 * chunk's time less all of its g can win (cut_grad 1) */
	double cut = inc > 0 ? inc / K - P2P : INFINITY;
	double cut_grad = !train ? 0 : cl->grad_bucket > 0 ? 1 : (K - 1) / K;
	for (int s = 0; s < u->pp; s++) {
		if (pb_job_cancelled())
			return pb_err(err, PB_ECANCEL, "shard: cancelled");
		double a = inflight(u, s);
		group_sum gs;
		/* solved with one activation copy (a relaxation of the memory row):
		 * when the plan fits with a copies it is the plan for a copies too */
		if ((rc = solve_group(u, &sub, scheme, s, 1, cut, cut_grad, &gs, c->error, err)))
			return rc;
		double mem = gs.mp + (train ? a : 1) * gs.ma;
		if (gs.ok && train && a > 1 && mem > cl->memory * (1 + 1e-9)) {
			if ((rc = solve_group(u, &sub, scheme, s, a, cut, cut_grad, &gs, c->error,
			                      err)))
				return rc;
			mem = gs.mp + a * gs.ma;
		}
		if (!gs.ok && gs.cut) {
			c->ok = 0;
			c->pruned = 1;
			snprintf(c->error, sizeof c->error,
			         "pruned: stage %d cannot beat %.6g s of a plan that fits", s, inc);
			return PB_OK;
		}
		if (!gs.ok) {
			c->ok = 0;
			return PB_OK;
		}
		pb_dtp_search_note_group(c, cl, &gs, mem, train ? a : 1);
	}
	c->memory = pb_memory_options_settle(&c->mopts, u->o->shard.dist_opt,
	                                     u->o->shard.seq_parallel, cl->memory);
	c->fits = c->memory <= cl->memory * (1 + 1e-9);
	pb_dtp_stage_step_time(c, cl, &u->o->shard);
	return PB_OK;
}

/* Bytes crossing each chunk boundary: a tensor once from its producer's
 * chunk to its last consumer's (a block output read by the next layer norm
 * and by the residual add is sent once). */
void pb_dtp_search_unit_bytes(pb_dtp_unit *u)
{
	const pb_graph *g = u->g;
	memset(u->p2p_bytes, 0, ((size_t)u->cl->n_devices * 64 + 1) * sizeof(double));
	for (int t = 0; t < g->n_tensors; t++) {
		const pb_tensor *tt = &g->tensors[t];
		int w = tt->producer;
		if (w < 0 || !u->active[w])
			continue;
		int last = u->split.stage[w];
		for (int c = 0; c < tt->n_consumers; c++) {
			int v = tt->consumers[c];
			if (u->active[v] && u->split.stage[v] > last)
				last = u->split.stage[v];
		}
		for (int k = u->split.stage[w]; k < last; k++)
			u->p2p_bytes[k] += pb_tensor_bytes(tt);
	}
}

/* Splits the unit's graph into n_chunks; a failure is every row's error.
 * Lua cut and stage rules (o->pipe.rules; `stage = K` pins to chunk K): a
 * layer split that breaks one gives way to the DP or MILP split with the
 * rules. */
static int split(pb_dtp_unit *u, const double *cost, char *errbuf)
{
	pb_error e = {0};
	const struct pb_part_rules *R = u->o->pipe.rules;
	u->layers_split = 0;
	u->min_layers = u->max_layers = 0;
	int rc = pb_pipeline_layers_split(u->g, cost, u->n_chunks, &u->split, &u->min_layers,
	                                  &u->max_layers, &e);
	char why[256];
	if (rc == PB_OK && R &&
	    pb_pipeline_stages_split_rule_broken(u->g, cost, u->split.stage, NULL, R, why,
	                                         sizeof why)) {
		pb_pipeline_stages_split_free(&u->split);
		u->min_layers = u->max_layers = 0;
		rc = PB_EINPUT;
	}
	if (rc == PB_OK) {
		u->layers_split = 1;
		return PB_OK;
	}
	if (rc == PB_ENOMEM)
		return rc;
	e.msg[0] = 0;
	rc = pb_pipeline_stages_is_chain(u->g, cost)
	         ? pb_pipeline_stages_split_dp_rules(u->g, cost, u->n_chunks, R, &u->split, &e)
	         : pb_pipeline_stages_split_milp_rules(u->g, cost, u->n_chunks, 0, 0, R, &u->split,
	                                               &e);
	if (rc)
		snprintf(errbuf, 160, "%.150s", e.msg);
	return rc == PB_ENOMEM ? rc : (rc ? 1 : PB_OK);
}

int pb_dtp_search_reload(const pb_dtp_opts *o, long batch, const pb_graph **g, pb_error *err)
{
	if (pb_pipeline_plan_model_batch(*g) == batch)
		return PB_OK;
	int rc = o->pipe.reload
	             ? o->pipe.reload(o->pipe.reload_ud, batch, g, err)
	             : pb_err(err, PB_EUSAGE, "shard: a pipeline needs a model loaded from a file");
	return rc ? pb_err_prefix(err, "shard") : PB_OK;
}

/* The unit (pp, m) on graph g (at the micro-batch): buffers, costs, cache. */
int pb_dtp_search_unit_open(pb_dtp_unit *u, const pb_graph *g, const pb_cluster *cl,
                            const pb_dtp_opts *o, int pp, int m, double **cost, pb_error *err)
{
	int N = cl->n_devices, n = g->n_nodes;
	memset(u, 0, sizeof *u);
	u->g = g;
	u->cl = cl;
	u->o = o;
	u->pp = pp;
	u->m = m;
	u->d = N / pp;
	*cost = malloc(((size_t)n + 1) * sizeof(double));
	u->active = malloc((size_t)n + 1);
	u->mask = malloc((size_t)n + 1);
	u->p2p_bytes = calloc((size_t)N * 64 + 1, sizeof(double));
	u->cache = pb_dtp_stage_cache_new(g);
	u->tcost = malloc(((size_t)n + 1) * sizeof(double));
	if (!*cost || !u->active || !u->mask || !u->p2p_bytes || !u->cache || !u->tcost)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	pb_dtp_stage_cache_keep_ops(u->cache); /* the plan of a configuration (keep_plan) */
	pb_strategy_problem_dynamic_nodes(g, u->active);
	for (int v = 0; v < n; v++) {
		(*cost)[v] = u->active[v] ? pb_strategy_problem_node_flops(g, &g->nodes[v]) : -1;
		u->tcost[v] =
		    u->active[v]
		        ? pb_strategy_problem_node_time(cl, &g->nodes[v], (*cost)[v]) * cl->flops
		        : -1;
	}
	u->cost = *cost;
	return PB_OK;
}

void pb_dtp_search_unit_close(pb_dtp_unit *u, double *cost)
{
	pb_pipeline_stages_split_free(&u->split);
	pb_dtp_stage_cache_free(u->cache);
	free(cost);
	free(u->active);
	free(u->mask);
	free(u->p2p_bytes);
	free(u->tcost);
}

/* Schedule sc with V chunks per device: split and boundary bytes. PB_OK,
 * 1 (the split failed: serr) or PB_ENOMEM. */
static int unit_schedule(pb_dtp_unit *u, const double *cost, int sc, int V, char *serr)
{
	u->sched = sc;
	u->v = V;
	u->n_chunks = u->pp * V;
	int src = split(u, cost, serr);
	if (src == PB_OK)
		pb_dtp_search_unit_bytes(u);
	return src;
}

/* A micro-batch of B/m samples splits over dp replicas. */
static int splits_over(long B, int m, int dp)
{
	return (B / m) % dp == 0;
}

int pb_dtp_search_unit_record(pb_dtp_unit *u, pb_error *err)
{
	u->chunks = json_array();
	for (int k = 0; u->chunks && k < u->n_chunks; k++)
		if (json_array_append_new(u->chunks, json_null())) {
			json_decref(u->chunks);
			u->chunks = NULL;
		}
	return u->chunks ? PB_OK : pb_err(err, PB_ENOMEM, "shard: out of memory");
}

/* The plan of configuration c, just evaluated on unit u, replaces r->kept:
 * evaluated again with every chunk's solve recorded (the cache answers). */
static int keep_plan(pb_dtp_unit *u, const pb_dtp_config *c, long B, pb_dtp_result *r,
                     pb_error *err)
{
	pb_dtp_config k;
	memset(&k, 0, sizeof k);
	if (pb_dtp_search_unit_record(u, err))
		return PB_ENOMEM;
	long m0, h0, m1, h1;
	pb_dtp_stage_cache_stats(u->cache, &m0, &h0);
	int rc = pb_dtp_search_unit_eval(u, c->dp, c->tp, 0, &k, err);
	pb_dtp_stage_cache_stats(u->cache, &m1, &h1);
	u->replayed += h1 - h0;
	pb_plan *plan = NULL;
	if (rc == PB_OK && k.ok && k.step_time == c->step_time)
		rc = pb_dtp_plan_build(u->g, u->cl, &k, B, u->o->pipe.train, u->split.stage,
		                       u->chunks, &plan, err);
	json_decref(u->chunks);
	u->chunks = NULL;
	if (plan) {
		pb_plan_free(r->kept);
		r->kept = plan;
		r->kept_cfg = *c;
	}
	return rc;
}

typedef struct unit {
	int pp, idx, total; /* stage count; index among the units, their count */
} unit;

/* Reports configuration c of unit un, about to be evaluated (o->progress):
 * the rows so far, those pruned and the best fitting step time. */
static void progress(const pb_dtp_opts *o, const unit *un, const pb_dtp_result *r,
                     const pb_dtp_config *c)
{
	if (!o->progress)
		return;
	pb_dtp_progress p = {.unit = un->idx,
	                     .units = un->total,
	                     .dp = c->dp,
	                     .tp = c->tp,
	                     .pp = c->pp,
	                     .m = c->m,
	                     .rows = r->n - 1,
	                     .pruned = r->pruned};
	char buf[24];
	snprintf(p.sched, sizeof p.sched, "%s", pb_dtp_plan_sched_name(c, buf, sizeof buf));
	for (int i = 0; i + 1 < r->n; i++)
		if (r->cfg[i].ok && r->cfg[i].fits && (!p.best || r->cfg[i].step_time < p.best))
			p.best = r->cfg[i].step_time;
	o->progress(o->ud, &p);
}

/* Evaluates unit (pp, m) into r for the data-parallel degrees with
 * want[dp]; configurations whose bound is not below inc (> 0) are pruned
 * rows. */
static int run_unit(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o, long B,
                    const unit *un, int m, double inc, const int *want, pb_dtp_result *r,
                    pb_error *err)
{
	int pp = un->pp;
	int rc;
	if ((rc = pb_dtp_search_reload(o, B / m, gp, err)))
		return rc;
	const pb_graph *g = *gp;
	pb_dtp_unit u;
	double *cost = NULL;
	if ((rc = pb_dtp_search_unit_open(&u, g, cl, o, pp, m, &cost, err)))
		goto done;
	pb_dtp_vloop *vl = pb_dtp_interleave_vloop_new(o, g, pp, m, cl, inc); /* dtp_interleave.c */
	if (!vl)
		rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
	for (int sc, V, from = 0; rc == PB_OK && pb_dtp_interleave_vloop_next(vl, &sc, &V);
	     pb_dtp_interleave_vloop_note(vl, r, from)) {
		from = r->n;
		inc = pb_dtp_interleave_vloop_inc(vl);
		char serr[160] = "";
		int src = unit_schedule(&u, cost, sc, V, serr);
		if (src == PB_ENOMEM) {
			rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
			break;
		}
		double bound = src == PB_OK ? unit_bound(&u, cost) : 0;
		/* pruned by the roofline bound: every operator at least its FLOPs at
		 * the rate or its bytes at the memory bandwidth (a strategy's compute
		 * is that / its share, as the stage MILPs cost it); `bound`, the
		 * FLOPs alone, stays the row's and the schedules' (dtp_interleave.c) */
		double roof = src == PB_OK ? unit_bound(&u, u.tcost) : 0;
		int prune = inc > 0 && fmax(bound, roof) >= inc * (1 - 1e-12);
		for (int dp = 1; dp <= u.d && rc == PB_OK; dp++) {
			int tp = u.d / dp;
			if (u.d % dp || (o->dp && o->dp != dp) || (o->tp && o->tp != tp) ||
			    !want[dp] || !pb_dtp_interleave_vloop_want(vl, dp, bound))
				continue;
			/* micro-batches that dp replicas cannot split: not a configuration
			 * (an error row when dp and m are both fixed) */
			if (!splits_over(B, m, dp) && !(o->dp && o->m))
				continue;
			pb_dtp_config *c = pb_dtp_search_result_add(r);
			if (!c) {
				rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
				break;
			}
			c->dp = dp; /* eval_config fills the rest */
			c->tp = tp;
			c->pp = pp;
			c->m = m;
			c->sched = sc;
			c->v = V;
			if (src == PB_OK && splits_over(B, m, dp) && prune) {
				c->pruned = 1;
				c->bound = fmax(bound, roof);
				c->layers_split = u.layers_split;
				c->min_layers = u.min_layers;
				c->max_layers = u.max_layers;
				snprintf(c->error, sizeof c->error,
				         "pruned: bound %.6g s >= %.6g s of a plan that fits",
				         c->bound, inc);
				r->pruned++;
			} else if (src == PB_OK && splits_over(B, m, dp)) {
				progress(o, un, r, c);
				rc = pb_dtp_search_unit_eval(&u, dp, tp, inc, c, err);
				r->pruned += c->pruned;
				if (rc == PB_OK && c->ok &&
				    (!r->kept || pb_dtp_search_better(c, &r->kept_cfg)))
					rc = keep_plan(&u, c, B, r, err);
			} else if (src == PB_OK) {
				snprintf(c->error, sizeof c->error,
				         "micro-batches of %ld samples do not split over dp %d",
				         B / m, dp);
			} else {
				snprintf(c->error, sizeof c->error, "split: %.150s", serr);
			}
		}
		pb_pipeline_stages_split_free(&u.split);
	}
	pb_dtp_interleave_vloop_free(vl);
	long milps, hits;
	pb_dtp_stage_cache_stats(u.cache, &milps, &hits);
	r->milps += milps;
	r->cache_hits += hits - u.replayed;
done:
	pb_dtp_search_unit_close(&u, cost);
	return rc;
}

static int same_config(const pb_dtp_config *a, const pb_dtp_config *b)
{
	return a->dp == b->dp && a->tp == b->tp && a->pp == b->pp && a->m == b->m &&
	       a->sched == b->sched && a->v == b->v && a->step_time == b->step_time;
}

int pb_dtp_search_plan_even(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                            const pb_dtp_config *want, long B, pb_dtp_result *r, pb_plan **out,
                            pb_error *err)
{
	*out = NULL;
	if (r && r->kept && same_config(&r->kept_cfg, want)) {
		*out = r->kept;
		r->kept = NULL;
		return PB_OK;
	}
	int rc;
	if ((rc = pb_dtp_search_reload(o, B / want->m, gp, err)))
		return rc;
	pb_dtp_unit u;
	double *cost = NULL;
	pb_dtp_config c;
	memset(&c, 0, sizeof c);
	if ((rc = pb_dtp_search_unit_open(&u, *gp, cl, o, want->pp, want->m, &cost, err)))
		goto done;
	char serr[160] = "";
	int src = unit_schedule(&u, cost, want->sched, want->v, serr);
	if (src) {
		rc = src == PB_ENOMEM ? pb_err(err, PB_ENOMEM, "shard: out of memory")
		                      : pb_err(err, PB_EINPUT, "shard: pipeline split: %s", serr);
		goto done;
	}
	if ((rc = pb_dtp_search_unit_record(&u, err)))
		goto done;
	if ((rc = pb_dtp_search_unit_eval(&u, want->dp, want->tp, 0, &c, err)))
		goto done;
	/* the plan is the configuration's own: the same numbers or an error */
	if (!c.ok || fabs(c.step_time - want->step_time) > 1e-9 * want->step_time)
		rc =
		    pb_err(err, PB_EINPUT,
		           "shard: the plan of dp %d tp %d pp %d m %d costs %.9g s, its row %.9g s "
		           "(%s)",
		           want->dp, want->tp, want->pp, want->m, c.step_time, want->step_time,
		           c.ok ? "differs" : c.error);
	else
		rc = pb_dtp_plan_build(*gp, cl, &c, B, o->pipe.train, u.split.stage, u.chunks, out,
		                       err);
done:
	json_decref(u.chunks);
	pb_dtp_search_unit_close(&u, cost);
	return rc;
}

static int add_m(int *out, int n, int cap, int m)
{
	for (int i = 0; i < n; i++)
		if (out[i] == m)
			return n;
	if (n == cap)
		return n;
	int i = n;
	for (; i > 0 && out[i - 1] > m; i--)
		out[i] = out[i - 1];
	out[i] = m;
	return n + 1;
}

/* Micro-batch candidates of one data-parallel degree dp (ascending): the
 * given m, else the smallest m >= m0 (the smallest with the 1F1B bubble <=
 * max_bubble) whose micro-batch B/m dp replicas split (none: the largest,
 * B/dp, as Megatron-LM does), and its doubles up to 4 m0 that still split. */
static int m_candidates(const pb_dtp_opts *o, long B, int pp, int dp, int *out, int cap)
{
	if (o->m && pp == 1 && o->m == 1) /* the operator-level rows */
		return 0;
	if (o->m)
		return B % o->m == 0 ? (out[0] = o->m, 1) : 0;
	if (pp == 1) { /* accumulation: 2, 4, 8, ... micro-batches dp replicas split */
		int n = 0;
		for (long m = 2; m <= B && n < cap; m *= 2)
			if (B % m == 0 && (B / m) % dp == 0)
				n = add_m(out, n, cap, (int)m);
		return n;
	}
	int m0 = pb_pipeline_stages_microbatches(B, pp, o->pipe.max_bubble), n = 0;
	if (B % dp)
		return 0;
	long m = m0;
	while (m <= B && (B % m || (B / m) % dp))
		m++;
	if (m > B)
		m = B / dp;
	for (; m <= B && m <= 4L * m0; m *= 2)
		if (B % m == 0 && (B / m) % dp == 0)
			n = add_m(out, n, cap, (int)m);
	return n;
}

/* stage counts evaluated at once (by the ranks under mpirun) before the
 * incumbent is updated (pb_dtp_search) */
#define DTP_WAVE 2

static double best_fitting(const pb_dtp_result *r, int from, int dp)
{
	double b = INFINITY;
	for (int i = from; i < r->n; i++)
		if (r->cfg[i].ok && r->cfg[i].fits && r->cfg[i].dp == dp && r->cfg[i].step_time < b)
			b = r->cfg[i].step_time;
	return b;
}

/* A stage count: per data-parallel degree dp its micro-batch counts,
 * ascending, until one is slower than the one before: its best fitting
 * configuration slower than at the previous count (more micro-batches shrink
 * the bubble but also every micro-batch's efficiency; once that loses, more
 * lose further). Counts are tried on while nothing fits (more micro-batches,
 * less activation memory) or while pruned (more micro-batches lower the
 * bound). One unit (pp, m) evaluates the dp that want m. */
static int run_pp(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o, long B,
                  const unit *un, pb_dtp_result *r, pb_error *err)
{
	int d = cl->n_devices / un->pp, rc = PB_OK;
	int *ms = malloc(16 * ((size_t)d + 1) * sizeof(int)),
	    *nm = calloc((size_t)d + 1, sizeof(int));
	int *want = calloc((size_t)d + 1, sizeof(int)),
	    *stopped = calloc((size_t)d + 1, sizeof(int));
	double *prev = malloc(((size_t)d + 1) * sizeof(double));
	int all[64], n_all = 0;
	if (!ms || !nm || !want || !stopped || !prev) {
		rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
		goto done;
	}
	for (int dp = 1; dp <= d; dp++) {
		prev[dp] = INFINITY;
		if (d % dp || (o->dp && o->dp != dp) || (o->tp && o->tp != d / dp))
			continue;
		nm[dp] = m_candidates(o, B, un->pp, dp, ms + 16 * dp, 16);
		for (int k = 0; k < nm[dp]; k++)
			n_all = add_m(all, n_all, 64, ms[16 * dp + k]);
	}
	double inc = o->incumbent > 0 && !o->exhaustive ? o->incumbent : INFINITY;
	for (int k = 0; k < n_all && rc == PB_OK; k++) {
		int m = all[k], any = 0;
		for (int dp = 1; dp <= d; dp++) {
			want[dp] = 0;
			for (int i = 0; i < nm[dp] && !stopped[dp]; i++)
				want[dp] |= ms[16 * dp + i] == m;
			any |= want[dp];
		}
		if (!any)
			continue;
		int from = r->n;
		rc = run_unit(gp, cl, o, B, un, m, isfinite(inc) ? inc : 0, want, r, err);
		for (int dp = 1; rc == PB_OK && dp <= d; dp++) {
			if (!want[dp])
				continue;
			int pruned = 1, seen = 0;
			for (int i = from; i < r->n; i++)
				if (r->cfg[i].dp == dp) {
					seen = 1;
					pruned &= r->cfg[i].pruned;
				}
			if (!seen || pruned)
				continue;
			double b = best_fitting(r, from, dp);
			if (isfinite(prev[dp]) && !(b < prev[dp]))
				stopped[dp] = 1;
			if (b < prev[dp])
				prev[dp] = b;
			if (b < inc && !o->exhaustive)
				inc = b;
		}
	}
done:
	free(ms);
	free(nm);
	free(want);
	free(stopped);
	free(prev);
	return rc;
}

/* Evaluates the units of this rank; gathers all of them in unit order. */
static int run_units(const pb_graph *g, const pb_cluster *cl, const pb_dtp_opts *o, long B,
                     const unit *units, int n_units, pb_dtp_result *r, pb_error *err)
{
	int size = pb_ranks_size(), rank = pb_ranks_rank(), rc = PB_OK;
	int *first = calloc((size_t)n_units + 1, sizeof(int));
	int *count = calloc((size_t)n_units + 1, sizeof(int));
	if (!first || !count) {
		free(first);
		free(count);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	int base = r->n;
	long m0 = r->milps, h0 = r->cache_hits, p0 = r->pruned; /* ranks send their deltas */
	for (int i = 0; i < n_units && rc == PB_OK; i++) {
		if (i % size != rank)
			continue;
		first[i] = r->n;
		rc = run_pp(&g, cl, o, B, &units[i], r, err);
		count[i] = r->n - first[i];
	}
	r->g = g;
	if (size > 1 && rc == PB_OK) {
		/* each rank sends (unit, count, rows...) for its units */
		size_t len = 0;
		for (int i = 0; i < n_units; i++)
			if (i % size == rank)
				len += 2 * sizeof(int) + (size_t)count[i] * sizeof(pb_dtp_config);
		len += 3 * sizeof(long);
		char *mine = malloc(len + 1), *p = mine, *all = NULL;
		size_t *lens = calloc((size_t)size, sizeof *lens);
		if (!mine || !lens) {
			rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
		} else {
			long d[3] = {r->milps - m0, r->cache_hits - h0, r->pruned - p0};
			memcpy(p, d, sizeof d);
			p += 3 * sizeof(long);
			for (int i = 0; i < n_units; i++) {
				if (i % size != rank)
					continue;
				memcpy(p, &i, sizeof(int));
				memcpy(p + sizeof(int), &count[i], sizeof(int));
				p += 2 * sizeof(int);
				memcpy(p, r->cfg + first[i],
				       (size_t)count[i] * sizeof(pb_dtp_config));
				p += (size_t)count[i] * sizeof(pb_dtp_config);
			}
			rc = pb_ranks_allgather(mine, len, &all, lens, err);
		}
		const char **rows = calloc((size_t)n_units + 1, sizeof *rows);
		if (rc == PB_OK && !rows)
			rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
		long milps = 0, hits = 0, pruned = 0;
		for (int k = 0, off = 0; rc == PB_OK && k < size; off += (int)lens[k], k++) {
			const char *q = all + off, *end = q + lens[k];
			long a, b, c;
			memcpy(&a, q, sizeof a);
			memcpy(&b, q + sizeof a, sizeof b);
			memcpy(&c, q + 2 * sizeof a, sizeof c);
			milps += a;
			hits += b;
			pruned += c;
			q += 3 * sizeof(long);
			while (q < end) {
				int i, c;
				memcpy(&i, q, sizeof i);
				memcpy(&c, q + sizeof i, sizeof c);
				q += 2 * sizeof(int);
				count[i] = c;
				rows[i] = q; /* copied below (the buffer need not be aligned) */
				q += (size_t)c * sizeof(pb_dtp_config);
			}
		}
		if (rc == PB_OK) {
			r->n = base; /* rebuild in unit order */
			for (int i = 0; i < n_units && rc == PB_OK; i++)
				for (int c = 0; c < count[i]; c++) {
					pb_dtp_config *dst = pb_dtp_search_result_add(r);
					if (!dst) {
						rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
						break;
					}
					memcpy(dst, rows[i] + (size_t)c * sizeof *dst, sizeof *dst);
				}
			r->milps = m0 + milps;
			r->cache_hits = h0 + hits;
			r->pruned = p0 + pruned;
		}
		free(rows);
		free(mine);
		free(all);
		free(lens);
	}
	free(first);
	free(count);
	return rc;
}

int pb_dtp_search_check_degrees(const pb_dtp_opts *o, const pb_cluster *cl, pb_error *err)
{
	int N = cl->n_devices;
	if ((o->dp && N % o->dp) || (o->tp && N % o->tp) || (o->pp && N % o->pp) ||
	    (o->dp && o->tp && o->pp && (long)o->dp * o->tp * o->pp != N))
		return pb_err(err, PB_EUSAGE,
		              "shard: --dp %d --tp %d --pp %d do not multiply to the %d devices of "
		              "%s (0 = free)",
		              o->dp, o->tp, o->pp, N, cl->name);
	return PB_OK;
}

int pb_dtp_search_even(const pb_graph *g, const pb_cluster *cl, const pb_dtp_opts *o,
                       pb_dtp_result *r, pb_error *err)
{
	memset(r, 0, sizeof *r);
	r->best = -1;
	r->g = g;
	int N = cl->n_devices;
	long B = o->pipe.batch > 0 ? o->pipe.batch : pb_pipeline_plan_model_batch(g);
	r->batch = B;
	r->gap = o->gap;
	r->node_limit = o->node_limit;
	int rc = pb_dtp_search_check_degrees(o, cl, err);
	if (rc)
		return rc;
	if (o->m && B % o->m)
		return pb_err(err, PB_EUSAGE, "shard: %d micro-batches do not divide the batch %ld",
		              o->m, B);
	unit units[256];
	int n_units = 0;
	/* pp = 1 with micro-batches (gradient accumulation): when they are
	 * asked for, or training (o->m 1: the operator-level rows only) */
	if ((!o->pp || o->pp == 1) && (o->m > 1 || (!o->m && o->pipe.train)) &&
	    !(o->dp && o->tp && o->dp * o->tp != N))
		units[n_units++].pp = 1;
	for (int pp = 2; pp <= N && o->pp != 1; pp++) {
		if (N % pp || (o->pp && o->pp != pp))
			continue;
		int d = N / pp;
		if ((o->dp && d % o->dp) || (o->tp && d % o->tp) ||
		    (o->dp && o->tp && o->dp * o->tp != d))
			continue;
		if (n_units < 256)
			units[n_units++].pp = pp;
	}
	/* The stage counts in waves of DTP_WAVE (the first of one), the counts
	 * nearest sqrt(N) first (the middle is where pipelines usually win: fewer stages hold
	 * too much per device, more have long bubbles); each wave starts from
	 * the best fitting row of the waves before as its incumbent, known on
	 * every rank after the gather, so the table under mpirun is the serial
	 * one. Gradient accumulation (pp = 1, when searched) goes with the first
	 * wave: it won Table 1's rows 1-4, and its best then prunes the
	 * pipelines' rows by their bounds (row 4: pp 2's rows at 4 micro-batches,
	 * 11.6 s of CPU solved to lose). The rows are listed by stage count. */
	double mid = log((double)N) / 2;
	int acc = n_units > 0 && units[0].pp == 1; /* accumulation stays first */
	for (int i = 1 + acc; i < n_units; i++)
		for (int k = i; k > acc; k--) {
			double a = fabs(log((double)units[k].pp) - mid),
			       b = fabs(log((double)units[k - 1].pp) - mid);
			if (!(a < b - 1e-12))
				break;
			unit t = units[k];
			units[k] = units[k - 1];
			units[k - 1] = t;
		}
	for (int i = 0; i < n_units; i++) {
		units[i].idx = i;
		units[i].total = n_units;
	}
	pb_dtp_opts ow = *o;
	rc = PB_OK;
	for (int w = 0, nw = 0; w < n_units && rc == PB_OK; w += nw) {
		double inc = o->incumbent > 0 ? o->incumbent : INFINITY;
		for (int i = 0; i < r->n && !o->exhaustive; i++)
			if (r->cfg[i].ok && r->cfg[i].fits && r->cfg[i].step_time < inc)
				inc = r->cfg[i].step_time;
		ow.incumbent = isfinite(inc) ? inc : 0;
		/* the first wave is the count nearest sqrt(N) alone (with
		 * accumulation): the next two start from its best instead of the
		 * operator-level one (GPT-3 on 1,024 devices: pp 16's dp 32 rows at
		 * 349 s instead of 64.5 s) */
		nw = w == 0 ? 1 + acc : DTP_WAVE;
		nw = n_units - w < nw ? n_units - w : nw;
		rc = run_units(w ? r->g : g, cl, &ow, B, units + w, nw, r, err);
	}
	/* by stage count (stable: a unit's rows keep their order) */
	for (int i = 1; rc == PB_OK && i < r->n; i++)
		for (int k = i; k > 0 && r->cfg[k].pp < r->cfg[k - 1].pp; k--) {
			pb_dtp_config t = r->cfg[k];
			r->cfg[k] = r->cfg[k - 1];
			r->cfg[k - 1] = t;
		}
	return rc;
}

int pb_dtp_search_add_operator(pb_dtp_result *r, const pb_dtp_opts *o, const pb_cluster *cl,
                               pb_error *err)
{
	int N = cl->n_devices, n0 = r->n;
	r->cl = cl;
	if ((!o->pp || o->pp == 1) && o->m <= 1 && o->op && add_operator_level(o, N, r))
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	int k = r->n - n0; /* the operator-level rows go first */
	if (k > 0) {
		pb_dtp_config *tmp = malloc((size_t)k * sizeof *tmp);
		if (!tmp)
			return pb_err(err, PB_ENOMEM, "shard: out of memory");
		memcpy(tmp, r->cfg + n0, (size_t)k * sizeof *tmp);
		memmove(r->cfg + k, r->cfg, (size_t)n0 * sizeof *tmp);
		memcpy(r->cfg, tmp, (size_t)k * sizeof *tmp);
		free(tmp);
	}
	if (r->n == 0)
		return pb_err(err, PB_EUSAGE,
		              "shard: no data x tensor x pipeline configuration matches the fixed "
		              "values on the %d devices of %s",
		              N, cl->name);
	r->best = -1;
	for (int i = 0; i < r->n; i++)
		if (r->cfg[i].ok &&
		    (r->best < 0 || pb_dtp_search_better(&r->cfg[i], &r->cfg[r->best])))
			r->best = i;
	return PB_OK;
}

int pb_dtp_search_oprows(const pb_shard_search *s, pb_dtp_oprow **out)
{
	int n = s->n_rows + s->n_dropped;
	pb_dtp_oprow *r = calloc((size_t)n + 1, sizeof *r);
	if (!r)
		return -1;
	for (int i = 0; i < s->n_rows; i++) {
		const pb_shard_row *w = &s->rows[i];
		snprintf(r[i].scheme, sizeof r[i].scheme, "%s", w->mesh.name);
		r[i].ok = w->status == 1;
		r[i].step_time = w->step_time;
		r[i].memory = w->memory;
		r[i].mopts = w->mopts;
		r[i].fits = w->feasible;
		r[i].cut = w->cut;
		if (w->cut)
			snprintf(r[i].error, sizeof r[i].error, "%.150s", w->error);
	}
	/* a dropped mirror "4x2=2x4" has the numbers of the scheme kept */
	for (int k = 0; k < s->n_dropped; k++) {
		pb_dtp_oprow *d = &r[s->n_rows + k];
		const char *eq = strchr(s->dropped[k], '=');
		if (!eq)
			continue;
		snprintf(d->scheme, sizeof d->scheme, "%.*s", (int)(eq - s->dropped[k]),
		         s->dropped[k]);
		for (int i = 0; i < s->n_rows; i++)
			if (!strcmp(r[i].scheme, eq + 1)) {
				pb_dtp_oprow keep = *d;
				*d = r[i];
				memcpy(d->scheme, keep.scheme, sizeof d->scheme);
				break;
			}
	}
	*out = r;
	return n;
}
