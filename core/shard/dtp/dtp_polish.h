/*
 * shard/dtp/dtp_polish.h — the chunk-boundary polish of the kept even
 * pipeline (dtp_polish.c).
 */
#ifndef PB_SHARD_DTP_POLISH_H
#define PB_SHARD_DTP_POLISH_H

#include <jansson.h>
#include <stdio.h>

#include "plan.h"
#include "shard/dtp/dtp_types.h"

typedef struct pb_dtp_polish_info {
	int polished;                /* the polish ran (even rows with pp > 1, budget >= 0) */
	int moves, tries, converged; /* as pb_pipe_result's polish_* */
	double before, after;        /* step time (s) */
	int dp, tp;
} pb_dtp_polish_info;

/* Polishes *plan, the plan of even pipeline row want (pb_dtp_plan, same
 * options and batch B), by single-node chunk-boundary moves costed as the
 * search costs a configuration (dp, tp, pp, m and the schedule kept), at
 * most o->pipe.polish_tries costed (0: 8 x chunks + 8; < 0: off). *plan is
 * replaced when a move is kept and gets "polish" in its detail; *gp is the
 * graph left (at B/m). Uneven rows are not polished (info->polished = 0). */
int pb_dtp_polish(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                  const pb_dtp_config *want, long B, pb_plan **plan, pb_dtp_polish_info *info,
                  pb_error *err);
/* {moves, tries, converged, step_time_before, step_time} */
json_t *pb_dtp_polish_json(const pb_dtp_polish_info *info);
/* "polish: M chunk-boundary moves kept of T costed, BEFORE -> AFTER (...)"
 * when it ran. */
void pb_dtp_polish_text(FILE *f, const pb_dtp_polish_info *info);

#endif
