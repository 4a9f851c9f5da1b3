/*
 * shard/pipeline/pipeline_report.c — the pipeline planner's report (pipeline_report.h):
 * the JSON of `pipeline --json` (also the plan's detail), the text report,
 * the "pipeline" plan, and the additions of `shard --pipeline auto` to the
 * shard report (JSON and the combined table).
 *
 * Everything here reads a finished result; nothing is recomputed except the
 * schedules, which are a pure function of (P, m, forward and backward slot).
 * The forward slot is the step's slot (slowest stage + p2p); training splits
 * it into forward 1/3 and backward 2/3.
 */
#include "shard/pipeline/pipeline_report.h"
#include "util/fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double fwd_slot(const pb_pipe_result *r)
{
	return r->train ? r->slot / 3 : r->slot;
}

static double bwd_slot(const pb_pipe_result *r)
{
	return r->train ? 2 * r->slot / 3 : 0;
}

static json_t *stage_json(const pb_pipe_result *r, int s)
{
	const pb_pipe_stage *st = &r->stage[s];
	const pb_graph *g = r->g;
	json_t *o = json_object();
	json_object_set_new(o, "stage", json_integer(s));
	json_object_set_new(o, "operators", json_integer(st->ops));
	json_t *names = json_array();
	for (int v = 0; v < g->n_nodes; v++)
		if (r->active[v] && r->split.stage[v] == s)
			json_array_append_new(
			    names, json_string(g->nodes[v].name ? g->nodes[v].name : ""));
	json_object_set_new(o, "nodes", names);
	json_t *dv = json_array();
	for (int k = 0; k < st->n_dev; k++)
		json_array_append_new(dv, json_integer(st->first_dev + k));
	json_object_set_new(o, "devices", dv);
	json_object_set_new(o, "scheme", json_string(st->scheme));
	json_object_set_new(o, "time", json_real(st->time));
	json_object_set_new(o, "compute_time", json_real(st->compute));
	json_object_set_new(o, "comm_time", json_real(st->comm));
	json_object_set_new(o, "flops", json_real(r->split.stage_cost[s]));
	json_object_set_new(o, "param_bytes", json_real(st->mem_param));
	json_object_set_new(o, "memory", json_real(st->memory));
	json_object_set_new(o, "feasible", json_boolean(st->feasible));
	return o;
}

static json_t *scheme_json(const char *scheme, const char *kind, double time, int feasible)
{
	json_t *o = json_object();
	json_object_set_new(o, "scheme", json_string(scheme));
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "step_time", json_real(time));
	json_object_set_new(o, "feasible", json_boolean(feasible));
	return o;
}

static json_t *schedules_json(const pb_pipe_result *r)
{
	json_t *sch = json_object();
	json_object_set_new(
	    sch, "gpipe",
	    pb_pipeline_stages_schedule("gpipe", r->p, r->m, fwd_slot(r), bwd_slot(r)));
	json_object_set_new(
	    sch, "1f1b", pb_pipeline_stages_schedule("1f1b", r->p, r->m, fwd_slot(r), bwd_slot(r)));
	return sch;
}

json_t *pb_pipeline_report_result_json(const pb_pipe_result *r)
{
	const pb_graph *g = r->g;
	json_t *j = json_object();
	json_object_set_new(j, "model", json_string(g->path ? g->path : ""));
	json_object_set_new(j, "layout", json_string(r->cl->name));
	json_object_set_new(j, "train", json_boolean(r->train));
	json_object_set_new(j, "batch", json_integer(r->batch));
	json_object_set_new(j, "microbatches", json_integer(r->m));
	json_object_set_new(j, "bubble", json_real(r->bubble));
	json_object_set_new(j, "bubble_over_m", json_real(r->bubble_over_m));
	json_object_set_new(j, "split",
	                    json_string(r->chain ? "dp (chain)" : "milp (key-operator intervals)"));
	json_object_set_new(j, "split_optimal", json_boolean(r->split.optimal));
	json_object_set_new(j, "key_operators", json_integer(r->split.n_key));
	json_object_set_new(j, "cross_stage_bytes", json_real(r->split.cross_bytes));
	if (r->polished)
		json_object_set_new(j, "polish",
		                    json_pack("{s:i,s:i,s:b,s:f}", "moves", r->polish_moves,
		                              "tries", r->polish_tries, "converged",
		                              r->polish_converged, "step_time_before",
		                              r->polish_before));
	json_t *stages = json_array();
	for (int s = 0; s < r->p; s++)
		json_array_append_new(stages, stage_json(r, s));
	json_object_set_new(j, "stages", stages);
	json_t *p2p = json_array();
	for (int k = 0; k + 1 < r->p; k++) {
		json_t *o = json_object();
		json_object_set_new(o, "from_stage", json_integer(k));
		json_object_set_new(o, "bytes", json_real(r->p2p_bytes[k]));
		json_object_set_new(o, "link", json_string(r->p2p_inter[k] ? "inter" : "intra"));
		json_object_set_new(o, "time", json_real(r->p2p_time[k]));
		json_array_append_new(p2p, o);
	}
	json_object_set_new(j, "p2p", p2p);
	json_object_set_new(j, "step_time", json_real(r->step_time));
	json_object_set_new(j, "feasible", json_boolean(r->fits));
	pb_label_json(j, &r->label); /* of the pipeline's step time */
	json_object_set_new(j, "memory_limit", json_real(r->cl->memory));
	json_t *schemes = json_array();
	json_array_append_new(schemes, scheme_json(r->name, "pipeline", r->step_time, r->fits));
	if (r->oplevel_solved)
		json_array_append_new(schemes, scheme_json(r->oplevel.scheme, "operator-level",
		                                           r->oplevel.time, r->oplevel.feasible));
	json_object_set_new(j, "schemes", schemes);
	json_object_set_new(j, "best",
	                    json_string(r->pipeline_wins ? "pipeline" : "operator-level"));
	json_object_set_new(j, "schedule", schedules_json(r));
	return j;
}

void pb_pipeline_report_result_text(FILE *f, const pb_pipe_result *r)
{
	const pb_graph *g = r->g;
	const pb_cluster *cl = r->cl;
	fprintf(f,
	        "pipeline: %s on %s, %d stages x %d devices, batch %ld = %d micro-batches "
	        "of %ld, %s\n",
	        g->path, cl->name, r->p, r->d, r->batch, r->m, r->batch / r->m,
	        r->train ? "training" : "inference");
	char b1[32], t1[32];
	fprintf(f, "split: %s, %d key operators, %s cross-stage per micro-batch\n",
	        r->chain ? "exact DP (chain)" : "key-operator intervals + MILP", r->split.n_key,
	        pb_fmt_bytes(r->split.cross_bytes, b1, sizeof b1));
	if (r->polished && r->p > 1)
		pb_pipeline_report_polish_line(f, "boundary", r->polish_moves, r->polish_tries,
		                               r->polish_before, r->step_time, r->polish_converged);
	fprintf(f, "\n  %5s %6s %9s %10s %12s %12s %12s %s\n", "stage", "ops", "devices", "scheme",
	        "GFLOP/mb", "time/mb", "memory", "");
	for (int s = 0; s < r->p; s++) {
		const pb_pipe_stage *st = &r->stage[s];
		fprintf(f, "  %5d %6d %4d-%-4d %10s %12.4g %12s %12s %s\n", s, st->ops,
		        st->first_dev, st->first_dev + st->n_dev - 1, st->scheme,
		        r->split.stage_cost[s] / 1e9, pb_fmt_time_fixed(st->time, t1, sizeof t1),
		        pb_fmt_bytes(st->memory, b1, sizeof b1), st->feasible ? "" : "OVER MEMORY");
	}
	if (!r->fits)
		fprintf(
		    f,
		    "stage memory = parameters + %s; a device may be planned to %s: the plan does "
		    "not fit\n",
		    r->train ? "activations of the micro-batches in flight under 1F1B"
		             : "2 x the largest activation",
		    pb_fmt_bytes(cl->memory, b1, sizeof b1));
	fprintf(f, "\nbubble %.3f ((p-1)/(m+p-1)), %.3f ((p-1)/m); p2p per slot %s\n", r->bubble,
	        r->bubble_over_m, pb_fmt_time_fixed(r->p2p_max, t1, sizeof t1));
	fprintf(f, "\n  %-24s %-15s %14s\n", "scheme", "kind", "step time");
	fprintf(f, "%c %-24s %-15s %14s%s\n", r->pipeline_wins ? '*' : ' ', r->name, "pipeline",
	        pb_fmt_time_fixed(r->step_time, t1, sizeof t1), r->fits ? "" : "  (does not fit)");
	if (r->oplevel_solved)
		fprintf(f, "%c %-24s %-15s %14s%s\n", r->pipeline_wins ? ' ' : '*',
		        r->oplevel.scheme, "operator-level",
		        pb_fmt_time_fixed(r->oplevel.time, t1, sizeof t1),
		        r->oplevel.feasible ? "" : "  (does not fit)");
	char words[400];
	fprintf(f, "pipeline step time: %s\n",
	        pb_label_text(&r->label, pb_fmt_time_fixed, words, sizeof words));
	/* one column of three characters per forward slot (backward = 2 slots) */
	const char *kinds[2] = {"gpipe", "1f1b"}, *titles[2] = {"GPipe", "1F1B"};
	json_t *sch = schedules_json(r);
	for (int q = 0; q < 2; q++) {
		fprintf(f, "\n%s schedule (one column = one forward slot of %s):\n", titles[q],
		        pb_fmt_time_fixed(fwd_slot(r), t1, sizeof t1));
		pb_pipeline_stages_schedule_text(f, json_object_get(sch, kinds[q]), fwd_slot(r),
		                                 40);
	}
	json_decref(sch);
}

pb_plan *pb_pipeline_report_result_plan(const pb_pipe_result *r)
{
	const pb_graph *g = r->g;
	pb_plan *plan = pb_plan_new("pipeline", r->chain ? "dp" : "milp", g->n_nodes);
	if (!plan)
		return NULL;
	for (int s = 0; s < r->p; s++) {
		const pb_pipe_stage *st = &r->stage[s];
		pb_plan_group pg = {0};
		char lab[32];
		snprintf(lab, sizeof lab, "stage %d", s);
		pg.label = lab;
		pg.first_unit = st->first_dev;
		pg.n_units = st->n_dev;
		pg.time = st->time;
		pg.compute = st->compute;
		pg.routing = st->comm;
		pg.storage = st->memory;
		pg.first_node = pg.last_node = -1;
		pg.bottleneck = st->time == r->slowest;
		pg.over_memory = !st->feasible;
		pb_plan_add_group(plan, &pg);
	}
	for (int v = 0; v < g->n_nodes; v++)
		plan->group[v] = r->split.stage[v];
	pb_plan_fill_node_ranges(plan, g);
	plan->model_batch = pb_plan_graph_batch(g); /* the micro-batch B/m */
	pb_plan_set_metric(plan, "step_time", r->step_time);
	pb_plan_set_metric(plan, "microbatches", r->m);
	pb_plan_set_metric(plan, "bubble", r->bubble);
	pb_plan_set_metric(plan, "stages", (double)r->p);
	pb_plan_set_metric(plan, "feasible", r->fits);
	pb_plan_set_label(plan, &r->label);
	json_decref(plan->detail);
	plan->detail = pb_pipeline_report_result_json(r);
	return plan;
}

/* ---- shard --pipeline auto ---- */

json_t *pb_pipeline_report_compare_json(const pb_pipe_compare *c, const json_t *rep, int winner)
{
	json_t *arr = json_array();
	for (int k = 0; k < c->n_rows; k++) {
		const pb_pipe_row *r = &c->rows[k];
		json_t *o = json_object();
		json_object_set_new(o, "stages", json_integer(r->stages));
		json_object_set_new(o, "kind", json_string("pipeline"));
		if (r->ok) {
			json_object_set_new(o, "scheme", json_string(r->scheme));
			json_object_set_new(o, "step_time", json_real(r->step_time));
			json_object_set_new(o, "feasible", json_boolean(r->feasible));
			json_object_set_new(o, "microbatches", json_integer(r->microbatches));
		} else {
			json_object_set_new(o, "error", json_string(r->error));
		}
		json_array_append_new(arr, o);
	}
	json_t *best = json_object();
	if (winner >= 0) {
		json_object_set_new(best, "kind", json_string("pipeline"));
		json_object_set_new(best, "scheme", json_string(c->rows[winner].scheme));
		json_object_set_new(best, "step_time", json_real(c->rows[winner].step_time));
	} else {
		json_object_set_new(best, "kind", json_string("operator-level"));
		json_object_set(best, "scheme", json_object_get(rep, "scheme"));
		json_object_set(best, "step_time", json_object_get(rep, "step_time"));
	}
	json_t *j = json_object();
	json_object_set_new(j, "pipelines", arr);
	json_object_set_new(j, "best_overall", best);
	if (winner >= 0) { /* `best` in the framework's terms: the pipeline's */
		const pb_pipe_row *r = &c->rows[winner];
		json_t *b = json_object();
		json_object_set_new(b, "kind", json_string("pipeline"));
		json_object_set_new(b, "dp", json_null()); /* per stage: not kept in the row */
		json_object_set_new(b, "tp", json_null());
		json_object_set_new(b, "pp", json_integer(r->stages));
		json_object_set_new(b, "microbatches", json_integer(r->microbatches));
		json_object_set_new(b, "step_time", json_real(r->step_time));
		json_object_set_new(b, "memory", json_null());
		json_object_set_new(b, "fits", json_boolean(r->feasible));
		json_object_set_new(j, "best", b);
	}
	return j;
}

void pb_pipeline_report_compare_text(FILE *f, const pb_pipe_compare *c, const json_t *rep,
                                     int winner)
{
	char t1[32];
	fprintf(f, "\ncombined (--pipeline auto): operator-level schemes and pipeline plans\n");
	fprintf(f, "  %-30s %-15s %14s\n", "scheme", "kind", "step time");
	size_t i;
	json_t *r;
	double best_op = json_number_value(json_object_get(rep, "step_time"));
	json_array_foreach(json_object_get(rep, "schemes"), i, r)
	{
		json_t *st = json_object_get(r, "step_time");
		if (!json_is_number(st))
			continue;
		pb_fmt_time_fixed(json_number_value(st), t1, sizeof t1);
		const char *name = json_string_value(json_object_get(r, "scheme"));
		int star = winner < 0 && json_number_value(st) == best_op;
		fprintf(f, "%c %-30s %-15s %14s\n", star ? '*' : ' ', name ? name : "?",
		        "operator-level", t1);
	}
	for (int k = 0; k < c->n_rows; k++) {
		const pb_pipe_row *row = &c->rows[k];
		if (!row->ok) {
			fprintf(f, "  %-30d %-15s %s\n", row->stages, "pipeline", row->error);
			continue;
		}
		pb_fmt_time_fixed(row->step_time, t1, sizeof t1);
		fprintf(f, "%c %-30s %-15s %14s  (%d micro-batches)%s\n", k == winner ? '*' : ' ',
		        row->scheme, "pipeline", t1, row->microbatches,
		        row->feasible ? "" : "  OVER MEMORY");
	}
}

void pb_pipeline_report_polish_line(FILE *f, const char *what, int moves, int tries, double before,
                                    double after, int converged)
{
	char t0[32], t1[32], pct[32] = "";
	/* the change in per cent: moves of cheap nodes can keep both times
	 * equal in four digits */
	if (before > 0)
		snprintf(pct, sizeof pct, "%+.3g%%, ", (after - before) / before * 100);
	fprintf(f, "polish: %d %s move%s kept of %d costed, %s -> %s (%s%s)\n", moves, what,
	        moves == 1 ? "" : "s", tries, pb_fmt_time_fixed(before, t0, sizeof t0),
	        pb_fmt_time_fixed(after, t1, sizeof t1), pct,
	        converged ? "no single-node boundary move lowers the step time"
	                  : "budget spent, not converged");
}

void pb_pipeline_report_rules_text(FILE *out, const json_t *rules)
{
	size_t i;
	const json_t *r;
	if (!json_is_array(rules) || json_array_size(rules) == 0)
		return;
	fprintf(out, "rules:");
	json_array_foreach(rules, i, r)
	{
		long long c = json_integer_value(json_object_get(r, "count"));
		fprintf(out, "%s %s (%s, %lld node%s)", i ? "," : "",
		        json_string_value(json_object_get(r, "name")),
		        json_string_value(json_object_get(r, "effect")), c, c == 1 ? "" : "s");
	}
	fprintf(out, "; all obeyed\n");
}
