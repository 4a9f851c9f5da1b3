/*
 * shard/dtp/dtp_report.h — the report of a dp x tp x pp search
 * (dtp_report.c): the JSON and the table of configurations, the best
 * row's degrees and gradient overlap, and its label.
 */
#ifndef PB_SHARD_DTP_REPORT_H
#define PB_SHARD_DTP_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "shard/dtp/dtp_types.h"
#include "util/proof_label.h"

struct pb_shard_search;
/* Notes the degrees of s's best plan in r: when the best configuration is
 * that operator-level plan, "best" reports dp and tp as Megatron-LM means
 * them (or "mixed") and its grouping apart (dtp_report.c). */
void pb_dtp_report_note_op_degrees(pb_dtp_result *r, const struct pb_shard_search *s);

/* The same for a pipeline (or accumulation) best row: from its kept plan's
 * detail (pb_dtp_plan_build's "stages"), g the graph the plan's ids refer to. */
void pb_dtp_report_note_plan_degrees(pb_dtp_result *r, const pb_graph *g, const json_t *detail);

/* Sets the best row's degrees in best (its JSON): dp, tp (Megatron's, null
 * when mixed), grouping (the scheme), degrees, axes; nothing when unknown. */
void pb_dtp_report_degrees_json(json_t *best, const pb_dtp_result *r);

/* The line "gradient all-reduce: E ms exposed ..., H ms overlapped ..." of
 * a pipeline or accumulation row (dtp_report.c). */
void pb_dtp_report_overlap_text(FILE *f, const pb_cluster *cl, const pb_dtp_config *c);

/* "best_overall" of the shard report: {kind, scheme, step_time} of r's best. */
json_t *pb_dtp_report_best_overall_json(const pb_dtp_result *r);

/* {"dp","tp","pp","microbatches","schedule","step_time","memory","fits","kind",...} */
json_t *pb_dtp_report_config_json(const pb_dtp_config *c);
/* Sets "best" and "configurations" (and "dtp_search" counters) in rep. */
void pb_dtp_report_json(json_t *rep, const pb_dtp_result *r);
/* The table of alternatives, the best marked '*'. */
void pb_dtp_report_text(FILE *f, const pb_dtp_result *r);
/* The label of r's best configuration (search_label.h): best found unless
 * its step time attains the compute bound of g (the model at the global
 * batch) on cl, which holds for every dp x tp x pp configuration; restricted
 * by the chunk split, the stage searches' restrictions (o) and those of the
 * operator-level search (op, may be NULL). */
void pb_dtp_report_label(const pb_dtp_result *r, const pb_dtp_opts *o, const pb_graph *g,
                         const pb_cluster *cl, const pb_label *op, pb_label *L);
/* "label (dp x tp x pp): optimal | best found, bound .., gap ..; restricted by .." */
void pb_dtp_report_label_text(FILE *f, const pb_label *L);

#endif
