/*
 * shard/dtp/dtp_plan.c — the plan of a data x tensor x pipeline configuration
 * (dtp_plan.h, pb_dtp_plan_build): what `shard --pipeline auto -o` saves
 * and the session keeps when a pipeline is the best configuration.
 *
 * The plan is kind "pipeline" as `pipeline -o` writes it (docs/formats.md):
 * group per node = its chunk, one group per chunk with its device range,
 * metrics step_time, microbatches, bubble, stages, feasible. It adds the
 * metrics dp, tp, pp, chunks_per_device and memory_per_device, and in the
 * detail the configuration and, per chunk ("stages", as `pipeline`), its
 * devices, scheme, recomputation and the operators' sharding specs from the
 * chunk's MILP. Under 1F1B a chunk is a stage; interleaved, chunk k runs on
 * device group k mod pp.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard/dtp/dtp_plan.h"
#include "shard/dtp/dtp_stage.h"

void pb_dtp_plan_group_devices(const pb_dtp_config *c, int s, int *first, int *n)
{
	if (!c->uneven) {
		*first = s * c->dp * c->tp;
		*n = c->dp * c->tp;
		return;
	}
	int f = 0;
	for (int k = 0; k < s && k < PB_DTP_UNEVEN_MAX; k++)
		f += c->dp * c->stage_tp[k];
	*first = f;
	*n = s < PB_DTP_UNEVEN_MAX ? c->dp * c->stage_tp[s] : 0;
}

void pb_dtp_plan_uneven_json(json_t *o, const pb_dtp_config *c)
{
	if (!c->uneven)
		return;
	json_t *tp = json_array(), *dev = json_array();
	for (int s = 0; s < c->pp && s < PB_DTP_UNEVEN_MAX; s++) {
		int f, n;
		pb_dtp_plan_group_devices(c, s, &f, &n);
		json_array_append_new(tp, json_integer(c->stage_tp[s]));
		json_array_append_new(dev, json_pack("[i,i]", f, f + n - 1));
	}
	json_object_set_new(o, "uneven", json_true());
	json_object_set_new(o, "stage_tp", tp);
	json_object_set_new(o, "stage_devices", dev);
}

int pb_dtp_plan_unit_row(const pb_dtp_config *c)
{
	return c->pp > 1 || c->m > 1;
}

const char *pb_dtp_plan_sched_name(const pb_dtp_config *c, char *buf, size_t n)
{
	if (c->pp == 1)
		return c->m > 1 ? "accumulate" : "none";
	if (c->sched == PB_SCHED_1F1B)
		return "1f1b";
	snprintf(buf, n, "interleaved:%d", c->v);
	return buf;
}

json_t *pb_dtp_plan_chunk_json(int chunk, int group, const char *scheme, const pb_dtp_chunk *ch,
                               double act_copies)
{
	return json_pack(
	    "{s:i,s:i,s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:o}", "chunk", chunk, "group", group, "scheme",
	    scheme ? scheme : "1", "recompute", pb_recompute_names[ch->recompute], "time",
	    ch->time - ch->grad, "grad_sync", ch->grad, "param_bytes", ch->mem_param, "act_bytes",
	    ch->mem_act, "act_copies", act_copies, "ops", ch->ops ? ch->ops : json_array());
}

/* {"1f1b": ...} (pipeline_stages.h, pb_pipeline_stages_schedule): m micro-batches
 * through pp groups in slots of the slowest group + the slowest transfer,
 * backward 2 x forward when training (the group times are forward +
 * backward), as `pipeline` writes its schedules; its makespan is the step
 * time without the gradient all-reduces: the slowest group and the
 * transfers the step exposes, spread evenly over the m + pp - 1 slots
 * (pipeline_p2p.h: overlapped, the fill and drain's and what the passes
 * cannot hide). */
static json_t *schedule_1f1b(const pb_dtp_config *c, int train)
{
	double slot = c->slowest + c->p2p_exposed / (c->m + c->pp - 1);
	json_t *sch = json_object();
	json_object_set_new(sch, "1f1b",
	                    pb_pipeline_stages_schedule("1f1b", c->pp, c->m,
	                                                train ? slot / 3 : slot,
	                                                train ? 2 * slot / 3 : 0));
	return sch;
}

static double num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

int pb_dtp_plan_build(const pb_graph *g, const pb_cluster *cl, const pb_dtp_config *c, long B,
                      int train, const int *chunk_of, const json_t *chunks, pb_plan **out,
                      pb_error *err)
{
	int n_chunks = (int)json_array_size(chunks);
	pb_plan *plan = pb_plan_new("pipeline", "dtp", g->n_nodes);
	json_t *stages = json_array(), *det = json_object();
	double *gmem = calloc((size_t)c->pp + 1, sizeof(double));
	double *gtime = calloc((size_t)c->pp + 1, sizeof(double));
	if (!plan || !stages || !det || !gmem || !gtime) {
		pb_plan_free(plan);
		json_decref(stages);
		json_decref(det);
		free(gmem);
		free(gtime);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	/* per device group: memory (parameters + activations in flight) and time */
	for (int k = 0; k < n_chunks; k++) {
		const json_t *ch = json_array_get(chunks, (size_t)k);
		if (!json_is_object(ch))
			continue;
		int s = k % c->pp;
		gmem[s] += num(ch, "param_bytes") + num(ch, "act_copies") * num(ch, "act_bytes");
		gtime[s] += num(ch, "time");
	}
	for (int k = 0; k < n_chunks; k++) {
		const json_t *ch = json_array_get(chunks, (size_t)k);
		int s = k % c->pp;
		char lab[48];
		if (c->v > 1)
			snprintf(lab, sizeof lab, "stage %d chunk %d", s, k / c->pp);
		else
			snprintf(lab, sizeof lab, "stage %d", s);
		int first, d; /* uneven groups: each its own (dtp_uneven.c) */
		pb_dtp_plan_group_devices(c, s, &first, &d);
		pb_plan_group pg = {0};
		pg.label = lab;
		pg.first_unit = first;
		pg.n_units = d;
		pg.time = json_is_object(ch) ? num(ch, "time") : 0;
		pg.compute = pg.time;
		pg.storage = gmem[s];
		pg.first_node = pg.last_node = -1;
		pg.bottleneck = gtime[s] >= c->slowest * (1 - 1e-12) && c->slowest > 0;
		pg.over_memory = gmem[s] > cl->memory * (1 + 1e-9);
		pb_plan_add_group(plan, &pg);
		json_t *st = json_is_object(ch) ? json_deep_copy(ch)
		                                : json_pack("{s:i,s:i,s:[]}", "chunk", k, "group",
		                                            s, "ops"); /* an empty chunk */
		json_object_set_new(st, "stage", json_integer(s));
		json_object_set_new(st, "devices", json_pack("[i,i]", first, first + d - 1));
		json_object_set_new(st, "memory", json_real(gmem[s]));
		json_array_append_new(stages, st);
	}
	for (int v = 0; v < g->n_nodes; v++)
		plan->group[v] = chunk_of[v] >= 0 && chunk_of[v] < n_chunks ? chunk_of[v] : -1;
	pb_plan_fill_node_ranges(plan, g);
	char sb[32];
	pb_plan_set_metric(plan, "step_time", c->step_time);
	pb_plan_set_metric(plan, "microbatches", c->m);
	pb_plan_set_metric(plan, "bubble", c->bubble);
	pb_plan_set_metric(plan, "stages", c->pp);
	pb_plan_set_metric(plan, "feasible", c->fits);
	pb_plan_set_metric(plan, "dp", c->dp);
	pb_plan_set_metric(plan, "tp", c->tp);
	pb_plan_set_metric(plan, "pp", c->pp);
	pb_plan_set_metric(plan, "chunks_per_device", c->v);
	pb_plan_set_metric(plan, "memory_per_device", c->memory);
	pb_plan_set_metric(plan, "memory_limit", cl->memory);
	pb_plan_set_metric(plan, "devices", cl->n_devices);
	json_object_set_new(det, "kind", json_string("dp x tp x pp"));
	json_object_set_new(det, "layout", json_string(cl->name ? cl->name : ""));
	json_object_set_new(det, "batch", json_integer(B));
	json_object_set_new(det, "train", json_boolean(train));
	json_object_set_new(det, "dp", json_integer(c->dp));
	json_object_set_new(det, "tp", json_integer(c->tp));
	json_object_set_new(det, "pp", json_integer(c->pp));
	json_object_set_new(det, "microbatches", json_integer(c->m));
	json_object_set_new(det, "micro_batches", json_integer(c->m));
	json_object_set_new(det, "pipeline_schedule",
	                    json_string(pb_dtp_plan_sched_name(c, sb, sizeof sb)));
	json_object_set_new(det, "chunks_per_device", json_integer(c->v));
	json_object_set_new(det, "step_time", json_real(c->step_time));
	json_object_set_new(det, "bubble", json_real(c->bubble));
	json_object_set_new(det, "slowest_group", json_real(c->slowest));
	json_object_set_new(det, "p2p", json_real(c->p2p));
	json_object_set_new(det, "p2p_exposed", json_real(c->p2p_exposed));
	json_object_set_new(det, "grad_sync", json_real(c->grad));
	json_object_set_new(det, "grad_exposed", json_real(c->grad_exposed));
	json_object_set_new(det, "memory", json_real(c->memory));
	json_object_set_new(det, "fits", json_boolean(c->fits));
	json_object_set_new(det, "stages", stages);
	if (c->sched == PB_SCHED_1F1B) /* the timeline the step time counts */
		json_object_set_new(det, "schedule", schedule_1f1b(c, train));
	pb_dtp_plan_uneven_json(det, c);
	json_decref(plan->detail);
	plan->detail = det;
	free(gmem);
	free(gtime);
	*out = plan;
	return PB_OK;
}
