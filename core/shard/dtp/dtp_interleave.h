/*
 * shard/dtp/dtp_interleave.h — the schedules the search tries for one
 * unit (pp, m): 1F1B, then interleaved with V chunks per device
 * (dtp_interleave.c).
 */
#ifndef PB_SHARD_DTP_INTERLEAVE_H
#define PB_SHARD_DTP_INTERLEAVE_H

#include "shard/dtp/dtp_types.h"

/* 1F1B, then interleaved with V = 2, 3, ... while pp x V chunks fit the
 * repeated layers and V can pay (dtp_interleave.c says how V is cut). */
typedef struct pb_dtp_vloop pb_dtp_vloop;
/* inc: the incumbent of the unit's rows (0: none); NULL when out of memory */
pb_dtp_vloop *pb_dtp_interleave_vloop_new(const pb_dtp_opts *o, const pb_graph *g, int pp, int m,
                                          const pb_cluster *cl, double inc);
void pb_dtp_interleave_vloop_free(pb_dtp_vloop *l);
/* The next schedule (*sc PB_SCHED_*, *v chunks per device); 0 when done. */
int pb_dtp_interleave_vloop_next(pb_dtp_vloop *l, int *sc, int *v);
/* 1 when the current schedule evaluates data-parallel degree dp (bound:
 * the bound of the schedule's split). */
int pb_dtp_interleave_vloop_want(const pb_dtp_vloop *l, int dp, double bound);
/* The incumbent the current schedule's rows are pruned against (0: none). */
double pb_dtp_interleave_vloop_inc(const pb_dtp_vloop *l);
/* The rows r->cfg[from..] the current schedule added. */
void pb_dtp_interleave_vloop_note(pb_dtp_vloop *l, const pb_dtp_result *r, int from);
/* The repeated layers (blocks of all runs) of g; 0 without, -1 out of memory. */
int pb_dtp_interleave_count_blocks(const pb_graph *g);

#endif
