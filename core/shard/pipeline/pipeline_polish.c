/*
 * shard/pipeline/pipeline_polish.c — the boundary polish of a pipeline split
 * (pipeline_polish.h, pb_pipeline_polish).
 *
 * The split (exact DP or key-operator MILP) balances FLOPs. The step time is
 * (slowest stage + slowest p2p transfer) x (m + P - 1), where a stage's time
 * also holds the collectives of its sharding and a transfer depends on the
 * bytes crossing the boundary: cutting inside an MLP sends its 4h-wide
 * hidden activation, one node later only the h-wide output. So the split is
 * polished with the costing itself, by the moves a user makes by hand
 * (`boundary K +-1`, `>` and `<` in the workbench): the first node of stage
 * K+1 (node order) joins K, or the last node of K joins K+1. A move changes
 * stages K and K+1 only (their shard searches run again, the others keep
 * their cost: the searches are deterministic) and the transfers. Hill
 * climbing: a move is kept when the plan fits no worse and its step time
 * drops by more than a relative 1e-9; a boundary keeps moving in the
 * direction that improved; rounds over all boundaries end when a whole round
 * keeps nothing (converged: no single-node move lowers the step time) or the
 * budget of costed moves is spent. The moves are picked by
 * boundary_climb.c (shared with dtp_polish.c); moves that would empty a
 * stage or break a Lua rule are not tried.
 *
 * A move is decided before its shard searches when it can be: the
 * transfers of the candidate split cost nothing to price, and the stages
 * other than K and K+1 keep their times, so (their slowest + the new
 * slowest transfer) x (m + P - 1) is a lower bound of the candidate's step
 * time; when it is no lower than the step time kept, the move cannot be
 * kept and its searches are not run (the same after the first of the two
 * searches, the stage that gains the node, which is usually the slow one).
 * Only when the plan fits (or a stage outside K, K+1 does not fit, so the
 * candidate cannot fit either): then the step time alone decides. The move
 * still counts as costed, so the climb, its budget and the plan are those
 * of costing every move (swin_t, cluster-4x8, 4 stages: 9 moves costed, 6
 * of them decided by the bound).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition/chain/chain_rules.h"
#include "shard/pipeline/boundary_climb.h"
#include "shard/pipeline/pipeline_polish.h"
#include "shard/pipeline/pipeline_cost.h"
#include "shard/search/search.h"

typedef struct polish {
	pb_pipe_result *r;
	const double *cost;
	const struct pb_part_rules *rules;
	struct pb_shard_opts *so;
	unsigned char *mask;
	int decided; /* moves the bound rejected (pb_pipe_result.polish_decided) */
} polish;

static int better(int fits, double t, int fits0, double t0)
{
	if (fits != fits0)
		return fits;
	return t < t0 * (1 - 1e-9);
}

/* 1 when no candidate with stages k, k+1 at least as slow as `known` (the
 * stages already costed for it, 0 for none) can be kept: the split's
 * transfers are the candidate's, the other stages keep their times. */
static int cannot_win(const pb_pipe_result *r, int k, double known, int fits0, double t0)
{
	int fixed_fit = 1;
	double slowest = known;
	for (int s = 0; s < r->p; s++) {
		if (s == k || s == k + 1)
			continue;
		fixed_fit &= r->stage[s].feasible;
		if (r->stage[s].time > slowest)
			slowest = r->stage[s].time;
	}
	if (!fits0 && fixed_fit)
		return 0; /* the candidate may fit where the plan does not */
	/* the same operations as pb_pipeline_cost_totals: rounding keeps the order */
	double lb = (slowest + r->p2p_max) * (r->m + r->p - 1);
	return !(lb < t0 * (1 - 1e-9));
}

/* Costs split cand (boundary k moved); keeps it when better (pb_climb_try_fn). */
static int try_move(void *ud, const int *cand, int k, int dir, int *costed, int *kept,
                    pb_error *err)
{
	polish *ps = ud;
	pb_pipe_result *r = ps->r;
	const pb_graph *g = r->g;
	char why[256];
	if (pb_pipeline_stages_split_rule_broken(g, ps->cost, cand, NULL, ps->rules, why,
	                                         sizeof why))
		return PB_OK;
	pb_pipe_split next;
	pb_error e2 = {0};
	if (pb_pipeline_stages_split_given(g, ps->cost, r->p, cand, &next, &e2) != PB_OK)
		return PB_OK; /* not a valid split (an edge backwards): not a move */
	*costed = 1;
	pb_pipe_split old = r->split;
	next.n_key = old.n_key; /* the split's provenance stays */
	next.cols = old.cols;
	next.rows = old.rows;
	next.optimal = old.optimal;
	pb_pipe_stage s0 = r->stage[k], s1 = r->stage[k + 1];
	int fits0 = r->fits;
	double t0 = r->step_time;
	r->split = next;
	pb_pipeline_cost_transfers(r);
	/* the stage that gains the node first: it is the one that can slow */
	int grows = dir > 0 ? k : k + 1, rc = PB_OK;
	int skip = cannot_win(r, k, 0, fits0, t0);
	if (!skip)
		rc = pb_pipeline_cost_stage(r, ps->so, ps->mask, grows, err);
	if (!skip && rc == PB_OK)
		skip = cannot_win(r, k, r->stage[grows].time, fits0, t0);
	if (!skip && rc == PB_OK)
		rc = pb_pipeline_cost_stage(r, ps->so, ps->mask, grows == k ? k + 1 : k, err);
	ps->decided += skip && rc == PB_OK;
	if (!skip && rc == PB_OK) {
		pb_pipeline_cost_totals(r);
		if (better(r->fits, r->step_time, fits0, t0)) {
			pb_pipeline_stages_split_free(&old);
			*kept = 1;
			return PB_OK;
		}
	}
	pb_pipeline_stages_split_free(&r->split);
	r->split = old;
	r->stage[k] = s0;
	r->stage[k + 1] = s1;
	pb_pipeline_cost_transfers(r);
	pb_pipeline_cost_totals(r);
	return rc;
}

int pb_pipeline_polish(pb_pipe_result *r, const double *cost, const struct pb_part_rules *rules,
                       int max_tries, struct pb_shard_opts *so, unsigned char *mask, pb_error *err)
{
	r->polish_before = r->step_time;
	r->polish_moves = r->polish_tries = r->polish_converged = r->polish_decided = 0;
	r->polished = max_tries >= 0;
	if (max_tries < 0 || r->p < 2)
		return PB_OK;
	if (max_tries == 0)
		max_tries = 8 * r->p + 8;
	polish ps = {.r = r, .cost = cost, .rules = rules, .so = so, .mask = mask};
	pb_climb_stats st;
	int rc = pb_boundary_climb(&r->split.stage, r->g->n_nodes, r->p, max_tries, try_move, &ps,
	                           &st, err);
	r->polish_moves = st.moves;
	r->polish_tries = st.tries;
	r->polish_converged = st.converged;
	r->polish_decided = ps.decided;
	return rc;
}
