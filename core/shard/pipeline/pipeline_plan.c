/*
 * shard/pipeline/pipeline_plan.c — the pipeline planner and the comparison of
 * `shard --pipeline auto` (pipeline_plan.h).
 *
 * The steps are those of the header: micro-batches, the operator-level plan
 * at batch B, the split at batch B/m (pipeline_stages.c), the shard search of
 * every stage on its device group, the p2p transfers and the step time.
 * Invariants: stage s owns devices [s*d, (s+1)*d) with d = N/P; every node
 * of the problem has a stage in [0, P) and no activation edge goes to an
 * earlier stage; an empty stage holds nothing and fits; the result's graph
 * is the last one the reload callback returned (the stages and the plan
 * index its nodes).
 */
#include "shard/pipeline/pipeline_plan.h"
#include "shard/pipeline/pipeline_cost.h"
#include "shard/pipeline/pipeline_polish.h"
#include "shard/pipeline/pipeline_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard/search/search.h"
#include "shard/search/search_label.h"
#include "shard/strategy/strategy_problem.h"
#include "util/job.h"

void pb_pipeline_plan_opts_default(pb_pipe_opts *o)
{
	memset(o, 0, sizeof *o);
	o->stages = 2;
	o->max_bubble = 0.2;
	o->opt_level = 2;
}

long pb_pipeline_plan_model_batch(const pb_graph *g)
{
	if (g->n_inputs > 0 && g->tensors[g->inputs[0]].rank >= 1 &&
	    g->tensors[g->inputs[0]].dims[0] > 0)
		return g->tensors[g->inputs[0]].dims[0];
	return 1;
}

void pb_pipeline_plan_result_free(pb_pipe_result *r)
{
	pb_pipeline_stages_split_free(&r->split);
	free(r->active);
	free(r->stage);
	free(r->p2p_bytes);
	free(r->p2p_time);
	free(r->p2p_inter);
	pb_plan_free(r->plan);
	memset(r, 0, sizeof *r);
}

static int reload(const pb_pipe_opts *o, long batch, pb_pipe_result *r, pb_error *err)
{
	int rc = o->reload ? o->reload(o->reload_ud, batch, &r->g, err)
	                   : pb_err(err, PB_EUSAGE, "--batch needs a model loaded from a file");
	return rc ? pb_err_prefix(err, "pipeline") : PB_OK;
}

/* The operator-level plan compared with (what `shard` gives: every scheme).
 * The scheme of one axis over all devices is solved first: when its plan
 * fits at the compute bound of the batch, no scheme has a lower step time
 * (the bound holds for all), so the others, whose searches cost the most
 * (swin_t batch 64 on cluster-4x8: 0.4 s of 2.7 s CPU), cannot change the
 * comparison and are not solved. Else the whole search runs, as before. */
static int solve_oplevel(pb_pipe_result *r, const pb_cluster *cl, const pb_shard_opts *cmp,
                         pb_error *err)
{
	char one[16];
	snprintf(one, sizeof one, "%d", cl->n_devices);
	double cb = pb_search_label_compute_bound(r->g, cl, cmp->train, 1);
	pb_error e1 = {0};
	int rc = pb_pipeline_cost_solve_on(r->g, cl, cmp, one, &r->oplevel, &e1);
	if (rc == PB_OK && r->oplevel.feasible && r->oplevel.time <= cb * (1 + 1e-9))
		return PB_OK;
	if (rc == PB_ECANCEL || rc == PB_ENOMEM) {
		*err = e1;
		return rc;
	}
	return pb_pipeline_cost_solve_on(r->g, cl, cmp, NULL, &r->oplevel, err);
}

/* Shards every non-empty stage on its device group; memory per 1F1B. */
static int solve_stages(pb_pipe_result *r, pb_shard_opts *so, unsigned char *mask, pb_error *err)
{
	int rc = PB_OK;
	for (int s = 0; s < r->p && rc == PB_OK; s++)
		rc = pb_pipeline_cost_stage(r, so, mask, s, err);
	return rc;
}

/* Split at the micro-batch graph r->g, the stages, transfers and totals. */
static int plan_stages(pb_pipe_result *r, const pb_pipe_opts *o, pb_shard_opts *so, pb_error *err)
{
	const pb_graph *g = r->g;
	int n = g->n_nodes, P = r->p, rc;
	unsigned char *mask = malloc((size_t)n + 1);
	double *cost = malloc(((size_t)n + 1) * sizeof(double));
	r->active = malloc((size_t)n + 1);
	r->stage = calloc((size_t)P, sizeof *r->stage);
	r->p2p_bytes = calloc((size_t)P + 1, sizeof(double));
	r->p2p_time = calloc((size_t)P + 1, sizeof(double));
	r->p2p_inter = calloc((size_t)P + 1, 1);
	if (!mask || !cost || !r->active || !r->stage || !r->p2p_bytes || !r->p2p_time ||
	    !r->p2p_inter) {
		rc = pb_err(err, PB_ENOMEM, "pipeline: out of memory");
		goto done;
	}
	pb_strategy_problem_dynamic_nodes(g, r->active);
	for (int v = 0; v < n; v++)
		cost[v] = r->active[v] ? pb_strategy_problem_node_flops(g, &g->nodes[v]) : -1;
	r->chain = pb_pipeline_stages_is_chain(g, cost);
	if (o->stage_of)
		rc = pb_pipeline_stages_split_given(g, cost, P, o->stage_of, &r->split, err);
	else
		rc = r->chain
		         ? pb_pipeline_stages_split_dp_rules(g, cost, P, o->rules, &r->split, err)
		         : pb_pipeline_stages_split_milp_rules(g, cost, P, o->slack, 0, o->rules,
		                                               &r->split, err);
	if (rc == PB_OK)
		rc = solve_stages(r, so, mask, err);
	if (rc == PB_OK)
		pb_pipeline_cost_transfers(r);
	pb_pipeline_cost_totals(r);
	/* the FLOP split misses what only the stage costing sees (sharding
	 * collectives, p2p bytes): a split of its own is polished with it */
	if (rc == PB_OK && !o->stage_of)
		rc = pb_pipeline_polish(r, cost, o->rules, o->polish_tries, so, mask, err);
done:
	free(mask);
	free(cost);
	return rc;
}

int pb_pipeline_plan(const pb_graph *g, const pb_cluster *cl, const pb_pipe_opts *o,
                     pb_pipe_result *r, pb_error *err)
{
	memset(r, 0, sizeof *r);
	r->g = g;
	r->cl = cl;
	r->p = o->stages;
	r->train = o->train;
	long model_batch = pb_pipeline_plan_model_batch(g);
	long B = o->batch > 0 ? o->batch : model_batch;
	int P = o->stages, rc;
	r->batch = B;
	if (P < 1 || cl->n_devices % P)
		return pb_err(err, PB_EUSAGE,
		              "pipeline: %d stages do not divide the %d devices of %s", P,
		              cl->n_devices, cl->name);
	r->d = cl->n_devices / P;
	int m = o->microbatches > 0 ? o->microbatches
	                            : pb_pipeline_stages_microbatches(B, P, o->max_bubble);
	if (B % m)
		return pb_err(err, PB_EUSAGE,
		              "pipeline: %d micro-batches do not divide the batch %ld", m, B);
	r->m = m;
	/* the operator-level plan of the whole batch, with the same cost model */
	pb_shard_opts so;
	pb_strategy_problem_opts_default(&so);
	so.train = o->train;
	so.opt_level = o->opt_level;
	so.pad = o->pad;
	if (B != model_batch && (rc = reload(o, B, r, err)))
		return rc;
	if (o->skip_oplevel) {
		r->oplevel.time = INFINITY;
		snprintf(r->oplevel.scheme, sizeof r->oplevel.scheme, "(not solved)");
	} else {
		pb_shard_opts cmp = so; /* what `shard` gives (its default -O 0, no shrinking) */
		cmp.opt_level = o->compare_level;
		cmp.layers = 1;
		cmp.no_shrink = 1;
		if ((rc = solve_oplevel(r, cl, &cmp, err)))
			return rc;
	}
	/* the per-micro-batch graph */
	if (B / m != B && (rc = reload(o, B / m, r, err)))
		return rc;
	if ((rc = plan_stages(r, o, &so, err)))
		return rc;
	r->bubble = (double)(P - 1) / (m + P - 1);
	r->bubble_over_m = (double)(P - 1) / m;
	/* A plan over memory never beats one that fits; among equals the faster wins. */
	r->oplevel_solved = isfinite(r->oplevel.time);
	r->pipeline_wins =
	    pb_pipeline_stages_prefer(r->step_time, r->fits, r->oplevel.time, r->oplevel.feasible);
	r->best_fits = r->pipeline_wins ? r->fits : r->oplevel.feasible;
	int first = 0; /* name the inner scheme after the first stage that has operators */
	while (first + 1 < P && r->stage[first].ops == 0)
		first++;
	snprintf(r->name, sizeof r->name, "%d stages x %s", P, r->stage[first].scheme);
	pb_label_init(&r->label, r->step_time);
	if (!o->stage_of)
		pb_label_restrict(&r->label, "stage split (FLOP balance, boundary polish)");
	if (o->microbatches <= 0)
		pb_label_restrict(&r->label, "micro-batches by --max-bubble");
	pb_search_label_opts_restrictions(&so, &r->label);
	/* the stages are costed at B/m: the FLOPs of m micro-batches */
	double cb = pb_search_label_compute_bound(r->g, cl, o->train, m);
	if (r->fits)
		pb_label_bound(&r->label, cb);
	else /* no plan that fits: never optimal */
		r->label.bound = cb;
	r->plan = pb_pipeline_report_result_plan(r);
	if (!r->plan)
		return pb_err(err, PB_ENOMEM, "pipeline: out of memory");
	return PB_OK;
}

/* ---- shard --pipeline auto ---- */

/* The options of every row: as `pipeline --stages P --skip-oplevel
 * --opt-level max(N, 2)` with the caller's batch, training and padding. */
static pb_pipe_opts row_opts(const pb_pipe_opts *base, int stages)
{
	pb_pipe_opts o = *base;
	o.stages = stages;
	o.skip_oplevel = 1;
	o.opt_level = base->opt_level > 2 ? base->opt_level : 2;
	return o;
}

void pb_pipeline_plan_compare_run(const pb_graph *g, const pb_cluster *cl, const pb_pipe_opts *base,
                                  void (*progress)(void *ud, int stages, int n_devices), void *ud,
                                  pb_pipe_compare *out)
{
	int n = cl->n_devices;
	out->n_rows = 0;
	out->batch = base->batch > 0 ? base->batch : pb_pipeline_plan_model_batch(g);
	for (int P = 2; P <= n && out->n_rows < PB_PIPE_MAX_ROWS; P++) {
		if (n % P)
			continue;
		pb_pipe_row *row = &out->rows[out->n_rows++];
		memset(row, 0, sizeof *row);
		pb_job_tick();
		row->stages = P;
		if (progress)
			progress(ud, P, n);
		pb_pipe_opts o = row_opts(base, P);
		o.batch = out->batch;
		pb_pipe_result r;
		pb_error e2 = {0};
		if (pb_pipeline_plan(g, cl, &o, &r, &e2) == PB_OK) {
			row->ok = 1;
			row->step_time = r.step_time;
			row->feasible = r.fits;
			row->microbatches = r.m;
			snprintf(row->scheme, sizeof row->scheme, "%s", r.name);
		} else {
			snprintf(row->error, sizeof row->error, "%.190s", e2.msg);
		}
		if (r.g)
			g = r.g; /* the next P starts from the model as this one left it */
		pb_pipeline_plan_result_free(&r);
	}
}

int pb_pipeline_plan_compare_best(const pb_pipe_compare *c, double op_time, int op_fits)
{
	int best = -1;
	for (int i = 0; i < c->n_rows; i++) {
		const pb_pipe_row *r = &c->rows[i];
		if (r->ok && r->feasible &&
		    pb_pipeline_stages_prefer(r->step_time, 1, op_time, op_fits) &&
		    (r->step_time < op_time || !op_fits) &&
		    (best < 0 || r->step_time < c->rows[best].step_time))
			best = i;
	}
	return best;
}

int pb_pipeline_plan_compare(const pb_pipe_compare *c, int winner, const pb_graph *g,
                             const pb_cluster *cl, const pb_pipe_opts *base, pb_pipe_result *out,
                             pb_error *err)
{
	pb_pipe_opts o = row_opts(base, c->rows[winner].stages);
	o.batch = c->batch;
	return pb_pipeline_plan(g, cl, &o, out, err);
}
