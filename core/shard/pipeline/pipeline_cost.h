/*
 * shard/pipeline/pipeline_cost.h — the cost of a pipeline split: a stage
 * sharded by the shard search on its device group, the p2p transfers of its
 * boundaries and the step time (pipeline_cost.c); the planner and the
 * boundary polish use them.
 */
#ifndef PB_SHARD_PIPELINE_COST_H
#define PB_SHARD_PIPELINE_COST_H

#include "shard/pipeline/pipeline_types.h"

struct pb_shard_opts;
/* The best scheme of the shard search (only scheme when not NULL, e.g.
 * "32") on the nodes of o->mask (all when NULL) of g on cl: its time,
 * compute, comm, scheme name, and memory per device, into r. */
int pb_pipeline_cost_solve_on(const pb_graph *g, const pb_cluster *cl,
                              const struct pb_shard_opts *o, const char *scheme, pb_pipe_stage *r,
                              pb_error *err);
/* Costs stage s of r->split on its device group (shard search; memory of
 * the micro-batches in flight under 1F1B) into r->stage[s]. */
int pb_pipeline_cost_stage(pb_pipe_result *r, struct pb_shard_opts *so, unsigned char *mask, int s,
                           pb_error *err);
/* The p2p bytes and times of every boundary of r->split. */
void pb_pipeline_cost_transfers(pb_pipe_result *r);
/* fits, slowest, slot and step time from the stages and transfers. */
void pb_pipeline_cost_totals(pb_pipe_result *r);

#endif
