/*
 * shard/search/search_label.c — the label of the strategy search's plan
 * (search_label.h): per row the restrictions applied and a lower bound on
 * the scheme's unrestricted problem, and for the search the least of them.
 *
 * Why the bound is valid: every plan of the unrestricted problem of a scheme
 * is a choice of one strategy per operator from the full menus; the dual
 * bound (strategy_bound.c) is a lower bound on its LP relaxation without the
 * memory row, so on every such plan, fitting or not. The restricted
 * problems' plans are plans of the unrestricted one with the same cost, and
 * the problem as posed is the best over the schemes, so the least row bound
 * holds for it. A row that nothing restricted and that GLPK proved has its
 * step time as its bound (its plan is the scheme's optimum).
 */
#include "shard/search/search_label.h"
#include "shard/strategy/strategy_bound.h"
#include "shard/strategy/strategy_problem.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

static const char *const restr_names[PB_RESTR_N] = {
    "shrink",                     /* followers share their producer's variables */
    "opt-level rules",            /* --opt-level >= 1: the rule library */
    "opt-level neighbourhoods",   /* >= 2: non-key operators align to key ones */
    "opt-level greedy sub-MILPs", /* 3: chunks solved in order, joined greedily */
    "layers",                     /* repeated layers tied (--layers auto) */
    "tie",                        /* --tie */
    "forced parameter sharding",  /* parameters > 70% of a device: replication removed */
    "time-limit",                 /* GLPK stopped before a proof */
    "mip-gap",                    /* stage MILPs stopped at a relative gap */
    "node-limit",                 /* stage MILPs stopped after N nodes */
    "cutoff",                     /* a scheme dropped by a cutoff on the restricted problem */
};

const char *pb_search_label_restr_name(int k)
{
	return k >= 0 && k < PB_RESTR_N ? restr_names[k] : "?";
}

void pb_search_label_unrestricted_opts(const pb_shard_opts *o, pb_shard_opts *u)
{
	*u = *o;
	u->no_shrink = 1;
	u->opt_level = 0;
	u->rules = NULL;
	u->tie_blocks = 0;
	u->layers = 0;
	u->classes = NULL;
	u->force_fraction = INFINITY;
	u->time_limit = 0;
	u->cutoff = u->cutoff_grad = u->mip_gap = 0;
	u->node_limit = 0;
	if (u->recompute == PB_RECOMP_AUTO)
		u->recompute = PB_RECOMP_NONE;
}

static double clock_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned row_restrictions(const pb_shard_opts *o, const pb_shard_row *row,
                                 const pb_shard_problem *p, const pb_shard_result *r)
{
	unsigned b = 0;
	if (o->opt_level >= 1)
		b |= PB_RESTR_RULES;
	if (o->opt_level >= 2)
		b |= PB_RESTR_NEIGHBOURS;
	if (!p) { /* failed or cut: what the options would have applied */
		b |= o->no_shrink ? 0 : PB_RESTR_SHRINK;
		b |= o->layers ? PB_RESTR_LAYERS : 0;
		b |= o->tie_blocks ? PB_RESTR_TIE : 0;
		b |= o->opt_level >= 3 ? PB_RESTR_GREEDY : 0;
		b |= row->cut ? PB_RESTR_CUTOFF : 0;
		return b;
	}
	if (!o->no_shrink && p->n_groups < p->n_active)
		b |= PB_RESTR_SHRINK;
	if (o->opt_level >= 3 && p->n_groups > o->chunk)
		b |= PB_RESTR_GREEDY;
	if (p->layer_tied > 0)
		b |= PB_RESTR_LAYERS;
	if (p->forced)
		b |= PB_RESTR_FORCED;
	for (int G = 0; o->tie_blocks && G < p->n_groups; G++)
		if (p->groups[G].tie >= 0) {
			b |= PB_RESTR_TIE;
			break;
		}
	if (r && r->feasible && !r->optimal) {
		b |= o->time_limit > 0 ? PB_RESTR_TIME : 0;
		b |= o->mip_gap > 0 ? PB_RESTR_GAP : 0;
		b |= o->node_limit > 0 ? PB_RESTR_NODES : 0;
	}
	return b;
}

int pb_search_label_row(pb_shard_search *s, int i, const pb_shard_problem *p,
                        const pb_shard_result *r, pb_shard_incumbent_fn cb, pb_error *err)
{
	pb_shard_row *row = &s->rows[i];
	row->lb = NAN;
	if (!s->want_label)
		return PB_OK;
	const pb_shard_opts *o = &s->opts;
	row->restricted = row_restrictions(o, row, p, r);
	if (!row->restricted && p && r && r->optimal) {
		row->lb = r->objective;
		return PB_OK;
	}
	double t0 = clock_now();
	pb_shard_opts u;
	pb_search_label_unrestricted_opts(o, &u);
	pb_shard_problem *q = NULL;
	int rc = pb_strategy_problem_build(s->g, &s->cl, &row->mesh, &u, &q, err);
	if (rc == PB_ENOMEM)
		return rc;
	if (rc == PB_OK) {
		int stop = 0;
		/* the work cap of the solve's own bound (strategy_milp.c) */
		double lb = pb_strategy_bound_lower(q, 0, INFINITY, 1e9, cb, s, NULL, NULL, &stop);
		row->lb = stop ? NAN : lb;
	}
	pb_strategy_problem_free(q);
	row->bound_seconds = clock_now() - t0;
	return PB_OK;
}

int pb_search_label_row_proven(const pb_shard_row *r)
{
	return r->status == 1 && r->feasible && isfinite(r->lb) &&
	       r->step_time <= r->lb + 1e-9 * fabs(r->lb);
}

void pb_search_label(const pb_shard_search *s, pb_label *L)
{
	pb_label_init(L, s->best >= 0 ? s->rows[s->best].step_time : NAN);
	double lb = INFINITY;
	unsigned bits = 0;
	int have = 1;
	for (int i = 0; i < s->n_rows; i++) {
		const pb_shard_row *r = &s->rows[i];
		bits |= r->restricted;
		/* a row not solved or without a bound: no bound for the search */
		if (isnan(r->lb) || r->status == 0)
			have = 0;
		else
			lb = fmin(lb, r->lb);
	}
	lb = have ? lb : NAN;
	for (int k = 0; k < PB_RESTR_N; k++)
		if (bits & (1u << k))
			pb_label_restrict(L, restr_names[k]);
	/* the compute bound holds for every scheme too: the larger one counts */
	double cb = s->want_label && !s->opts.mask
	                ? pb_search_label_compute_bound(s->g, &s->cl, s->opts.train, 1)
	                : NAN;
	if (isfinite(cb) && (!isfinite(lb) || cb > lb))
		lb = cb;
	if (s->best < 0 || !s->rows[s->best].feasible) {
		L->bound = isfinite(lb) ? lb : NAN; /* no plan that fits: never optimal */
		return;
	}
	pb_label_bound(L, isfinite(lb) ? lb : NAN);
}

double pb_search_label_compute_bound(const pb_graph *g, const pb_cluster *cl, int train,
                                     double scale)
{
	unsigned char *active = calloc((size_t)g->n_nodes + 1, 1);
	if (!active || cl->flops <= 0 || cl->n_devices < 1) {
		free(active);
		return NAN;
	}
	pb_strategy_problem_dynamic_nodes(g, active);
	double f = 0;
	for (int i = 0; i < g->n_nodes; i++)
		if (active[i])
			f += pb_strategy_problem_node_flops(g, &g->nodes[i]);
	free(active);
	return f * scale * (train ? 3.0 : 1.0) / cl->flops / cl->n_devices;
}

void pb_search_label_opts_restrictions(const pb_shard_opts *o, pb_label *L)
{
	if (!o->no_shrink)
		pb_label_restrict(L, restr_names[0]);
	if (o->opt_level >= 1)
		pb_label_restrict(L, restr_names[1]);
	if (o->opt_level >= 2)
		pb_label_restrict(L, restr_names[2]);
	if (o->opt_level >= 3)
		pb_label_restrict(L, restr_names[3]);
	if (o->layers)
		pb_label_restrict(L, restr_names[4]);
	if (o->tie_blocks)
		pb_label_restrict(L, restr_names[5]);
	if (o->time_limit > 0)
		pb_label_restrict(L, restr_names[7]);
	if (o->mip_gap > 0)
		pb_label_restrict(L, restr_names[8]);
	if (o->node_limit > 0)
		pb_label_restrict(L, restr_names[9]);
}
