/*
 * shard/search/spec_pin.h — an operator's sharding spec pinned by hand (`pin`): the
 * pin as a candidate filter of the strategy problem, and the hand edit of a
 * shard plan that re-solves its scheme under the pins.
 *
 * A pin keeps, of its node's candidate strategies, only the one labelled as
 * asked; while filtering it records every label the node was offered, so a
 * pin to a label that is no candidate is refused listing the valid ones.
 */
#ifndef PB_SHARD_SPEC_PIN_H
#define PB_SHARD_SPEC_PIN_H

#include "plan.h"
#include "shard/cluster.h"
#include "shard/rules.h"
#include "shard/strategy/strategy_problem.h"

enum { PB_SPEC_PIN_MAX = 64 };

typedef struct pb_spec_pin {
	int nid;
	char label[40];
	int seen;          /* the label was offered for the node */
	char offered[256]; /* the labels offered, comma-separated */
} pb_spec_pin;

/* Adds a filter rule per pin to lib (the pins must outlive lib's use). */
int pb_spec_pin_rules(pb_shard_rules *lib, pb_spec_pin *pins, int n, pb_error *err);

/* The pins of plan old (detail "pinned": [{node, spec}], by node name) and
 * the new one (nid, label); *n their count. */
int pb_spec_pin_collect(const pb_graph *g, const pb_plan *old, int nid, const char *label,
                        pb_spec_pin *pins, int *n, pb_error *err);
/* detail "pinned" of a plan with these pins. */
json_t *pb_spec_pin_json(const pb_graph *g, const pb_spec_pin *pins, int n);
/* The strategy plan p gives node nid ("" when none): the shard plan's
 * "ops", or a pipeline plan's chunks' ops. */
const char *pb_spec_pin_strategy(const pb_plan *p, int nid);

/* The hand edit of a shard plan: its scheme solved again (GLPK MILP) with
 * the pins as filters on top of base (the session's options and Lua
 * filters; shrinking and layer sharing off, so each pinned operator keeps
 * its own variables). *out the new plan (method "manual", "pinned" in its
 * detail). Refused (PB_EUSAGE) when the last pin's label is not a candidate
 * of its node on the scheme, naming the candidates. */
int pb_spec_pin_edit(const pb_graph *g, const pb_cluster *cl, const pb_shard_opts *base,
                     const pb_plan *old, pb_spec_pin *pins, int n_pins, pb_plan **out,
                     pb_error *err);
/* "'node' m -> rep, ...; N operator specs changed" from two plans (shard
 * or pipeline) of g. */
void pb_spec_pin_describe(const pb_graph *g, const pb_plan *before, const pb_plan *after, char *buf,
                          size_t len);
/* A candidate spec of one operator on a shard plan's scheme, what the
 * workbench's inspector lists and `pin --list` prints. */
typedef struct pb_spec_cand {
	char label[40];      /* as `pin --spec` takes it */
	double time;         /* seconds: the operator's own cost under it (compute, its
	                      * gradient all-reduce and partial output's reduction; the
	                      * resharding to its neighbours depends on their specs) */
	double memory;       /* bytes per device it holds (parameters, their training
	                      * state, its activations) */
	int current;         /* the plan's spec for it */
	char refused_by[96]; /* the candidate filter (Lua) that removes it, "" none */
} pb_spec_cand;

/* The candidates of operator nid on plan's scheme (shard plan), under
 * base's options as `pin` solves them (the plan's training flag and
 * optimisation level; base->filters only mark what they refuse); *out
 * malloc'd, *n its count. PB_EUSAGE when nid is no operator of the plan. */
int pb_spec_pin_candidates(const pb_graph *g, const pb_cluster *cl, const pb_shard_opts *base,
                           const pb_plan *plan, int nid, pb_spec_cand **out, int *n, pb_error *err);

/* The label of a pinned shard plan: "optimal (for scheme 8 with 1 pinned
 * spec)", or "best found, bound B, gap G% (...)" with its restrictions: the
 * bound is the one of the plan's scheme with its pins (the problem the pins
 * pose), from GLPK's proof or the dual bound (search_label.c). */
void pb_spec_pin_label(const pb_plan *p, char *buf, size_t len);
/* The refusal of a pin whose label was not offered, naming where ("scheme
 * 8") and the labels offered. */
int pb_spec_pin_refuse(const pb_graph *g, const pb_spec_pin *pin, const char *where,
                       const char *was, pb_error *err);

#endif
