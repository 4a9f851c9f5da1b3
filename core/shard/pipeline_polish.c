/*
 * shard/pipeline_polish.c — the boundary polish of a pipeline split
 * (pipeline_plan.h, pb_pipe_polish).
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
 * budget of costed moves is spent. Splits already costed are remembered (a
 * hash of the stage array), so a move back is never costed twice. Moves that
 * would empty a stage or break a Lua rule are not tried.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "partition/chain_rules.h"
#include "shard/pipeline_plan.h"
#include "shard/search.h"

#define SEEN_MAX 4096

typedef struct polish {
	pb_pipe_result *r;
	const double *cost;
	const struct pb_part_rules *rules;
	struct pb_shard_opts *so;
	unsigned char *mask;
	int *cand;
	uint64_t seen[SEEN_MAX];
	int n_seen;
} polish;

static uint64_t split_hash(const int *stage, int n)
{
	uint64_t h = 1469598103934665603ull;
	for (int v = 0; v < n; v++) {
		h ^= (uint64_t)(uint32_t)(stage[v] + 1);
		h *= 1099511628211ull;
	}
	return h;
}

/* 1 the first time a split is met. */
static int first_time(polish *ps, const int *stage, int n)
{
	uint64_t h = split_hash(stage, n);
	for (int i = 0; i < ps->n_seen; i++)
		if (ps->seen[i] == h)
			return 0;
	if (ps->n_seen < SEEN_MAX)
		ps->seen[ps->n_seen++] = h;
	return 1;
}

/* cand = the split with boundary k moved by dir (+1: the first node of k+1
 * joins k; -1: the last node of k joins k+1); 0 when that would empty a
 * stage. As pb_plan_move_boundary on the plan's groups. */
static int move(const pb_pipe_result *r, int k, int dir, int *cand)
{
	int n = r->g->n_nodes, from = dir > 0 ? k + 1 : k, left = 0, pick = -1;
	for (int v = 0; v < n; v++) {
		cand[v] = r->split.stage[v];
		left += cand[v] == from;
	}
	if (left < 2)
		return 0;
	for (int i = 0; i < n && pick < 0; i++) {
		int v = dir > 0 ? i : n - 1 - i;
		if (cand[v] == from)
			pick = v;
	}
	cand[pick] = dir > 0 ? k : k + 1;
	return 1;
}

static int better(int fits, double t, int fits0, double t0)
{
	if (fits != fits0)
		return fits;
	return t < t0 * (1 - 1e-9);
}

/* Tries the move; keeps it when better. *kept = 1 then. */
static int try_move(polish *ps, int k, int dir, int *kept, int *tried, pb_error *err)
{
	pb_pipe_result *r = ps->r;
	const pb_graph *g = r->g;
	*kept = 0;
	if (!move(r, k, dir, ps->cand) || !first_time(ps, ps->cand, g->n_nodes))
		return PB_OK;
	char why[256];
	if (pb_pipe_split_rule_broken(g, ps->cost, ps->cand, NULL, ps->rules, why, sizeof why))
		return PB_OK;
	pb_pipe_split next;
	pb_error e2 = {0};
	if (pb_pipe_split_given(g, ps->cost, r->p, ps->cand, &next, &e2) != PB_OK)
		return PB_OK; /* not a valid split (an edge backwards): not a move */
	(*tried)++;
	pb_pipe_split old = r->split;
	next.n_key = old.n_key; /* the split's provenance stays */
	next.cols = old.cols;
	next.rows = old.rows;
	next.optimal = old.optimal;
	pb_pipe_stage s0 = r->stage[k], s1 = r->stage[k + 1];
	int fits0 = r->fits;
	double t0 = r->step_time;
	r->split = next;
	int rc = pb_pipe_cost_stage(r, ps->so, ps->mask, k, err);
	if (rc == PB_OK)
		rc = pb_pipe_cost_stage(r, ps->so, ps->mask, k + 1, err);
	if (rc == PB_OK) {
		pb_pipe_transfers(r);
		pb_pipe_totals(r);
	}
	if (rc == PB_OK && better(r->fits, r->step_time, fits0, t0)) {
		pb_pipe_split_free(&old);
		*kept = 1;
		return PB_OK;
	}
	pb_pipe_split_free(&r->split);
	r->split = old;
	r->stage[k] = s0;
	r->stage[k + 1] = s1;
	pb_pipe_transfers(r);
	pb_pipe_totals(r);
	return rc;
}

int pb_pipe_polish(pb_pipe_result *r, const double *cost, const struct pb_part_rules *rules,
                   int max_tries, struct pb_shard_opts *so, unsigned char *mask, pb_error *err)
{
	r->polish_before = r->step_time;
	r->polish_moves = r->polish_tries = r->polish_converged = 0;
	r->polished = max_tries >= 0;
	if (max_tries < 0 || r->p < 2)
		return PB_OK;
	if (max_tries == 0)
		max_tries = 8 * r->p + 8;
	polish ps = {.r = r, .cost = cost, .rules = rules, .so = so, .mask = mask};
	if (!(ps.cand = malloc(((size_t)r->g->n_nodes + 1) * sizeof(int))))
		return pb_err(err, PB_ENOMEM, "pipeline: out of memory");
	first_time(&ps, r->split.stage, r->g->n_nodes);
	int rc = PB_OK, improved = 1, cut = 0;
	while (improved && !cut && rc == PB_OK) {
		improved = 0;
		for (int k = 0; k + 1 < r->p && rc == PB_OK && !cut; k++)
			for (int dir = 1; dir >= -1 && rc == PB_OK && !cut; dir -= 2) {
				int kept = 1, moved = 0;
				while (kept && rc == PB_OK) {
					if (r->polish_tries >= max_tries) {
						cut = 1; /* the budget is spent */
						break;
					}
					rc = try_move(&ps, k, dir, &kept, &r->polish_tries, err);
					moved += kept;
				}
				r->polish_moves += moved;
				improved |= moved > 0;
				if (moved)
					break; /* the way back is worse */
			}
	}
	r->polish_converged = rc == PB_OK && !improved && !cut;
	free(ps.cand);
	return rc;
}
