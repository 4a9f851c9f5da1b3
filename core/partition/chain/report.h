/*
 * report.h — human and JSON output of a "partition" plan: per group the
 * cores, layer range, MACs, time, compute, routing and storage; then max(t),
 * the reward, the exact optimum and the gap (docs/partition.md).
 */
#ifndef PB_PARTITION_REPORT_H
#define PB_PARTITION_REPORT_H

#include <stdio.h>

#include <jansson.h>

#include "plan.h"

void pb_part_report_table(FILE *out, const pb_plan *p);
/* {method, layout, max_time, reward, optimum, gap, lower_bound, max_storage,
 *  memory, fits, groups[], arranged_core, arranged_macs}; caller owns the
 *  result. */
json_t *pb_part_report_json(const pb_plan *p, const char *method, const char *layout);

/* 1 when some group's per-core storage exceeds the core memory. */
int pb_part_over_memory(const pb_plan *p);
/* When p is over memory, writes to log a warning naming the model, the
 * layout, the largest per-core storage against the memory and the groups
 * over it; `exact` says the plan is the exact optimum (then no partition
 * fits at all). Returns pb_part_over_memory(p). */
int pb_part_report_fit(FILE *log, const pb_plan *p, const char *model, const char *layout,
                       int exact);

#endif
