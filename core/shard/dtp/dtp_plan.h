/*
 * shard/dtp/dtp_plan.h — the plan of a dp x tp x pp configuration built
 * from its chunks' solves, and what a row's plan and report say of it
 * (schedule name, device groups, uneven groups; dtp_plan.c).
 */
#ifndef PB_SHARD_DTP_PLAN_H
#define PB_SHARD_DTP_PLAN_H

#include <jansson.h>

#include "plan.h"
#include "shard/dtp/dtp_types.h"
#include "shard/dtp/dtp_stage.h"

/* The plan of a configuration from its chunks' solves (dtp_plan.c): kind
 * "pipeline", one group per chunk (chunk k on device group k mod pp), group
 * per node = its chunk; detail: dp, tp, pp, micro-batches, schedule, batch,
 * and per chunk its devices, scheme, recomputation and operator specs. */
int pb_dtp_plan_build(const pb_graph *g, const pb_cluster *cl, const pb_dtp_config *c, long B,
                      int train, const int *chunk_of, const json_t *chunks, pb_plan **out,
                      pb_error *err);

/* c's schedule: "none" (pp 1, one micro-batch), "accumulate" (pp 1, m
 * micro-batches: gradient accumulation), "1f1b" or "interleaved:V" (in buf). */
const char *pb_dtp_plan_sched_name(const pb_dtp_config *c, char *buf, size_t n);

/* 1 when row c was costed by the unit search (a pipeline, or pp 1 with m > 1
 * micro-batches: gradient accumulation, one chunk), 0 for an operator-level
 * row (pp 1, the whole batch at once). */
int pb_dtp_plan_unit_row(const pb_dtp_config *c);

/* Device group s of c (even or uneven): its first device and device count
 * (dtp_plan.c). */
void pb_dtp_plan_group_devices(const pb_dtp_config *c, int s, int *first, int *n);

/* Adds "uneven", "stage_tp" and "stage_devices" to o when c is uneven
 * (dtp_plan.c). */
void pb_dtp_plan_uneven_json(json_t *o, const pb_dtp_config *c);

/* A chunk's solve as the plan's chunks list holds it (dtp_plan.c): chunk,
 * group, scheme (NULL: "1"), recompute, time (without the gradient
 * all-reduces), grad_sync, param_bytes, act_bytes, act_copies, ops (it takes
 * ch->ops, or []). */
json_t *pb_dtp_plan_chunk_json(int chunk, int group, const char *scheme, const pb_dtp_chunk *ch,
                               double act_copies);

#endif
