/*
 * cmds/cmd_partition.c — many-core partition commands: partition, train.
 *
 * `partition` runs one method (core/partition/partition.h) to the end, or with
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
#include "partition/partition.h"
#include "partition/exact.h"
#include "partition/report.h"
#include "partition/rl_reinforce.h"
#include "script/hooks.h"

static const pb_opt partition_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    {"method", 'm', PB_OPT_STR, "M", "exact|milp|rl|greedy|equal|local|pack (default exact)"},
    {"episodes", 'e', PB_OPT_INT, "N", "rl: training episodes (default 2000)"},
    {"seconds", 0, PB_OPT_DOUBLE, "S", "rl: stop training after S seconds (default none)"},
    {"agent", 0, PB_OPT_STR, "FILE", "rl: start from this checkpoint (see 'train')"},
    {"init", 0, PB_OPT_STR, "I",
     "rl: episode start: balanced|local|greedy|equal (default balanced)"},
    {"seed", 's', PB_OPT_INT, "S", "rl: random seed (default 1)"},
    {"emit-lp", 0, PB_OPT_STR, "FILE", "milp: write the model in CPLEX LP format"},
    {"time-limit", 0, PB_OPT_DOUBLE, "S",
     "stop after S seconds with the best plan so far (milp: with its bound and gap; also "
     "for --start)"},
    {"start", 0, PB_OPT_FLAG, NULL, "attach the solver to the session; advance it with 'step'"},
    {"costs", 0, PB_OPT_STR, "LOG",
     "measured kernel times from a tuning log (partbench tune --log) replace MACs/rate"},
    {"output", 'o', PB_OPT_STR, "FILE", "save the resulting plan as JSON"},
    {"require-fit", 0, PB_OPT_FLAG, NULL,
     "exit 2 when the plan does not fit the core memory (it is still shown and saved)"},
    PB_OPTS_JSON,
    PB_OPTS_END};

static int read_opts(const pb_args *a, pb_part_opts *o, pb_error *err)
{
	memset(o, 0, sizeof *o);
	o->method = pb_args_str(a, "method", "exact");
	if (!pb_partition_method_known(o->method))
		return pb_err(
		    err, PB_EUSAGE,
		    "partition: unknown method '%s' (exact, milp, rl, greedy, equal, local, pack)",
		    o->method);
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
	o->agent = pb_args_str(a, "agent", NULL);
	o->emit_lp = pb_args_str(a, "emit-lp", NULL);
	o->init = pb_args_str(a, "init", NULL);
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
	json_num(j, "incumbent", st->incumbent);
	json_num(j, "bound", st->bound);
	json_num(j, "gap", st->gap);
	json_object_set_new(j, "probes", json_integer(st->probes));
	json_object_set_new(j, "nodes", json_integer(st->nodes));
	json_object_set_new(j, "columns", json_integer(st->columns));
	json_num(j, "seconds", st->seconds);
	json_object_set_new(j, "lp", st->lp_written ? json_string(st->lp_written) : json_null());
	return j;
}

static void milp_text(FILE *out, const pb_milp_stats *st, double limit)
{
	char bound[32] = "—", gap[32] = "—"; /* unknown */
	if (isfinite(st->bound))
		snprintf(bound, sizeof bound, "%.6f ms", st->bound * 1e3);
	if (isfinite(st->gap))
		snprintf(gap, sizeof gap, "%.3f%%", 100 * st->gap);
	if (st->state == PB_MILP_OPTIMAL)
		fprintf(out, "milp: proved optimal in %.3f s", st->seconds);
	else if (st->state == PB_MILP_TIME_LIMIT)
		fprintf(out, "milp: stopped at the time limit (%g s)", limit);
	else
		fprintf(out, "milp: stopped after %.3f s (not proved)", st->seconds);
	fprintf(out, ": incumbent %.6f ms, bound %s, gap %s; %ld probes, %ld nodes, %d columns\n",
	        st->incumbent * 1e3, bound, gap, st->probes, st->nodes, st->columns);
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
	pb_hooks hk;
	pb_hooks_init(&hk, s);
	pb_solver *sv;
	rc = pb_hooks_partition(&hk, s->hw, &o, err);
	if (!rc)
		rc = pb_partition_solver_new(s->graph, s->hw, &o, &sv, err);
	free(times); /* the problem keeps its own prefix sums */
	if (rc)
		return pb_hooks_finish(&hk, rc, err);
	char name[64];
	snprintf(name, sizeof name, "partition/%s", o.method);
	if (pb_args_has(a, "start")) {
		pb_hooks_finish(&hk, PB_OK, err); /* an attached solver runs without the hooks */
		if (o.mask || o.init_state) {
			pb_solver_free(sv);
			return pb_err(
			    err, PB_EUSAGE,
			    "partition: --start cannot be combined with Lua action_mask or "
			    "initial_partition heuristics (run without --start)");
		}
		const pb_plan *inc = pb_solver_incumbent(sv);
		if (inc)
			pb_session_set_plan(s, pb_plan_copy(inc));
		pb_session_set_solver(s, sv, name);
		fprintf(ctx->out, "%s attached: advance it with 'step -n N'\n", name);
		ctx->redraw |= PB_REDRAW_ALL;
		return PB_OK;
	}
	pb_solver_progress p = {0};
	int cancelled = 0, timed_out = 0;
	double t0 = wall_seconds();
	while (!p.done) {
		if ((rc = pb_solver_step(sv, 1, &p, err)) || hk.failed) {
			pb_solver_free(sv);
			return pb_hooks_finish(&hk, rc, err);
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
	if (is_milp && ms.state == PB_MILP_TIME_LIMIT)
		timed_out = 1;
	pb_solver_free(sv);
	if ((rc = pb_hooks_finish(&hk, PB_OK, err))) {
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
	}
	if (pb_part_report_fit(ctx->log, plan, s->graph->path, s->hw->path,
	                       strcmp(o.method, "exact") == 0 && !cancelled && !timed_out) &&
	    pb_args_has(a, "require-fit"))
		return pb_err(err, PB_EINPUT, "%s: the %s plan does not fit the core memory of %s",
		              s->graph->path, o.method, s->hw->path);
	return PB_OK;
}

static const pb_opt train_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    {"episodes", 'e', PB_OPT_INT, "N", "training episodes (default 2000)"},
    {"seconds", 0, PB_OPT_DOUBLE, "S", "stop after S seconds of training (default none)"},
    {"output", 'o', PB_OPT_STR, "FILE", "where to write the agent checkpoint (required)"},
    {"agent", 0, PB_OPT_STR, "FILE", "continue training this checkpoint"},
    {"seed", 's', PB_OPT_INT, "S", "random seed (default 1)"},
    {"init", 0, PB_OPT_STR, "I", "episode start: balanced|local|greedy|equal (default balanced)"},
    {"hidden", 0, PB_OPT_INT, "H", "hidden units of a new network (default 16)"},
    {"costs", 0, PB_OPT_STR, "LOG",
     "measured kernel times from a tuning log (partbench tune --log) replace MACs/rate"},
    {"log", 0, PB_OPT_STR, "FILE",
     "write one JSON line per episode (reward, gap, best so far) for 'plot training'"},
    PB_OPTS_JSON,
    PB_OPTS_END};

static int cmd_train(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_session *s = ctx->s;
	const char *outp = pb_args_str(a, "output", NULL);
	if (!outp)
		return pb_err(err, PB_EUSAGE, "train: -o FILE (the agent checkpoint) is required");
	pb_rl_config cfg;
	pb_rl_config_default(&cfg);
	long v;
	int rc = pb_args_int(a, "episodes", cfg.episodes, 1, 100000000, &v, err);
	if (rc)
		return rc;
	cfg.episodes = v;
	if ((rc = pb_args_int(a, "seed", 1, 0, 0x7fffffffL, &v, err)))
		return rc;
	cfg.seed = (unsigned long)v;
	if ((rc = pb_args_int(a, "hidden", 16, 1, 4096, &v, err)))
		return rc;
	cfg.hidden = (int)v;
	if ((rc = pb_args_double(a, "seconds", 0, 0, 1e7, &cfg.seconds, err)))
		return rc;
	const char *init = pb_args_str(a, "init", "balanced");
	if (strcmp(init, "equal") == 0)
		cfg.init = PB_RL_INIT_EQUAL;
	else if (strcmp(init, "greedy") == 0)
		cfg.init = PB_RL_INIT_GREEDY;
	else if (strcmp(init, "local") == 0)
		cfg.init = PB_RL_INIT_LOCAL;
	else if (strcmp(init, "balanced") != 0)
		return pb_err(err, PB_EUSAGE,
		              "train: --init must be balanced, local, greedy or equal, got '%s'",
		              init);
	pb_manycore mc;
	if ((rc = pb_manycore_parse(s->hw, &mc, err)))
		return rc;
	pb_part_problem *P;
	double *times = NULL;
	const char *costs = pb_args_str(a, "costs", NULL);
	int found;
	if (costs && (rc = pb_part_load_costs(s->graph, costs, &times, &found, err)))
		return rc;
	rc = pb_part_problem_new_timed(s->graph, &mc, times, &P, err);
	free(times);
	if (rc)
		return rc;
	double opt;
	if ((rc = pb_part_exact_solve(P, &opt, NULL, NULL, err))) {
		pb_part_problem_free(P);
		return rc;
	}
	cfg.optimum = opt;
	/* Lua action masks and initial partitions train the agent too. */
	pb_hooks hk;
	pb_hooks_init(&hk, s);
	pb_part_opts ho = {0};
	if ((rc = pb_hooks_partition(&hk, s->hw, &ho, err)) ||
	    (ho.init_state && !pb_part_state_valid(P, ho.init_state, err))) {
		pb_part_problem_free(P);
		return pb_hooks_finish(&hk, rc ? rc : PB_EINPUT, err);
	}
	cfg.mask = ho.mask;
	cfg.mask_ud = ho.mask_ud;
	cfg.init_state = ho.init_state;
	const char *logp = pb_args_str(a, "log", NULL);
	if (logp && !(cfg.log = fopen(logp, "w"))) {
		pb_part_problem_free(P);
		rc = pb_err(err, PB_EINPUT, "train: cannot write the training log %s: %s", logp,
		            strerror(errno));
		return pb_hooks_finish(&hk, rc, err);
	}
	pb_rl_trainer *T;
	if ((rc = pb_rl_trainer_new(P, &cfg, pb_args_str(a, "agent", NULL), &T, err))) {
		if (cfg.log)
			fclose(cfg.log);
		pb_part_problem_free(P);
		return pb_hooks_finish(&hk, rc, err);
	}
	int cancelled = 0;
	long every = cfg.episodes / 200 > 0 ? cfg.episodes / 200 : 1;
	while (!pb_rl_trainer_done(T)) {
		if ((rc = pb_rl_trainer_step(T, (int)every, err)) || hk.failed)
			break;
		if (pb_cmd_progress(ctx, pb_rl_trainer_fraction(T),
		                    "train: episode %ld/%ld, best reward %.4f, gap %.2f%%",
		                    pb_rl_trainer_episodes(T), cfg.episodes,
		                    pb_rl_trainer_best_reward(T),
		                    100 * (pb_rl_trainer_best_time(T) / opt - 1))) {
			cancelled = 1;
			break;
		}
	}
	rc = pb_hooks_finish(&hk, rc, err);
	if (cfg.log && fclose(cfg.log) != 0 && rc == PB_OK)
		rc = pb_err(err, PB_EINPUT, "train: writing the training log %s failed", logp);
	if (rc == PB_OK)
		rc = pb_rl_trainer_save(T, outp, err);
	if (rc == PB_OK) {
		pb_plan *plan = pb_part_to_plan(P, pb_rl_trainer_best(T), "rl", opt);
		pb_session_set_plan(s, plan);
		ctx->redraw |= PB_REDRAW_ALL;
		fprintf(ctx->log, "wrote %s\n", outp);
		if (pb_args_has(a, "json")) {
			json_t *j = pb_part_report_json(plan, "rl", s->hw->name);
			json_object_set_new(j, "episodes", json_integer(pb_rl_trainer_episodes(T)));
			json_object_set_new(j, "checkpoint", json_string(outp));
			json_object_set_new(j, "cancelled", json_boolean(cancelled));
			json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
			fputc('\n', ctx->out);
			json_decref(j);
		} else {
			pb_rl_trainer_stats(T, ctx->out);
			pb_part_report_table(ctx->out, plan);
		}
	}
	pb_rl_trainer_free(T);
	pb_part_problem_free(P);
	return rc;
}

const pb_command pb_cmds_partition[] = {
    {"partition",
     "partition [MODEL] --layout L [--method exact|milp|rl|greedy|equal|local|pack] [--episodes N] "
     "[--agent CKPT] [--seed S] [--json] [-o PLAN] [--emit-lp FILE] [--time-limit S] [--start]",
     "split the model's layers into core groups of a many-core chip", partition_opts, cmd_partition,
     PB_CMD_GRAPH | PB_CMD_LAYOUT,
     "Layers are the model's nodes in topological order; each group of adjacent\n"
     "cores runs a contiguous range of them (docs/partition.md). The table shows\n"
     "per group the cores, layer range, MACs, time = compute + routing, and\n"
     "storage per core; then max(t), the reward, the exact optimum and the gap.\n"
     "With --start the solver is attached to the session: 'step -n N' advances it.\n"
     "milp: probes on the bottleneck, then GLPK's branch and bound proves the optimum;\n"
     "--time-limit S stops it with its incumbent, proven bound and gap."},
    {"train", "train [MODEL] --layout L --episodes N -o AGENT.ckpt [--seed S] [--seconds S]",
     "train the REINFORCE partition agent and save its checkpoint", train_opts, cmd_train,
     PB_CMD_GRAPH | PB_CMD_LAYOUT,
     "Shows a progress bar (episode, best reward, gap to the exact optimum).\n"
     "The checkpoint only fits layouts with the same number of cores; use it with\n"
     "'partition --method rl --agent AGENT.ckpt'. Format: docs/partition.md."},
    {0}};
