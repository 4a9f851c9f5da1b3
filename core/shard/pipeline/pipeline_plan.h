/*
 * shard/pipeline/pipeline_plan.h — the pipeline planner (`pipeline`, `shard --pipeline
 * auto`); its types are pipeline_types.h, the costing of a split
 * pipeline_cost.h, the boundary polish pipeline_polish.h, the report
 * pipeline_report.h.
 *
 * pb_pipeline_plan splits a model into P stages on P consecutive device groups of
 * a cluster and costs the result:
 *   1. micro-batches m: the smallest divisor of the batch B with bubble
 *      (P-1)/(m+P-1) <= max_bubble (pipeline_stages.h), unless given;
 *   2. the operator-level plan of the whole batch on all devices (the shard
 *      search, same cost model), unless skipped;
 *   3. the model at batch B/m; stage split by the exact DP on chains, else
 *      key-operator intervals + MILP (pipeline_stages.h), FLOPs as costs;
 *   4. every non-empty stage sharded on its N/P devices by the shard search,
 *      its memory = parameters + activations of the micro-batches in flight
 *      under 1F1B (min(P - s, m), training) or 2 x its largest activation;
 *   5. point-to-point bytes per boundary (a tensor that skips stages counts
 *      at every boundary it crosses), sent by every device of the stage over
 *      the intra- or inter-node link: alpha + bytes / (N/P) / beta, twice as
 *      much when training (forward and backward);
 *   6. step time = (slowest stage + slowest transfer) x (m + P - 1); the
 *      pipeline wins against the operator-level plan by pb_pipeline_stages_prefer;
 *   7. a split of its own (not given) is polished by single-node boundary
 *      moves costed as 4-6 (pipeline_polish.h).
 * The batch changes go through a reload callback (the caller owns the
 * graphs: the session reloads the model), so the planner never holds a graph
 * across a reload. The result keeps the last graph, which the stages and the
 * plan refer to.
 *
 * pb_pipe_compare (`shard --pipeline auto`) runs the planner for every P > 1
 * dividing the device count and picks the pipeline that beats the
 * operator-level plan, if any.
 */
#ifndef PB_SHARD_PIPELINE_PLAN_H
#define PB_SHARD_PIPELINE_PLAN_H

#include "shard/pipeline/pipeline_types.h"

void pb_pipeline_plan_opts_default(pb_pipe_opts *o);
/* Dim 0 of the graph's first input, 1 when it has none. */
long pb_pipeline_plan_model_batch(const pb_graph *g);

/* g: the model as loaded now (its batch is the default B). Free the result
 * with pb_pipeline_plan_result_free after success or failure; out->g is then the
 * graph the reloads left. Messages start with "pipeline:" or come from the
 * failing piece (split MILP, shard search). */
int pb_pipeline_plan(const pb_graph *g, const pb_cluster *cl, const pb_pipe_opts *o,
                     pb_pipe_result *out, pb_error *err);
void pb_pipeline_plan_result_free(pb_pipe_result *r);

/* ---- shard --pipeline auto ---- */

/* Plans a pipeline (operator-level plan skipped) for every P > 1 dividing
 * the device count, as `pipeline --stages P --skip-oplevel --opt-level
 * max(N, 2)` with base's batch, training, padding and reload; a failing P
 * becomes a row error (with its message). base->batch 0: the model's batch
 * as given (every P plans that global batch, although the graph the previous
 * P left is at its micro-batch). progress (may be NULL) is told each P
 * before it is planned. */
void pb_pipeline_plan_compare_run(const pb_graph *g, const pb_cluster *cl, const pb_pipe_opts *base,
                                  void (*progress)(void *ud, int stages, int n_devices), void *ud,
                                  pb_pipe_compare *out);
/* Index of the fastest row that fits memory and beats the operator-level
 * plan (op_time, op_fits; pb_pipeline_stages_prefer, the operator-level plan staying on
 * a tie), or -1. */
int pb_pipeline_plan_compare_best(const pb_pipe_compare *c, double op_time, int op_fits);
/* Plans row `winner` again with the options of the rows, so that its plan
 * can become the session's (the rows keep numbers only): the same batch,
 * padding and options as its row, so the kept plan is the row's plan. */
int pb_pipeline_plan_compare(const pb_pipe_compare *c, int winner, const pb_graph *g,
                             const pb_cluster *cl, const pb_pipe_opts *base, pb_pipe_result *out,
                             pb_error *err);

#endif
