/*
 * shard/pipeline/pipeline_cost.c — what one pipeline split costs (pipeline_cost.h):
 * a stage sharded on its device group (pb_pipeline_cost_stage), the p2p
 * transfers between consecutive stages (pb_pipeline_cost_transfers) and the step
 * time (pb_pipeline_cost_totals). The planner (pipeline_plan.c) and the boundary
 * polish (pipeline_polish.c) both cost splits with these, so neither calls
 * into the other's file for them.
 */
#include "shard/pipeline/pipeline_cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shard/search/search.h"
#include "util/job.h"

/* A workbench job's Esc: between the schemes of a stage's search. */
static int cancelled(void *ud, int done, int total)
{
	(void)ud, (void)done, (void)total;
	return pb_job_cancelled();
}

int pb_pipeline_cost_solve_on(const pb_graph *g, const pb_cluster *cl, const pb_shard_opts *o,
                              const char *scheme, pb_pipe_stage *r, pb_error *err)
{
	pb_shard_search *s = NULL;
	if (pb_job_cancelled())
		return pb_err(err, PB_ECANCEL, "pipeline: cancelled");
	int rc = pb_search_rows_new(g, cl, o, scheme, 2, NULL, &s, err);
	if (rc == PB_OK)
		rc = pb_search_run_parallel(s, s->jobs, cancelled, NULL, err);
	if (rc == PB_OK)
		rc = pb_search_finish(s, err);
	if (rc == PB_OK) {
		const pb_shard_row *b = &s->rows[s->best];
		r->time = b->step_time;
		r->compute = b->compute;
		r->comm = b->comm;
		snprintf(r->scheme, sizeof r->scheme, "%s", b->mesh.name);
		r->feasible = b->feasible;
		const pb_shard_problem *p = s->best_problem;
		r->mem_param = r->mem_act = r->peak = 0;
		for (int G = 0; G < p->n_groups; G++) {
			int c = s->best_result.choice[G];
			r->mem_param += p->groups[G].mem_param[c];
			r->mem_act += p->groups[G].mem_act[c];
			if (p->groups[G].mem_act[c] > r->peak)
				r->peak = p->groups[G].mem_act[c];
		}
	}
	pb_search_rows_free(s);
	return rc;
}

int pb_pipeline_cost_stage(pb_pipe_result *r, pb_shard_opts *so, unsigned char *mask, int s,
                           pb_error *err)
{
	const pb_graph *g = r->g;
	const pb_cluster *cl = r->cl;
	int d = r->d;
	pb_cluster sub = *cl;
	sub.nodes = d >= cl->devices_per_node ? d / cl->devices_per_node : 1;
	sub.devices_per_node = d >= cl->devices_per_node ? cl->devices_per_node : d;
	sub.n_devices = d;
	so->mask = mask;
	pb_pipe_stage *st = &r->stage[s];
	memset(st, 0, sizeof *st);
	pb_job_tick(); /* a workbench job: the screen stays live between stages */
	for (int v = 0; v < g->n_nodes; v++) {
		mask[v] = r->split.stage[v] == s;
		st->ops += mask[v] && r->active[v];
	}
	st->first_dev = s * d;
	st->n_dev = d;
	if (st->ops == 0) { /* an empty stage holds nothing: it fits */
		snprintf(st->scheme, sizeof st->scheme, "-");
		st->feasible = 1;
		return PB_OK;
	}
	int inflight = r->p - s < r->m ? r->p - s : r->m; /* 1F1B */
	/* the stage's sharding sees the memory it will really hold */
	so->act_copies = r->train ? inflight : 1;
	int rc = pb_pipeline_cost_solve_on(g, &sub, so, NULL, st, err);
	st->memory = st->mem_param + (r->train ? inflight * st->mem_act : 2 * st->peak);
	st->feasible = st->memory <= cl->memory;
	return rc;
}

void pb_pipeline_cost_totals(pb_pipe_result *r)
{
	r->fits = 1;
	r->slowest = 0;
	for (int s = 0; s < r->p; s++) {
		r->fits &= r->stage[s].feasible;
		if (r->stage[s].time > r->slowest)
			r->slowest = r->stage[s].time;
	}
	r->slot = r->slowest + r->p2p_max;
	r->step_time = r->slot * (r->m + r->p - 1);
}

/* Point-to-point transfers between consecutive stages (per micro-batch). */
void pb_pipeline_cost_transfers(pb_pipe_result *r)
{
	const pb_graph *g = r->g;
	const pb_cluster *cl = r->cl;
	r->p2p_max = 0;
	for (int k = 0; k + 1 < r->p; k++)
		r->p2p_bytes[k] = 0;
	for (int v = 0; v < g->n_nodes; v++) {
		if (!r->active[v])
			continue;
		const pb_node *nd = &g->nodes[v];
		for (int i = 0; i < nd->n_inputs; i++) {
			int t = nd->inputs[i], u = t >= 0 ? g->tensors[t].producer : -1;
			if (u < 0 || !r->active[u])
				continue;
			for (int k = r->split.stage[u]; k < r->split.stage[v]; k++)
				r->p2p_bytes[k] += pb_tensor_bytes(&g->tensors[t]);
		}
	}
	int d = r->d;
	for (int k = 0; k + 1 < r->p; k++) {
		int inter =
		    (k + 1) * d / cl->devices_per_node != ((k + 1) * d - 1) / cl->devices_per_node;
		const pb_link *l = inter ? &cl->inter : &cl->intra;
		double xb = r->p2p_bytes[k];
		/* every device of the stage sends its share over its own link */
		double t = xb > 0 ? l->latency + xb / d / l->bw * (r->train ? 2 : 1) : 0;
		r->p2p_inter[k] = (unsigned char)inter;
		r->p2p_time[k] = t;
		if (t > r->p2p_max)
			r->p2p_max = t;
	}
}
