/*
 * shard/pipeline/pipeline_report.h — what `pipeline` and `shard --pipeline
 * auto` print and save of a planned split: JSON, text, the plan
 * (pipeline_report.c).
 */
#ifndef PB_SHARD_PIPELINE_REPORT_H
#define PB_SHARD_PIPELINE_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "plan.h"
#include "shard/pipeline/pipeline_types.h"

/* The `pipeline --json` report; also the plan's detail. */
json_t *pb_pipeline_report_result_json(const pb_pipe_result *r);
/* The text report: stages, bubble, the scheme table, the schedules. */
void pb_pipeline_report_result_text(FILE *f, const pb_pipe_result *r);
/* "rules: NAME (EFFECT, N nodes), ...; all obeyed": the Lua rules (their
 * info, partition/chain/chain_rules.h) that constrained a pipeline split; nothing
 * when there are none. */
void pb_pipeline_report_rules_text(FILE *out, const json_t *rules);
/* "polish: M <what> moves kept of T costed, BEFORE -> AFTER (...)", the
 * boundary polish's line (of `pipeline` and `shard --pipeline auto`). */
void pb_pipeline_report_polish_line(FILE *f, const char *what, int moves, int tries, double before,
                                    double after, int converged);
/* The plan of a result (kind "pipeline", group per node = stage). */
pb_plan *pb_pipeline_report_result_plan(const pb_pipe_result *r);
/* `shard --pipeline auto` additions to the shard report rep (its
 * step_time, scheme and schemes): "pipelines" and "best_overall". */
json_t *pb_pipeline_report_compare_json(const pb_pipe_compare *c, const json_t *rep, int winner);
/* The combined table of operator-level schemes (from rep) and pipelines. */
void pb_pipeline_report_compare_text(FILE *f, const pb_pipe_compare *c, const json_t *rep,
                                     int winner);

#endif
