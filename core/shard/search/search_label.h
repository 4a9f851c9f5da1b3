/*
 * shard/search/search_label.h — what the strategy search's plan is: proven optimal
 * for the problem as posed (every operator its own choice from the full
 * menus, on every grouping scheme of at most --max-axes factors), or the
 * best found with a lower bound on that problem and the gap, and the
 * restrictions the search applied (docs/shard.md, "Labels").
 *
 * Per row (scheme): the restrictions its problem had (shrinking that merged
 * operators, the rule library of --opt-level >= 1, level 3's greedy
 * sub-MILPs, repeated layers or --tie that tied groups, forced parameter
 * sharding, a time limit, gap, node limit or cutoff that stopped GLPK before
 * a proof) and a lower bound on its unrestricted problem: the row's step
 * time when nothing restricted it and GLPK proved it, else the dual bound of
 * strategy_bound.c (the LP relaxation's dual, memory left out) on the
 * problem built without the restrictions. The search's bound is the least
 * row bound; the plan is optimal when it attains it.
 */
#ifndef PB_SHARD_SEARCH_LABEL_H
#define PB_SHARD_SEARCH_LABEL_H

#include "shard/search/search_types.h"
#include "util/proof_label.h"

enum {
	PB_RESTR_SHRINK = 1 << 0,
	PB_RESTR_RULES = 1 << 1,
	PB_RESTR_NEIGHBOURS = 1 << 2,
	PB_RESTR_GREEDY = 1 << 3,
	PB_RESTR_LAYERS = 1 << 4,
	PB_RESTR_TIE = 1 << 5,
	PB_RESTR_FORCED = 1 << 6,
	PB_RESTR_TIME = 1 << 7,
	PB_RESTR_GAP = 1 << 8,
	PB_RESTR_NODES = 1 << 9,
	PB_RESTR_CUTOFF = 1 << 10,
	PB_RESTR_N = 11
};
/* The name of restriction bit k (0 .. PB_RESTR_N - 1), as in restricted_by. */
const char *pb_search_label_restr_name(int k);
/* The options of the unrestricted problem of o: no shrinking, level 0, no
 * ties, no forced sharding, no stops; recomputation none when o's is auto
 * (the cheapest in compute: memory is left out of the bound). */
void pb_search_label_unrestricted_opts(const pb_shard_opts *o, pb_shard_opts *u);
/* Fills row i's restrictions and its unrestricted bound (search_label.h; p,
 * r: its problem and result, NULL when the row failed), only when
 * s->want_label (search_label.c). cb (may be NULL) gets the bound while it is
 * computed, as pb_strategy_bound_lower's (the stepping solver yields there). */
int pb_search_label_row(pb_shard_search *s, int i, const pb_shard_problem *p,
                        const pb_shard_result *r, pb_shard_incumbent_fn cb, pb_error *err);
/* The label of the search's best plan (value: its step time, s). */
void pb_search_label(const pb_shard_search *s, pb_label *L);
/* A lower bound (s) on the step time of every plan of g on cl, operator-level
 * or pipelined, in the shard cost model: the operators' FLOPs (x3 in
 * training) over all devices at the device rate, without communication,
 * bubbles, padding or recomputation (every operator's compute on a device
 * group is at least its FLOPs over the group; the step is at least the
 * busiest device's work). scale multiplies the FLOPs (a pipeline costed at
 * micro-batch B/m: m). */
double pb_search_label_compute_bound(const pb_graph *g, const pb_cluster *cl, int train,
                                     double scale);
/* The restrictions of a stage search with options o (shrink, opt-level
 * rules, neighbourhoods, greedy sub-MILPs, layers, tie, mip-gap,
 * node-limit), added to L. */
void pb_search_label_opts_restrictions(const pb_shard_opts *o, pb_label *L);
/* Row i is proven optimal for its scheme's unrestricted problem. */
int pb_search_label_row_proven(const pb_shard_row *r);

#endif
