/*
 * cmds/cmd_tune.c — `tune`: measured operator auto-tuning on this CPU
 * (RL policy + cost model, with random / SA / exhaustive / OpenBLAS
 * baselines). The work is in core/tune/; this file parses options, finds the
 * operator shape (--op/--shape or a model node) and prints the report.
 */
#include <math.h>
#include <stdlib.h>

#include "commands.h"
#include "util/fmt.h"
#include "util/ranks.h"
#include "tune/node_costs.h"
#include "tune/tune_all.h"
#include "tune/tuner.h"

static const pb_opt tune_opts[] = {
    {.name = "op",
     .type = PB_OPT_STR,
     .metavar = "OP",
     .help = "operator: gemm or conv2d (with --shape)"},
    {.name = "shape",
     .type = PB_OPT_STR,
     .metavar = "DIMS",
     .help = "gemm: M,N,K; conv2d: N,C,H,W,K,R,S,stride,pad"},
    {.name = "node",
     .short_name = 'n',
     .type = PB_OPT_STR,
     .metavar = "NAME",
     .help = "tune the Conv/Gemm/MatMul node NAME of MODEL"},
    {.name = "trials",
     .short_name = 't',
     .type = PB_OPT_INT,
     .metavar = "T",
     .help = "hardware measurements per method (default 64)"},
    {.name = "batch",
     .short_name = 'b',
     .type = PB_OPT_INT,
     .metavar = "B",
     .help = "policy samples per REINFORCE update (default 16)"},
    {.name = "seed", .type = PB_OPT_INT, .metavar = "S", .help = "random seed (default 1)"},
    {.name = "log",
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "append every measurement to FILE (JSON lines)",
     .path = "w r:data"},
    {.name = "resume",
     .type = PB_OPT_FLAG,
     .help = "continue from the measurements already in --log"},
    {.name = "baselines",
     .type = PB_OPT_FLAG,
     .help = "also run random, simulated annealing, exhaustive (small spaces) and OpenBLAS (with "
             "--all: OpenBLAS on every shape)"},
    {.name = "exhaustive-max",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "run exhaustive only up to N legal configurations (default 5000)"},
    {.name = "no-costmodel",
     .type = PB_OPT_FLAG,
     .help = "RL with measured rewards only (ablation)"},
    {.name = "no-transfer",
     .type = PB_OPT_FLAG,
     .help = "the cost model does not start from other shapes' measurements in --log (ablation)"},
    {.name = "reps",
     .type = PB_OPT_INT,
     .metavar = "R",
     .help = "timed runs per measurement, minimum taken (default 3)"},
    {.name = "all",
     .type = PB_OPT_FLAG,
     .help = "tune every distinct Conv/Gemm/MatMul shape of MODEL once into --log (across the "
             "ranks under mpirun)"},
    {.name = "budget",
     .type = PB_OPT_STR,
     .metavar = "SECONDS",
     .help = "--all: wall time to share across the shapes by their share of the model's FLOPs"},
    {.name = "rank-timeout",
     .type = PB_OPT_STR,
     .metavar = "SECONDS",
     .help = "--all under mpirun: a rank silent this long is taken for dead (default 60)"},
    {.name = "times",
     .type = PB_OPT_FLAG,
     .help = "no tuning: print MODEL's per-node times measured in --log (what --costs uses)"},
    PB_OPTS_GRAPH,
    PB_OPTS_JSON,
    PB_OPTS_END,
};

static int tune_progress(void *ud, double fraction, const char *line)
{
	return pb_cmd_progress(ud, fraction, "%s", line);
}

/* Opens the positional MODEL (with --input overrides) into the session. */
static int load_model(pb_cmd_ctx *ctx, const pb_args *a, pb_error *err)
{
	const char *model = pb_args_pos(a, 0);
	if (model) {
		const char **specs;
		int n_ov = pb_args_list(a, "input", &specs);
		pb_input_override ov[PB_ARGS_MAX_LIST];
		int rc = PB_OK, n_ok = 0;
		for (; n_ok < n_ov && !rc; n_ok++)
			rc = pb_parse_input_override(specs[n_ok], &ov[n_ok], err);
		if (rc)
			n_ok--;
		if (!rc)
			rc = pb_session_open_model(ctx->s, model, ov, n_ov, err);
		for (int i = 0; i < n_ok; i++)
			pb_input_override_free(&ov[i]);
		if (rc)
			return rc;
		ctx->redraw |= PB_REDRAW_ALL;
	}
	return PB_OK;
}

static int find_shape(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a,
                      pb_tune_shape *shape, char *what, size_t len, pb_error *err)
{
	const char *op = pb_args_str(a, "op", NULL), *spec = pb_args_str(a, "shape", NULL);
	const char *node = pb_args_str(a, "node", NULL), *model = pb_args_pos(a, 0);
	int rc;
	if (op || spec) {
		if (node || model)
			return pb_err(err, PB_EUSAGE,
			              "tune: give either --op/--shape or MODEL --node");
		snprintf(what, len, "--op %s --shape %s", op ? op : "?", spec ? spec : "?");
		return pb_tune_shape_parse(op, spec, shape, err);
	}
	if (!node)
		return pb_err(err, PB_EUSAGE, "tune: nothing to tune (usage: %s)", cmd->usage);
	if ((rc = load_model(ctx, a, err)))
		return rc;
	const pb_graph *g = ctx->s->graph;
	if (!g)
		return pb_err(err, PB_EUSAGE, "tune: --node needs MODEL (usage: %s)", cmd->usage);
	int id = pb_graph_find_node(g, node);
	if (id < 0)
		return pb_err(err, PB_EINPUT, "%s: no node named '%s' (see `partbench info`)",
		              g->path, node);
	snprintf(what, len, "%s node %s", g->path, node);
	return pb_tune_shape_from_node(g, id, shape, err);
}

/* --times: per-node measured times from a log (pb_tune_node_times). */
static int cmd_times(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	const char *log = pb_args_str(a, "log", NULL);
	if (!log)
		return pb_err(err, PB_EUSAGE, "tune: --times needs --log FILE");
	int rc = load_model(ctx, a, err);
	if (rc)
		return rc;
	const pb_graph *g = ctx->s->graph;
	if (!g)
		return pb_err(err, PB_EUSAGE, "tune: --times needs MODEL (usage: %s)", cmd->usage);
	double *times = malloc(((size_t)g->n_nodes + 1) * sizeof *times);
	if (!times)
		return pb_err(err, PB_ENOMEM, "tune: out of memory");
	int found = 0, tunable = 0;
	rc = pb_tune_node_times(g, log, times, &found, err);
	if (rc) {
		free(times);
		return rc;
	}
	int json = pb_args_has(a, "json");
	json_t *j = json_object(), *nodes = json_array(), *missing = json_array();
	double total = 0;
	if (!json)
		fprintf(ctx->out, "%-44s %-8s %-34s %12s\n", "node", "op", "kernel", "time (ms)");
	for (int i = 0; i < g->n_nodes; i++) {
		pb_tune_shape s;
		pb_error ignore = {0};
		if (pb_tune_shape_from_node(g, i, &s, &ignore))
			continue;
		tunable++;
		const pb_node *nd = &g->nodes[i];
		char key[128];
		pb_tune_shape_key(&s, key, sizeof key);
		if (isnan(times[i])) {
			json_array_append_new(missing, json_string(nd->name));
			continue;
		}
		total += times[i];
		if (json) {
			json_t *o = json_object();
			json_object_set_new(o, "id", json_integer(i));
			json_object_set_new(o, "name", json_string(nd->name));
			json_object_set_new(o, "op", json_string(nd->op));
			json_object_set_new(o, "key", json_string(key));
			json_object_set_new(o, "batch", json_integer(s.batch));
			json_object_set_new(o, "seconds", json_real(times[i]));
			json_array_append_new(nodes, o);
		} else
			fprintf(ctx->out, "%-44.44s %-8s %-34s %12.3f\n", nd->name, nd->op, key,
			        1e3 * times[i]);
	}
	if (json) {
		json_object_set_new(j, "model", json_string(g->path));
		json_object_set_new(j, "log", json_string(log));
		json_object_set_new(j, "tunable_nodes", json_integer(tunable));
		json_object_set_new(j, "measured_nodes", json_integer(found));
		json_object_set_new(j, "measured_seconds", json_real(total));
		json_object_set_new(j, "nodes", nodes);
		json_object_set_new(j, "missing", missing);
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
		fputc('\n', ctx->out);
	} else {
		json_decref(nodes);
		json_decref(missing);
		char t[32];
		fprintf(ctx->out, "%d of %d tunable nodes measured in %s, %s in total\n", found,
		        tunable, log, pb_fmt_time_fixed(total, t, sizeof t));
	}
	json_decref(j);
	free(times);
	return PB_OK;
}

static int parse_seconds(const pb_args *a, const char *name, double dflt, double *out,
                         pb_error *err)
{
	const char *v = pb_args_str(a, name, NULL);
	*out = dflt;
	if (!v)
		return PB_OK;
	char *end;
	double d = strtod(v, &end);
	if (end == v || *end || !isfinite(d) || d <= 0 || d > 1e7)
		return pb_err(err, PB_EUSAGE, "tune: --%s wants seconds > 0, not '%s'", name, v);
	*out = d;
	return PB_OK;
}

/* --all: every distinct kernel shape of MODEL (tune/tune_all.h), on this
 * rank or across the ranks of an MPI job. */
static int cmd_all(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a,
                   const pb_tune_opts *base, pb_error *err)
{
	if (pb_args_has(a, "node") || pb_args_has(a, "op") || pb_args_has(a, "shape"))
		return pb_err(err, PB_EUSAGE,
		              "tune: --all tunes every shape of MODEL (no --node/--op/--shape)");
	if (!base->log_path)
		return pb_err(err, PB_EUSAGE, "tune: --all needs --log FILE (the log it writes)");
	pb_tune_all_opts o = {*base};
	int rc;
	if ((rc = parse_seconds(a, "budget", 0, &o.budget, err)) ||
	    (rc = parse_seconds(a, "rank-timeout", 60, &o.rank_timeout, err)) ||
	    (rc = pb_ranks_start("tune --all", err)) || (rc = load_model(ctx, a, err)))
		return rc;
	if (!ctx->s->graph)
		return pb_err(err, PB_EUSAGE, "tune: --all needs MODEL (usage: %s)", cmd->usage);
	int root = pb_ranks_rank() == 0;
	if (root) {
		o.progress = tune_progress;
		o.progress_ud = ctx;
	}
	pb_tune_all all;
	if ((rc = pb_tune_all_plan(ctx->s->graph, &all, err)))
		return rc;
	pb_tune_all_report r;
	rc = pb_tune_all_run(&all, &o, &r, err);
	if (!rc && root) {
		if (pb_args_has(a, "json")) {
			json_t *j = pb_tune_all_report_json(&all, &r, o.tune.log_path);
			json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
			fputc('\n', ctx->out);
			json_decref(j);
		} else
			pb_tune_all_report_text(ctx->out, &all, &r, o.tune.log_path);
		if (r.missing)
			rc =
			    pb_err(err, PB_EINPUT,
			           "tune: %d of %d kernel shapes of %s are missing from %s (listed "
			           "above): run the same command with --resume to complete them",
			           r.missing, all.n, ctx->s->graph->path, o.tune.log_path);
	}
	pb_tune_all_free(&all);
	return rc;
}

static int cmd_tune(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	if (pb_args_has(a, "times"))
		return cmd_times(ctx, cmd, a, err);
	if (!pb_args_has(a, "all") && (pb_args_has(a, "budget") || pb_args_has(a, "rank-timeout")))
		return pb_err(err, PB_EUSAGE, "tune: --budget and --rank-timeout go with --all");
	int rc;
	long trials, batch, seed, exh, reps;
	if ((rc = pb_args_int(a, "trials", 64, 1, 1000000, &trials, err)) ||
	    (rc = pb_args_int(a, "batch", 16, 2, 4096, &batch, err)) ||
	    (rc = pb_args_int(a, "seed", 1, 0, 1L << 40, &seed, err)) ||
	    (rc = pb_args_int(a, "exhaustive-max", 5000, 1, 1L << 30, &exh, err)) ||
	    (rc = pb_args_int(a, "reps", 3, 1, 1000, &reps, err)))
		return rc;
	if (pb_args_has(a, "resume") && !pb_args_has(a, "log"))
		return pb_err(err, PB_EUSAGE, "tune: --resume needs --log FILE");
	pb_tune_opts o = {0};
	o.trials = (int)trials;
	o.batch = (int)batch;
	o.seed = (uint64_t)seed;
	o.baselines = pb_args_has(a, "baselines");
	o.exhaustive_max = exh;
	o.log_path = pb_args_str(a, "log", NULL);
	o.resume = pb_args_has(a, "resume");
	o.no_costmodel = pb_args_has(a, "no-costmodel");
	o.no_transfer = pb_args_has(a, "no-transfer");
	o.measure.min_reps = (int)reps;
	o.measure.max_reps = (int)(reps > 10 ? reps : 10);
	o.measure.min_seconds = 0.02;
	if (pb_args_has(a, "all"))
		return cmd_all(ctx, cmd, a, &o, err);
	if (pb_ranks_launched() > 1)
		return pb_err(err, PB_EUSAGE,
		              "tune: only --all works across MPI ranks (mpirun -np %d would tune "
		              "the same shape %d times)",
		              pb_ranks_launched(), pb_ranks_launched());
	pb_tune_shape shape;
	char what[512];
	if ((rc = find_shape(ctx, cmd, a, &shape, what, sizeof what, err)))
		return rc;
	pb_tune_space sp;
	pb_tune_space_init(&sp, &shape);
	o.progress = tune_progress;
	o.progress_ud = ctx;
	pb_tune_report r;
	rc = pb_tune_run(&sp, &o, &r, err);
	if (rc) {
		pb_tune_report_free(&r);
		return rc;
	}
	if (pb_args_has(a, "json")) {
		json_t *j = pb_tune_report_json(&sp, &r, o.baselines);
		json_dumpf(j, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
		fputc('\n', ctx->out);
		json_decref(j);
	} else {
		pb_tune_report_text(ctx->out, &sp, &r, o.baselines, what, o.log_path);
	}
	pb_tune_report_free(&r);
	return PB_OK;
}

const pb_command pb_cmds_tune[] = {
    {.name = "tune",
     .usage = "tune (--op gemm --shape M,N,K | --op conv2d --shape N,C,H,W,K,R,S,stride,pad | "
              "MODEL --node NAME) [--trials T] [--log FILE] [--resume] [--baselines] "
              "[--no-transfer] [--json]; tune MODEL --all --log FILE [--budget SECONDS] [--resume] "
              "[--baselines]; tune MODEL --times --log FILE",
     .summary = "auto-tune a GEMM / convolution kernel on this CPU (RL + cost model)",
     .opts = tune_opts,
     .fn = cmd_tune,
     .help = "Searches tile sizes, loop order, unroll, vector width and packing of a real\n"
             "kernel, measuring GFLOP/s on this machine (single thread, CPU time, min of\n"
             "--reps runs; every configuration is checked against a naive reference first).\n"
             "--all tunes every distinct kernel shape of MODEL once into --log, which --costs\n"
             "reads; under `mpirun -np N` the shapes are spread over the ranks and rank 0\n"
             "writes the log. See docs/tune.md and docs/scale-out.md.",
     .script = PB_SCRIPT_RUN,
     .paths = "r@0:model"},
    {0},
};
