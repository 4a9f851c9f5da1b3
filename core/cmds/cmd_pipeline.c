/*
 * cmds/cmd_pipeline.c — `pipeline`: split the model into P stages on P device
 * groups (key-operator intervals + MILP, exact DP on chains), pick the
 * micro-batches, shard every stage on its device group (the shard search on
 * the stage's operators), cost the plan (stage time x (m + P - 1) plus
 * point-to-point transfers) against the pure operator-level plan, and show
 * the GPipe and 1F1B schedules (docs/shard.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "shard/pipeline_stages.h"
#include "shard/search.h"

static const pb_opt pipe_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    PB_OPTS_JSON,
    {"stages", 'p', PB_OPT_INT, "P",
     "number of stages (default: the node count, or 2 on one node)"},
    {"batch", 'b', PB_OPT_INT, "B", "global batch (default: dim 0 of the model input)"},
    {"microbatches", 'm', PB_OPT_INT, "M",
     "micro-batches (default: smallest divisor of B with bubble <= --max-bubble)"},
    {"max-bubble", 0, PB_OPT_DOUBLE, "F",
     "bubble bound (p-1)/(m+p-1) for the automatic choice (default 0.2)"},
    {"train", 0, PB_OPT_FLAG, NULL, "training step (backward = 2x forward on the same stage)"},
    {"opt-level", 'O', PB_OPT_INT, "N", "optimisation level of the per-stage sharding (default 2)"},
    {"slack", 0, PB_OPT_INT, "K", "widen every key operator's stage range by K stages (default 0)"},
    {"output", 'o', PB_OPT_STR, "FILE", "save the plan as JSON"},
    {"require-fit", 0, PB_OPT_FLAG, NULL,
     "exit 2 when the best plan does not fit the device memory (it is still shown and saved)"},
    {"pad", 0, PB_OPT_FLAG, NULL,
     "stages (and the operator-level plan) may also split dimensions that do not divide "
     "(as shard --pad)"},
    {"skip-oplevel", 0, PB_OPT_FLAG, NULL,
     "do not solve the operator-level plan for comparison (used by shard --pipeline auto)"},
    PB_OPTS_END};

static int reload_batch(pb_session *s, long batch, pb_error *err)
{
	int rc = pb_session_set_batch(s, batch, err);
	return rc ? pb_err_prefix(err, "pipeline") : PB_OK;
}

typedef struct stage_res {
	double time, compute, comm, mem_param, mem_act, peak, memory;
	int ops, first_dev, n_dev, feasible;
	char scheme[48];
} stage_res;

static int solve_stage(const pb_graph *g, const pb_cluster *sub, const pb_shard_opts *o,
                       stage_res *r, pb_error *err)
{
	pb_shard_search *s = NULL;
	int rc = pb_shard_search_new(g, sub, o, NULL, 2, NULL, &s, err);
	if (rc == PB_OK)
		rc = pb_shard_search_finish(s, err);
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
	pb_shard_search_free(s);
	return rc;
}

static int cmd_pipeline(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long P, B, M, lvl, slack;
	double maxb;
	int rc;
	pb_cluster cl;
	if ((rc = pb_cluster_from_hw(ctx->s->hw, &cl, err)))
		return rc;
	const pb_graph *g0 = ctx->s->graph;
	long model_batch = 1;
	if (g0->n_inputs > 0 && g0->tensors[g0->inputs[0]].rank >= 1 &&
	    g0->tensors[g0->inputs[0]].dims[0] > 0)
		model_batch = g0->tensors[g0->inputs[0]].dims[0];
	long dflt_p = cl.nodes > 1 ? cl.nodes : 2;
	if ((rc = pb_args_int(a, "stages", dflt_p, 1, cl.n_devices, &P, err)) ||
	    (rc = pb_args_int(a, "batch", model_batch, 1, 1L << 30, &B, err)) ||
	    (rc = pb_args_int(a, "microbatches", 0, 0, 1L << 30, &M, err)) ||
	    (rc = pb_args_int(a, "opt-level", 2, 0, 3, &lvl, err)) ||
	    (rc = pb_args_int(a, "slack", 0, 0, 64, &slack, err)) ||
	    (rc = pb_args_double(a, "max-bubble", 0.2, 0, 1, &maxb, err))) {
		pb_cluster_free(&cl);
		return rc;
	}
	if (cl.n_devices % P) {
		rc = pb_err(err, PB_EUSAGE,
		            "pipeline: %ld stages do not divide the %d devices of %s", P,
		            cl.n_devices, cl.name);
		pb_cluster_free(&cl);
		return rc;
	}
	int m = M > 0 ? (int)M : pb_pipe_microbatches(B, (int)P, maxb);
	if (B % m) {
		pb_cluster_free(&cl);
		return pb_err(err, PB_EUSAGE,
		              "pipeline: %d micro-batches do not divide the batch %ld", m, B);
	}
	int train = pb_args_has(a, "train");
	/* the operator-level plan of the whole batch, with the same cost model */
	pb_shard_opts o;
	pb_shard_opts_default(&o);
	o.train = train;
	o.opt_level = (int)lvl;
	o.pad = pb_args_has(a, "pad");
	if (B != model_batch && (rc = reload_batch(ctx->s, B, err))) {
		pb_cluster_free(&cl);
		return rc;
	}
	stage_res oplevel = {0};
	if (pb_args_has(a, "skip-oplevel")) {
		oplevel.time = INFINITY;
		snprintf(oplevel.scheme, sizeof oplevel.scheme, "(not solved)");
	} else {
		rc = solve_stage(ctx->s->graph, &cl, &o, &oplevel, err);
	}
	/* the per-micro-batch graph */
	if (rc == PB_OK && B / m != B)
		rc = reload_batch(ctx->s, B / m, err);
	if (rc) {
		pb_cluster_free(&cl);
		return rc;
	}
	const pb_graph *g = ctx->s->graph;
	int n = g->n_nodes;
	unsigned char *act = malloc((size_t)n + 1), *mask = malloc((size_t)n + 1);
	double *cost = malloc(((size_t)n + 1) * sizeof(double));
	stage_res *st = calloc((size_t)P, sizeof *st);
	pb_pipe_split sp = {0};
	if (!act || !mask || !cost || !st) {
		rc = pb_err(err, PB_ENOMEM, "pipeline: out of memory");
		goto done;
	}
	pb_shard_dynamic_nodes(g, act);
	for (int v = 0; v < n; v++)
		cost[v] = act[v] ? pb_shard_node_flops(g, &g->nodes[v]) : -1;
	int chain = pb_pipe_is_chain(g, cost);
	rc = chain ? pb_pipe_split_dp(g, cost, (int)P, &sp, err)
	           : pb_pipe_split_milp(g, cost, (int)P, (int)slack, 0, &sp, err);
	if (rc)
		goto done;
	/* every stage on its device group */
	int d = cl.n_devices / (int)P;
	pb_cluster sub = cl;
	sub.nodes = d >= cl.devices_per_node ? d / cl.devices_per_node : 1;
	sub.devices_per_node = d >= cl.devices_per_node ? cl.devices_per_node : d;
	sub.n_devices = d;
	o.mask = mask;
	int any_over = 0;
	double tmax = 0;
	for (int s = 0; s < P && rc == PB_OK; s++) {
		for (int v = 0; v < n; v++) {
			mask[v] = sp.stage[v] == s;
			st[s].ops += mask[v] && act[v];
		}
		st[s].first_dev = s * d;
		st[s].n_dev = d;
		if (st[s].ops == 0) { /* an empty stage holds nothing: it fits */
			snprintf(st[s].scheme, sizeof st[s].scheme, "-");
			st[s].feasible = 1;
			continue;
		}
		int inflight = (int)(P - s) < m ? (int)(P - s) : m; /* 1F1B */
		/* the stage's sharding sees the memory it will really hold */
		o.act_copies = train ? inflight : 1;
		rc = solve_stage(g, &sub, &o, &st[s], err);
		st[s].memory =
		    st[s].mem_param + (train ? inflight * st[s].mem_act : 2 * st[s].peak);
		st[s].feasible = st[s].memory <= cl.memory;
		any_over |= !st[s].feasible;
		if (st[s].time > tmax)
			tmax = st[s].time;
	}
	if (rc)
		goto done;
	/* point-to-point transfers between consecutive stages (per micro-batch) */
	double *xb = calloc((size_t)P + 1, sizeof(double));
	double pmax = 0;
	for (int v = 0; v < n && xb; v++) {
		if (!act[v])
			continue;
		const pb_node *nd = &g->nodes[v];
		for (int i = 0; i < nd->n_inputs; i++) {
			int t = nd->inputs[i], u = t >= 0 ? g->tensors[t].producer : -1;
			if (u < 0 || !act[u])
				continue;
			for (int k = sp.stage[u]; k < sp.stage[v]; k++)
				xb[k] += pb_tensor_bytes(&g->tensors[t]);
		}
	}
	json_t *p2p = json_array();
	for (int k = 0; k + 1 < P && xb; k++) {
		int inter =
		    (k + 1) * d / cl.devices_per_node != ((k + 1) * d - 1) / cl.devices_per_node;
		const pb_link *l = inter ? &cl.inter : &cl.intra;
		/* every device of the stage sends its share over its own link */
		double t = xb[k] > 0 ? l->latency + xb[k] / d / l->bw * (train ? 2 : 1) : 0;
		if (t > pmax)
			pmax = t;
		json_t *o2 = json_object();
		json_object_set_new(o2, "from_stage", json_integer(k));
		json_object_set_new(o2, "bytes", json_real(xb[k]));
		json_object_set_new(o2, "link", json_string(inter ? "inter" : "intra"));
		json_object_set_new(o2, "time", json_real(t));
		json_array_append_new(p2p, o2);
	}
	free(xb);
	double slot = tmax + pmax;
	double step = slot * (m + P - 1);
	double bubble = (double)(P - 1) / (m + P - 1), bubble2 = (double)(P - 1) / m;
	/* A plan over memory never beats one that fits; among equals the faster wins. */
	int op_solved = isfinite(oplevel.time);
	int pipe_wins = pb_pipe_prefer(step, !any_over, oplevel.time, oplevel.feasible);
	/* report */
	json_t *j = json_object();
	json_object_set_new(j, "model", json_string(g->path ? g->path : ""));
	json_object_set_new(j, "layout", json_string(cl.name));
	json_object_set_new(j, "train", json_boolean(train));
	json_object_set_new(j, "batch", json_integer(B));
	json_object_set_new(j, "microbatches", json_integer(m));
	json_object_set_new(j, "bubble", json_real(bubble));
	json_object_set_new(j, "bubble_over_m", json_real(bubble2));
	json_object_set_new(j, "split",
	                    json_string(chain ? "dp (chain)" : "milp (key-operator intervals)"));
	json_object_set_new(j, "split_optimal", json_boolean(sp.optimal));
	json_object_set_new(j, "key_operators", json_integer(sp.n_key));
	json_object_set_new(j, "cross_stage_bytes", json_real(sp.cross_bytes));
	json_t *stages = json_array();
	for (int s = 0; s < P; s++) {
		json_t *o2 = json_object();
		json_object_set_new(o2, "stage", json_integer(s));
		json_object_set_new(o2, "operators", json_integer(st[s].ops));
		json_t *names = json_array();
		for (int v = 0; v < n; v++)
			if (act[v] && sp.stage[v] == s)
				json_array_append_new(
				    names, json_string(g->nodes[v].name ? g->nodes[v].name : ""));
		json_object_set_new(o2, "nodes", names);
		json_t *dv = json_array();
		for (int k = 0; k < st[s].n_dev; k++)
			json_array_append_new(dv, json_integer(st[s].first_dev + k));
		json_object_set_new(o2, "devices", dv);
		json_object_set_new(o2, "scheme", json_string(st[s].scheme));
		json_object_set_new(o2, "time", json_real(st[s].time));
		json_object_set_new(o2, "compute_time", json_real(st[s].compute));
		json_object_set_new(o2, "comm_time", json_real(st[s].comm));
		json_object_set_new(o2, "flops", json_real(sp.stage_cost[s]));
		json_object_set_new(o2, "param_bytes", json_real(st[s].mem_param));
		json_object_set_new(o2, "memory", json_real(st[s].memory));
		json_object_set_new(o2, "feasible", json_boolean(st[s].feasible));
		json_array_append_new(stages, o2);
	}
	json_object_set_new(j, "stages", stages);
	json_object_set_new(j, "p2p", p2p);
	json_object_set_new(j, "step_time", json_real(step));
	json_object_set_new(j, "feasible", json_boolean(!any_over));
	json_object_set_new(j, "memory_limit", json_real(cl.memory));
	json_t *schemes = json_array();
	char pname[64];
	int first = 0; /* name the inner scheme after the first stage that has operators */
	while (first + 1 < P && st[first].ops == 0)
		first++;
	snprintf(pname, sizeof pname, "%ld stages x %s", P, st[first].scheme);
	json_t *r1 = json_object();
	json_object_set_new(r1, "scheme", json_string(pname));
	json_object_set_new(r1, "kind", json_string("pipeline"));
	json_object_set_new(r1, "step_time", json_real(step));
	json_object_set_new(r1, "feasible", json_boolean(!any_over));
	json_array_append_new(schemes, r1);
	if (isfinite(oplevel.time)) {
		json_t *r2 = json_object();
		json_object_set_new(r2, "scheme", json_string(oplevel.scheme));
		json_object_set_new(r2, "kind", json_string("operator-level"));
		json_object_set_new(r2, "step_time", json_real(oplevel.time));
		json_object_set_new(r2, "feasible", json_boolean(oplevel.feasible));
		json_array_append_new(schemes, r2);
	}
	json_object_set_new(j, "schemes", schemes);
	json_object_set_new(j, "best", json_string(pipe_wins ? "pipeline" : "operator-level"));
	double tf = train ? slot / 3 : slot, tb = train ? 2 * slot / 3 : 0;
	json_t *sch = json_object();
	json_object_set_new(sch, "gpipe", pb_pipe_schedule("gpipe", (int)P, m, tf, tb));
	json_object_set_new(sch, "1f1b", pb_pipe_schedule("1f1b", (int)P, m, tf, tb));
	json_object_set_new(j, "schedule", sch);
	if (pb_args_has(a, "json")) {
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
		fputc('\n', ctx->out);
	} else {
		FILE *f = ctx->out;
		fprintf(f,
		        "pipeline: %s on %s, %ld stages x %d devices, batch %ld = %d micro-batches "
		        "of %ld, %s\n",
		        g->path, cl.name, P, d, B, m, B / m, train ? "training" : "inference");
		fprintf(f, "split: %s, %d key operators, %.3g MB cross-stage per micro-batch\n",
		        chain ? "exact DP (chain)" : "key-operator intervals + MILP", sp.n_key,
		        sp.cross_bytes / 1e6);
		fprintf(f, "\n  %5s %6s %9s %10s %12s %12s %12s %s\n", "stage", "ops", "devices",
		        "scheme", "GFLOP/mb", "time/mb", "memory", "");
		for (int s = 0; s < P; s++)
			fprintf(f, "  %5d %6d %4d-%-4d %10s %12.4g %9.3f ms %9.3f GB %s\n", s,
			        st[s].ops, st[s].first_dev, st[s].first_dev + st[s].n_dev - 1,
			        st[s].scheme, sp.stage_cost[s] / 1e9, st[s].time * 1e3,
			        st[s].memory / 1e9, st[s].feasible ? "" : "OVER MEMORY");
		if (any_over)
			fprintf(
			    f,
			    "stage memory = parameters + %s; a device has %.3f GB: the plan does "
			    "not fit\n",
			    train ? "activations of the micro-batches in flight under 1F1B"
			          : "2 x the largest activation",
			    cl.memory / 1e9);
		fprintf(f, "\nbubble %.3f ((p-1)/(m+p-1)), %.3f ((p-1)/m); p2p per slot %.4f ms\n",
		        bubble, bubble2, pmax * 1e3);
		fprintf(f, "\n  %-24s %-15s %14s\n", "scheme", "kind", "step time");
		fprintf(f, "%c %-24s %-15s %11.4f ms%s\n", pipe_wins ? '*' : ' ', pname, "pipeline",
		        step * 1e3, any_over ? "  (does not fit)" : "");
		if (op_solved)
			fprintf(f, "%c %-24s %-15s %11.4f ms%s\n", pipe_wins ? ' ' : '*',
			        oplevel.scheme, "operator-level", oplevel.time * 1e3,
			        oplevel.feasible ? "" : "  (does not fit)");
		/* one column of three characters per forward slot (backward = 2 slots) */
		const char *kinds[2] = {"gpipe", "1f1b"}, *titles[2] = {"GPipe", "1F1B"};
		for (int q = 0; q < 2; q++) {
			fprintf(f, "\n%s schedule (one column = one forward slot of %.4f ms):\n",
			        titles[q], tf * 1e3);
			pb_pipe_schedule_text(f, json_object_get(sch, kinds[q]), tf, 40);
		}
	}
	/* plan: group = stage */
	pb_plan *plan = pb_plan_new("pipeline", chain ? "dp" : "milp", n);
	for (int s = 0; s < P; s++) {
		pb_plan_group pg = {0};
		char lab[32];
		snprintf(lab, sizeof lab, "stage %d", s);
		pg.label = lab;
		pg.first_unit = st[s].first_dev;
		pg.n_units = st[s].n_dev;
		pg.time = st[s].time;
		pg.compute = st[s].compute;
		pg.routing = st[s].comm;
		pg.storage = st[s].memory;
		pg.first_node = pg.last_node = -1;
		pg.bottleneck = st[s].time == tmax;
		pg.over_memory = !st[s].feasible;
		pb_plan_add_group(plan, &pg);
	}
	for (int v = 0; v < n; v++)
		plan->group[v] = sp.stage[v];
	pb_plan_set_metric(plan, "step_time", step);
	pb_plan_set_metric(plan, "microbatches", m);
	pb_plan_set_metric(plan, "bubble", bubble);
	pb_plan_set_metric(plan, "stages", (double)P);
	pb_plan_set_metric(plan, "feasible", !any_over);
	json_decref(plan->detail);
	plan->detail = j;
	const char *outp = pb_args_str(a, "output", NULL);
	if (outp)
		rc = pb_plan_save(plan, pb_session_node_names(ctx->s), outp, err);
	pb_session_set_plan(ctx->s, plan);
	ctx->redraw |= PB_REDRAW_ALL;
	if (rc == PB_OK && (pipe_wins ? any_over : !oplevel.feasible))
		rc = pb_cmd_report_fit(ctx, a, "pipeline", cl.memory, err);
done:
	pb_pipe_split_free(&sp);
	free(act);
	free(mask);
	free(cost);
	free(st);
	pb_cluster_free(&cl);
	return rc;
}

const pb_command pb_cmds_pipeline[] = {
    {"pipeline",
     "pipeline [MODEL] --layout L [--stages P] [--batch B] [--microbatches M] [--train] [--pad] "
     "[--json] [-o plan.json]",
     "split the model into pipeline stages, pick micro-batches, shard each stage (cluster layouts)",
     pipe_opts, cmd_pipeline, PB_CMD_GRAPH | PB_CMD_LAYOUT,
     "Stages come from key-operator cost intervals and a MILP minimising the slowest stage,\n"
     "then the cross-stage bytes (an exact DP when the graph is a chain). Every stage is\n"
     "sharded on its device group by the shard search; step time = (slowest stage +\n"
     "p2p) x (m + p - 1). See docs/shard.md."},
    {0}};
