/*
 * shard/strategy/strategy_bound.c — a lower bound on a scheme's step time without its
 * MILP (strategy_problem.h: pb_strategy_bound_lower), so that a scheme that
 * cannot beat the best plan found so far need not be solved.
 *
 * The problem without the memory limit: choose s per class to minimise
 * sum_G c_G(s) + sum_e C_e(a(s), b(t)). Classes: without memory priced
 * (lambda = 0) every group is its own (no ties: a relaxation); with memory
 * priced (the Lagrangian bounds, 10-16 per memory-bound MILP) a group tied
 * to a representative is that class (one strategy for all; their costs and
 * bytes add up), twin edges (the same classes and spec maps: one set of y
 * columns in the MILP) are one edge with the sum of their costs, and an
 * edge whose two ends are one class adds its diagonal to the class's costs:
 * about 10x fewer edges on a 48-layer decoder. (On ties at lambda = 0 the
 * ascent stopped below the optimum of bert_base_like 4x2x2, where the
 * ascent without ties reaches it: GLPK took 8.9 s instead of none.)
 * The LP relaxation (the local polytope) has the dual
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
 * plan and the bound is in no better plan (reduced-cost fixing; the slack of a
 * class is given to its representative, its other groups get 0). Every plan
 * of the MILP (integer, ties kept) is a plan of either problem with the same
 * cost, so the bound holds for it. In training the memory limit can be priced
 * in (Lagrangian relaxation): with lambda >= 0 s/byte on each strategy's
 * memory, the bound minus lambda x the device memory holds for every plan
 * that fits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shard/strategy/strategy_bound.h"
#include "util/job.h"

/* An edge between two classes: one edge of p, or a twin set's sum. */
typedef struct qedge {
	int from, to; /* representative groups */
	int na, nb;
	const int *a_of; /* per strategy of the class */
	const int *b_of;
	const double *cost; /* na x nb: p's, or owned (a twin set's sum) */
	int owned;
} qedge;

typedef struct bctx {
	const pb_shard_problem *p;
	int *cls;     /* per group: its class (representative group) */
	double **bel; /* per representative, per strategy: c_G + messages */
	qedge *qe;
	int n_qe;
	double **mf; /* per qedge: message to its producer class, per strategy */
	double **mt; /* per qedge: message to its consumer class */
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
	for (int e = 0; e < c->n_qe; e++) {
		if (c->mf)
			free(c->mf[e]);
		if (c->mt)
			free(c->mt[e]);
		if (c->qe[e].owned)
			free((double *)c->qe[e].cost);
	}
	free(c->cls);
	free(c->bel);
	free(c->qe);
	free(c->mf);
	free(c->mt);
	free(c->la);
	free(c->lb);
	free(c->ma);
	free(c->mb);
}

/* The classes' costs and edges: p's edges between two classes (a twin set
 * summed into its first edge), the diagonal of an edge inside one class
 * added to the class's costs. */
static int quotient(bctx *c, double lambda)
{
	const pb_shard_problem *p = c->p;
	int *qof = malloc(((size_t)p->n_edges + 1) * sizeof *qof); /* per edge: its qedge */
	if (!qof)
		return -1;
	for (int G = 0; G < p->n_groups; G++) {
		const pb_shard_group *gr = &p->groups[G];
		int R = c->cls[G];
		for (int s = 0; s < gr->n_strat; s++)
			c->bel[R][s] +=
			    gr->cost[s] +
			    (lambda > 0 ? lambda * (gr->mem_param[s] + p->act_mult * gr->mem_act[s])
			                : 0);
	}
	int ok = 1;
	for (int e = 0; e < p->n_edges && ok; e++) {
		const pb_shard_edge *ed = &p->edges[e];
		int F = c->cls[ed->from], T = c->cls[ed->to];
		qof[e] = -1;
		if (F == T) {
			for (int s = 0; s < p->groups[F].n_strat; s++)
				c->bel[F][s] +=
				    ed->cost[(size_t)ed->a_of[s] * ed->nb + ed->b_of[s]];
			continue;
		}
		int tw = ed->twin >= 0 && c->cls[p->edges[ed->twin].from] == F &&
		                 c->cls[p->edges[ed->twin].to] == T
		             ? qof[ed->twin]
		             : -1;
		if (tw >= 0) {
			qedge *q = &c->qe[tw];
			if (!q->owned) {
				double *sum = malloc(((size_t)q->na * q->nb + 1) * sizeof *sum);
				if (!(ok = sum != NULL))
					break;
				memcpy(sum, q->cost, (size_t)q->na * q->nb * sizeof *sum);
				q->cost = sum;
				q->owned = 1;
			}
			double *sum = (double *)q->cost;
			for (long k = 0; k < (long)q->na * q->nb; k++)
				sum[k] += ed->cost[k];
			qof[e] = tw;
			continue;
		}
		qof[e] = c->n_qe;
		c->qe[c->n_qe++] = (qedge){F, T, ed->na, ed->nb, ed->a_of, ed->b_of, ed->cost, 0};
	}
	free(qof);
	return ok ? 0 : -1;
}

static int bctx_init(bctx *c, const pb_shard_problem *p, double lambda)
{
	memset(c, 0, sizeof *c);
	c->p = p;
	c->cls = malloc(((size_t)p->n_groups + 1) * sizeof *c->cls);
	c->bel = calloc((size_t)p->n_groups + 1, sizeof *c->bel);
	c->qe = calloc((size_t)p->n_edges + 1, sizeof *c->qe);
	if (!c->cls || !c->bel || !c->qe)
		return -1;
	int smax = 1;
	for (int G = 0; G < p->n_groups; G++) {
		const pb_shard_group *gr = &p->groups[G];
		int t = gr->tie;
		/* classes with memory priced only (see the top); ties point to
		 * representatives, and only between groups of the same strategies */
		c->cls[G] = lambda > 0 && t >= 0 && p->groups[t].tie < 0 &&
		                    p->groups[t].n_strat == gr->n_strat
		                ? t
		                : G;
		if (c->cls[G] == G) {
			c->bel[G] = calloc((size_t)gr->n_strat + 1, sizeof(double));
			if (!c->bel[G])
				return -1;
		}
		smax = gr->n_strat > smax ? gr->n_strat : smax;
	}
	if (quotient(c, lambda))
		return -1;
	c->mf = calloc((size_t)c->n_qe + 1, sizeof *c->mf);
	c->mt = calloc((size_t)c->n_qe + 1, sizeof *c->mt);
	if (!c->mf || !c->mt)
		return -1;
	for (int e = 0; e < c->n_qe; e++) {
		const qedge *q = &c->qe[e];
		c->mf[e] = calloc((size_t)p->groups[q->from].n_strat + 1, sizeof(double));
		c->mt[e] = calloc((size_t)p->groups[q->to].n_strat + 1, sizeof(double));
		if (!c->mf[e] || !c->mt[e])
			return -1;
		smax = q->na > smax ? q->na : smax;
		smax = q->nb > smax ? q->nb : smax;
	}
	c->cap_spec = smax;
	c->la = malloc((size_t)smax * sizeof(double));
	c->lb = malloc((size_t)smax * sizeof(double));
	c->ma = malloc((size_t)smax * sizeof(double));
	c->mb = malloc((size_t)smax * sizeof(double));
	return c->la && c->lb && c->ma && c->mb ? 0 : -1;
}

/* One MPLP update of qedge e. */
static void update_edge(bctx *c, int e)
{
	const pb_shard_problem *p = c->p;
	const qedge *ed = &c->qe[e];
	int SF = p->groups[ed->from].n_strat, ST = p->groups[ed->to].n_strat;
	double *bf = c->bel[ed->from], *bt = c->bel[ed->to];
	double *mf = c->mf[e], *mt = c->mt[e];
	int na = ed->na, nb = ed->nb;
	/* least belief without e per spec, each side */
	for (int a = 0; a < na; a++)
		c->la[a] = INFINITY;
	for (int b = 0; b < nb; b++)
		c->lb[b] = INFINITY;
	for (int s = 0; s < SF; s++) {
		double l = bf[s] - mf[s];
		if (l < c->la[ed->a_of[s]])
			c->la[ed->a_of[s]] = l;
	}
	for (int t = 0; t < ST; t++) {
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
	for (int s = 0; s < SF; s++) {
		double l = bf[s] - mf[s];
		double m = 0.5 * (c->ma[ed->a_of[s]] - l);
		bf[s] = l + m;
		mf[s] = m;
	}
	for (int t = 0; t < ST; t++) {
		double l = bt[t] - mt[t];
		double m = 0.5 * (c->mb[ed->b_of[t]] - l);
		bt[t] = l + m;
		mt[t] = m;
	}
}

/* sum over classes of min_s belief: a bound when the edge rows hold. */
static double dual_value(const bctx *c)
{
	const pb_shard_problem *p = c->p;
	double v = 0;
	for (int G = 0; G < p->n_groups; G++) {
		if (c->cls[G] != G)
			continue;
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
	for (int e = 0; e < c->n_qe; e++) {
		const qedge *ed = &c->qe[e];
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

/* Greedy decoding in class order (of their representatives): each class
 * takes the strategy of least belief, with the messages of edges to classes
 * already decided replaced by the edge's true cost; a tied group takes its
 * representative's. */
static int decode(bctx *c, int *choice)
{
	const pb_shard_problem *p = c->p;
	int n = p->n_groups;
	int *deg = calloc((size_t)n + 1, sizeof *deg);
	int **inc = calloc((size_t)n + 1, sizeof *inc);
	int ok = deg && inc;
	for (int e = 0; ok && e < c->n_qe; e++) {
		deg[c->qe[e].from]++;
		deg[c->qe[e].to]++;
	}
	for (int G = 0; ok && G < n; G++) {
		inc[G] = malloc(((size_t)deg[G] + 1) * sizeof(int));
		ok = inc[G] != NULL;
		deg[G] = 0;
	}
	for (int e = 0; ok && e < c->n_qe; e++) {
		inc[c->qe[e].from][deg[c->qe[e].from]++] = e + 1;
		inc[c->qe[e].to][deg[c->qe[e].to]++] = -(e + 1);
	}
	for (int G = 0; ok && G < n; G++) {
		const pb_shard_group *gr = &p->groups[G];
		if (c->cls[G] != G) {
			choice[G] = choice[c->cls[G]];
			continue;
		}
		int bs = 0;
		double bv = INFINITY;
		for (int s = 0; s < gr->n_strat; s++) {
			double v = c->bel[G][s];
			for (int k = 0; k < deg[G]; k++) {
				int code = inc[G][k], e = (code > 0 ? code : -code) - 1;
				const qedge *ed = &c->qe[e];
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
	for (int G = 0; inc && G < n; G++)
		free(inc[G]);
	free(inc);
	free(deg);
	return ok ? 0 : -1;
}

double pb_strategy_bound_lower(const pb_shard_problem *p, double lambda, double target,
                               double max_work, pb_shard_incumbent_fn cb, void *ud, int *choice,
                               double *const *slack, int *stop)
{
	bctx c;
	*stop = 0;
	if (bctx_init(&c, p, lambda)) {
		bctx_free(&c);
		return -INFINITY;
	}
	double t0 = clock_s(), best = -INFINITY, last = -INFINITY;
	/* the work of one sweep (both passes over the edges): the cost matrix
	 * cells and strategies each update visits; the limit counts it, not
	 * time, so the bound (and the plan decoded from it) is the same on a
	 * loaded machine */
	double work = 0;
	for (int e = 0; e < c.n_qe; e++)
		work += 2.0 * ((double)c.qe[e].na * c.qe[e].nb + p->groups[c.qe[e].from].n_strat +
		               p->groups[c.qe[e].to].n_strat);
	for (int sweep = 0; sweep < PB_BOUND_MAX_SWEEPS; sweep++) {
		for (int e = 0; e < c.n_qe; e++)
			update_edge(&c, e);
		for (int e = c.n_qe - 1; e >= 0; e--)
			update_edge(&c, e);
		pb_job_tick();
		double v = dual_value(&c);
		/* the next sweep would pass max_work */
		int end = v - last <= 1e-9 * fabs(v) || work * (sweep + 2) > max_work ||
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
		if (c.cls[G] != G) {
			memset(slack[G], 0, (size_t)p->groups[G].n_strat * sizeof(double));
			continue;
		}
		double m = INFINITY;
		for (int s = 0; s < p->groups[G].n_strat; s++)
			m = c.bel[G][s] < m ? c.bel[G][s] : m;
		for (int s = 0; s < p->groups[G].n_strat; s++)
			slack[G][s] = c.bel[G][s] - m;
	}
	bctx_free(&c);
	return best;
}
