/*
 * shard/strategy/strategy_prune.c — exact dominance pruning of a strategy problem
 * (strategy_problem.h: pb_strategy_prune_dominated).
 *
 * In four passes, so that groups sharing their representative's tables
 * (strategy_share.c) are pruned exactly as if they had their own:
 * 1. every group's surviving strategies (newid), read only; a shared group
 *    whose edges show the same spec maps as its representative's has the
 *    same survivors (the test only reads costs, memory and those maps);
 * 2. a shared group whose survivors differ from its representative's gets
 *    its own copies of the tables, before anything is compacted;
 * 3. compaction: each own table once, each edge's maps per side;
 * 4. specs no strategy uses any more are dropped from the edges' lists.
 */
#include <stdlib.h>
#include <string.h>

#include "shard/strategy/strategy_prune.h"
#include "util/job.h"

typedef struct incid {
	int *deg;
	int **inc; /* per group: +e+1 when the group is e's producer, -(e+1) its consumer */
} incid;

static void incid_free(incid *ic, int n)
{
	for (int G = 0; ic->inc && G < n; G++)
		free(ic->inc[G]);
	free(ic->inc);
	free(ic->deg);
}

static int incid_init(const pb_shard_problem *p, incid *ic)
{
	ic->deg = calloc((size_t)p->n_groups + 1, sizeof(int));
	ic->inc = calloc((size_t)p->n_groups + 1, sizeof(int *));
	if (!ic->deg || !ic->inc)
		return -1;
	for (int e = 0; e < p->n_edges; e++) {
		ic->deg[p->edges[e].from]++;
		ic->deg[p->edges[e].to]++;
	}
	for (int G = 0; G < p->n_groups; G++) {
		ic->inc[G] = malloc(((size_t)ic->deg[G] + 1) * sizeof(int));
		if (!ic->inc[G])
			return -1;
		ic->deg[G] = 0;
	}
	for (int e = 0; e < p->n_edges; e++) {
		int F = p->edges[e].from, T = p->edges[e].to;
		ic->inc[F][ic->deg[F]++] = e + 1;
		ic->inc[T][ic->deg[T]++] = -(e + 1);
	}
	return 0;
}

/* The spec map of incidence code on its group's side. */
static int *side_map(const pb_shard_problem *p, int code)
{
	pb_shard_edge *ed = &p->edges[(code > 0 ? code : -code) - 1];
	return code > 0 ? ed->a_of : ed->b_of;
}

/* Every map of G's edges is one of H's and back (S strategies each). */
static int same_maps(const pb_shard_problem *p, const incid *ic, int G, int H, int S)
{
	for (int pass = 0; pass < 2; pass++) {
		int X = pass ? H : G, Y = pass ? G : H;
		for (int k = 0; k < ic->deg[X]; k++) {
			const int *m = side_map(p, ic->inc[X][k]);
			int found = 0;
			for (int l = 0; l < ic->deg[Y] && !found; l++)
				found =
				    !memcmp(m, side_map(p, ic->inc[Y][l]), (size_t)S * sizeof(int));
			if (!found)
				return 0;
		}
	}
	return 1;
}

/* newid[s]: the new index of strategy s, -1 when dominated; returns the
 * survivors. */
static int dominance(const pb_shard_problem *p, const incid *ic, int G, int *newid)
{
	const pb_shard_group *gr = &p->groups[G];
	int S = gr->n_strat, kept = 0;
	for (int s = 0; s < S; s++) {
		int dom = 0;
		for (int t = 0; t < S && !dom; t++) {
			if (t == s)
				continue;
			int same = 1;
			for (int k = 0; k < ic->deg[G] && same; k++) {
				const int *m = side_map(p, ic->inc[G][k]);
				same = m[s] == m[t];
			}
			if (!same)
				continue;
			int le = gr->cost[t] <= gr->cost[s] &&
			         gr->mem_param[t] <= gr->mem_param[s] &&
			         gr->mem_act[t] <= gr->mem_act[s];
			int eq = gr->cost[t] == gr->cost[s] &&
			         gr->mem_param[t] == gr->mem_param[s] &&
			         gr->mem_act[t] == gr->mem_act[s];
			if (le && (!eq || t < s))
				dom = 1;
		}
		newid[s] = dom ? -1 : kept++;
	}
	return kept;
}

static double *dup_doubles(const double *a, int n)
{
	double *d = malloc(((size_t)n + 1) * sizeof *d);
	if (d)
		memcpy(d, a, (size_t)n * sizeof *d);
	return d;
}

/* G gets its own copies of its representative's tables. */
static int unshare(pb_shard_problem *p, int G)
{
	pb_shard_group *gr = &p->groups[G];
	int S = gr->n_strat;
	double *c = dup_doubles(gr->cost, S), *mp = dup_doubles(gr->mem_param, S),
	       *ma = dup_doubles(gr->mem_act, S);
	int **pk = calloc((size_t)gr->n_members + 1, sizeof *pk);
	int ok = c && mp && ma && pk;
	for (int k = 0; ok && k < gr->n_members; k++) {
		pk[k] = malloc(((size_t)S + 1) * sizeof(int));
		ok = pk[k] != NULL;
		if (ok)
			memcpy(pk[k], p->nodes[gr->members[k]].pick, (size_t)S * sizeof(int));
	}
	if (!ok) {
		for (int k = 0; pk && k < gr->n_members; k++)
			free(pk[k]);
		free(pk);
		free(c);
		free(mp);
		free(ma);
		return -1;
	}
	gr->cost = c;
	gr->mem_param = mp;
	gr->mem_act = ma;
	for (int k = 0; k < gr->n_members; k++) {
		p->nodes[gr->members[k]].pick = pk[k];
		p->nodes[gr->members[k]].pick_shared = 0;
	}
	free(pk);
	gr->same_as = -1;
	p->n_shared_groups--;
	return 0;
}

static void compact_group(pb_shard_problem *p, const incid *ic, int G, const int *newid, int kept)
{
	pb_shard_group *gr = &p->groups[G];
	int S = gr->n_strat;
	for (int s = 0; s < S && gr->same_as < 0; s++) {
		if (newid[s] < 0)
			continue;
		gr->cost[newid[s]] = gr->cost[s];
		gr->mem_param[newid[s]] = gr->mem_param[s];
		gr->mem_act[newid[s]] = gr->mem_act[s];
		for (int k = 0; k < gr->n_members; k++) {
			pb_shard_node *sn = &p->nodes[gr->members[k]];
			sn->pick[newid[s]] = sn->pick[s];
		}
	}
	for (int k = 0; k < ic->deg[G]; k++) {
		int *arr = side_map(p, ic->inc[G][k]);
		for (int s = 0; s < S; s++)
			if (newid[s] >= 0)
				arr[newid[s]] = arr[s];
	}
	gr->n_strat = kept;
}

/* Drops the specs no strategy uses from edge e's lists. */
static int compact_specs(pb_shard_problem *p, int e)
{
	pb_shard_edge *ed = &p->edges[e];
	int *ma = malloc(((size_t)ed->na + 1) * sizeof(int)),
	    *mb = malloc(((size_t)ed->nb + 1) * sizeof(int));
	if (!ma || !mb) {
		free(ma);
		free(mb);
		return -1;
	}
	for (int a = 0; a < ed->na; a++)
		ma[a] = -1;
	for (int b = 0; b < ed->nb; b++)
		mb[b] = -1;
	int na = 0, nb = 0, SF = p->groups[ed->from].n_strat, ST = p->groups[ed->to].n_strat;
	for (int s = 0; s < SF; s++)
		if (ma[ed->a_of[s]] < 0)
			ma[ed->a_of[s]] = na++;
	for (int s = 0; s < ST; s++)
		if (mb[ed->b_of[s]] < 0)
			mb[ed->b_of[s]] = nb++;
	if (na < ed->na || nb < ed->nb) { /* renumbered in the order of first use */
		signed char(*as)[PB_MESH_MAX_AXES] = malloc(((size_t)na + 1) * PB_MESH_MAX_AXES);
		signed char(*bs)[PB_MESH_MAX_AXES] = malloc(((size_t)nb + 1) * PB_MESH_MAX_AXES);
		if (!as || !bs) {
			free(as);
			free(bs);
			free(ma);
			free(mb);
			return -1;
		}
		for (int a = 0; a < ed->na; a++)
			if (ma[a] >= 0)
				memcpy(as[ma[a]], ed->as[a], PB_MESH_MAX_AXES);
		for (int b = 0; b < ed->nb; b++)
			if (mb[b] >= 0)
				memcpy(bs[mb[b]], ed->bs[b], PB_MESH_MAX_AXES);
		free(ed->as);
		free(ed->bs);
		ed->as = as;
		ed->bs = bs;
		for (int s = 0; s < SF; s++)
			ed->a_of[s] = ma[ed->a_of[s]];
		for (int s = 0; s < ST; s++)
			ed->b_of[s] = mb[ed->b_of[s]];
		ed->na = na;
		ed->nb = nb;
	}
	free(ma);
	free(mb);
	return 0;
}

int pb_strategy_prune_dominated(pb_shard_problem *p, pb_error *err)
{
	incid ic = {0};
	int **newid = calloc((size_t)p->n_groups + 1, sizeof *newid);
	int *kept = calloc((size_t)p->n_groups + 1, sizeof *kept);
	int ok = newid && kept && incid_init(p, &ic) == 0;
	for (int G = 0; ok && G < p->n_groups; G++) { /* 1 */
		pb_job_tick();
		int S = p->groups[G].n_strat, H = p->groups[G].same_as;
		newid[G] = malloc(((size_t)S + 1) * sizeof(int));
		if (!(ok = newid[G] != NULL))
			break;
		if (H >= 0 && same_maps(p, &ic, G, H, S)) {
			memcpy(newid[G], newid[H], (size_t)S * sizeof(int));
			kept[G] = kept[H];
		} else {
			kept[G] = dominance(p, &ic, G, newid[G]);
		}
	}
	for (int G = 0; ok && G < p->n_groups; G++) { /* 2 */
		int H = p->groups[G].same_as;
		if (H >= 0 &&
		    (kept[G] != kept[H] ||
		     memcmp(newid[G], newid[H], (size_t)p->groups[G].n_strat * sizeof(int))))
			ok = unshare(p, G) == 0;
	}
	for (int G = 0; ok && G < p->n_groups; G++) /* 3 */
		if (kept[G] < p->groups[G].n_strat)
			compact_group(p, &ic, G, newid[G], kept[G]);
	for (int e = 0; ok && e < p->n_edges; e++) /* 4 */
		ok = compact_specs(p, e) == 0;
	for (int G = 0; newid && G < p->n_groups; G++)
		free(newid[G]);
	free(newid);
	free(kept);
	incid_free(&ic, p->n_groups);
	return ok ? PB_OK : pb_err(err, PB_ENOMEM, "shard: out of memory");
}
