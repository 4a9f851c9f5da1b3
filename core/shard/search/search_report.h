/*
 * shard/search/search_report.h — what a strategy search gives: the generic Plan of
 * its best scheme, the JSON report and the per-device task lists.
 *
 * These read the search's state (search_rows.h) and change nothing in it.
 */
#ifndef PB_SHARD_SEARCH_REPORT_H
#define PB_SHARD_SEARCH_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "plan.h"
#include "shard/search/search_rows.h"

/* The plan of a solved problem (kind "shard"; see docs/shard.md). */
pb_plan *pb_search_report_plan(const pb_shard_search *s);
/* The report: step_time, scheme, schemes, ops, collectives, memory ... */
json_t *pb_search_report(const pb_shard_search *s);
/* The report as text tables (what `shard` prints without --json); details:
 * the best scheme's operators and collectives too (0 when a pipeline
 * configuration is the plan kept, so the operator-level plan is not). */
void pb_search_report_text(const pb_shard_search *s, const json_t *rep, int details, FILE *out);
/* One JSON file per device: its ordered operators with local shapes and the
 * collectives it joins. */
int pb_search_report_emit_tasks(const pb_shard_search *s, const char *dir, pb_error *err);

#endif
