/*
 * report.c — the group table and the JSON result of a partition plan, shared
 * by the partition, train and edit commands (report.h). Reads only the
 * generic plan, so it shows plans loaded from files too. Units come from
 * util/fmt.h as everywhere else: times with three decimals in the unit that
 * keeps them >= 1 (pb_fmt_time_fixed), bytes and counts with SI prefixes.
 */
#include "partition/chain/report.h"

#include <math.h>
#include <string.h>

#include "util/fmt.h"

/* The rules that constrained the plan (detail.rules, chain_rules.h). */
static void rules_text(FILE *out, const pb_plan *p)
{
	const json_t *rules = json_object_get(p->detail, "rules");
	if (!json_is_array(rules) || json_array_size(rules) == 0)
		return;
	fprintf(out, "rules:");
	size_t i;
	const json_t *r;
	json_array_foreach(rules, i, r)
	{
		long long cnt = json_integer_value(json_object_get(r, "count"));
		fprintf(out, "%s %s (%s, %lld node%s)", i ? "," : "",
		        json_string_value(json_object_get(r, "name")),
		        json_string_value(json_object_get(r, "effect")), cnt, cnt == 1 ? "" : "s");
	}
	double viol = pb_plan_metric(p, "rule_violations", 0);
	if (viol > 0)
		fprintf(out, "; BROKEN %d time%s by this plan", (int)viol, viol == 1 ? "" : "s");
	else
		fprintf(out, "; all obeyed");
	fprintf(out, "\n");
}

/* Layers of group i: the running sum of arranged_core's non-zero entries
 * (load-time constants are no layers, chain_layers.h); the node range of a
 * plan without arranged_core. */
static void group_layers(const pb_plan *p, int i, int *first, int *last)
{
	const json_t *ac = json_object_get(p->detail, "arranged_core");
	long at = 0;
	int k = 0;
	size_t c;
	const json_t *v;
	*first = p->groups[i].first_node;
	*last = p->groups[i].last_node;
	json_array_foreach(ac, c, v)
	{
		long n = (long)json_integer_value(v);
		if (n <= 0)
			continue;
		if (k++ == i) {
			*first = (int)at;
			*last = (int)(at + n - 1);
			return;
		}
		at += n;
	}
}

/* A placed plan (detail.mesh, partition/mesh/mesh_plan.h): the grid of groups,
 * the reference figures and the most loaded link. */
static void mesh_text(FILE *out, const pb_plan *p)
{
	const json_t *m = json_object_get(p->detail, "mesh");
	if (!json_is_object(m))
		return;
	int rows = (int)json_integer_value(json_object_get(m, "rows"));
	int cols = (int)json_integer_value(json_object_get(m, "cols"));
	const json_t *pl = json_object_get(m, "placement");
	fprintf(out, "mesh %dx%d, %s routing; group of each core (row 0 on top):\n", rows, cols,
	        json_string_value(json_object_get(m, "routing")));
	for (int r = 0; r < rows; r++) {
		for (int c = 0; c < cols; c++)
			fprintf(out, " %3lld",
			        json_integer_value(json_array_get(pl, (size_t)(r * cols + c))));
		fputc('\n', out);
	}
	char f[3][32];
	double lb = json_real_value(json_object_get(m, "lower_bound"));
	const json_t *sn = json_object_get(m, "snake");
	fprintf(out, "placed max(t) = %s",
	        pb_fmt_time_fixed(pb_plan_metric(p, "max_time", NAN), f[0], 32));
	if (json_is_real(json_object_get(m, "lower_bound"))) {
		double gap = json_real_value(json_object_get(m, "gap_to_lower_bound"));
		fprintf(out,
		        "   routing-free lower bound (1-D exact optimum) = %s   gap = %.3f%%%s",
		        pb_fmt_time_fixed(lb, f[1], 32), 100 * gap,
		        gap <= 1e-9 ? " (optimal: the plan reaches the bound)" : "");
	}
	if (json_is_real(sn))
		fprintf(out, "   snake of the 1-D optimum = %s",
		        pb_fmt_time_fixed(json_real_value(sn), f[2], 32));
	fputc('\n', out);
	const json_t *hot = json_object_get(m, "most_loaded_link");
	fprintf(out, "network: %.1f%% of the bottleneck group's time",
	        100 * json_real_value(json_object_get(m, "link_share")));
	if (json_is_object(hot)) {
		const json_t *a = json_object_get(hot, "from"), *b = json_object_get(hot, "to");
		fprintf(out, "; most loaded link (%lld,%lld)->(%lld,%lld): %s in %s",
		        json_integer_value(json_array_get(a, 0)),
		        json_integer_value(json_array_get(a, 1)),
		        json_integer_value(json_array_get(b, 0)),
		        json_integer_value(json_array_get(b, 1)),
		        pb_fmt_bytes(json_real_value(json_object_get(hot, "bytes")), f[0], 32),
		        pb_fmt_time_fixed(json_real_value(json_object_get(hot, "time")), f[1], 32));
	}
	fputc('\n', out);
	const json_t *pm = json_object_get(m, "place");
	const char *mode = json_string_value(json_object_get(p->detail, "reward_mode"));
	int weighted = mode && !strcmp(mode, "weighted");
	char start_text[32];
	double start = json_real_value(json_object_get(pm, "start"));
	if (weighted)
		snprintf(start_text, sizeof start_text, "%.6f", start);
	else
		pb_fmt_time_fixed(start, start_text, sizeof start_text);
	const json_t *rl = json_object_get(pm, "rl");
	if (json_is_object(rl)) { /* the agent's placement actions (rl_place.h) */
		const json_t *beat = json_object_get(rl, "beat_snake_episode");
		const char *agent = json_string_value(json_object_get(rl, "agent"));
		char beat_text[64] = "never beat the snake";
		if (json_is_integer(beat))
			snprintf(beat_text, sizeof beat_text,
			         "first beat the snake at episode %lld", json_integer_value(beat));
		fprintf(
		    out,
		    "placement: rl (the agent's placement actions) from the snake's %s %s: %lld "
		    "episodes, %lld actions, %lld evaluations, %.3f s CPU; %s%s; agent %s\n",
		    weighted ? "objective" : "max(t)", start_text,
		    json_integer_value(json_object_get(rl, "episodes")),
		    json_integer_value(json_object_get(rl, "steps")),
		    json_integer_value(json_object_get(pm, "evals")),
		    json_real_value(json_object_get(rl, "cpu_seconds")), beat_text,
		    json_is_true(json_object_get(pm, "stopped")) ? "; stopped by the cancel" : "",
		    agent ? agent : "fresh (no checkpoint)");
	} else if (json_is_object(pm))
		fprintf(out,
		        "placement: %s from the snake's %s %s (%lld evaluations, %lld moves, %lld "
		        "exchanges, %lld swaps%s)\n",
		        json_string_value(json_object_get(pm, "method")),
		        weighted ? "objective" : "max(t)", start_text,
		        json_integer_value(json_object_get(pm, "evals")),
		        json_integer_value(json_object_get(pm, "moves")),
		        json_integer_value(json_object_get(pm, "exchanges")),
		        json_integer_value(json_object_get(pm, "swaps")),
		        json_is_true(json_object_get(pm, "stopped"))
		            ? "; stopped by the cancel: the placement found until then"
		        : json_is_true(json_object_get(pm, "exact"))
		            ? "; optimal placement of these layer groups"
		        : json_is_true(json_object_get(pm, "local_optimum")) ? "; a local optimum"
		                                                             : "");
	const json_t *nodes = json_object_get(pm, "nodes");
	if (json_is_integer(nodes)) {
		/* the placement MILP (mesh_milp.h): proved, or best found with its bound */
		const json_t *b = json_object_get(pm, "bound");
		fprintf(out, "placement MILP: %lld nodes in %.3f s; ", json_integer_value(nodes),
		        json_real_value(json_object_get(pm, "milp_seconds")));
		if (json_is_true(json_object_get(pm, "exact")))
			fprintf(out, "optimal (proved) for these layer groups\n");
		else if (json_is_real(b))
			fprintf(out, "time limit: best found, bound = %s, gap = %.3f%%\n",
			        pb_fmt_time_fixed(json_real_value(b), f[0], 32),
			        100 * json_real_value(json_object_get(pm, "gap")));
		else
			fprintf(out, "time limit: best found, no bound yet\n");
	}
}

void pb_part_report_table(FILE *out, const pb_plan *p)
{
	fprintf(out, "%-4s %-12s %-13s %9s %11s %11s %11s %10s\n", "#", "cores", "layers", "MACs",
	        "time", "compute", "routing", "storage");
	char f[4][32];
	for (int i = 0; i < p->n_groups; i++) {
		const pb_plan_group *g = &p->groups[i];
		char cores[24], layers[24], macs[32], storage[32];
		snprintf(cores, sizeof cores, "%d-%d (%d)", g->first_unit,
		         g->first_unit + g->n_units - 1, g->n_units);
		int l0, l1;
		group_layers(p, i, &l0, &l1);
		snprintf(layers, sizeof layers, "%d-%d", l0, l1);
		fprintf(out, "%-4d %-12s %-13s %9s %11s %11s %11s %10s%s%s\n", i, cores, layers,
		        pb_fmt_si(g->macs, macs, sizeof macs), pb_fmt_time_fixed(g->time, f[0], 32),
		        pb_fmt_time_fixed(g->compute, f[1], 32),
		        pb_fmt_time_fixed(g->routing, f[2], 32),
		        pb_fmt_bytes(g->storage, storage, sizeof storage),
		        g->bottleneck ? "  <- max" : "", g->over_memory ? "  OVER MEMORY" : "");
	}
	double mt = pb_plan_metric(p, "max_time", NAN), opt = pb_plan_metric(p, "optimum", NAN);
	fprintf(out, "max(t) = %s   reward = %.6f\n", pb_fmt_time_fixed(mt, f[0], 32),
	        pb_plan_metric(p, "reward", NAN));
	const char *mode = json_string_value(json_object_get(p->detail, "reward_mode"));
	int weighted = mode && !strcmp(mode, "weighted");
	if (weighted) {
		/* the objective is the weighted sum: optimum and gap are of it */
		fprintf(out, "objective (weighted, lower is better) = %.6f\n",
		        pb_plan_metric(p, "objective", NAN));
		if (isfinite(opt))
			fprintf(out, "exact optimum = %.6f   gap = %.3f%%\n", opt,
			        100 * pb_plan_metric(p, "gap", NAN));
	} else if (isfinite(opt)) {
		fprintf(out, "exact optimum = %s   gap = %.3f%%\n",
		        pb_fmt_time_fixed(opt, f[0], 32), 100 * pb_plan_metric(p, "gap", NAN));
	}
	const char *note = json_string_value(json_object_get(p->detail, "exact_note"));
	if (note)
		fprintf(out, "exact: %s\n", note);
	rules_text(out, p);
	json_int_t nf = json_integer_value(json_object_get(p->detail, "folded_constants"));
	if (nf > 0)
		fprintf(out,
		        "layers: %" JSON_INTEGER_FORMAT " (%" JSON_INTEGER_FORMAT
		        " load-time constants of the %d nodes go with the layer that consumes "
		        "them)\n",
		        json_integer_value(json_object_get(p->detail, "layers")), nf, p->n_nodes);
	fprintf(out, "lower bound (perfect balance) = %s   max storage = %s of %s\n",
	        pb_fmt_time_fixed(pb_plan_metric(p, "lower_bound", NAN), f[0], 32),
	        pb_fmt_bytes(pb_plan_metric(p, "max_storage", NAN), f[1], 32),
	        pb_fmt_bytes(pb_plan_metric(p, "memory", NAN), f[2], 32));
	if (pb_plan_has_metric(p, "script_cost"))
		fprintf(out, "script cost terms = %.6g (Lua cost_term heuristics, not in max(t))\n",
		        pb_plan_metric(p, "script_cost", 0));
	mesh_text(out, p);
}

json_t *pb_part_report_json(const pb_plan *p, const char *method, const char *layout)
{
	json_t *j = json_object();
	json_object_set_new(j, "method", json_string(method));
	json_object_set_new(j, "layout", json_string(layout));
	const char *names[] = {"max_time", "objective",   "reward",      "optimum",
	                       "gap",      "lower_bound", "max_storage", "memory"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		double v = pb_plan_metric(p, names[i], NAN);
		json_object_set_new(j, names[i], isfinite(v) ? json_real(v) : json_null());
	}
	json_object_set_new(j, "fits", json_boolean(!pb_part_over_memory(p)));
	json_t *gs = json_array();
	for (int i = 0; i < p->n_groups; i++) {
		const pb_plan_group *g = &p->groups[i];
		json_t *o = json_object();
		json_object_set_new(o, "first_core", json_integer(g->first_unit));
		json_object_set_new(o, "cores", json_integer(g->n_units));
		int l0, l1;
		group_layers(p, i, &l0, &l1);
		json_object_set_new(o, "first_layer", json_integer(l0));
		json_object_set_new(o, "last_layer", json_integer(l1));
		json_object_set_new(o, "first_node", json_integer(g->first_node));
		json_object_set_new(o, "last_node", json_integer(g->last_node));
		json_object_set_new(o, "macs", json_real(g->macs));
		json_object_set_new(o, "time", json_real(g->time));
		json_object_set_new(o, "compute", json_real(g->compute));
		json_object_set_new(o, "routing", json_real(g->routing));
		json_object_set_new(o, "storage", json_real(g->storage));
		json_object_set_new(o, "bottleneck", json_boolean(g->bottleneck));
		json_object_set_new(o, "over_memory", json_boolean(g->over_memory));
		json_array_append_new(gs, o);
	}
	json_object_set_new(j, "groups", gs);
	if (pb_plan_has_metric(p, "script_cost"))
		json_object_set_new(j, "script_cost",
		                    json_real(pb_plan_metric(p, "script_cost", 0)));
	const json_t *mode = json_object_get(p->detail, "reward_mode");
	json_object_set_new(
	    j, "objective_mode",
	    json_string(json_is_string(mode) ? json_string_value(mode) : "max_time"));
	/* A plan saved before the objective existed: max(t) is its objective. */
	if (json_is_null(json_object_get(j, "objective")) && !json_is_string(mode))
		json_object_set(j, "objective", json_object_get(j, "max_time"));
	json_t *rules = json_object_get(p->detail, "rules");
	if (json_is_array(rules)) {
		json_object_set(j, "rules", rules);
		json_object_set_new(
		    j, "rule_violations",
		    json_integer((json_int_t)pb_plan_metric(p, "rule_violations", 0)));
	}
	const json_t *note = json_object_get(p->detail, "exact_note");
	if (json_is_string(note))
		json_object_set(j, "exact_note", (json_t *)note);
	const json_t *mesh = json_object_get(p->detail, "mesh");
	if (json_is_object(mesh)) { /* a placed plan (partition/mesh/mesh_plan.h) */
		const json_t *gc = json_object_get(mesh, "group_cores");
		for (int i = 0; i < p->n_groups; i++)
			json_object_set(json_array_get(gs, (size_t)i), "mesh_cores",
			                json_array_get(gc, (size_t)i));
		json_object_set(j, "links", json_object_get(mesh, "links"));
		json_object_set(j, "lower_bound", json_object_get(mesh, "lower_bound"));
		json_object_set(j, "snake", json_object_get(mesh, "snake"));
		json_object_set_new(j, "balance_bound",
		                    json_real(pb_plan_metric(p, "lower_bound", NAN)));
		json_object_set(j, "mesh", (json_t *)mesh);
	}
	json_object_set(j, "arranged_core", json_object_get(p->detail, "arranged_core"));
	json_object_set(j, "arranged_macs", json_object_get(p->detail, "arranged_macs"));
	const json_t *nl = json_object_get(p->detail, "layers"),
	             *nf = json_object_get(p->detail, "folded_constants");
	if (json_is_integer(nl))
		json_object_set(j, "layers", (json_t *)nl);
	if (json_is_integer(nf))
		json_object_set(j, "folded_constants", (json_t *)nf);
	return j;
}

int pb_part_over_memory(const pb_plan *p)
{
	for (int i = 0; i < p->n_groups; i++)
		if (p->groups[i].over_memory)
			return 1;
	return 0;
}

int pb_part_report_fit(FILE *log, const pb_plan *p, const char *model, const char *layout,
                       int exact)
{
	if (!pb_part_over_memory(p))
		return 0;
	int over = 0;
	for (int i = 0; i < p->n_groups; i++)
		over += p->groups[i].over_memory;
	char st[32], mem[32];
	fprintf(
	    log,
	    "warning: the plan of %s does not fit %s: largest storage per core %s > core "
	    "memory %s (%d of %d groups over memory; the reward carries the memory "
	    "penalty)%s\n",
	    model, layout,
	    pb_fmt_num(pb_plan_metric(p, "max_storage", NAN), PB_FMT_BYTES, 3, 0, st, sizeof st),
	    pb_fmt_num(pb_plan_metric(p, "memory", NAN), PB_FMT_BYTES, 3, 0, mem, sizeof mem), over,
	    p->n_groups,
	    exact ? "; the exact solver found no partition that fits: more cores or "
	            "memory per core are needed"
	          : "");
	return 1;
}
