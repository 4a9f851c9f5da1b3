/*
 * shard/dtp/dtp.h — the dp x tp x pp search and the plan of one of its
 * rows (dtp.c): the even configurations (dtp_search.c), then uneven device
 * groups (dtp_uneven.c). The types are dtp_types.h's.
 */
#ifndef PB_SHARD_DTP_H
#define PB_SHARD_DTP_H

#include "shard/dtp/dtp_types.h"

/* Evaluates every pipeline configuration (pp > 1) allowed by the fixed
 * values (the operator-level ones: pb_dtp_search_add_operator); g is the model
 * at its batch as loaded (o->pipe.batch 0: its batch). Under mpirun -np N
 * the (pp, m) units are spread over the ranks and gathered on every rank
 * (the same result as one rank). A configuration that fails is a row with
 * ok = 0 and its error; the call fails when out of memory, cancelled, or
 * the fixed values do not fit the device count or the batch. */
int pb_dtp_search(const pb_graph *g, const pb_cluster *cl, const pb_dtp_opts *o, pb_dtp_result *out,
                  pb_error *err);

/* The plan of pipeline configuration `want` (a row of pb_dtp_search with the
 * same options and batch B): the one r kept when it is want's (r may be
 * NULL; r->kept is then taken), else the model reloaded at B/m (*gp: the
 * graph left), split and solved again with every chunk's operator specs
 * kept; an error when its step time is not the row's. */
int pb_dtp_plan(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                const pb_dtp_config *want, long B, pb_dtp_result *r, pb_plan **out, pb_error *err);

#endif
