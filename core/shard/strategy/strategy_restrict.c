/*
 * shard/strategy/strategy_restrict.c — a problem restricted to some strategies of
 * each group (strategy_problem.h: pb_strategy_restrict), for the MILP
 * of strategy_milp.c after the dual bound has shown that the others cannot
 * be in an optimal plan.
 *
 * The copy has its own groups (kept strategies' costs and memory) and edges
 * (spec maps of the kept strategies, specs no kept strategy uses dropped,
 * the cost matrix over the rest); the graph, nodes and tensor kinds stay the
 * original's (read only). map[G][k] is the original index of the k-th kept
 * strategy of G. Tied groups must keep the same strategies as their
 * representative (the caller's keep does), so ties and twins carry over.
 */
#include <stdlib.h>
#include <string.h>

#include "shard/strategy/strategy_restrict.h"

void pb_strategy_restrict_free(pb_shard_problem *q, int **map)
{
	if (!q)
		return;
	for (int G = 0; G < q->n_groups; G++) {
		free(q->groups[G].cost);
		free(q->groups[G].mem_param);
		free(q->groups[G].mem_act);
		if (map)
			free(map[G]);
	}
	for (int e = 0; e < q->n_edges; e++) {
		free(q->edges[e].a_of);
		free(q->edges[e].b_of);
		free(q->edges[e].cost);
	}
	free(map);
	free(q->groups);
	free(q->edges);
	free(q);
}

/* Edge e of q from p's: kept strategies' specs, renumbered. */
static int restrict_edge(const pb_shard_problem *p, pb_shard_problem *q, int **map, int e)
{
	const pb_shard_edge *pe = &p->edges[e];
	pb_shard_edge *qe = &q->edges[e];
	const pb_shard_group *QF = &q->groups[pe->from], *QT = &q->groups[pe->to];
	int *ma = malloc(((size_t)pe->na + 1) * sizeof *ma);
	int *mb = malloc(((size_t)pe->nb + 1) * sizeof *mb);
	qe->a_of = malloc(((size_t)QF->n_strat + 1) * sizeof(int));
	qe->b_of = malloc(((size_t)QT->n_strat + 1) * sizeof(int));
	if (!ma || !mb || !qe->a_of || !qe->b_of) {
		free(ma);
		free(mb);
		return -1;
	}
	for (int a = 0; a < pe->na; a++)
		ma[a] = -1;
	for (int b = 0; b < pe->nb; b++)
		mb[b] = -1;
	int na = 0, nb = 0;
	for (int k = 0; k < QF->n_strat; k++) {
		int a = pe->a_of[map[pe->from][k]];
		if (ma[a] < 0)
			ma[a] = na++;
		qe->a_of[k] = ma[a];
	}
	for (int k = 0; k < QT->n_strat; k++) {
		int b = pe->b_of[map[pe->to][k]];
		if (mb[b] < 0)
			mb[b] = nb++;
		qe->b_of[k] = mb[b];
	}
	qe->na = na;
	qe->nb = nb;
	qe->cost = malloc(((size_t)na * nb + 1) * sizeof(double));
	if (qe->cost)
		for (int a = 0; a < pe->na; a++)
			for (int b = 0; b < pe->nb; b++)
				if (ma[a] >= 0 && mb[b] >= 0)
					qe->cost[(size_t)ma[a] * nb + mb[b]] =
					    pe->cost[(size_t)a * pe->nb + b];
	free(ma);
	free(mb);
	return qe->cost ? 0 : -1;
}

int pb_strategy_restrict(const pb_shard_problem *p, const unsigned char *const *keep,
                         pb_shard_problem **out, int ***map_out, pb_error *err)
{
	*out = NULL;
	*map_out = NULL;
	pb_shard_problem *q = malloc(sizeof *q);
	int **map = calloc((size_t)p->n_groups + 1, sizeof *map);
	if (!q || !map) {
		free(q);
		free(map);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	*q = *p;
	q->groups = calloc((size_t)p->n_groups + 1, sizeof *q->groups);
	q->edges = calloc((size_t)p->n_edges + 1, sizeof *q->edges);
	q->n_edges = 0;
	q->n_groups = 0;
	int ok = q->groups && q->edges;
	for (int G = 0; ok && G < p->n_groups; G++) {
		const pb_shard_group *pg = &p->groups[G];
		pb_shard_group *qg = &q->groups[G];
		*qg = *pg;
		size_t n = (size_t)pg->n_strat + 1;
		qg->cost = malloc(n * sizeof(double));
		qg->mem_param = malloc(n * sizeof(double));
		qg->mem_act = malloc(n * sizeof(double));
		map[G] = malloc(n * sizeof(int));
		q->n_groups = G + 1;
		ok = qg->cost && qg->mem_param && qg->mem_act && map[G];
		int k = 0;
		for (int s = 0; ok && s < pg->n_strat; s++) {
			if (!keep[G][s])
				continue;
			qg->cost[k] = pg->cost[s];
			qg->mem_param[k] = pg->mem_param[s];
			qg->mem_act[k] = pg->mem_act[s];
			map[G][k++] = s;
		}
		qg->n_strat = k;
		ok = ok && k > 0;
	}
	for (int e = 0; ok && e < p->n_edges; e++) {
		q->edges[e] = p->edges[e];
		q->edges[e].a_of = q->edges[e].b_of = NULL;
		q->edges[e].cost = NULL;
		q->n_edges = e + 1;
		ok = restrict_edge(p, q, map, e) == 0;
	}
	if (!ok) {
		int some_empty =
		    q->groups && q->n_groups > 0 && q->groups[q->n_groups - 1].n_strat == 0;
		pb_strategy_restrict_free(q, map);
		return some_empty ? pb_err(err, PB_EINTERNAL, "shard: a group keeps no strategy")
		                  : pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	*out = q;
	*map_out = map;
	return PB_OK;
}
