/*
 * cmds/cmd_partition.c — many-core partition commands: partition, train.
 *
 * `partition` runs one method (core/partition/methods/partition.h) to the end, or with
 * --start attaches it to the session so that `step -n N` advances it; the
 * plan it sets is the generic "partition" plan the TUI and SVG read.
 * `train` trains the REINFORCE agent and writes a checkpoint.
 * --time-limit S stops the run after S seconds with the best plan so far; the milp
 * method then reports its incumbent, proven bound and gap (text and --json).
 */
#include <errno.h>
#include <math.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "util/file_door.h"
#include "partition/methods/partition.h"
#include "partition/chain/chain_rules.h"
#include "partition/chain/exact.h"
#include "partition/mesh/mesh_plan.h"
#include "partition/methods/method_registry.h"
#include "partition/chain/report.h"
#include "partition/mesh/rl_place.h"
#include "partition/rl/rl_reinforce.h"
#include "partition/rl/rl_train.h"
#include "load.h"
#include "script/hooks.h"
#include "script/hooks_solver.h"
#include "shape/shape.h"
#include "util/job.h"
#include "util/proof_label.h"
#include "util/ranks.h"

static const pb_opt partition_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    {.name = "method",
     .short_name = 'm',
     .type = PB_OPT_STR,
     .metavar = "M",
     .help = "(default exact)",
     .choices = pb_part_method_choices},
    {.name = "episodes",
     .short_name = 'e',
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "rl: most training episodes (default 2000; none with --seconds alone)"},
    {.name = "seconds",
     .type = PB_OPT_DOUBLE,
     .metavar = "S",
     .help = "rl: CPU-time budget: train until S seconds (with --episodes: whichever comes first)"},
    {.name = "agent",
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "rl: start from this checkpoint (default: agents/LAYOUT.ckpt when it exists; 'none': "
             "a fresh network)",
     .path = "r:data"},
    {.name = "init",
     .type = PB_OPT_STR,
     .metavar = "I",
     .help = "rl: the start, and the agent's first best: " PB_RL_INIT_NAMES " (default balanced)"},
    {.name = "no-reference",
     .type = PB_OPT_FLAG,
     .help = "skip the exact solve that labels the plan (no optimum, no gap; the agent never reads "
             "it)"},
    {.name = "seed",
     .short_name = 's',
     .type = PB_OPT_INT,
     .metavar = "S",
     .help = "rl: random seed (default 1)"},
    {.name = "emit-lp",
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "milp: write the model in CPLEX LP format",
     .path = "w"},
    {.name = "time-limit",
     .type = PB_OPT_DOUBLE,
     .metavar = "S",
     .help = "stop after S seconds with the best plan so far (milp: with its bound and gap; also "
             "for --start)"},
    {.name = "start",
     .type = PB_OPT_FLAG,
     .help = "attach the solver to the session; advance it with 'step'"},
    {.name = "max-labels",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "the label DP (exact, and the reference, under rules or the weighted objective) stops "
             "after N labels, 40 bytes each, and says its plan is not proven (default 4000000)"},
    {.name = "costs",
     .type = PB_OPT_STR,
     .metavar = "LOG",
     .help = "measured kernel times from a tuning log (partbench tune --log) replace MACs/rate",
     .path = "r:data"},
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "save the resulting plan as JSON",
     .path = "w"},
    {.name = "place",
     .type = PB_OPT_STR,
     .metavar = "P",
     .help = "routed mesh layouts: place the groups on the mesh by " PB_MESH_PLACE_NAMES
             " (default local; rl for --method rl: the agent's placement actions; docs/mesh.md)"},
    {.name = "place-time",
     .type = PB_OPT_DOUBLE,
     .metavar = "S",
     .help = "--place milp: time limit of the placement MILP in seconds (default 10; then the best "
             "placement found, its bound and gap)"},
    {.name = "place-agent",
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "--place rl: the placement agent (default: agents/LAYOUT.place.ckpt when it exists; "
             "'none': a fresh network)",
     .path = "r:data"},
    {.name = "place-episodes",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "--place rl: episodes of the agent's placement actions (default 300)"},
    {.name = "require-fit",
     .type = PB_OPT_FLAG,
     .help = "exit 2 when the plan does not fit the core memory (it is still shown and saved)"},
    PB_OPTS_JSON,
    PB_OPTS_END,
};

static int read_opts(const pb_args *a, pb_part_opts *o, pb_error *err)
{
	memset(o, 0, sizeof *o);
	o->method = pb_args_str(a, "method", "exact");
	const pb_part_method *m = pb_part_method_find(o->method);
	if (!m)
		return pb_part_method_unknown(err, o->method);
	long v;
	int rc = pb_args_int(a, "episodes", 0, 1, 100000000, &v, err);
	if (rc)
		return rc;
	o->episodes = v;
	if ((rc = pb_args_int(a, "seed", 1, 0, 0x7fffffffL, &v, err)))
		return rc;
	o->seed = (unsigned long)v;
	if ((rc = pb_args_double(a, "seconds", 0, 0, 1e7, &o->seconds, err)))
		return rc;
	if ((rc = pb_args_double(a, "time-limit", 0, 0, 1e7, &o->time_limit, err)))
		return rc;
	if ((rc = pb_args_int(a, "max-labels", 0, 1, 200000000, &v, err)))
		return rc;
	o->max_labels = v;
	o->agent = pb_args_str(a, "agent", NULL);
	o->emit_lp = pb_args_str(a, "emit-lp", NULL);
	o->init = pb_args_str(a, "init", NULL);
	if (o->init && pb_rl_init_parse(o->init) < 0)
		return pb_err(err, PB_EUSAGE,
		              "partition: --init must be one of " PB_RL_INIT_NAMES ", got '%s'",
		              o->init);
	o->no_reference = pb_args_has(a, "no-reference");
	if (o->no_reference && (m->flags & PB_PART_M_SELF_REFERENCE))
		return pb_err(err, PB_EUSAGE,
		              "partition: --no-reference is for the other methods (%s computes "
		              "the optimum itself)",
		              m->name);
	return PB_OK;
}

static double wall_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void json_num(json_t *j, const char *key, double v)
{
	json_object_set_new(j, key, isfinite(v) ? json_real(v) : json_null());
}

/* The milp method's outcome: proved or stopped, incumbent, bound, gap. */
static json_t *milp_json(const pb_milp_stats *st)
{
	json_t *j = json_object();
	json_object_set_new(j, "status",
	                    json_string(st->state == PB_MILP_OPTIMAL      ? "optimal"
	                                : st->state == PB_MILP_TIME_LIMIT ? "time_limit"
	                                                                  : "stopped"));
	/* incumbent and bound are of the objective: seconds, or no unit when weighted */
	json_object_set_new(j, "objective_mode",
	                    json_string(st->weighted ? "weighted" : "max_time"));
	json_object_set_new(j, "unit", json_string(st->weighted ? "none" : "s"));
	json_num(j, "incumbent", st->incumbent);
	json_num(j, "bound", st->bound);
	json_num(j, "gap", st->gap);
	json_object_set_new(j, "probes", json_integer(st->probes));
	json_object_set_new(j, "nodes", json_integer(st->nodes));
	json_object_set_new(j, "columns", json_integer(st->columns));
	json_num(j, "seconds", st->seconds);
	json_object_set_new(j, "lp", st->lp_written[0] ? json_string(st->lp_written) : json_null());
	return j;
}

/* The rl method's contribution: its start, its result, when it first beat
 * the start, the gap to the optimum when known, the budgets. */
static json_t *rl_json(const pb_rl_report *r, double optimum)
{
	json_t *j = json_object(), *st = json_object(), *bu = json_object();
	json_object_set_new(st, "method", json_string(r->start_method));
	json_num(st, "max_time", r->start_time);
	json_object_set_new(j, "start", st);
	json_num(j, "max_time", r->best_time);
	json_num(j, "improvement", r->start_time > 0 ? 1 - r->best_time / r->start_time : NAN);
	json_object_set_new(j, "episodes", json_integer(r->episodes));
	json_num(j, "seconds", r->seconds);
	json_object_set_new(j, "beat_start_episode",
	                    r->beat_episode >= 0 ? json_integer(r->beat_episode) : json_null());
	json_num(j, "beat_start_seconds", r->beat_seconds);
	json_num(j, "gap", isfinite(optimum) && optimum > 0 ? r->best_time / optimum - 1 : NAN);
	json_num(j, "start_gap",
	         isfinite(optimum) && optimum > 0 ? r->start_time / optimum - 1 : NAN);
	json_num(j, "lower_bound", r->lower_bound);
	json_object_set_new(j, "agent", r->agent ? json_string(r->agent) : json_null());
	json_object_set_new(bu, "episodes",
	                    r->budget_episodes > 0 ? json_integer(r->budget_episodes)
	                                           : json_null());
	json_num(bu, "seconds", r->budget_seconds > 0 ? r->budget_seconds : NAN);
	json_object_set_new(j, "budget", bu);
	return j;
}

/* The rl block of partition --json; on a routed mesh the agent's figures
 * are of the 1-D model (routing-free), the placed max(t) beside them. */
static void rl_plan_json(json_t *j, const pb_plan *plan, const pb_rl_report *rr, double optimum)
{
	json_t *rj = rl_json(rr, optimum);
	if (!isnan(pb_plan_metric(plan, "mesh_lower_bound", NAN))) {
		json_object_set_new(rj, "model", json_string("1-D (routing-free)"));
		json_num(rj, "placed_max_time", pb_plan_metric(plan, "max_time", NAN));
	}
	json_object_set(j, "start", json_object_get(rj, "start"));
	json_object_set_new(j, "rl", rj);
}

static void rl_plan_text(FILE *out, const pb_plan *plan, const pb_rl_report *rr)
{
	if (!isnan(pb_plan_metric(plan, "mesh_lower_bound", NAN)))
		fprintf(out,
		        "rl: its 1-D partition, routing-free (placed above: max(t) %.6f ms):\n",
		        pb_plan_metric(plan, "max_time", NAN) * 1e3);
	pb_rl_report_text(rr, out);
	if (rr->agent)
		fprintf(out, "rl: started from the agent %s\n", rr->agent);
}

/* An objective value in its unit: max(t) in ms, the weighted objective bare. */
static char *milp_value(const pb_milp_stats *st, double v, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, "—"); /* unknown */
	else if (st->weighted)
		snprintf(buf, len, "%.6f", v);
	else
		snprintf(buf, len, "%.6f ms", v * 1e3);
	return buf;
}

/* optimal, bound, gap, restricted_by of the plan's objective (proof_label.h):
 * exact (a method that is its own reference, method.h) proves its plan when it
 * ran to its end; milp when its state says
 * so (else its bound); the other methods are heuristics, bounded by the
 * exact reference optimum when it was computed. "gap" is (objective -
 * bound) / objective, as for every plan kind. */
static void label_json(json_t *j, const pb_plan *plan, const char *method, const pb_milp_stats *ms,
                       int stopped)
{
	pb_label L;
	pb_label_init(&L, pb_plan_metric(plan, "objective", NAN));
	double mesh_bound = pb_plan_metric(plan, "mesh_lower_bound", NAN);
	if (!isnan(mesh_bound)) {
		/* on a routed mesh (docs/mesh.md) every method solved the 1-D problem
		 * and the plan was placed after: its proof is of the 1-D problem,
		 * which only bounds the placed one */
		pb_label_restrict(&L, "placed after a 1-D solve");
		pb_label_bound(&L, mesh_bound);
		pb_label_json(j, &L);
		return;
	}
	const pb_part_method *m = pb_part_method_find(method);
	int exact = m && (m->flags & PB_PART_M_SELF_REFERENCE);
	if (exact && json_object_get(plan->detail, "exact_note")) {
		exact = 0; /* the label DP gave up: its plan is a heuristic's */
		pb_label_restrict(&L, "label DP gave up");
	} else if (!exact && !ms)
		pb_label_restrict(&L, method); /* a heuristic */
	if (stopped)
		pb_label_restrict(&L, "time-limit or cancelled");
	if (exact && !stopped)
		pb_label_bound(&L, L.value);
	if (ms && ms->state == PB_MILP_OPTIMAL)
		pb_label_bound(&L, L.value);
	else if (ms)
		pb_label_bound(&L, ms->bound);
	pb_label_bound(&L, pb_plan_metric(plan, "optimum", NAN));
	pb_label_json(j, &L);
}

static void milp_text(FILE *out, const pb_milp_stats *st, double limit)
{
	char inc[32], bound[32], gap[32] = "—"; /* unknown */
	milp_value(st, st->incumbent, inc, sizeof inc);
	milp_value(st, st->bound, bound, sizeof bound);
	if (isfinite(st->gap))
		snprintf(gap, sizeof gap, "%.3f%%", 100 * st->gap);
	if (st->state == PB_MILP_OPTIMAL)
		fprintf(out, "milp: proved optimal in %.3f s", st->seconds);
	else if (st->state == PB_MILP_TIME_LIMIT)
		fprintf(out, "milp: stopped at the time limit (%g s)", limit);
	else
		fprintf(out, "milp: stopped after %.3f s (not proved)", st->seconds);
	fprintf(out, ": %sincumbent %s, bound %s, gap %s; %ld probes, %ld nodes, %d columns\n",
	        st->weighted ? "weighted objective (no unit): " : "", inc, bound, gap, st->probes,
	        st->nodes, st->columns);
}

/* The placement's cancel question: the run's (a key in the workbench, a
 * script's time limit), asked without yielding (GLPK may be on the stack). */
static int place_stop(void *ud)
{
	pb_cmd_ctx *ctx = ud;
	return ctx->progress
	           ? ctx->progress(ctx->progress_ud, 1.0, "placing the groups on the mesh")
	           : pb_job_cancelled();
}

/* A routed mesh: the plan placed by --place (mesh_plan.h); else --place is
 * refused and the plan stays as it is. */
static int place_plan(pb_cmd_ctx *ctx, pb_part_problem *P, const pb_args *a,
                      const char *default_how, pb_plan **plan, pb_mesh_place_report *mr,
                      pb_error *err)
{
	const char *how = pb_args_str(a, "place", NULL);
	if (!P->hw.mesh_routed)
		return how ? pb_err(err, PB_EUSAGE,
		                    "partition: --place needs a layout with a routed mesh "
		                    "(mesh.link_gbs, mesh.hop_ns); %s has none",
		                    P->hw.path)
		           : PB_OK;
	pb_plan *placed;
	double secs;
	int rc = pb_args_double(a, "place-time", PB_MESH_MILP_SECONDS, 1e-3, 1e6, &secs, err);
	if (rc)
		return rc;
	pb_mesh_place_opts po = {.how = how ? how : default_how,
	                         .max_evals = PB_MESH_LOCAL_EVALS,
	                         .seconds = secs,
	                         .agent = pb_args_str(a, "place-agent", NULL),
	                         .stop = place_stop,
	                         .stop_ud = ctx};
	long eps;
	if ((rc = pb_args_int(a, "place-episodes", 0, 1, 100000000, &eps, err)))
		return rc;
	po.rl_episodes = eps;
	if ((rc = pb_args_int(a, "seed", 1, 0, 0x7fffffffL, &eps, err)))
		return rc;
	po.seed = (unsigned long)eps;
	rc = pb_mesh_plan_place(P, *plan, &po, &placed, mr, err);
	if (rc)
		return rc;
	pb_plan_free(*plan);
	*plan = placed;
	return PB_OK;
}

/* --start: the solver becomes the session's, stepping under the Lua
 * heuristics and rules as a batch run does (the agent through its mask, the
 * MILP with the rules as constraints; both from the initial partition). */
static int attach(pb_cmd_ctx *ctx, pb_solver *sv, pb_hooks *hk, const pb_part_opts *o,
                  const char *name, pb_error *err)
{
	pb_session *s = ctx->s;
	char under[160] = "";
	size_t k = 0;
	const pb_part_method *m = pb_part_method_find(o->method);
	const char *what[3] = {
	    o->mask ? (m && (m->flags & PB_PART_M_MASK) ? "action_mask"
	                                                : "action_mask (unused by this method)")
	            : NULL,
	    o->init_state ? "initial_partition" : NULL, o->rules ? "cut/core rules" : NULL};
	for (int i = 0; i < 3; i++)
		if (what[i])
			k += (size_t)snprintf(under + k, sizeof under - k, "%s%s",
			                      k ? ", " : " under ", what[i]);
	pb_solver *w = pb_hooks_solver_new(sv, hk);
	if (!w)
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	pb_session_set_solver(s, w, name);
	const pb_plan *inc = pb_solver_incumbent(w);
	if (inc)
		pb_session_set_solver_plan(s, pb_plan_copy(inc));
	fprintf(ctx->out, "%s attached%s: advance it with 'step -n N'\n", name, under);
	ctx->redraw |= PB_REDRAW_ALL;
	return PB_OK;
}

static int cmd_partition(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	pb_part_opts o;
	int rc = read_opts(a, &o, err);
	if (rc)
		return rc;
	double *times = NULL;
	const char *costs = pb_args_str(a, "costs", NULL);
	if (costs) {
		int found;
		if ((rc = pb_part_load_costs(s->graph, costs, &times, &found, err)))
			return rc;
		o.node_time = times;
		o.costs_path = costs;
		fprintf(
		    ctx->log,
		    "partition: measured times from %s for %d node(s); MACs/rate for the rest\n",
		    costs, found);
	}
	/* an attached solver outlives the command: its hooks go with it */
	int start = pb_args_has(a, "start");
	pb_hooks hk_run = {0}, *hk = start ? malloc(sizeof *hk) : &hk_run;
	if (!hk) {
		free(times);
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	}
	pb_hooks_init(hk, s);
	pb_solver *sv;
	rc = pb_hooks_partition(hk, s->hw, &o, err);
	if (!rc)
		rc = pb_partition_solver_new(s->graph, s->hw, &o, &sv, err);
	free(times); /* the problem keeps its own prefix sums */
	if (rc) {
		rc = pb_hooks_finish(hk, rc, err);
		if (start)
			free(hk);
		return rc;
	}
	char name[64];
	snprintf(name, sizeof name, "partition/%s", o.method);
	if (start)
		return attach(ctx, sv, hk, &o, name, err);
	pb_solver_progress p = {0};
	int cancelled = 0, timed_out = 0;
	double t0 = wall_seconds();
	while (!p.done) {
		if ((rc = pb_solver_step(sv, 1, &p, err)) || hk->failed) {
			pb_solver_free(sv);
			return pb_hooks_finish(hk, rc, err);
		}
		if (pb_cmd_progress(ctx, p.fraction, "%s: %s", name, p.message)) {
			cancelled = 1;
			break;
		}
		/* The milp method stops itself at the limit; the others stop here. */
		if (!p.done && o.time_limit > 0 && wall_seconds() - t0 >= o.time_limit) {
			timed_out = 1;
			break;
		}
	}
	pb_cmd_progress(ctx, 1.0, "%s: %s", name, p.message);
	pb_plan *plan = pb_plan_copy(pb_solver_incumbent(sv));
	pb_milp_stats ms;
	int is_milp = pb_partition_solver_milp_stats(sv, &ms);
	pb_rl_report rr;
	int is_rl = pb_partition_solver_rl_report(sv, &rr);
	double optimum = pb_partition_solver_optimum(sv);
	char agent_path[1024] = "";
	if (is_rl && rr.agent) { /* the report outlives the solver */
		snprintf(agent_path, sizeof agent_path, "%s", rr.agent);
		rr.agent = agent_path;
	}
	if (is_milp && ms.state == PB_MILP_TIME_LIMIT)
		timed_out = 1;
	pb_mesh_place_report mr;
	if (plan && (rc = place_plan(ctx, pb_partition_solver_problem(sv), a,
	                             strcmp(o.method, "rl") ? "local" : "rl", &plan, &mr, err))) {
		pb_plan_free(plan);
		pb_solver_free(sv);
		return pb_hooks_finish(hk, rc, err);
	}
	pb_solver_free(sv);
	if ((rc = pb_hooks_finish(hk, PB_OK, err))) {
		pb_plan_free(plan);
		return rc;
	}
	if (!plan)
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	if ((rc = pb_hooks_cost_terms(s, plan, err))) {
		pb_plan_free(plan);
		return rc;
	}
	pb_session_set_plan(s, plan);
	ctx->redraw |= PB_REDRAW_ALL;
	const char *outp = pb_args_str(a, "output", NULL);
	if (outp) {
		if ((rc = pb_plan_save(plan, pb_session_node_names(s), outp, err)))
			return rc;
		fprintf(ctx->log, "wrote %s\n", outp);
	}
	if (is_milp && ms.note[0])
		fprintf(ctx->log, "warning: %s\n", ms.note);
	if (pb_args_has(a, "json")) {
		json_t *j = pb_part_report_json(plan, o.method, s->hw->name);
		json_object_set_new(j, "cancelled", json_boolean(cancelled));
		json_object_set_new(j, "time_limit_reached", json_boolean(timed_out));
		if (is_milp)
			json_object_set_new(j, "milp", milp_json(&ms));
		label_json(j, plan, o.method, is_milp ? &ms : NULL, cancelled || timed_out);
		if (is_rl)
			rl_plan_json(j, plan, &rr, optimum);
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
		json_decref(j);
	} else {
		fprintf(ctx->out, "%s on %s (%s), method %s%s\n", s->graph->path, s->hw->name,
		        s->hw->path, o.method,
		        cancelled   ? " (cancelled: best so far)"
		        : timed_out ? " (time limit: best so far)"
		                    : "");
		pb_part_report_table(ctx->out, plan);
		if (is_milp)
			milp_text(ctx->out, &ms, o.time_limit);
		if (is_rl)
			rl_plan_text(ctx->out, plan, &rr);
	}
	char unres[256]; /* symbolic input dims: the costs, and max(t), are 0 */
	if (s->graph->n_unknown_shapes && pb_shape_unresolved_inputs(s->graph, unres, sizeof unres))
		fprintf(ctx->log,
		        "warning: %s: costs unknown (input dims without a value: %s); rerun "
		        "with --input NAME=DIMS\n",
		        s->graph->path, unres);
	const pb_part_method *m = pb_part_method_find(o.method);
	if (pb_part_report_fit(ctx->log, plan, s->graph->path, s->hw->path,
	                       (m->flags & PB_PART_M_SELF_REFERENCE) && !cancelled && !timed_out) &&
	    pb_args_has(a, "require-fit"))
		return pb_err(err, PB_EINPUT, "%s: the %s plan does not fit the core memory of %s",
		              s->graph->path, o.method, s->hw->path);
	return PB_OK;
}

static const pb_opt train_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    {.name = "episodes",
     .short_name = 'e',
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "most training episodes over all models (default 2000; none with --seconds alone)"},
    {.name = "seconds",
     .type = PB_OPT_DOUBLE,
     .metavar = "S",
     .help = "CPU-time budget: train until S seconds (with --episodes: whichever comes first)"},
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "where to write the agent checkpoint (required)",
     .path = "w"},
    {.name = "agent",
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "continue training this checkpoint",
     .path = "r:data"},
    {.name = "seed",
     .short_name = 's',
     .type = PB_OPT_INT,
     .metavar = "S",
     .help = "random seed (default 1)"},
    {.name = "init",
     .type = PB_OPT_STR,
     .metavar = "I",
     .help = "episode start: " PB_RL_INIT_NAMES " (default balanced)"},
    {.name = "hidden",
     .type = PB_OPT_INT,
     .metavar = "H",
     .help = "hidden units of a new network (default 32)"},
    {.name = "place",
     .type = PB_OPT_STR,
     .metavar = "P",
     .help = "routed mesh layouts: place the best plan's groups by " PB_MESH_PLACE_NAMES
             " (default local; docs/mesh.md)"},
    {.name = "place-time",
     .type = PB_OPT_DOUBLE,
     .metavar = "S",
     .help = "--place milp: time limit of the placement MILP in seconds (default 10; then the best "
             "placement found, its bound and gap)"},
    {.name = "costs",
     .type = PB_OPT_STR,
     .metavar = "LOG",
     .help = "measured kernel times from a tuning log (partbench tune --log) replace MACs/rate "
             "(one model only)",
     .path = "r:data"},
    {.name = "log",
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "write one JSON line per episode of the first model (reward, max(t), best so far, "
             "start) for 'plot training'",
     .path = "w"},
    {.name = "no-reference",
     .type = PB_OPT_FLAG,
     .help = "skip the exact solves that label the report (no optimum, no gap)"},
    {.name = "place-output",
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "routed mesh layouts: then train the placement agent on each model's best partition "
             "and write it to FILE (docs/mesh.md)",
     .path = "w"},
    {.name = "place-agent",
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "with --place-output: continue training this placement agent",
     .path = "r:data"},
    {.name = "place-episodes",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "placement agent: episodes per model (default 300)"},
    PB_OPTS_JSON,
    PB_OPTS_END,
};

enum { TRAIN_MAX_MODELS = PB_ARGS_MAX_POS };

/* --place-output: one placement network trained on the agent's best
 * partition of every model, each from its snake (rl_place.h); a line per
 * model: the snake's max(t) and the agent's best placement's. */
static int train_placement(pb_cmd_ctx *ctx, const pb_args *a, pb_rl_train_model *tm, int n,
                           const char *path, pb_error *err)
{
	long eps, seed;
	int rc = pb_args_int(a, "place-episodes", 300, 1, 100000000, &eps, err);
	if (rc || (rc = pb_args_int(a, "seed", 1, 0, 0x7fffffffL, &seed, err)))
		return rc;
	const char *agent = pb_args_str(a, "place-agent", NULL);
	int cores = tm[0].P->n;
	pb_rl_policy *pol = NULL;
	long done = 0;
	if (agent)
		rc = pb_rl_place_load(agent, cores, &pol, &done, err);
	else if (!(pol = pb_rl_place_policy_new(cores, 32, (unsigned long)seed)))
		rc = pb_err(err, PB_ENOMEM, "train: out of memory");
	pb_mesh_cost C[TRAIN_MAX_MODELS], *Cp[TRAIN_MAX_MODELS];
	pb_rl_place_stats st[TRAIN_MAX_MODELS];
	int built = 0;
	for (; built < n && !rc; built++) {
		Cp[built] = &C[built];
		rc =
		    pb_mesh_cost_init(&C[built], tm[built].P, pb_rl_trainer_best(tm[built].T), err);
		if (rc)
			break;
	}
	pb_rl_place_config cfg;
	pb_rl_place_config_default(&cfg);
	cfg.episodes = eps;
	cfg.seed = (unsigned long)seed;
	if (!rc)
		rc = pb_rl_place_train_many(Cp, n, pol, &cfg, 20, st, err);
	long total = done;
	for (int k = 0; k < n && !rc; k++)
		total += st[k].episodes;
	if (!rc)
		rc = pb_rl_place_save(pol, cores, total, path, err);
	for (int k = 0; k < n && !rc; k++)
		fprintf(ctx->out,
		        "placement agent: %s: snake %.6f ms, best placement of its last %ld "
		        "episodes %.6f ms (%.3f s CPU)\n",
		        tm[k].path, st[k].start * 1e3, st[k].episodes > 20 ? 20L : st[k].episodes,
		        st[k].best * 1e3, st[k].seconds);
	if (!rc)
		fprintf(ctx->log, "wrote %s (%ld episodes)\n", path, total);
	for (int k = 0; k < built; k++)
		pb_mesh_cost_free(&C[k]);
	pb_rl_policy_free(pol);
	return rc;
}

static int train_read_cfg(const pb_args *a, pb_rl_config *cfg, pb_error *err)
{
	pb_rl_config_default(cfg);
	/* Training makes a network, not a plan: no restart-centre resets (a
	 * search device of a run, docs/partition.md), so a checkpoint does not
	 * depend on that run-time setting. */
	cfg->reset = 0;
	long v;
	int rc = pb_args_int(a, "episodes", 0, 1, 100000000, &v, err);
	if (rc)
		return rc;
	if ((rc = pb_args_double(a, "seconds", 0, 0, 1e7, &cfg->seconds, err)))
		return rc;
	/* --seconds alone is a time budget: no episode cap then. */
	cfg->episodes = v > 0 ? v : cfg->seconds > 0 ? 0 : cfg->episodes;
	if ((rc = pb_args_int(a, "seed", 1, 0, 0x7fffffffL, &v, err)))
		return rc;
	cfg->seed = (unsigned long)v;
	if ((rc = pb_args_int(a, "hidden", 32, 1, 4096, &v, err)))
		return rc;
	cfg->hidden = (int)v;
	const char *init = pb_args_str(a, "init", "balanced");
	if ((cfg->init = pb_rl_init_parse(init)) < 0)
		return pb_err(err, PB_EUSAGE,
		              "train: --init must be one of " PB_RL_INIT_NAMES ", got '%s'", init);
	return PB_OK;
}

static json_t *train_model_json(const pb_rl_train_model *tm)
{
	pb_rl_report r;
	pb_rl_trainer_report(tm->T, &r);
	json_t *j = rl_json(&r, tm->opt);
	json_object_set_new(j, "model", json_string(tm->path));
	json_num(j, "optimum", tm->opt);
	return j;
}

static void train_model_text(FILE *out, const pb_rl_train_model *tm)
{
	pb_rl_report r;
	pb_rl_trainer_report(tm->T, &r);
	fprintf(out, "%s: start %s %.6f ms, agent %.6f ms", tm->path, r.start_method,
	        r.start_time * 1e3, r.best_time * 1e3);
	if (isfinite(tm->opt) && tm->opt > 0)
		fprintf(out, ", gap %.3f%%", 100 * (r.best_time / tm->opt - 1));
	if (r.beat_episode >= 0)
		fprintf(out, ", first beat its start at its episode %ld\n", r.beat_episode);
	else
		fputs(", never beat its start\n", out);
}

typedef struct train_tick_ud {
	pb_cmd_ctx *ctx;
	int n_models;
} train_tick_ud;

static int train_tick(void *ud, double f, long episodes, double seconds)
{
	const train_tick_ud *t = ud;
	return pb_cmd_progress(t->ctx, f, "train: episode %ld, %d model(s), %.1f s", episodes,
	                       t->n_models, seconds);
}

/* The run's report: JSON or a text line, one line per model, the plan. */
static void train_print(pb_cmd_ctx *ctx, const pb_args *a, const pb_plan *plan,
                        const pb_rl_train_model *tm, int n_models, const pb_rl_train_run *run,
                        const char *outp)
{
	if (pb_args_has(a, "json")) {
		json_t *j = pb_part_report_json(plan, "rl", ctx->s->hw->name);
		json_object_set_new(j, "episodes", json_integer(run->episodes));
		json_num(j, "seconds", run->seconds);
		json_object_set_new(j, "checkpoint", json_string(outp));
		json_object_set_new(j, "cancelled", json_boolean(run->cancelled));
		json_t *bu = json_object(), *ms = json_array();
		json_object_set_new(bu, "episodes",
		                    run->cap_episodes > 0 ? json_integer(run->cap_episodes)
		                                          : json_null());
		json_num(bu, "seconds", run->cap_seconds > 0 ? run->cap_seconds : NAN);
		json_object_set_new(j, "budget", bu);
		for (int k = 0; k < n_models; k++)
			json_array_append_new(ms, train_model_json(&tm[k]));
		json_object_set(j, "start", json_object_get(json_array_get(ms, 0), "start"));
		json_object_set_new(j, "models", ms);
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
		fputc('\n', ctx->out);
		json_decref(j);
		return;
	}
	char be[32] = "no cap", bs[32] = "no cap";
	if (run->cap_episodes > 0)
		snprintf(be, sizeof be, "%ld", run->cap_episodes);
	if (run->cap_seconds > 0)
		snprintf(bs, sizeof bs, "%g s", run->cap_seconds);
	fprintf(ctx->out,
	        "train: %ld episodes over %d model(s) in %.3f s (budget: episodes %s, CPU time "
	        "%s)%s\n",
	        run->episodes, n_models, run->seconds, be, bs, run->cancelled ? ", cancelled" : "");
	for (int k = 0; k < n_models; k++)
		train_model_text(ctx->out, &tm[k]);
	pb_part_report_table(ctx->out, plan);
}

/* Lua action masks, initial partitions and cut/core rules of the session's
 * script (one model only): into cfg and the first model's problem. */
static int train_hooks(pb_hooks *hk, pb_session *s, pb_rl_train_model *tm, int n_models, int no_ref,
                       pb_rl_config *cfg, pb_error *err)
{
	pb_part_opts ho = {0};
	int rc = pb_hooks_partition(hk, s->hw, &ho, err);
	if (rc)
		return rc;
	if (ho.init_state && !pb_part_state_valid(tm[0].P, ho.init_state, err))
		return PB_EINPUT;
	int has_rules = ho.rules && !pb_part_rules_empty(ho.rules);
	if (n_models > 1 && (ho.mask || ho.init_state || has_rules))
		return pb_err(err, PB_EUSAGE,
		              "train: Lua action_mask, initial_partition or cut/core rules need a "
		              "single model");
	cfg->mask = ho.mask;
	cfg->mask_ud = ho.mask_ud;
	cfg->init_state = ho.init_state;
	/* cut/core rules: the agent masks actions that break them (as --method rl) */
	if (has_rules &&
	    ((rc = pb_part_problem_set_rules(tm[0].P, ho.rules, err)) ||
	     (!no_ref && (rc = pb_part_exact_solve(tm[0].P, &tm[0].opt, NULL, NULL, err)))))
		return rc;
	return PB_OK;
}

static int cmd_train(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	const char *outp = pb_args_str(a, "output", NULL);
	if (!outp)
		return pb_err(err, PB_EUSAGE, "train: -o FILE (the agent checkpoint) is required");
	pb_rl_config cfg;
	int rc = train_read_cfg(a, &cfg, err);
	/* mpirun -np N: episodes on every rank, gradients averaged (docs/scale-out.md) */
	if (rc || (rc = pb_ranks_start("train", err)))
		return rc;
	int root = pb_ranks_rank() == 0;
	int n_models = a->n_pos > 0 ? a->n_pos : 1, no_ref = pb_args_has(a, "no-reference");
	const char *costs = pb_args_str(a, "costs", NULL);
	if (n_models > 1 && (ctx->from_script || s->locked))
		return pb_err(
		    err, PB_EUSAGE,
		    "train: several models only from the command line, not from a script");
	if (n_models > 1 && costs)
		return pb_err(err, PB_EUSAGE, "train: --costs needs a single model");

	pb_rl_train_model tm[TRAIN_MAX_MODELS] = {{0}};
	for (int k = 0; k < n_models && !rc; k++) {
		tm[k].path = k == 0 ? s->graph->path : pb_args_pos(a, k);
		rc = pb_rl_train_open(&tm[k], k == 0 ? s->graph : NULL, s->hw, costs, no_ref, err);
	}
	if (!rc && pb_args_str(a, "place-output", NULL) && !tm[0].P->hw.mesh_routed)
		rc = pb_err(err, PB_EUSAGE,
		            "train: --place-output needs a layout with a routed mesh "
		            "(mesh.link_gbs, mesh.hop_ns); %s has none",
		            s->hw->path);
	pb_hooks hk;
	pb_hooks_init(&hk, s);
	const char *logp = pb_args_str(a, "log", NULL);
	FILE *logf = NULL;
	if (!rc)
		rc = train_hooks(&hk, s, tm, n_models, no_ref, &cfg, err);
	if (!rc && logp && root && !(logf = pb_door_fopen_write(logp, 0, "training log", err)))
		rc = pb_err_prefix(err, "train");
	/* The budget is counted over all models; each trainer runs uncapped. */
	pb_rl_train_run run = {.cap_episodes = cfg.episodes, .cap_seconds = cfg.seconds};
	cfg.log = logf;
	if (!rc)
		rc = pb_rl_train_start(tm, n_models, &cfg, pb_args_str(a, "agent", NULL), err);
	train_tick_ud tu = {ctx, n_models};
	if (!rc)
		rc = pb_rl_train_loop(tm, n_models, &run, &hk.failed, train_tick, &tu, err);
	rc = pb_hooks_finish(&hk, rc, err);
	if (logf && fclose(logf) != 0 && rc == PB_OK)
		rc = pb_err(err, PB_EINPUT, "train: writing the training log %s failed", logp);
	if (rc == PB_OK && root) /* the network is the same on every rank */
		rc = pb_rl_trainer_save(tm[0].T, outp, err);
	else if (root) /* a rank died: what was trained is kept */
		pb_rl_train_keep(tm, &run, outp, err);
	pb_plan *plan = NULL;
	if (rc == PB_OK) {
		plan = pb_part_to_plan(tm[0].P, pb_rl_trainer_best(tm[0].T), "rl", tm[0].opt);
		pb_mesh_place_report mr; /* a routed mesh: placed as partition places */
		if (plan && (rc = place_plan(ctx, tm[0].P, a, "local", &plan, &mr, err)))
			pb_plan_free(plan);
	}
	if (rc == PB_OK) {
		pb_session_set_plan(s, plan);
		ctx->redraw |= PB_REDRAW_ALL;
		if (root)
			fprintf(ctx->log, "wrote %s\n", outp);
		train_print(ctx, a, plan, tm, n_models, &run, outp);
	}
	const char *pout = pb_args_str(a, "place-output", NULL);
	if (rc == PB_OK && pout && root)
		rc = train_placement(ctx, a, tm, n_models, pout, err);
	pb_rl_train_free(tm, n_models);
	return rc;
}

const pb_command pb_cmds_partition[] = {
    {.name = "partition",
     .usage = "partition [MODEL] --layout L [--method M] [--episodes N] [--seconds S] [--agent "
              "CKPT|none] [--init I] [--no-reference] [--seed S] [--json] [-o PLAN] [--emit-lp "
              "FILE] [--time-limit S] [--start]",
     .summary = "split the model's layers into core groups of a many-core chip",
     .opts = partition_opts,
     .fn = cmd_partition,
     .flags = PB_CMD_GRAPH | PB_CMD_LAYOUT,
     .help =
         "Layers are the model's nodes in topological order; each group of adjacent\n"
         "cores runs a contiguous range of them (docs/partition.md). The table shows\n"
         "per group the cores, layer range, MACs, time = compute + routing, and\n"
         "storage per core; then max(t), the reward, the exact optimum and the gap.\n"
         "With --start the solver is attached to the session: 'step -n N' advances it.\n"
         "milp: probes on the bottleneck, then GLPK's branch and bound proves the optimum;\n"
         "--time-limit S stops it with its incumbent, proven bound and gap.\n"
         "rl: the agent starts from --init (default balanced) and reports what it added:\n"
         "the start's max(t), its own, the episode at which it first beat the start.\n"
         "It uses agents/LAYOUT.ckpt when the layout has a shipped agent (--agent none: fresh).",
     .script = PB_SCRIPT_RUN,
     .paths = "",
     .help_more = pb_part_method_help},
    {.name = "train",
     .usage = "train [MODEL [MODEL...]] --layout L [--episodes N] [--seconds S] -o AGENT.ckpt "
              "[--seed S] [--init I] [--no-reference]",
     .summary = "train the REINFORCE partition agent and save its checkpoint",
     .opts = train_opts,
     .fn = cmd_train,
     .flags = PB_CMD_GRAPH | PB_CMD_LAYOUT,
     .help = "With several models, episodes are interleaved across them (one each in turn)\n"
             "and all train one network: its inputs do not depend on the model's size, so\n"
             "the checkpoint also serves models it has not seen. The agent never reads the\n"
             "exact optimum; it is computed only to report the gap (--no-reference skips it).\n"
             "The checkpoint only fits layouts with the same number of cores; use it with\n"
             "'partition --method rl --agent AGENT.ckpt'. Format: docs/partition.md.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {0},
};
