/*
 * shard/strategy/strategy_polish.c — a plan that fits the device made cheaper by
 * local moves (strategy_problem.h: pb_strategy_polish), for the memory-bound
 * training MILPs: the smaller the gap between the plan and the dual bound,
 * the more strategies reduced-cost fixing drops before GLPK.
 *
 * A move sets one class of tied groups (a representative and the groups
 * tied to it: one strategy for all) to another strategy; its change of step
 * time is the classes' group costs plus the costs of every edge at one of
 * its groups (an edge inside the class both ends at once), its change of
 * memory the groups' bytes (training: weights and optimizer state plus
 * act_mult x activations, a sum over groups). Repair (the plan does not
 * fit): the move with the least added time per byte saved, until it fits.
 * Descent: the move that lowers the time most and still fits, until none
 * does. Every move is exact, so the plan's cost is pb_strategy_problem_evaluate's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shard/strategy/strategy_polish.h"
#include "shard/strategy/strategy_problem.h"
#include "util/job.h"

typedef struct polish {
	const pb_shard_problem *p;
	int *cls;      /* per group: its class (representative) */
	int *mstart;   /* per class: first of its groups in mem[] (CSR) */
	int *mem;      /* groups of each class */
	int *estart;   /* per class: first of its edges in inc[] */
	int *inc;      /* edges at a group of the class (once each) */
	double **cmem; /* per class, per strategy: bytes of its groups */
} polish;

static void polish_free(polish *w, int n)
{
	for (int G = 0; w->cmem && G < n; G++)
		free(w->cmem[G]);
	free(w->cmem);
	free(w->cls);
	free(w->mstart);
	free(w->mem);
	free(w->estart);
	free(w->inc);
}

static int polish_init(polish *w, const pb_shard_problem *p)
{
	int n = p->n_groups;
	memset(w, 0, sizeof *w);
	w->p = p;
	w->cls = malloc(((size_t)n + 1) * sizeof(int));
	w->mstart = calloc((size_t)n + 2, sizeof(int));
	w->mem = malloc(((size_t)n + 1) * sizeof(int));
	w->estart = calloc((size_t)n + 2, sizeof(int));
	w->inc = malloc(((size_t)2 * p->n_edges + 1) * sizeof(int));
	w->cmem = calloc((size_t)n + 1, sizeof *w->cmem);
	if (!w->cls || !w->mstart || !w->mem || !w->estart || !w->inc || !w->cmem)
		return -1;
	for (int G = 0; G < n; G++) {
		int t = p->groups[G].tie;
		w->cls[G] =
		    t >= 0 && p->groups[t].tie < 0 && p->groups[t].n_strat == p->groups[G].n_strat
		        ? t
		        : G;
		w->mstart[w->cls[G] + 1]++;
	}
	for (int G = 0; G < n; G++)
		w->mstart[G + 1] += w->mstart[G];
	int *fill = calloc((size_t)n + 1, sizeof(int));
	if (!fill)
		return -1;
	for (int G = 0; G < n; G++) {
		int R = w->cls[G];
		w->mem[w->mstart[R] + fill[R]++] = G;
	}
	/* edges per class: counted at the producer's class, and at the
	 * consumer's when that is another class */
	for (int e = 0; e < p->n_edges; e++) {
		int F = w->cls[p->edges[e].from], T = w->cls[p->edges[e].to];
		w->estart[F + 1]++;
		if (T != F)
			w->estart[T + 1]++;
	}
	for (int G = 0; G < n; G++)
		w->estart[G + 1] += w->estart[G];
	memset(fill, 0, ((size_t)n + 1) * sizeof(int));
	for (int e = 0; e < p->n_edges; e++) {
		int F = w->cls[p->edges[e].from], T = w->cls[p->edges[e].to];
		w->inc[w->estart[F] + fill[F]++] = e;
		if (T != F)
			w->inc[w->estart[T] + fill[T]++] = e;
	}
	free(fill);
	for (int R = 0; R < n; R++) {
		if (w->cls[R] != R)
			continue;
		int S = p->groups[R].n_strat;
		w->cmem[R] = calloc((size_t)S + 1, sizeof(double));
		if (!w->cmem[R])
			return -1;
		for (int k = w->mstart[R]; k < w->mstart[R + 1]; k++) {
			const pb_shard_group *gr = &p->groups[w->mem[k]];
			for (int s = 0; s < S; s++)
				w->cmem[R][s] += gr->mem_param[s] + p->act_mult * gr->mem_act[s];
		}
	}
	return 0;
}

static double edge_at(const pb_shard_edge *ed, int s, int t)
{
	return ed->cost[(size_t)ed->a_of[s] * ed->nb + ed->b_of[t]];
}

/* The step time of class R at strategy s, the rest of choice fixed: its
 * groups' costs and its edges. */
static double class_time(const polish *w, const int *choice, int R, int s)
{
	const pb_shard_problem *p = w->p;
	double t = 0;
	for (int k = w->mstart[R]; k < w->mstart[R + 1]; k++)
		t += p->groups[w->mem[k]].cost[s];
	for (int k = w->estart[R]; k < w->estart[R + 1]; k++) {
		const pb_shard_edge *ed = &p->edges[w->inc[k]];
		int sf = w->cls[ed->from] == R ? s : choice[ed->from];
		int st = w->cls[ed->to] == R ? s : choice[ed->to];
		t += edge_at(ed, sf, st);
	}
	return t;
}

static void set_class(const polish *w, int *choice, int R, int s)
{
	for (int k = w->mstart[R]; k < w->mstart[R + 1]; k++)
		choice[w->mem[k]] = s;
}

static int moves_made(const pb_shard_problem *p, int *choice)
{
	polish w;
	int n = p->n_groups, moves = 0;
	if (polish_init(&w, p)) {
		polish_free(&w, n);
		return 0;
	}
	double limit = p->cl.memory * (1 + 1e-9), mem = 0;
	for (int R = 0; R < n; R++)
		if (w.cls[R] == R)
			mem += w.cmem[R][choice[R]];
	/* repair: least time per byte saved */
	while (mem > limit) {
		pb_job_tick();
		int bR = -1, bs = 0;
		double br = INFINITY;
		for (int R = 0; R < n; R++) {
			if (w.cls[R] != R)
				continue;
			double t0 = class_time(&w, choice, R, choice[R]), m0 = w.cmem[R][choice[R]];
			for (int s = 0; s < p->groups[R].n_strat; s++) {
				double dm = m0 - w.cmem[R][s];
				if (dm <= 0)
					continue;
				double r = (class_time(&w, choice, R, s) - t0) / dm;
				if (r < br) {
					br = r;
					bR = R;
					bs = s;
				}
			}
		}
		if (bR < 0) {
			polish_free(&w, n);
			return moves; /* nothing saves memory: it cannot fit this way */
		}
		mem += w.cmem[bR][bs] - w.cmem[bR][choice[bR]];
		set_class(&w, choice, bR, bs);
		moves++;
	}
	/* descent: the best move that fits */
	for (;;) {
		pb_job_tick();
		int bR = -1, bs = 0;
		double bd = 0;
		for (int R = 0; R < n; R++) {
			if (w.cls[R] != R)
				continue;
			double t0 = class_time(&w, choice, R, choice[R]), m0 = w.cmem[R][choice[R]];
			for (int s = 0; s < p->groups[R].n_strat; s++) {
				if (s == choice[R] || mem - m0 + w.cmem[R][s] > limit)
					continue;
				double d = class_time(&w, choice, R, s) - t0;
				if (d < bd - 1e-12 * fabs(t0)) {
					bd = d;
					bR = R;
					bs = s;
				}
			}
		}
		if (bR < 0)
			break;
		mem += w.cmem[bR][bs] - w.cmem[bR][choice[bR]];
		set_class(&w, choice, bR, bs);
		moves++;
	}
	polish_free(&w, n);
	return moves;
}

int pb_strategy_polish(const pb_shard_problem *p, int *choice)
{
	if (!p->opts.train)
		return 0;
	size_t sz = ((size_t)p->n_groups + 1) * sizeof(int);
	int *orig = malloc(sz);
	if (!orig)
		return 0;
	memcpy(orig, choice, sz - sizeof(int));
	int moves = moves_made(p, choice);
	/* kept when pb_strategy_problem_evaluate agrees (sums in another order) */
	pb_shard_result a, b;
	pb_strategy_problem_evaluate(p, orig, &a);
	pb_strategy_problem_evaluate(p, choice, &b);
	if (moves && !(b.feasible && (b.objective < a.objective || !a.feasible))) {
		memcpy(choice, orig, sz - sizeof(int));
		moves = 0;
	}
	free(orig);
	return moves;
}
