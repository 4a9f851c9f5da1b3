/*
 * shard/strategy_bound.c — a lower bound on a scheme's step time without its
 * MILP (strategy_problem.h: pb_shard_lower_bound), so that a scheme that
 * cannot beat the best plan found so far need not be solved.
 *
 * The problem without the memory limit, every group and edge its own (no
 * ties): choose s per group to minimise sum_G c_G(s) + sum_e C_e(a(s), b(t)).
 * Its LP relaxation (the local polytope) has the dual
 *   max sum_G min_s [c_G(s) + sum_{e at G} m_{e,G}(s)]
 *   s.t. m_{e,F}(s) + m_{e,T}(t) <= C_e(a(s), b(t)) for every edge e = F -> T,
 * and any messages m that satisfy the edge rows give a lower bound. They are
 * improved by block coordinate ascent on one edge at a time (MPLP: Globerson
 * and Jaakkola, "Fixing max-product", NIPS 2007, in its min-sum form):
 *   l_F(s) = belief of F without e, l_T(t) likewise,
 *   m_{e,F}(s) = -l_F(s)/2 + min_t [C_e(a(s), b(t)) + l_T(t)] / 2,
 *   m_{e,T}(t) = -l_T(t)/2 + min_s [C_e(a(s), b(t)) + l_F(s)] / 2,
 * which keeps the edge rows (with equality at the minimisers) and never
 * lowers the bound. The minimum over t runs over the consumer's specs b
 * (na x nb per edge, not strategies x strategies).
 * The bound returned is rigorous in floating point: each edge's largest
 * violation of its rows (rounding) is subtracted. Every plan costs at least
 * the bound plus, over the groups, its strategy's slack (belief above the
 * group's least): a strategy whose slack exceeds the gap between a known
 * plan and the bound is in no better plan (reduced-cost fixing). Without the memory limit
 * and without ties the problem is a relaxation of the one the MILP solves,
 * so the bound holds for it too. In training the memory limit can be priced
 * in (Lagrangian relaxation): with lambda >= 0 s/byte on each strategy's
 * memory, the bound minus lambda x the device memory holds for every plan
 * that fits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shard/strategy_problem.h"
#include "util/job.h"

typedef struct bctx {
	const pb_shard_problem *p;
	double **bel; /* per group, per strategy: c_G + messages */
	double **mf;  /* per edge: message to its producer group, per strategy */
	double **mt;  /* per edge: message to its consumer group */
	double *la, *lb, *ma, *mb;
	int cap_spec;
} bctx;

static double clock_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void bctx_free(bctx *c)
{
	const pb_shard_problem *p = c->p;
	for (int G = 0; c->bel && G < p->n_groups; G++)
		free(c->bel[G]);
	for (int e = 0; e < p->n_edges; e++) {
		if (c->mf)
			free(c->mf[e]);
		if (c->mt)
			free(c->mt[e]);
	}
	free(c->bel);
	free(c->mf);
	free(c->mt);
	free(c->la);
	free(c->lb);
	free(c->ma);
	free(c->mb);
}

static int bctx_init(bctx *c, const pb_shard_problem *p, double lambda)
{
	memset(c, 0, sizeof *c);
	c->p = p;
	c->bel = calloc((size_t)p->n_groups + 1, sizeof *c->bel);
	c->mf = calloc((size_t)p->n_edges + 1, sizeof *c->mf);
	c->mt = calloc((size_t)p->n_edges + 1, sizeof *c->mt);
	if (!c->bel || !c->mf || !c->mt)
		return -1;
	int smax = 1;
	for (int G = 0; G < p->n_groups; G++) {
		const pb_shard_group *gr = &p->groups[G];
		c->bel[G] = malloc(((size_t)gr->n_strat + 1) * sizeof(double));
		if (!c->bel[G])
			return -1;
		for (int s = 0; s < gr->n_strat; s++)
			c->bel[G][s] =
			    gr->cost[s] +
			    (lambda > 0 ? lambda * (gr->mem_param[s] + p->act_mult * gr->mem_act[s])
			                : 0);
		smax = gr->n_strat > smax ? gr->n_strat : smax;
	}
	for (int e = 0; e < p->n_edges; e++) {
		const pb_shard_edge *ed = &p->edges[e];
		c->mf[e] = calloc((size_t)p->groups[ed->from].n_strat + 1, sizeof(double));
		c->mt[e] = calloc((size_t)p->groups[ed->to].n_strat + 1, sizeof(double));
		if (!c->mf[e] || !c->mt[e])
			return -1;
		smax = ed->na > smax ? ed->na : smax;
		smax = ed->nb > smax ? ed->nb : smax;
	}
	c->cap_spec = smax;
	c->la = malloc((size_t)smax * sizeof(double));
	c->lb = malloc((size_t)smax * sizeof(double));
	c->ma = malloc((size_t)smax * sizeof(double));
	c->mb = malloc((size_t)smax * sizeof(double));
	return c->la && c->lb && c->ma && c->mb ? 0 : -1;
}

/* One MPLP update of edge e. */
static void update_edge(bctx *c, int e)
{
	const pb_shard_problem *p = c->p;
	const pb_shard_edge *ed = &p->edges[e];
	const pb_shard_group *GF = &p->groups[ed->from], *GT = &p->groups[ed->to];
	double *bf = c->bel[ed->from], *bt = c->bel[ed->to];
	double *mf = c->mf[e], *mt = c->mt[e];
	int na = ed->na, nb = ed->nb;
	/* least belief without e per spec, each side */
	for (int a = 0; a < na; a++)
		c->la[a] = INFINITY;
	for (int b = 0; b < nb; b++)
		c->lb[b] = INFINITY;
	for (int s = 0; s < GF->n_strat; s++) {
		double l = bf[s] - mf[s];
		if (l < c->la[ed->a_of[s]])
			c->la[ed->a_of[s]] = l;
	}
	for (int t = 0; t < GT->n_strat; t++) {
		double l = bt[t] - mt[t];
		if (l < c->lb[ed->b_of[t]])
			c->lb[ed->b_of[t]] = l;
	}
	/* ma[a] = min_b C(a,b) + lb[b]; mb[b] = min_a C(a,b) + la[a] */
	for (int b = 0; b < nb; b++)
		c->mb[b] = INFINITY;
	for (int a = 0; a < na; a++) {
		const double *row = ed->cost + (size_t)a * nb;
		double m = INFINITY, l = c->la[a];
		for (int b = 0; b < nb; b++) {
			double v = row[b] + c->lb[b];
			m = v < m ? v : m;
			double w = row[b] + l;
			if (w < c->mb[b])
				c->mb[b] = w;
		}
		c->ma[a] = m;
	}
	for (int s = 0; s < GF->n_strat; s++) {
		double l = bf[s] - mf[s];
		double m = 0.5 * (c->ma[ed->a_of[s]] - l);
		bf[s] = l + m;
		mf[s] = m;
	}
	for (int t = 0; t < GT->n_strat; t++) {
		double l = bt[t] - mt[t];
		double m = 0.5 * (c->mb[ed->b_of[t]] - l);
		bt[t] = l + m;
		mt[t] = m;
	}
}

/* sum_G min_s belief: a bound when the edge rows hold. */
static double dual_value(const bctx *c)
{
	const pb_shard_problem *p = c->p;
	double v = 0;
	for (int G = 0; G < p->n_groups; G++) {
		double m = INFINITY;
		for (int s = 0; s < p->groups[G].n_strat; s++)
			m = c->bel[G][s] < m ? c->bel[G][s] : m;
		if (p->groups[G].n_strat > 0)
			v += m;
	}
	return v;
}

/* The rounding slack: sum over edges of the largest m_F(s) + m_T(t) - C. */
static double violation(bctx *c)
{
	const pb_shard_problem *p = c->p;
	double tot = 0;
	for (int e = 0; e < p->n_edges; e++) {
		const pb_shard_edge *ed = &p->edges[e];
		for (int a = 0; a < ed->na; a++)
			c->la[a] = -INFINITY;
		for (int b = 0; b < ed->nb; b++)
			c->lb[b] = -INFINITY;
		for (int s = 0; s < p->groups[ed->from].n_strat; s++)
			if (c->mf[e][s] > c->la[ed->a_of[s]])
				c->la[ed->a_of[s]] = c->mf[e][s];
		for (int t = 0; t < p->groups[ed->to].n_strat; t++)
			if (c->mt[e][t] > c->lb[ed->b_of[t]])
				c->lb[ed->b_of[t]] = c->mt[e][t];
		double worst = 0;
		for (int a = 0; a < ed->na; a++)
			for (int b = 0; b < ed->nb; b++) {
				double v = c->la[a] + c->lb[b] - ed->cost[(size_t)a * ed->nb + b];
				worst = v > worst ? v : worst;
			}
		tot += worst;
	}
	return tot;
}

/* Greedy decoding in group order: each group takes the strategy of least
 * belief, with the messages of edges to groups already decided replaced by
 * the edge's true cost; a tied group takes its representative's (decided
 * before it: ties point to earlier groups). */
static int decode(bctx *c, int *choice)
{
	const pb_shard_problem *p = c->p;
	int *deg = calloc((size_t)p->n_groups + 1, sizeof *deg);
	int **inc = calloc((size_t)p->n_groups + 1, sizeof *inc);
	double *score = malloc(((size_t)c->cap_spec + 1) * sizeof *score);
	int ok = deg && inc && score;
	for (int e = 0; ok && e < p->n_edges; e++) {
		deg[p->edges[e].from]++;
		deg[p->edges[e].to]++;
	}
	for (int G = 0; ok && G < p->n_groups; G++) {
		inc[G] = malloc(((size_t)deg[G] + 1) * sizeof(int));
		ok = inc[G] != NULL;
		deg[G] = 0;
	}
	for (int e = 0; ok && e < p->n_edges; e++) {
		inc[p->edges[e].from][deg[p->edges[e].from]++] = e + 1;
		inc[p->edges[e].to][deg[p->edges[e].to]++] = -(e + 1);
	}
	for (int G = 0; ok && G < p->n_groups; G++) {
		const pb_shard_group *gr = &p->groups[G];
		if (gr->tie >= 0) {
			choice[G] = choice[gr->tie];
			continue;
		}
		int bs = 0;
		double bv = INFINITY;
		for (int s = 0; s < gr->n_strat; s++) {
			double v = c->bel[G][s];
			for (int k = 0; k < deg[G]; k++) {
				int code = inc[G][k], e = (code > 0 ? code : -code) - 1;
				const pb_shard_edge *ed = &p->edges[e];
				int other = code > 0 ? ed->to : ed->from;
				if (other >= G)
					continue;
				if (code > 0)
					v += ed->cost[(size_t)ed->a_of[s] * ed->nb +
					              ed->b_of[choice[other]]] -
					     c->mf[e][s];
				else
					v += ed->cost[(size_t)ed->a_of[choice[other]] * ed->nb +
					              ed->b_of[s]] -
					     c->mt[e][s];
			}
			if (v < bv) {
				bv = v;
				bs = s;
			}
		}
		choice[G] = bs;
	}
	for (int G = 0; inc && G < p->n_groups; G++)
		free(inc[G]);
	free(inc);
	free(deg);
	free(score);
	return ok ? 0 : -1;
}

double pb_shard_lower_bound(const pb_shard_problem *p, double lambda, double target,
                            double max_seconds, pb_shard_incumbent_fn cb, void *ud, int *choice,
                            double *const *slack, int *stop)
{
	bctx c;
	*stop = 0;
	if (bctx_init(&c, p, lambda)) {
		bctx_free(&c);
		return -INFINITY;
	}
	double t0 = clock_s(), best = -INFINITY, last = -INFINITY;
	for (int sweep = 0; sweep < PB_BOUND_MAX_SWEEPS; sweep++) {
		for (int e = 0; e < p->n_edges; e++)
			update_edge(&c, e);
		for (int e = p->n_edges - 1; e >= 0; e--)
			update_edge(&c, e);
		pb_job_tick();
		double v = dual_value(&c);
		int end = v - last <= 1e-9 * fabs(v) || clock_s() - t0 > max_seconds ||
		          sweep == PB_BOUND_MAX_SWEEPS - 1;
		double off = lambda > 0 ? lambda * p->cl.memory : 0;
		if (v - off > target || sweep % 8 == 7 || end) {
			double safe = v - violation(&c) - off;
			best = safe > best ? safe : best;
			if (best > target)
				break;
			if (cb && cb(ud, NAN, best * 1e6, clock_s() - t0)) {
				*stop = 1;
				break;
			}
		}
		if (end)
			break;
		last = v;
	}
	if (choice && !*stop && !(best > target) && decode(&c, choice))
		best = -INFINITY;
	for (int G = 0; slack && G < p->n_groups; G++) {
		double m = INFINITY;
		for (int s = 0; s < p->groups[G].n_strat; s++)
			m = c.bel[G][s] < m ? c.bel[G][s] : m;
		for (int s = 0; s < p->groups[G].n_strat; s++)
			slack[G][s] = c.bel[G][s] - m;
	}
	bctx_free(&c);
	return best;
}
