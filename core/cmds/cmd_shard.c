/*
 * cmds/cmd_shard.c — `shard`: distributed strategy search on a cluster layout
 * (grouping schemes x per-operator sharding specs, GLPK MILP; docs/shard.md).
 * The search is core/shard/search/search.c; --pipeline auto adds the data x tensor
 * x pipeline search (core/shard/dtp/dtp_search.c) and keeps the best
 * configuration's plan.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "cmds/batch_guarded.h"
#include "cmds/unknown_costs.h"
#include "util/ranks.h"
#include "script/hooks.h"
#include "partition/chain/chain_rules.h"
#include "shard/act_saved.h"
#include "shard/strategy/dist_opt.h"
#include "shard/dtp/dtp_search.h"
#include "shard/dtp/dtp_edit.h"
#include "shard/dtp/dtp.h"
#include "shard/dtp/dtp_plan.h"
#include "shard/dtp/dtp_report.h"
#include "shard/dtp/dtp_polish.h"
#include "shard/pipeline/pipeline_plan.h"
#include "shard/pipeline/pipeline_report.h"
#include "shard/search/search.h"
#include "shard/search/search_label.h"
#include "shard/strategy/strategy_problem.h"

static const pb_opt shard_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    PB_OPTS_JSON,
    {.name = "batch",
     .short_name = 'b',
     .type = PB_OPT_INT,
     .metavar = "B",
     .help = "set dim 0 of every model input to B (default: as in the model)"},
    {.name = "train",
     .type = PB_OPT_FLAG,
     .help = "model a training step (backward = 2x forward, gradient all-reduces)"},
    {.name = "opt-level",
     .short_name = 'O',
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "0 full menus, 1 + rule library, 2 + key-operator neighbourhoods, 3 + aligned "
             "subgraphs solved in chunks (default 0)"},
    {.name = "scheme",
     .short_name = 's',
     .type = PB_OPT_STR,
     .metavar = "AxB",
     .help = "solve only this grouping scheme, e.g. 4x4 (default: all)"},
    {.name = "max-axes",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "schemes with at most N factors (default 2, max 4)"},
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "save the plan as JSON",
     .path = "w"},
    {.name = "emit-tasks",
     .type = PB_OPT_STR,
     .metavar = "DIR",
     .help = "write DIR/device_<d>.json: each device's operators, local shapes, collectives",
     .path = "w"},
    {.name = "emit-lp",
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help =
         "write the MILP (CPLEX LP format, glp_write_lp) of the scheme solved (or the best one)",
     .path = "w"},
    {.name = "tie",
     .type = PB_OPT_FLAG,
     .help = "tie identical repeated blocks to one set of variables"},
    {.name = "optimizer",
     .type = PB_OPT_STR,
     .metavar = "adam|none",
     .help = "training memory per parameter: adam = weights + gradients + two fp32 moments (+ an "
             "fp32 master copy of fp16 weights); none = weights + gradients (default adam)"},
    {.name = "zero",
     .type = PB_OPT_INT,
     .metavar = "0-3",
     .help = "ZeRO stage: shard the optimizer state (1), + gradients (2), + weights (3) over the "
             "replicas of each parameter shard (default 0)"},
    {.name = "dist-opt",
     .type = PB_OPT_STR,
     .metavar = "auto|on|off",
     .help = "training: the distributed optimizer (Megatron-LM's, ZeRO-1: Adam's state divided "
             "over the data-parallel replicas, reduce-scatter + all-gather in place of the "
             "all-reduce); auto: on where a plan does not fit without it (default auto)"},
    {.name = "seq-parallel",
     .type = PB_OPT_STR,
     .metavar = "auto|on|off",
     .help = "training: sequence parallelism (Korthikanti et al. 2022: the activations tensor "
             "parallelism replicates held split over its devices, same communication volume); "
             "auto: on where a plan does not fit without it (default auto)"},
    {.name = "recompute",
     .type = PB_OPT_STR,
     .metavar = "auto|none|selective|full",
     .help = "activation recomputation in training; auto: per scheme the cheapest of none, "
             "selective, full whose plan fits (default auto)"},
    {.name = "layers",
     .type = PB_OPT_STR,
     .metavar = "auto|off",
     .help = "auto: solve repeated identical layers once (one representative block per class plus "
             "the glue between blocks); off: every layer its own variables (default auto)"},
    {.name = "start",
     .type = PB_OPT_FLAG,
     .help = "attach the search as the session's solver instead of running it: 'step' (and the "
             "TUI's solver pane) advance it one incumbent or ~50 ms at a time"},
    {.name = "pad",
     .type = PB_OPT_FLAG,
     .help = "also split dimensions that do not divide: ceil(n/d) per device, the last parts "
             "padded (costs the padded sizes)"},
    {.name = "shrink",
     .type = PB_OPT_FLAG,
     .help = "merge follower operators into their producer (a restriction: the plan is then "
             "labelled best found unless it attains the unrestricted bound; default off)"},
    {.name = "no-shrink",
     .type = PB_OPT_FLAG,
     .help = "every operator its own choice: the default of the operator-level search; with "
             "--pipeline auto also the stage MILPs' (which shrink by default)"},
    {.name = "time-limit",
     .type = PB_OPT_DOUBLE,
     .metavar = "SEC",
     .help = "GLPK time limit per MILP (default none)"},
    {.name = "jobs",
     .short_name = 'j',
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "solve up to N schemes at once in worker processes (default: the number of CPUs; 1 = "
             "serial; Lua rules and filters run serially)"},
    {.name = "require-fit",
     .type = PB_OPT_FLAG,
     .help =
         "exit 2 when the best plan does not fit the device memory (it is still shown and saved)"},
    {.name = "pipeline",
     .type = PB_OPT_STR,
     .metavar = "auto|off",
     .help = "auto: also run the data x tensor x pipeline search (every dp x tp x pp = devices, "
             "micro-batches, 1F1B and interleaved schedules): 'configurations' and 'best'; the "
             "best configuration's plan is kept and saved with -o (default off)"},
    {.name = "dp",
     .type = PB_OPT_INT,
     .metavar = "D",
     .help = "data-parallel degree: fixes it in the data x tensor x pipeline search (implies the "
             "search)"},
    {.name = "tp",
     .type = PB_OPT_INT,
     .metavar = "T",
     .help = "tensor (operator) parallel degree inside a stage: fixes it (implies the search)"},
    {.name = "pp",
     .type = PB_OPT_INT,
     .metavar = "P",
     .help = "pipeline stages: fixes them (1 = no pipeline; implies the search)"},
    {.name = "microbatches",
     .type = PB_OPT_INT,
     .metavar = "M",
     .help = "micro-batches: fixes them (implies the search)"},
    {.name = "schedule",
     .type = PB_OPT_STR,
     .metavar = "1f1b|interleaved[:V]",
     .help = "pipeline schedule: fixes it (interleaved: V model chunks per device, default 2; "
             "implies the search)"},
    {.name = "bucket-mb",
     .type = PB_OPT_DOUBLE,
     .metavar = "MB",
     .help = "gradient bucket of the data-parallel all-reduce overlapped with the backward pass, "
             "MiB (default: the layout's grad_bucket_mb, else 25, PyTorch DDP's bucket_cap_mb; 0 = "
             "no overlap)"},
    {.name = "p2p-overlap",
     .type = PB_OPT_STR,
     .metavar = "on|off",
     .help = "pipeline point-to-point transfers overlapped with compute where the schedule allows "
             "(default on; off: every slot waits for its transfers, as Megatron-LM 2021; "
             "docs/megatron.md)"},
    {.name = "stage-gap",
     .type = PB_OPT_DOUBLE,
     .metavar = "G",
     .help = "relative MIP gap of the pipeline search's stage MILPs: each stage MILP's plan is "
             "within G of that MILP's optimum (default 0: each stage MILP solved to proof)"},
    {.name = "polish",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "boundary polish of the kept pipeline: cost at most N single-node chunk-boundary "
             "moves (default 8 x chunks + 8; 0 = off), as `pipeline --polish`"},
    {.name = "stage-nodes",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "stop a stage MILP holding a plan after N branch-and-bound nodes (default 0: no "
             "limit; such rows are marked not proven)"},
    PB_OPTS_END,
};

static int apply_batch(pb_cmd_ctx *ctx, long batch, pb_error *err)
{
	int rc = pb_session_set_batch(ctx->s, batch, err);
	return rc ? pb_err_prefix(err, "shard") : PB_OK;
}

/* ---- --pipeline auto: the data x tensor x pipeline search ---- */

/* The search's reload: the session reopens the model at the new batch. */
static int reload(void *ud, long batch, const pb_graph **g, pb_error *err)
{
	pb_session *s = ud;
	int rc = pb_session_set_batch(s, batch, err);
	*g = s->graph;
	return rc;
}

typedef struct reload_job {
	const pb_cluster *cl;
	const pb_pipe_opts *po;
	pb_dtp_opts *dtp; /* the data x tensor x pipeline search, or NULL */
	pb_dtp_result *dres;
	pb_session *side; /* the model reloaded at micro-batch sizes (not the session's) */
	pb_error *err;
	pb_label label; /* of the dp x tp x pp search's best configuration */
} reload_job;

static void dtp_progress(void *ud, const pb_dtp_progress *p)
{
	char best[48] = "none fits yet";
	if (p->best > 0)
		snprintf(best, sizeof best, "best %.4g s", p->best);
	pb_cmd_progress(ud, (double)p->unit / (p->units ? p->units : 1),
	                "shard: dp %d tp %d pp %d, %d micro-batches, %s (unit %d/%d; %d "
	                "configurations, %ld pruned; %s)",
	                p->dp, p->tp, p->pp, p->m, p->sched, p->unit + 1, p->units, p->rows,
	                p->pruned, best);
}

/* The reloads at micro-batch sizes go to a side session holding the same
 * model, so the session's graph (and the operator-level search pointing
 * into it) stays as it is. */
static int side_open(pb_cmd_ctx *ctx, reload_job *j)
{
	pb_session *s = ctx->s;
	if (j->side)
		return PB_OK;
	if (!s->model_path || !s->model_path[0])
		return pb_err(j->err, PB_EUSAGE,
		              "shard: a pipeline needs a model loaded from a file");
	j->side = pb_session_new();
	if (!j->side)
		return pb_err(j->err, PB_ENOMEM, "shard: out of memory");
	int rc =
	    pb_session_open_model(j->side, s->model_path, s->overrides, s->n_overrides, j->err);
	j->dtp->pipe.reload_ud = j->side;
	return rc ? pb_err_prefix(j->err, "shard") : PB_OK;
}

/* Runs the data x tensor x pipeline search on the session's model. */
static int run_pipelines(pb_cmd_ctx *ctx, reload_job *j)
{
	int rc = side_open(ctx, j);
	if (rc)
		return rc;
	j->dtp->progress = dtp_progress;
	j->dtp->ud = ctx;
	return pb_dtp_search(ctx->s->graph, j->cl, j->dtp, j->dres, j->err);
}

/* The best configuration, a pipeline, becomes the session's plan: solved
 * again with its chunks' specs (pb_dtp_plan), its chunk boundaries polished
 * (pb_dtp_polish: *pi), saved to outp when given. */
static int keep_pipeline(pb_cmd_ctx *ctx, reload_job *dj, const char *outp, pb_dtp_polish_info *pi,
                         const pb_label *L, pb_error *err)
{
	int rc = side_open(ctx, dj);
	if (rc)
		return rc;
	const pb_graph *g = ctx->s->graph;
	pb_plan *plan = NULL;
	const pb_dtp_config *best = &dj->dres->cfg[dj->dres->best];
	pb_cmd_progress(ctx, 1.0, "shard: the best pipeline's plan");
	rc = pb_dtp_plan(&g, dj->cl, dj->dtp, best, dj->dres->batch, dj->dres, &plan, err);
	if (rc == PB_OK) {
		pb_cmd_progress(ctx, 1.0, "shard: polishing the pipeline's chunk boundaries");
		rc = pb_dtp_polish(&g, dj->cl, dj->dtp, best, dj->dres->batch, &plan, pi, err);
	}
	/* the batch its shapes are at, saved with it (plan.h): its chunks were
	 * solved on the side session's model at the micro-batch, g */
	if (rc == PB_OK) {
		plan->model_batch = pb_plan_graph_batch(g);
		/* what a hand edit costs the plan under again (shard/pipeline/pipeline_edit.h) */
		json_object_set_new(plan->detail, "search_options",
		                    pb_dtp_edit_options_json(dj->dtp));
		/* the plan's label, for the workbench and the SVG */
		pb_plan_set_label(plan, L);
		/* what its stages split: dp and tp in Megatron's terms */
		pb_dtp_report_note_plan_degrees(dj->dres, g, plan->detail);
	}
	if (rc == PB_OK && outp)
		rc = pb_plan_save(plan, pb_session_node_names(ctx->s), outp, err);
	if (rc == PB_OK) {
		pb_session_set_plan(ctx->s, plan);
		plan = NULL;
	}
	pb_plan_free(plan);
	ctx->redraw |= PB_REDRAW_ALL;
	return rc;
}

static int pipeline_best(const reload_job *dj)
{
	return dj->dtp && dj->dres->best >= 0 &&
	       pb_dtp_plan_unit_row(&dj->dres->cfg[dj->dres->best]);
}

/* The Lua rules the kept pipeline's split obeys (their info), or NULL. */
static const json_t *kept_rules(const reload_job *dj)
{
	const struct pb_part_rules *R = dj->dtp ? dj->dtp->pipe.rules : NULL;
	return R && pipeline_best(dj) ? R->info : NULL;
}

/* Runs the data x tensor x pipeline search (bounded by the operator-level
 * plans), prints the report with its configurations and keeps the best
 * plan. */
static int report(pb_cmd_ctx *ctx, const pb_args *a, pb_shard_search **sp, const pb_cluster *cl,
                  reload_job *dj, int *fits, pb_error *err)
{
	pb_shard_search *s = *sp;
	json_t *rep = pb_search_report(s);
	*fits = json_is_true(json_object_get(rep, "feasible"));
	if (dj->dtp) { /* the operator-level rows join the dp x tp x pp table */
		pb_dtp_oprow *ops = NULL;
		int n_op = pb_dtp_search_oprows(s, &ops), rc = PB_OK;
		dj->dtp->op = ops;
		dj->dtp->n_op = n_op;
		/* the best operator-level plan that fits bounds the pipelines (not
		 * with m > 1 fixed: then it is no configuration) */
		for (int i = 0; i < n_op && dj->dtp->m <= 1; i++)
			if (ops[i].ok && ops[i].fits &&
			    (dj->dtp->incumbent <= 0 || ops[i].step_time < dj->dtp->incumbent))
				dj->dtp->incumbent = ops[i].step_time;
		if (n_op < 0)
			rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
		else if (dj->dtp->pp != 1 || dj->dtp->m > 1 || (!dj->dtp->m && dj->po->train))
			rc = run_pipelines(ctx, dj); /* pp 1: gradient accumulation */
		if (rc == PB_OK)
			rc = pb_dtp_search_add_operator(dj->dres, dj->dtp, cl, err);
		pb_dtp_report_note_op_degrees(dj->dres, s);
		free(ops);
		dj->dtp->op = NULL;
		if (rc) {
			json_decref(rep);
			return rc;
		}
		/* "best" in the framework's terms: the best configuration */
		pb_dtp_report_json(rep, dj->dres);
		/* the label of the whole dp x tp x pp search; the operator-level
		 * search's own beside it */
		pb_label op;
		pb_search_label(s, &op);
		pb_dtp_report_label(dj->dres, dj->dtp, ctx->s->graph, cl, &op, &dj->label);
		json_t *ol = json_object();
		pb_label_json(ol, &op);
		json_object_set_new(rep, "operator_level_label", ol);
		pb_label_json(rep, &dj->label);
		json_object_set_new(rep, "best_overall", pb_dtp_report_best_overall_json(dj->dres));
		*fits = dj->dres->best >= 0 && dj->dres->cfg[dj->dres->best].fits;
	}
	const char *outp = pb_args_str(a, "output", NULL);
	pb_dtp_polish_info pi = {0};
	int rc = pipeline_best(dj) ? keep_pipeline(ctx, dj, outp, &pi, &dj->label, err) : PB_OK;
	if (rc) {
		json_decref(rep);
		return rc;
	}
	if (pipeline_best(dj))
		pb_dtp_report_degrees_json(json_object_get(rep, "best"), dj->dres);
	if (pi.polished)
		json_object_set_new(rep, "polish", pb_dtp_polish_json(&pi));
	const json_t *rules = kept_rules(dj);
	if (rules)
		json_object_set(rep, "rules", (json_t *)rules);
	if (dj->dtp && !pipeline_best(dj) && s->plan) /* the operator-level plan kept */
		pb_plan_set_label(s->plan, &dj->label);
	if (pb_args_has(a, "json")) {
		json_dumpf(rep, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
		fputc('\n', ctx->out);
	} else {
		pb_search_report_text(s, rep, !pipeline_best(dj), ctx->out);
		if (dj->dtp) {
			pb_dtp_report_text(ctx->out, dj->dres);
			pb_dtp_report_label_text(ctx->out, &dj->label);
		}
		pb_dtp_polish_text(ctx->out, &pi);
		pb_pipeline_report_rules_text(ctx->out, rules);
	}
	json_decref(rep);
	ctx->redraw |= PB_REDRAW_ALL;
	if (pipeline_best(dj))
		return PB_OK;
	if (s->plan) /* the batch its shapes are at, saved with it (plan.h) */
		s->plan->model_batch = pb_plan_graph_batch(ctx->s->graph);
	if (outp)
		rc = pb_plan_save(s->plan, pb_session_node_names(ctx->s), outp, err);
	if (rc == PB_OK)
		pb_session_set_plan(ctx->s, pb_plan_copy(s->plan));
	return rc;
}

/* --pp P > 1 fixed: no operator-level search; the configurations only (the
 * best one's plan kept and saved with -o). */
static int report_pipeline_only(pb_cmd_ctx *ctx, const pb_args *a, const pb_cluster *cl,
                                reload_job *dj, int *fits, pb_error *err)
{
	int rc = pb_dtp_search_add_operator(dj->dres, dj->dtp, cl, err);
	if (rc)
		return rc;
	const pb_dtp_result *r = dj->dres;
	*fits = r->best >= 0 && r->cfg[r->best].fits;
	pb_dtp_report_label(r, dj->dtp, ctx->s->graph, cl, NULL, &dj->label);
	pb_dtp_polish_info pi = {0};
	if (pipeline_best(dj) &&
	    (rc = keep_pipeline(ctx, dj, pb_args_str(a, "output", NULL), &pi, &dj->label, err)))
		return rc;
	if (pb_args_has(a, "json")) {
		json_t *rep = json_object();
		json_object_set_new(rep, "model",
		                    json_string(ctx->s->model_path ? ctx->s->model_path : ""));
		json_object_set_new(rep, "layout", json_string(cl->name ? cl->name : ""));
		json_object_set_new(rep, "devices", json_integer(cl->n_devices));
		json_object_set_new(rep, "train", json_boolean(dj->po->train));
		pb_dtp_report_json(rep, r);
		pb_label_json(rep, &dj->label);
		json_object_set_new(rep, "best_overall", pb_dtp_report_best_overall_json(r));
		if (pi.polished)
			json_object_set_new(rep, "polish", pb_dtp_polish_json(&pi));
		if (kept_rules(dj))
			json_object_set(rep, "rules", (json_t *)kept_rules(dj));
		json_dumpf(rep, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
		fputc('\n', ctx->out);
		json_decref(rep);
	} else {
		pb_dtp_report_text(ctx->out, r);
		pb_dtp_report_label_text(ctx->out, &dj->label);
		pb_dtp_polish_text(ctx->out, &pi);
		pb_pipeline_report_rules_text(ctx->out, kept_rules(dj));
	}
	return PB_OK;
}

/* --start: the search becomes the session's steppable solver (owns s). */
static int attach_solver(pb_cmd_ctx *ctx, pb_shard_search *s, pb_hooks *hk, pb_error *err)
{
	if (hk->filters || hk->rules) {
		pb_search_rows_free(s);
		return pb_hooks_finish(
		    hk,
		    pb_err(err, PB_EUSAGE,
		           "shard: --start cannot be combined with Lua "
		           "candidate_filter or specs rules (run without --start)"),
		    err);
	}
	pb_hooks_finish(hk, PB_OK, err);
	pb_solver *sv = pb_search_solver_new(s);
	if (!sv) {
		pb_search_rows_free(s);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	pb_session_set_solver(ctx->s, sv, "shard/milp");
	fprintf(ctx->out,
	        "shard/milp attached (%d schemes): advance it with 'step -n N' (one "
	        "incumbent or ~50 ms per unit)\n",
	        s->n_rows);
	ctx->redraw |= PB_REDRAW_ALL;
	return PB_OK;
}

static int shard_progress(void *ud, int done, int total)
{
	return pb_cmd_progress(ud, (double)done / (total ? total : 1),
	                       "shard: %d/%d schemes solved", done, total);
}

/* Solves every scheme: in worker processes, or step by step here when Lua
 * hooks take part (their errors and effects are seen in this process). */
static int run_search(pb_cmd_ctx *ctx, pb_shard_search *s, const pb_shard_opts *o, long jobs,
                      pb_hooks *hk, pb_error *err)
{
	int rc = PB_OK, done = 0;
	if (jobs > 1 && !o->filters && !o->rules) {
		rc = pb_search_run_parallel(s, (int)jobs, shard_progress, ctx, err);
		done = 1;
	}
	while (!done && rc == PB_OK) {
		if (pb_cmd_progress(ctx, (double)s->next / (s->n_rows ? s->n_rows : 1),
		                    "shard: scheme %s (%d/%d)", s->rows[s->next].mesh.name,
		                    s->next + 1, s->n_rows)) {
			rc = pb_err(err, PB_ECANCEL, "shard: cancelled");
			break;
		}
		rc = pb_search_step(s, &done, err);
		if (hk->failed)
			rc = pb_hooks_finish(hk, rc, err);
	}
	if (rc == PB_OK)
		rc = pb_search_finish(s, err);
	rc = pb_hooks_finish(hk, rc, err);
	pb_cmd_progress(ctx, 1.0, "shard: done");
	return rc;
}

/* The operator-level search's options (--train, --zero, --optimizer,
 * --recompute, --layers, --shrink, ...) into *o. */
static int read_shard_opts(const pb_args *a, int level, double tl, pb_shard_opts *o, pb_error *err)
{
	int rc;
	if (pb_args_has(a, "shrink") && pb_args_has(a, "no-shrink"))
		return pb_err(err, PB_EUSAGE, "shard: --shrink and --no-shrink exclude each other");
	long zero;
	if ((rc = pb_args_int(a, "zero", 0, 0, 3, &zero, err)))
		return rc;
	const char *optim = pb_args_str(a, "optimizer", "adam");
	if (strcmp(optim, "adam") != 0 && strcmp(optim, "none") != 0)
		return pb_err(err, PB_EUSAGE, "shard: --optimizer must be adam or none, got '%s'",
		              optim);
	const char *rcs = pb_args_str(a, "recompute", "auto");
	int recompute = -1;
	for (int k = 0; k < 3; k++)
		if (strcmp(rcs, pb_recompute_names[k]) == 0)
			recompute = k;
	if (strcmp(rcs, "auto") == 0)
		recompute = PB_RECOMP_AUTO;
	if (recompute < 0)
		return pb_err(err, PB_EUSAGE,
		              "shard: --recompute must be auto, none, selective or full, got '%s'",
		              rcs);
	const char *lay = pb_args_str(a, "layers", "auto");
	if (strcmp(lay, "auto") != 0 && strcmp(lay, "off") != 0)
		return pb_err(err, PB_EUSAGE, "shard: --layers must be auto or off, got '%s'", lay);
	pb_strategy_problem_opts_default(o);
	o->train = pb_args_has(a, "train");
	o->opt_level = level;
	o->tie_blocks = pb_args_has(a, "tie");
	o->layers = strcmp(lay, "auto") == 0;
	o->optimizer = strcmp(optim, "adam") == 0 ? PB_OPTIM_ADAM : PB_OPTIM_NONE;
	o->zero = (int)zero;
	const char *dos = pb_args_str(a, "dist-opt", "auto");
	if ((rc = pb_dist_opt_parse(dos, &o->dist_opt, err)))
		return rc;
	if (o->dist_opt == PB_DISTOPT_OFF && zero >= 1)
		return pb_err(
		    err, PB_EUSAGE,
		    "shard: --dist-opt off and --zero %ld exclude each other (ZeRO-1 is the "
		    "distributed optimizer)",
		    zero);
	if (zero >= 1)
		o->dist_opt = PB_DISTOPT_ON;
	if (o->dist_opt != PB_DISTOPT_OFF && o->zero < 1)
		o->zero = 1;
	if ((rc = pb_act_saved_seq_parallel_parse(pb_args_str(a, "seq-parallel", "auto"),
	                                          &o->seq_parallel, err)))
		return rc;
	o->recompute = recompute;
	o->pad = pb_args_has(a, "pad");
	/* the problem as posed: every operator its own choice (the shrunk plans
	 * were up to 69% slower on the bundled models and generated GPTs, and the
	 * unrestricted search took at most 4 s of CPU there: bench/RESULTS.md,
	 * "shard: restricted vs unrestricted search") */
	o->no_shrink = !pb_args_has(a, "shrink");
	o->time_limit = tl;
	return PB_OK;
}

/* --pp 1 --dp D --tp T with D x T the devices: only that scheme (its name
 * in buf), else NULL. */
static const char *fixed_scheme_of(const pb_dtp_opts *d, int devices, char *buf, size_t len)
{
	long dp = d->dp, tp = d->tp;
	if (d->pp != 1 || !dp || !tp || dp * tp != devices || dp * tp < 2)
		return NULL;
	if (dp > 1 && tp > 1)
		snprintf(buf, len, "%ldx%ld", dp, tp);
	else
		snprintf(buf, len, "%ld", dp * tp);
	return buf;
}

static int cmd_shard_run(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	long batch, level, max_axes, jobs;
	double tl;
	int rc, fits = 1;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if ((rc = pb_args_int(a, "jobs", ncpu > 0 ? ncpu : 1, 1, 256, &jobs, err)) ||
	    (rc = pb_args_int(a, "batch", 0, 1, 1L << 30, &batch, err)) ||
	    (rc = pb_args_int(a, "opt-level", 0, 0, 3, &level, err)) ||
	    (rc = pb_args_int(a, "max-axes", 2, 1, PB_MESH_MAX_AXES, &max_axes, err)) ||
	    (rc = pb_args_double(a, "time-limit", 0, 0, 1e6, &tl, err)))
		return rc;
	/* mpirun -np N: the schemes are solved across the ranks (docs/scale-out.md) */
	if ((rc = pb_ranks_start("shard", err)))
		return rc;
	if (pb_ranks_size() > 1 && jobs < 2)
		jobs = 2;
	const char *pipe = pb_args_str(a, "pipeline", "off");
	int pipe_auto = strcmp(pipe, "auto") == 0;
	if (!pipe_auto && strcmp(pipe, "off") != 0)
		return pb_err(err, PB_EUSAGE, "shard: --pipeline must be auto or off, got '%s'",
		              pipe);
	pb_shard_opts o;
	if ((rc = read_shard_opts(a, (int)level, tl, &o, err)))
		return rc;
	long fdp, ftp, fpp, fm;
	if ((rc = pb_args_int(a, "dp", 0, 1, 1L << 20, &fdp, err)) ||
	    (rc = pb_args_int(a, "tp", 0, 1, 1L << 20, &ftp, err)) ||
	    (rc = pb_args_int(a, "pp", 0, 1, 1L << 20, &fpp, err)) ||
	    (rc = pb_args_int(a, "microbatches", 0, 1, 1L << 30, &fm, err)))
		return rc;
	pb_dtp_opts dopt;
	pb_dtp_search_opts_default(&dopt);
	long polish;
	if ((rc = pb_args_int(a, "polish", -1, 0, 1L << 20, &polish, err)) ||
	    (rc = pb_args_double(a, "stage-gap", dopt.gap, 0, 0.5, &dopt.gap, err)) ||
	    (rc = pb_args_int(a, "stage-nodes", 0, 0, 1L << 40, &dopt.node_limit, err)))
		return rc;
	if (pb_args_str(a, "schedule", NULL) &&
	    (rc = pb_dtp_search_parse_schedule(pb_args_str(a, "schedule", NULL), &dopt.sched,
	                                       &dopt.v, err)))
		return rc;
	int dtp = pipe_auto || fdp || ftp || fpp || fm || dopt.sched >= 0;
	if (pb_args_has(a, "start") && dtp)
		return pb_err(err, PB_EUSAGE,
		              "shard: --start cannot be combined with --pipeline auto or --dp/--tp/"
		              "--pp/--microbatches/--schedule");
	/* Everything the run holds, freed at `out` only (one cleanup path). */
	struct pb_part_rules *rules = NULL;
	pb_cluster cl = {0};
	pb_dtp_result dres = {.best = -1};
	pb_pipe_opts po;
	reload_job dj = {&cl, &po, dtp ? &dopt : NULL, &dres, NULL, err};
	pb_shard_search *s = NULL;
	/* Lua cut and stage rules constrain the pipelines' chunk split (as
	 * `pipeline`'s stage split) */
	if (dtp) {
		pb_hooks hr;
		pb_hooks_init(&hr, ctx->s);
		rc = pb_hooks_chain_rules(&hr, "stage", &rules, err);
		if ((rc = pb_hooks_finish(&hr, rc, err)))
			goto out;
	}
	if ((rc = pb_cluster_from_hw(ctx->s->hw, &cl, err)))
		goto out;
	double bucket_mb = cl.grad_bucket / 1048576.0;
	if ((rc = pb_args_double(a, "bucket-mb", bucket_mb, 0, 1e6, &bucket_mb, err)))
		goto out;
	cl.grad_bucket = bucket_mb * 1048576.0;
	const char *ov = pb_args_str(a, "p2p-overlap", "on");
	if (strcmp(ov, "on") && strcmp(ov, "off")) {
		rc = pb_err(err, PB_EUSAGE, "shard: --p2p-overlap must be on or off, got '%s'", ov);
		goto out;
	}
	cl.p2p_overlap = !strcmp(ov, "on");
	/* the pipelines: as `pipeline` with this batch, --train, --pad */
	pb_pipeline_plan_opts_default(&po);
	po.batch = pb_args_has(a, "batch") ? batch : 0;
	po.opt_level = (int)level;
	po.train = pb_args_has(a, "train");
	po.pad = pb_args_has(a, "pad");
	po.polish_tries = polish < 0 ? 0 : polish == 0 ? -1 : (int)polish;
	po.rules = rules;
	po.reload = reload;
	po.reload_ud = ctx->s;
	/* the data x tensor x pipeline search: stage MILPs as the shard options */
	dopt.pipe = po;
	dopt.shard = o;
	dopt.shard.opt_level = po.opt_level;
	/* the pipelines' stage MILPs shrink unless told not to (their label says so) */
	dopt.shard.no_shrink = pb_args_has(a, "no-shrink");
	dopt.dp = (int)fdp;
	dopt.tp = (int)ftp;
	dopt.pp = (int)fpp;
	dopt.m = (int)fm;
	if (dtp && (rc = pb_dtp_search_check_degrees(&dopt, &cl, err)))
		goto out;
	if (pb_args_has(a, "batch") && (rc = apply_batch(ctx, batch, err)))
		goto out;
	if (fpp > 1) {
		if ((rc = run_pipelines(ctx, &dj)) == PB_OK)
			rc = report_pipeline_only(ctx, a, &cl, &dj, &fits, err);
		goto fit;
	}
	char fixed_scheme[48];
	const char *scheme = pb_args_str(a, "scheme", NULL);
	if (!scheme)
		scheme = fixed_scheme_of(&dopt, cl.n_devices, fixed_scheme, sizeof fixed_scheme);
	pb_hooks hk;
	pb_hooks_init(&hk, ctx->s);
	if ((rc = pb_hooks_shard(&hk, &o, err)) == PB_OK)
		rc = pb_search_rows_new(ctx->s->graph, &cl, &o, scheme, (int)max_axes,
		                        pb_args_str(a, "emit-lp", NULL), &s, err);
	if (s) /* the plan's label: restrictions, bound and gap (search_label.h) */
		s->want_label = 1;
	if (s && dj.dtp) /* pp = 1 rows: a scheme that cannot beat one before is cut */
		s->cut_wave = PB_SHARD_CUT_WAVE;
	if (rc || hk.failed) {
		rc = pb_hooks_finish(&hk, rc, err);
		goto out;
	}
	if (pb_args_has(a, "start")) {
		rc = attach_solver(ctx, s, &hk, err);
		s = NULL; /* the session's solver holds it now (or it was freed) */
		goto out;
	}
	rc = run_search(ctx, s, &o, jobs, &hk, err);
	if (rc == PB_OK && pb_args_str(a, "emit-tasks", NULL))
		rc = pb_search_report_emit_tasks(s, pb_args_str(a, "emit-tasks", NULL), err);
	if (rc == PB_OK)
		rc = report(ctx, a, &s, &cl, &dj, &fits, err);
fit:
	if (rc == PB_OK && !fits)
		rc = pb_cmd_report_fit(ctx, a, "shard", cl.memory, err);
out:
	if (rc == PB_OK) /* symbolic input dims: every cost 0 */
		pb_cmd_warn_unknown_costs(ctx, ctx->s->graph);
	pb_search_rows_free(s);
	pb_session_free(dj.side);
	pb_dtp_search_result_free(&dres);
	pb_cluster_free(&cl);
	pb_part_rules_free(rules);
	return rc;
}

/* A failed or cancelled run leaves the model at its batch (pb_batch_guard). */
static int cmd_shard(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	return pb_cmd_batch_guarded(cmd_shard_run, ctx, cmd, a, err);
}

const pb_command pb_cmds_shard[] = {
    {.name = "shard",
     .usage = "shard [MODEL] --layout L [--batch B] [--train] [--opt-level N] [--scheme AxB] "
              "[--json] [-o plan.json] [--emit-tasks DIR] [--emit-lp FILE] [--pipeline auto|off] "
              "[--jobs N] [--pad] [--start] [--layers auto|off] [--shrink] [--optimizer adam|none] "
              "[--zero 0-3] [--dist-opt auto|on|off] [--seq-parallel auto|on|off] [--recompute "
              "auto|none|selective|full] [--dp D] [--tp T] [--pp P] [--microbatches M] [--schedule "
              "1f1b|interleaved[:V]] [--stage-gap G] [--stage-nodes N] [--polish N]",
     .summary =
         "choose per-operator sharding over device-grouping schemes of a cluster (GLPK MILP)",
     .opts = shard_opts,
     .fn = cmd_shard,
     .flags = PB_CMD_GRAPH | PB_CMD_LAYOUT,
     .help = "The layout must be kind=\"cluster\" (layouts/cluster-*.lua). Every grouping scheme\n"
             "(ordered factorisation of the device count, mirror duplicates dropped) is solved\n"
             "as a MILP; the table lists each scheme's best plan and the best one is kept as\n"
             "the session's plan. Step time = compute (FLOPs / sharing devices / rate) +\n"
             "collectives (alpha + factor x bytes / bandwidth). See docs/shard.md.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {0},
};
