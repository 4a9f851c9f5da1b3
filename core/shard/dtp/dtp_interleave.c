/*
 * shard/dtp/dtp_interleave.c — the schedules one unit (pp, m) of the data x
 * tensor x pipeline search tries (dtp_interleave.h): 1F1B, then interleaved
 * with V = 2, 3, 4, ... model chunks per device (Narayanan et al. 2021,
 * section 2.2).
 *
 * Interleaving needs m a multiple of pp (Megatron-LM). V = 2 is always
 * tried (the split cuts between operators when the layers are too few);
 * V >= 3 only while pp x V chunks fit the model's repeated layers (one
 * layer or more per chunk), V <= 16, and while it can pay:
 *   - a V >= 3 whose bound is not below the best fitting step time known
 *     (the caller's incumbent, or a plan of this unit: 1F1B or a smaller V)
 *     gives pruned rows and ends the loop;
 *   - V + 1 (V >= 4) is tried for the data-parallel degrees whose best
 *     fitting row at V beat the one at V - 1 (more chunks send V times as
 *     often and make every chunk smaller; once that loses, more chunks
 *     lose further);
 *   - a dp with a fitting row at V - 1 is tried at V (>= 3) only when that
 *     row without its bubble, its slowest group x (the slowest group's
 *     FLOPs at V / at V - 1) x m + its gradient all-reduces, is below the
 *     best fitting step known (the incumbent or this unit's): more chunks
 *     shrink the bubble, and change the slowest group's work as its FLOPs
 *     do (an estimate, not a bound). So V = 3 follows V = 2 where V = 2 is
 *     uneven: on 105 layers and 35 stages V = 2 gives chunks of 1-2 layers,
 *     V = 3 even ones (Megatron-LM's row 9). A dp without a fitting row at
 *     V = 2 is tried at V = 3 only when its memory at V = 2 times the
 *     ratio of the activations in flight at the first group (p + (p-1)/3
 *     against p + (p-1)/2 group activations) fits (the parameters do not
 *     shrink; an estimate).
 * --schedule interleaved:V fixes V; --schedule 1f1b skips interleaving.
 */
#include "shard/dtp/dtp_interleave.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shard/layer_classes.h"

enum { VMAX = 16 };

struct pb_dtp_vloop {
	const pb_dtp_opts *o;
	const pb_graph *g;
	int pp, m, n_dev;
	int step;     /* 0: before 1F1B, 1: before the first interleaved V, 2: after it */
	int v;        /* the V just given (interleaved) */
	int blocks;   /* repeated layers of g, -1 until needed */
	double inc;   /* the caller's incumbent (0: none) */
	double limit; /* device memory (bytes) */
	double best;  /* best fitting step of this unit so far */
	/* per dp, its best fitting row at this V (cur) and at V - 1 (prev):
	 * step, slowest group, gradient all-reduces, slowest group's FLOP time
	 * (bound / slots); step INFINITY when none fits */
	struct pb_dtp_vrow {
		double step, slowest, grad, work;
		double memory; /* the least memory of its rows (fitting or not) */
	} * cur, *prev;
	unsigned char *go; /* per dp: V - 1 beat V - 2 */
	int all_pruned;    /* every row of this V was pruned */
};

void pb_dtp_interleave_vloop_free(pb_dtp_vloop *l)
{
	if (!l)
		return;
	free(l->cur);
	free(l->prev);
	free(l->go);
	free(l);
}

pb_dtp_vloop *pb_dtp_interleave_vloop_new(const pb_dtp_opts *o, const pb_graph *g, int pp, int m,
                                          const pb_cluster *cl, double inc)
{
	pb_dtp_vloop *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->o = o;
	l->g = g;
	l->pp = pp;
	l->m = m;
	l->n_dev = cl->n_devices;
	l->limit = cl->memory;
	l->blocks = -1;
	l->inc = inc;
	l->best = INFINITY;
	size_t d = (size_t)(l->n_dev / pp) + 1;
	l->cur = malloc(d * sizeof *l->cur);
	l->prev = malloc(d * sizeof *l->prev);
	l->go = calloc(d, 1);
	if (!l->cur || !l->prev || !l->go) {
		pb_dtp_interleave_vloop_free(l);
		return NULL;
	}
	for (size_t i = 0; i < d; i++)
		l->cur[i].step = l->prev[i].step = l->cur[i].memory = l->prev[i].memory = INFINITY;
	return l;
}

int pb_dtp_interleave_count_blocks(const pb_graph *g)
{
	pb_layer_classes lc;
	pb_error e = {0};
	if (pb_layer_classes_find(g, &lc, &e))
		return -1;
	int n = 0;
	for (int i = 0; i < lc.n_runs; i++)
		n += lc.runs[i].count;
	pb_layer_classes_free(&lc);
	return n;
}

/* The best fitting step known: the caller's incumbent or this unit's. */
static double known(const pb_dtp_vloop *l)
{
	return l->inc > 0 && l->inc < l->best ? l->inc : l->best;
}

/* 1 when V + 1 chunks per device may pay after V (sets go per dp). */
static int more_chunks(pb_dtp_vloop *l)
{
	int V = l->v + 1, d = l->n_dev / l->pp, any = 0;
	if (l->o->v || V > VMAX || V * l->pp > 64 * l->n_dev || l->all_pruned)
		return 0;
	for (int dp = 1; dp <= d; dp++) {
		l->go[dp] = l->v < 3 || l->cur[dp].step < l->prev[dp].step;
		any |= l->go[dp];
	}
	if (!any)
		return 0;
	if (l->blocks < 0)
		l->blocks = pb_dtp_interleave_count_blocks(l->g);
	return V * l->pp <= l->blocks;
}

int pb_dtp_interleave_vloop_next(pb_dtp_vloop *l, int *sc, int *v)
{
	const pb_dtp_opts *o = l->o;
	if (l->step == 0) {
		l->step = 1;
		if (o->sched < 0 || o->sched == PB_SCHED_1F1B) {
			*sc = PB_SCHED_1F1B;
			*v = 1;
			return 1;
		}
	}
	/* interleaved needs m a multiple of p (Megatron-LM), and stages to
	 * interleave (pp 1: gradient accumulation, one chunk) */
	if ((o->sched >= 0 && o->sched != PB_SCHED_INTERLEAVED) || l->m % l->pp || l->pp == 1)
		return 0;
	if (l->step == 1) {
		l->step = 2;
		l->v = o->v ? o->v : 2;
		if (l->v * l->pp > 64 * l->n_dev)
			return 0;
		/* a model of repeated layers: at least half a layer per chunk (its
		 * attention or its MLP); more chunks are cut out of the layers by
		 * the split MILP, which grows with them (Megatron-LM Table 1 row 9,
		 * pp 2520 x 2 = 5040 chunks of 105 layers: not done in 40 min) */
		if (l->blocks < 0)
			l->blocks = pb_dtp_interleave_count_blocks(l->g);
		if (!o->v && l->blocks > 0 && l->v * l->pp > 2 * l->blocks)
			return 0;
	} else {
		if (!more_chunks(l))
			return 0;
		l->v++;
	}
	for (int dp = 1; dp <= l->n_dev / l->pp; dp++) {
		l->prev[dp] = l->cur[dp];
		l->cur[dp].step = l->cur[dp].memory = INFINITY;
	}
	l->all_pruned = 0;
	*sc = PB_SCHED_INTERLEAVED;
	*v = l->v;
	return 1;
}

static double slots(const pb_dtp_vloop *l, int V)
{
	return l->m + (double)(l->pp - 1) / V;
}

int pb_dtp_interleave_vloop_want(const pb_dtp_vloop *l, int dp, double bound)
{
	if (l->step < 2 || l->v < 3 || l->o->v) /* 1F1B, V = 2 or V fixed: every dp */
		return 1;
	if (dp > l->n_dev / l->pp || (l->v >= 4 && !l->go[dp]))
		return 0;
	const struct pb_dtp_vrow *p = &l->prev[dp];
	if (!isfinite(p->step)) {
		double a2 = l->pp + (l->pp - 1) / 2.0, a3 = l->pp + (l->pp - 1) / 3.0;
		return l->v == 3 && p->memory * a3 / a2 <= l->limit * (1 + 1e-9);
	}
	double inc = known(l);
	if (!isfinite(inc) || !(p->work > 0) || !(bound > 0))
		return 1;
	double w = bound / slots(l, l->v);
	return p->slowest * (w / p->work) * l->m + p->grad < inc;
}

double pb_dtp_interleave_vloop_inc(const pb_dtp_vloop *l)
{
	if (l->step < 2 || l->v < 3 || l->o->v)
		return l->inc;
	double inc = known(l);
	return isfinite(inc) ? inc : 0;
}

void pb_dtp_interleave_vloop_note(pb_dtp_vloop *l, const pb_dtp_result *r, int from)
{
	int pruned = r->n > from, d = l->n_dev / l->pp;
	for (int i = from; i < r->n; i++) {
		const pb_dtp_config *c = &r->cfg[i];
		pruned &= c->pruned;
		if (l->step == 2 && c->ok && c->dp >= 1 && c->dp <= d &&
		    c->memory < l->cur[c->dp].memory)
			l->cur[c->dp].memory = c->memory;
		if (!c->ok || !c->fits)
			continue;
		if (c->step_time < l->best)
			l->best = c->step_time;
		if (l->step == 2 && c->dp >= 1 && c->dp <= d && c->step_time < l->cur[c->dp].step) {
			struct pb_dtp_vrow *w = &l->cur[c->dp];
			w->step = c->step_time;
			w->slowest = c->slowest;
			w->grad = c->grad_exposed;
			w->work = c->bound / slots(l, c->v);
		}
	}
	if (l->step == 2)
		l->all_pruned = pruned && l->v >= 3;
}
