/*
 * shard/dtp_interleave.h — the schedules one unit (pp, m) of the data x
 * tensor x pipeline search tries (dtp_interleave.c): 1F1B, then interleaved
 * with V = 2, 3, 4, ... model chunks per device (Narayanan et al. 2021,
 * section 2.2).
 *
 * Interleaving needs m a multiple of pp (Megatron-LM). V = 2 is always
 * tried (the split cuts between operators when the layers are too few);
 * V >= 3 only while pp x V chunks fit the model's repeated layers (one
 * layer or more per chunk), V <= 16, and while it can pay:
 *   - a V >= 3 whose bound is not below the best fitting step time known
 *     (the caller's incumbent, or a plan of this unit: 1F1B or a smaller V)
 *     gives pruned rows and ends the loop;
 *   - V + 1 (V >= 4) is tried for the data-parallel degrees whose best
 *     fitting row at V beat the one at V - 1 (more chunks send V times as
 *     often and make every chunk smaller; once that loses, more chunks
 *     lose further);
 *   - a dp with a fitting row at V - 1 is tried at V (>= 3) only when that
 *     row without its bubble, its slowest group x (the slowest group's
 *     FLOPs at V / at V - 1) x m + its gradient all-reduces, is below the
 *     best fitting step known (the incumbent or this unit's): more chunks
 *     shrink the bubble, and change the slowest group's work as its FLOPs
 *     do (an estimate, not a bound). So V = 3 follows V = 2 where V = 2 is
 *     uneven: on 105 layers and 35 stages V = 2 gives chunks of 1-2 layers,
 *     V = 3 even ones (Megatron-LM's row 9). A dp without a fitting row at
 *     V = 2 is tried at V = 3 only when its memory at V = 2 times the
 *     ratio of the activations in flight at the first group (p + (p-1)/3
 *     against p + (p-1)/2 group activations) fits (the parameters do not
 *     shrink; an estimate).
 * --schedule interleaved:V fixes V; --schedule 1f1b skips interleaving.
 */
#ifndef PB_SHARD_DTP_INTERLEAVE_H
#define PB_SHARD_DTP_INTERLEAVE_H

#include "shard/dtp_search.h"

typedef struct pb_dtp_vloop {
	const pb_dtp_opts *o;
	const pb_graph *g;
	int pp, m, n_dev;
	int step;   /* 0: before 1F1B, 1: before the first interleaved V, 2: after it */
	int v;      /* the V just given (interleaved) */
	int blocks; /* repeated layers of g, -1 until needed */
	double inc; /* the caller's incumbent (0: none) */
	double limit; /* device memory (bytes) */
	double best; /* best fitting step of this unit so far */
	/* per dp, its best fitting row at this V (cur) and at V - 1 (prev):
	 * step, slowest group, gradient all-reduces, slowest group's FLOP time
	 * (bound / slots); step INFINITY when none fits */
	struct pb_dtp_vrow {
		double step, slowest, grad, work;
		double memory; /* the least memory of its rows (fitting or not) */
	} *cur, *prev;
	unsigned char *go; /* per dp: V - 1 beat V - 2 */
	int all_pruned;    /* every row of this V was pruned */
} pb_dtp_vloop;

/* PB_OK or PB_ENOMEM (err); pb_dtp_vloop_free after either. */
int pb_dtp_vloop_init(pb_dtp_vloop *l, const pb_dtp_opts *o, const pb_graph *g, int pp, int m,
                      const pb_cluster *cl, double inc, pb_error *err);
void pb_dtp_vloop_free(pb_dtp_vloop *l);
/* The next schedule to try (*sc PB_SCHED_*, *v chunks per device); 0 when
 * the unit is done. */
int pb_dtp_vloop_next(pb_dtp_vloop *l, int *sc, int *v);
/* 1 when the current schedule evaluates data-parallel degree dp; bound:
 * the schedule's split's bound (the configurations' `bound`). */
int pb_dtp_vloop_want(const pb_dtp_vloop *l, int dp, double bound);
/* The incumbent a row of the current schedule is pruned against (0: none). */
double pb_dtp_vloop_inc(const pb_dtp_vloop *l);
/* The rows r->cfg[from..] the current schedule added. */
void pb_dtp_vloop_note(pb_dtp_vloop *l, const pb_dtp_result *r, int from);
/* The repeated layers (blocks of all runs) of g; 0 without runs, -1 when
 * out of memory. */
int pb_dtp_count_blocks(const pb_graph *g);

#endif
