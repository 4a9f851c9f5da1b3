/*
 * shard/dtp/dtp_uneven.h — the parts of the uneven device-group search
 * (pb_dtp_uneven_search, below) and what its files share: the context of
 * one seed (dtp_uneven.c opens it and runs the FLOPs DP), and the exact
 * costing of a configuration with its local moves (dtp_uneven_eval.h).
 *
 * A configuration c with uneven = 1 has pp device groups, group s on
 * dp x stage_tp[s] consecutive devices, and pp x V chunks of consecutive
 * layer units (V = c->v: 1 under 1F1B, else interleaved): chunk k holds the
 * units [stage_end[k-1], stage_end[k]) and runs on group k mod pp, so
 * pp x V <= PB_DTP_UNEVEN_MAX.
 */
#ifndef PB_SHARD_DTP_UNEVEN_H
#define PB_SHARD_DTP_UNEVEN_H

#include "shard/dtp/dtp_search.h"
#include "shard/dtp/dtp_uneven_eval.h"

/* After the even search (r): configurations whose stages have different
 * tensor degrees, grown from r's best fitting pipelines and tried only
 * where their bound beats the best fitting step; added to r as rows with
 * uneven = 1 (or pruned rows). g: the graph the reloads left. */
int pb_dtp_uneven_search(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o, long B,
                         pb_dtp_result *r, pb_error *err);
/* pb_dtp_plan of an uneven row: r->kept when it is want's (the search
 * keeps the best uneven row's plan when it beats the kept one). */
int pb_dtp_uneven_plan(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                       const pb_dtp_config *want, long B, pb_dtp_result *r, pb_plan **out,
                       pb_error *err);

/* The context of g (at one micro-batch): FLOPs and layer units (U = 0: no
 * repeated layers); close it even when open fails. */
int pb_dtp_uneven_open(pb_uneven_ctx *x, const pb_graph *g, const pb_cluster *cl,
                       const pb_dtp_opts *o, pb_error *err);
void pb_dtp_uneven_close(pb_uneven_ctx *x);
/* The FLOPs DP of dtp_uneven.c under 1F1B with m micro-batches for the
 * data-parallel degree of c[0] (c[0] a template: dp, m, sched, v, uneven),
 * fixed_pp > 0: that stage count. Fills c[0..] with its answers, up to na:
 * per stage count its split and degrees, by their bound (the slowest
 * stage's FLOPs per device x slots), the first the FLOPs choice, the others
 * within 1.5x its bound. Returns their count (0: no split), -1 when out of
 * memory. */
int pb_dtp_uneven_split(const pb_uneven_ctx *x, int m, int fixed_pp, pb_dtp_config *c, int na);
/* The chunk split of interleaved c (pp, v >= 2, stage_tp set; stage_end
 * the 1F1B split of its groups): pp x v chunks of layer units, chunk k on
 * group k mod pp, each group keeping its 1F1B stage's FLOPs (v chunks of
 * them, the first chunk holding at least the embedding's unit, the last the
 * head's): the largest chunk FLOPs over its target least, then the least
 * sum of their squares. Fills stage_end; 0, or 1 when the units are too
 * few, -1 out of memory. */
int pb_dtp_uneven_split_chunks(const pb_uneven_ctx *x, pb_dtp_config *c);

#endif
