/*
 * cmds/cmd_pipeline.c — `pipeline`: split the model into P stages on P device
 * groups, pick the micro-batches, shard every stage on its device group, cost
 * the plan against the operator-level one and show the GPipe and 1F1B
 * schedules (docs/shard.md). The planner and its report are in
 * core/shard/pipeline/pipeline_plan.c and pipeline_report.c; this file parses the
 * options, reloads the batch through the session, prints and keeps the plan.
 */
#include "commands.h"
#include "cmds/batch_guarded.h"
#include "cmds/unknown_costs.h"
#include "shard/pipeline/pipeline_plan.h"
#include "shard/pipeline/pipeline_report.h"
#include "partition/chain/chain_rules.h"
#include "script/hooks.h"

static const pb_opt pipe_opts[] = {
    PB_OPTS_GRAPH,
    PB_OPTS_LAYOUT,
    PB_OPTS_JSON,
    {.name = "stages",
     .short_name = 'p',
     .type = PB_OPT_INT,
     .metavar = "P",
     .help = "number of stages (default: the node count, or 2 on one node)"},
    {.name = "batch",
     .short_name = 'b',
     .type = PB_OPT_INT,
     .metavar = "B",
     .help = "global batch (default: dim 0 of the model input)"},
    {.name = "microbatches",
     .short_name = 'm',
     .type = PB_OPT_INT,
     .metavar = "M",
     .help = "micro-batches (default: smallest divisor of B with bubble <= --max-bubble)"},
    {.name = "max-bubble",
     .type = PB_OPT_DOUBLE,
     .metavar = "F",
     .help = "bubble bound (p-1)/(m+p-1) for the automatic choice (default 0.2)"},
    {.name = "train",
     .type = PB_OPT_FLAG,
     .help = "training step (backward = 2x forward on the same stage)"},
    {.name = "opt-level",
     .short_name = 'O',
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "optimisation level of the per-stage sharding (default 2)"},
    {.name = "slack",
     .type = PB_OPT_INT,
     .metavar = "K",
     .help = "widen every key operator's stage range by K stages (default 0)"},
    {.name = "output",
     .short_name = 'o',
     .type = PB_OPT_STR,
     .metavar = "FILE",
     .help = "save the plan as JSON",
     .path = "w"},
    {.name = "require-fit",
     .type = PB_OPT_FLAG,
     .help =
         "exit 2 when the best plan does not fit the device memory (it is still shown and saved)"},
    {.name = "pad",
     .type = PB_OPT_FLAG,
     .help = "stages (and the operator-level plan) may also split dimensions that do not divide "
             "(as shard --pad)"},
    {.name = "compare-level",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "optimisation level of the operator-level plan compared with (default 0: the plan "
             "`shard` gives by default)"},
    {.name = "polish",
     .type = PB_OPT_INT,
     .metavar = "N",
     .help = "boundary polish: cost at most N single-node boundary moves (default 8P+8; 0 = off)"},
    {.name = "skip-oplevel",
     .type = PB_OPT_FLAG,
     .help = "do not solve the operator-level plan for comparison (used by shard --pipeline auto)"},
    PB_OPTS_END,
};

/* The planner's reload: the session reopens the model at the new batch. */
static int reload(void *ud, long batch, const pb_graph **g, pb_error *err)
{
	pb_session *s = ud;
	int rc = pb_session_set_batch(s, batch, err);
	*g = s->graph;
	return rc;
}

static int pipe_options(const pb_args *a, const pb_cluster *cl, const pb_graph *g, pb_pipe_opts *o,
                        pb_error *err)
{
	long P, B, M, lvl, slack, cmpl, polish;
	int rc;
	pb_pipeline_plan_opts_default(o);
	if ((rc = pb_args_int(a, "stages", cl->nodes > 1 ? cl->nodes : 2, 1, cl->n_devices, &P,
	                      err)) ||
	    (rc = pb_args_int(a, "batch", pb_pipeline_plan_model_batch(g), 1, 1L << 30, &B, err)) ||
	    (rc = pb_args_int(a, "microbatches", 0, 0, 1L << 30, &M, err)) ||
	    (rc = pb_args_int(a, "opt-level", 2, 0, 3, &lvl, err)) ||
	    (rc = pb_args_int(a, "slack", 0, 0, 64, &slack, err)) ||
	    (rc = pb_args_int(a, "compare-level", 0, 0, 3, &cmpl, err)) ||
	    (rc = pb_args_int(a, "polish", -1, 0, 1L << 20, &polish, err)) ||
	    (rc = pb_args_double(a, "max-bubble", 0.2, 0, 1, &o->max_bubble, err)))
		return rc;
	o->stages = (int)P;
	o->batch = B;
	o->microbatches = (int)M;
	o->opt_level = (int)lvl;
	o->slack = (int)slack;
	o->compare_level = (int)cmpl;
	o->polish_tries = polish < 0 ? 0 : polish == 0 ? -1 : (int)polish;
	o->train = pb_args_has(a, "train");
	o->pad = pb_args_has(a, "pad");
	o->skip_oplevel = pb_args_has(a, "skip-oplevel");
	return PB_OK;
}

static int cmd_pipeline_run(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	pb_cluster cl;
	pb_pipe_opts o;
	pb_pipe_result r = {0};
	int rc;
	if ((rc = pb_cluster_from_hw(ctx->s->hw, &cl, err)))
		return rc;
	if ((rc = pipe_options(a, &cl, ctx->s->graph, &o, err)))
		goto done;
	o.reload = reload;
	o.reload_ud = ctx->s;
	/* Lua `cut` and `stage` rules constrain the stage split. */
	pb_hooks hk;
	pb_hooks_init(&hk, ctx->s);
	pb_part_rules *rules = NULL;
	rc = pb_hooks_chain_rules(&hk, "stage", &rules, err);
	rc = pb_hooks_finish(&hk, rc, err);
	o.rules = rules;
	if (!rc)
		rc = pb_pipeline_plan(ctx->s->graph, &cl, &o, &r, err);
	if (!rc && rules)
		json_object_set(r.plan->detail, "rules", rules->info);
	pb_part_rules_free(rules);
	if (rc)
		goto done;
	if (pb_args_has(a, "json")) {
		json_dumpf(r.plan->detail, ctx->out, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
		fputc('\n', ctx->out);
	} else {
		pb_pipeline_report_result_text(ctx->out, &r);
		pb_pipeline_report_rules_text(ctx->out, json_object_get(r.plan->detail, "rules"));
	}
	pb_cmd_warn_unknown_costs(ctx, ctx->s->graph);
	const char *outp = pb_args_str(a, "output", NULL);
	if (outp)
		rc = pb_plan_save(r.plan, pb_session_node_names(ctx->s), outp, err);
	pb_session_set_plan(ctx->s, r.plan);
	r.plan = NULL;
	ctx->redraw |= PB_REDRAW_ALL;
	if (rc == PB_OK && !r.best_fits)
		rc = pb_cmd_report_fit(ctx, a, "pipeline", cl.memory, err);
done:
	pb_pipeline_plan_result_free(&r);
	pb_cluster_free(&cl);
	return rc;
}

/* A failed or cancelled run leaves the model at its batch (pb_batch_guard). */
static int cmd_pipeline(pb_cmd_ctx *ctx, const pb_command *cmd, const pb_args *a, pb_error *err)
{
	return pb_cmd_batch_guarded(cmd_pipeline_run, ctx, cmd, a, err);
}

const pb_command pb_cmds_pipeline[] = {
    {.name = "pipeline",
     .usage = "pipeline [MODEL] --layout L [--stages P] [--batch B] [--microbatches M] [--train] "
              "[--pad] [--json] [-o plan.json]",
     .summary = "split the model into pipeline stages, pick micro-batches, shard each stage "
                "(cluster layouts)",
     .opts = pipe_opts,
     .fn = cmd_pipeline,
     .flags = PB_CMD_GRAPH | PB_CMD_LAYOUT,
     .help =
         "Stages come from key-operator cost intervals and a MILP minimising the slowest stage,\n"
         "then the cross-stage bytes (an exact DP when the graph is a chain). Every stage is\n"
         "sharded on its device group by the shard search; step time = (slowest stage +\n"
         "p2p) x (m + p - 1). See docs/shard.md.",
     .script = PB_SCRIPT_RUN,
     .paths = ""},
    {0},
};
