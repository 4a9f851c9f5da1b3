/*
 * shard/pipeline/pipeline_diff.h — what a hand edit of a pipeline plan returns (the
 * new plan, both step times, the message) and the message made from the two
 * plans. The lower file of the pipeline edits: pipeline_edit.h (a `pipeline`
 * plan's stage boundary) and dtp_edit.h (a dp x tp x pp plan's chunk
 * boundary and pins) both use it.
 */
#ifndef PB_SHARD_PIPELINE_DIFF_H
#define PB_SHARD_PIPELINE_DIFF_H

#include <stddef.h>

#include "plan.h"

typedef struct pb_pipe_diff {
	pb_plan *plan;   /* the new plan (method "manual"), the caller's */
	double before;   /* step time of the plan before, costed again (s) */
	double after;    /* of the new plan (s) */
	char what[1024]; /* the chunks that changed, before -> after, from the two plans */
} pb_pipe_diff;

/* "chunk 1 (stage 1) [nodes 86-120, 35 nodes, 1.2 ms] -> ...; step time 4 ms
 * -> 4.1 ms" from two pipeline plans of the same model: the groups whose
 * nodes or time changed. */
void pb_pipeline_diff_describe(const pb_plan *before, const pb_plan *after, char *buf, size_t len);

#endif
