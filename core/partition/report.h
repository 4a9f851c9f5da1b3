/*
 * report.h — human and JSON output of a "partition" plan: per group the
 * cores, layer range, MACs, time, compute, routing and storage; then max(t),
 * the reward, the exact optimum and the gap (docs/partition.md).
 */
#ifndef PB_PARTITION_REPORT_H
#define PB_PARTITION_REPORT_H

#include <stdio.h>

#include <jansson.h>

#include "../plan.h"

void pb_part_report_table(FILE *out, const pb_plan *p);
/* {method, layout, max_time, reward, optimum, gap, lower_bound, max_storage,
 *  memory, groups[], arranged_core, arranged_macs}; caller owns the result. */
json_t *pb_part_report_json(const pb_plan *p, const char *method, const char *layout);

#endif
