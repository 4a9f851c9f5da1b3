/*
 * shard/strategy/strategy_milp.c — the strategy MILP in GLPK, the level-3 greedy join of
 * sub-MILPs, and the exhaustive reference (problem.h).
 *
 * Model over a set of groups (all of them, or one level-3 chunk):
 *   x[G][s] in {0,1}, sum_s x[G][s] = 1                      (one-hot)
 *   y[e][a][b] >= 0, sum_b y[e][a][b] = sum_{s: a_of(s)=a} x[from][s]
 *                    sum_a y[e][a][b] = sum_{t: b_of(t)=b} x[to][t]
 *   memory (GB): training  sum x (params + a x activations) <= M  (a = act_mult)
 *                inference sum x params + 2 z <= M, z >= sum_s act x  per group
 *   minimise sum x cost + sum y edge_cost                     (microseconds)
 * Groups tied to an earlier identical group use its x columns. Groups outside
 * the set are either fixed (earlier chunks: their edge costs become
 * coefficients or a constant) or not yet decided (their edges are left out and
 * their memory counts at its minimum).
 * GLPK runs silent (glp_term_out off); the incumbent callback reports every
 * better integer solution (GLP_IBINGO).
 * Before GLPK, the dual bound of strategy_bound.c: past the cutoff it cuts
 * the solve; on large MILPs (PB_BOUND_MIN_COLS, three-axis schemes) a plan
 * decoded from it that attains it is optimal without the memory limit, so
 * it is the answer when it fits (or when nothing fits) and GLPK is not run.
 */
#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shard/strategy/strategy_grad.h"
#include "shard/strategy/strategy_milp.h"
#include "shard/strategy/strategy_bound.h"
#include "shard/strategy/strategy_polish.h"
#include "shard/strategy/strategy_problem.h"
#include "shard/strategy/strategy_restrict.h"
#include "util/job.h"
#include "util/lp_file.h"

#define US 1e6
/* Beyond this GLPK needs minutes (2x2x2x2 schemes at level 0). */
#define PB_SHARD_MAX_COLS 1000000L
#define GB 1e-9
/* Most work of one dual ascent before the MILP (pb_strategy_bound_lower: cost
 * cells and strategies its edge updates visit; ~3e8 per second here):
 * 3-axis bert_base_like needs 3e7, the largest seen (gpt48 8x8 --train
 * --max-axes 3) 5.3e8. A work count, not seconds, so that results and
 * timings do not depend on the machine's load (2 s of wall time before). */
#define PB_BOUND_WORK 1e9
/* MILPs from this many columns take the plan decoded from the dual bound
 * when it attains the bound (GLPK needs seconds there: three-axis schemes);
 * smaller ones keep GLPK's plan (among equal-cost plans GLPK's pick is
 * kept), the bound only cutting them off. */
#define PB_BOUND_MIN_COLS 50000

typedef struct trip {
	int *ia, *ja;
	double *ar;
	long n, cap;
} trip;

static int trip_add(trip *t, int i, int j, double v)
{
	if (t->n + 1 >= t->cap) {
		long nc = t->cap ? t->cap * 2 : 4096;
		int *ia = realloc(t->ia, (size_t)nc * sizeof *ia);
		if (ia)
			t->ia = ia;
		int *ja = realloc(t->ja, (size_t)nc * sizeof *ja);
		if (ja)
			t->ja = ja;
		double *ar = realloc(t->ar, (size_t)nc * sizeof *ar);
		if (ar)
			t->ar = ar;
		if (!ia || !ja || !ar)
			return -1;
		t->cap = nc;
	}
	t->n++;
	t->ia[t->n] = i;
	t->ja[t->n] = j;
	t->ar[t->n] = v;
	return 0;
}

static void trip_free(trip *t)
{
	free(t->ia);
	free(t->ja);
	free(t->ar);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum { ST_FUTURE = 0, ST_SET = 1, ST_FIXED = 2 };

typedef struct model {
	glp_prob *P;
	int *xcol; /* per group: first x column (1-based) of its representative, 0 if none */
	int zcol;
	int memrow; /* 0: no memory row */
	long bins;
	double *xgrad; /* per column: its gradient all-reduces (us), or NULL (grad_columns) */
} model;

static int rep_of(const pb_shard_problem *p, const unsigned char *st, int G)
{
	int t = p->groups[G].tie;
	return (t >= 0 && st[t] == ST_SET) ? t : G;
}

/* The twin of edge e whose y columns carry e's cost under st, or -1: both
 * edges inside the set and between the same representatives. */
static int twin_of(const pb_shard_problem *p, const unsigned char *st, int e)
{
	const pb_shard_edge *ed = &p->edges[e];
	int t = ed->twin;
	if (t < 0)
		return -1;
	const pb_shard_edge *tw = &p->edges[t];
	if (st[ed->from] != ST_SET || st[ed->to] != ST_SET || st[tw->from] != ST_SET ||
	    st[tw->to] != ST_SET || rep_of(p, st, ed->from) != rep_of(p, st, tw->from) ||
	    rep_of(p, st, ed->to) != rep_of(p, st, tw->to))
		return -1;
	return t;
}

/* Builds the MILP over the groups with state ST_SET. */
static int build_model(const pb_shard_problem *p, const unsigned char *st, const int *fixed,
                       int with_mem, model *md, pb_error *err)
{
	memset(md, 0, sizeof *md);
	glp_term_out(GLP_OFF); /* core/ never prints (also silences glp_write_lp) */
	glp_prob *P = glp_create_prob();
	glp_set_prob_name(P, "partbench_shard");
	glp_set_obj_name(P, "step_time_us");
	glp_set_obj_dir(P, GLP_MIN);
	md->P = P;
	md->xcol = calloc((size_t)(p->n_groups + 1), sizeof(int));
	trip T = {0};
	double *obj = NULL;
	int *ey0 = NULL; /* first y column per edge */
	int ncols = 0;
	if (!md->xcol)
		goto oom;
	for (int G = 0; G < p->n_groups; G++)
		if (st[G] == ST_SET && rep_of(p, st, G) == G) {
			md->xcol[G] = ncols + 1;
			ncols += p->groups[G].n_strat;
			md->bins += p->groups[G].n_strat;
		}
	for (int G = 0; G < p->n_groups; G++)
		if (st[G] == ST_SET && rep_of(p, st, G) != G)
			md->xcol[G] = md->xcol[rep_of(p, st, G)];
	long ycols = 0;
	for (int e = 0; e < p->n_edges; e++) {
		const pb_shard_edge *ed = &p->edges[e];
		if (st[ed->from] == ST_SET && st[ed->to] == ST_SET && twin_of(p, st, e) < 0)
			ycols += (long)ed->na * ed->nb;
	}
	int inference = !p->opts.train;
	long total = ncols + ycols + (inference ? 1 : 0);
	if (total > PB_SHARD_MAX_COLS) {
		glp_delete_prob(P);
		free(md->xcol);
		md->P = NULL;
		md->xcol = NULL;
		return pb_err(
		    err, PB_EINPUT,
		    "the MILP would have %ld columns (limit %ld): use a higher --opt-level "
		    "or fewer --max-axes",
		    total, (long)PB_SHARD_MAX_COLS);
	}
	obj = calloc((size_t)total + 1, sizeof *obj);
	ey0 = calloc((size_t)p->n_edges + 1, sizeof *ey0);
	if (!obj || !ey0)
		goto oom;
	glp_add_cols(P, (int)total);
	for (int G = 0; G < p->n_groups; G++) {
		if (st[G] != ST_SET)
			continue;
		const pb_shard_group *gr = &p->groups[G];
		int rep = rep_of(p, st, G);
		for (int s = 0; s < gr->n_strat; s++) {
			int col = md->xcol[G] + s;
			obj[col] += gr->cost[s] * US;
			if (rep == G) {
				char name[48];
				snprintf(name, sizeof name, "x_%d_%d", G, s);
				glp_set_col_name(P, col, name);
				glp_set_col_kind(P, col, GLP_BV);
			}
		}
	}
	double constant = 0;
	int row = 0;
	/* one-hot */
	for (int G = 0; G < p->n_groups; G++) {
		if (st[G] != ST_SET || rep_of(p, st, G) != G)
			continue;
		row = glp_add_rows(P, 1);
		glp_set_row_bnds(P, row, GLP_FX, 1, 1);
		for (int s = 0; s < p->groups[G].n_strat; s++)
			if (trip_add(&T, row, md->xcol[G] + s, 1))
				goto oom;
	}
	int col = ncols;
	for (int e = 0; e < p->n_edges; e++) {
		const pb_shard_edge *ed = &p->edges[e];
		int sf = st[ed->from], stt = st[ed->to];
		if (sf == ST_FUTURE || stt == ST_FUTURE)
			continue;
		const pb_shard_group *GF = &p->groups[ed->from], *GT = &p->groups[ed->to];
		if (sf == ST_FIXED && stt == ST_FIXED) {
			constant +=
			    ed->cost[ed->a_of[fixed[ed->from]] * ed->nb + ed->b_of[fixed[ed->to]]] *
			    US;
			continue;
		}
		if (sf == ST_FIXED) {
			int a = ed->a_of[fixed[ed->from]];
			for (int t = 0; t < GT->n_strat; t++)
				obj[md->xcol[ed->to] + t] +=
				    ed->cost[a * ed->nb + ed->b_of[t]] * US;
			continue;
		}
		if (stt == ST_FIXED) {
			int b = ed->b_of[fixed[ed->to]];
			for (int s = 0; s < GF->n_strat; s++)
				obj[md->xcol[ed->from] + s] +=
				    ed->cost[ed->a_of[s] * ed->nb + b] * US;
			continue;
		}
		pb_job_tick(); /* run as a workbench job: the screen stays live */
		int tw = twin_of(p, st, e);
		if (tw >= 0) { /* the twin's y's are this edge's: add the costs */
			for (int k = 0; k < ed->na * ed->nb; k++)
				obj[ey0[tw] + k] += ed->cost[k] * US;
			continue;
		}
		int y0 = col + 1;
		ey0[e] = y0;
		for (int a = 0; a < ed->na; a++)
			for (int b = 0; b < ed->nb; b++) {
				int c = y0 + a * ed->nb + b;
				glp_set_col_bnds(P, c, GLP_DB, 0, 1);
				obj[c] = ed->cost[a * ed->nb + b] * US;
			}
		col += ed->na * ed->nb;
		int r0 = glp_add_rows(P, ed->na + ed->nb - 1);
		for (int a = 0; a < ed->na; a++) {
			glp_set_row_bnds(P, r0 + a, GLP_FX, 0, 0);
			for (int b = 0; b < ed->nb; b++)
				if (trip_add(&T, r0 + a, y0 + a * ed->nb + b, 1))
					goto oom;
		}
		for (int b = 0; b < ed->nb - 1; b++) {
			glp_set_row_bnds(P, r0 + ed->na + b, GLP_FX, 0, 0);
			for (int a = 0; a < ed->na; a++)
				if (trip_add(&T, r0 + ed->na + b, y0 + a * ed->nb + b, 1))
					goto oom;
		}
		/* x terms: merge coefficients of the same column (tied groups) */
		for (int s = 0; s < GF->n_strat; s++)
			if (trip_add(&T, r0 + ed->a_of[s], md->xcol[ed->from] + s, -1))
				goto oom;
		for (int t = 0; t < GT->n_strat; t++)
			if (ed->b_of[t] < ed->nb - 1 &&
			    trip_add(&T, r0 + ed->na + ed->b_of[t], md->xcol[ed->to] + t, -1))
				goto oom;
	}
	if (inference) {
		md->zcol = (int)total;
		glp_set_col_name(P, md->zcol, "z_peak_act_gb");
		glp_set_col_bnds(P, md->zcol, GLP_LO, 0, 0);
	}
	if (with_mem) {
		double rhs = p->cl.memory * GB, zlb = 0;
		for (int G = 0; G < p->n_groups; G++) {
			const pb_shard_group *gr = &p->groups[G];
			if (st[G] == ST_SET)
				continue;
			double mp, ma;
			if (st[G] == ST_FIXED) {
				mp = gr->mem_param[fixed[G]];
				ma = gr->mem_act[fixed[G]];
			} else {
				mp = INFINITY;
				ma = INFINITY;
				for (int s = 0; s < gr->n_strat; s++) {
					double tot = gr->mem_param[s] +
					             (inference ? 0 : p->act_mult * gr->mem_act[s]);
					if (tot < mp + (inference ? 0 : p->act_mult * ma)) {
						mp = gr->mem_param[s];
						ma = gr->mem_act[s];
					}
				}
			}
			rhs -= (mp + (inference ? 0 : p->act_mult * ma)) * GB;
			if (inference && ma * GB > zlb)
				zlb = ma * GB;
		}
		row = glp_add_rows(P, 1);
		md->memrow = row;
		glp_set_row_name(P, row, "memory_gb");
		glp_set_row_bnds(P, row, GLP_UP, 0, rhs);
		for (int G = 0; G < p->n_groups; G++) {
			if (st[G] != ST_SET)
				continue;
			const pb_shard_group *gr = &p->groups[G];
			for (int s = 0; s < gr->n_strat; s++) {
				double v = (gr->mem_param[s] +
				            (inference ? 0 : p->act_mult * gr->mem_act[s])) *
				           GB;
				if (v != 0 && trip_add(&T, row, md->xcol[G] + s, v))
					goto oom;
			}
		}
		if (inference) {
			if (trip_add(&T, row, md->zcol, 2))
				goto oom;
			glp_set_col_bnds(P, md->zcol, GLP_LO, zlb, 0);
			for (int G = 0; G < p->n_groups; G++) {
				if (st[G] != ST_SET)
					continue;
				const pb_shard_group *gr = &p->groups[G];
				int r = glp_add_rows(P, 1);
				glp_set_row_bnds(P, r, GLP_LO, 0, 0);
				if (trip_add(&T, r, md->zcol, 1))
					goto oom;
				for (int s = 0; s < gr->n_strat; s++)
					if (gr->mem_act[s] != 0 &&
					    trip_add(&T, r, md->xcol[G] + s, -gr->mem_act[s] * GB))
						goto oom;
			}
		}
	}
	/* Tied groups add coefficients to the same column in one row: merge. */
	{
		long w = 0;
		/* sort-free merge: duplicates can only come from ties; use a scan per row
		 * through a column-stamp table */
		int nrows = glp_get_num_rows(P);
		int *stamp = calloc((size_t)total + 1, sizeof(int));
		long *pos = calloc((size_t)total + 1, sizeof(long));
		int *rowstart_ok = NULL;
		(void)rowstart_ok;
		if (!stamp || !pos) {
			free(stamp);
			free(pos);
			goto oom;
		}
		/* triplets are appended row by row except the edge x terms; handle
		 * generally with a per-row ordering pass */
		long *cnt = calloc((size_t)nrows + 2, sizeof(long));
		long *ord = malloc((size_t)(T.n + 1) * sizeof(long));
		if (!cnt || !ord) {
			free(stamp);
			free(pos);
			free(cnt);
			free(ord);
			goto oom;
		}
		for (long k = 1; k <= T.n; k++)
			cnt[T.ia[k] + 1]++;
		for (int r = 1; r <= nrows + 1; r++)
			cnt[r] += cnt[r - 1];
		for (long k = 1; k <= T.n; k++)
			ord[cnt[T.ia[k]]++] = k;
		trip M = {0};
		long k0 = 0;
		for (int r = 1; r <= nrows; r++) {
			long start = M.n;
			long end = cnt[r];
			for (; k0 < end; k0++) {
				long k = ord[k0];
				int c = T.ja[k];
				if (stamp[c] == r) {
					M.ar[pos[c]] += T.ar[k];
				} else {
					if (trip_add(&M, r, c, T.ar[k])) {
						trip_free(&M);
						free(stamp);
						free(pos);
						free(cnt);
						free(ord);
						goto oom;
					}
					stamp[c] = r;
					pos[c] = M.n;
				}
			}
			(void)start;
		}
		w = M.n;
		free(stamp);
		free(pos);
		free(cnt);
		free(ord);
		trip_free(&T);
		T = M;
		T.n = w;
	}
	for (long c = 1; c <= total; c++)
		glp_set_obj_coef(P, (int)c, obj[c]);
	glp_set_obj_coef(P, 0, constant);
	if (T.n > 0)
		glp_load_matrix(P, (int)T.n, T.ia, T.ja, T.ar);
	free(obj);
	free(ey0);
	trip_free(&T);
	return PB_OK;
oom:
	free(obj);
	free(ey0);
	trip_free(&T);
	glp_delete_prob(P);
	free(md->xcol);
	md->P = NULL;
	md->xcol = NULL;
	return pb_err(err, PB_ENOMEM, "shard: out of memory building the MILP");
}

static void model_free(model *md)
{
	if (md->P)
		glp_delete_prob(md->P);
	free(md->xgrad);
	md->xgrad = NULL;
	free(md->xcol);
	md->P = NULL;
	md->xcol = NULL;
}

/* The pipeline's cutoff (opts.cutoff, cutoff_grad = w): a chunk plan of
 * time t with gradient all-reduces g helps only when t - w g < cutoff
 * (dtp_search.c), which is linear in the plan, while GLPK cuts on
 * t < cutoff + w x the largest g any plan could have. Per column its g
 * (the groups it stands for, their members' strategies), so the root LP can
 * also be solved for t - w g (run_model). */
static int grad_columns(const pb_shard_problem *p, const unsigned char *st, model *md)
{
	int n = glp_get_num_cols(md->P);
	md->xgrad = calloc((size_t)n + 1, sizeof(double));
	if (!md->xgrad)
		return -1;
	for (int G = 0; G < p->n_groups; G++) {
		const pb_shard_group *gr = &p->groups[G];
		if (st[G] != ST_SET || !md->xcol[G])
			continue;
		for (int s = 0; s < gr->n_strat; s++)
			for (int k = 0; k < gr->n_members; k++) {
				int v = gr->members[k];
				md->xgrad[md->xcol[G] + s] +=
				    pb_strategy_grad_node(p, v, p->nodes[v].pick[s]) * US;
			}
	}
	return 0;
}

typedef struct cbinfo {
	pb_shard_incumbent_fn cb;
	void *ud;
	double t0;
	long n;
	int stop;
	double cutoff_us; /* INFINITY: none */
	int cut;          /* the bound passed the cutoff */
	int probe;        /* p->probe_mem (whole model only) */
	long node_limit;  /* p->opts.node_limit */
	int limited;      /* stopped by node_limit */
	double base_us;   /* p->opts.cutoff without its gradient allowance (us; 0: none) */
} cbinfo;

/* A bound above the cutoff (with a margin for rounding): no plan below it. */
static int above_cutoff(const cbinfo *ci, double bound_us)
{
	return isfinite(ci->cutoff_us) && bound_us > ci->cutoff_us * (1 + 1e-9) + 1e-9;
}

static double best_bound(glp_tree *T)
{
	int b = glp_ios_best_node(T);
	return b ? glp_ios_node_bound(T, b) : NAN;
}

static void glpk_cb(glp_tree *T, void *info)
{
	cbinfo *ci = info;
	if (ci->stop) {
		glp_ios_terminate(T);
		return;
	}
	int reason = glp_ios_reason(T);
	if (reason == GLP_IBINGO) {
		ci->n++;
		if (ci->cb)
			ci->stop = ci->cb(ci->ud, glp_mip_obj_val(glp_ios_get_prob(T)),
			                  best_bound(T), now() - ci->t0);
	} else if (reason == GLP_ISELECT && ci->cb) {
		ci->stop = ci->cb(ci->ud, NAN, best_bound(T), now() - ci->t0);
	}
	if (reason == GLP_ISELECT && ci->node_limit > 0 &&
	    glp_mip_status(glp_ios_get_prob(T)) == GLP_FEAS) {
		int total = 0;
		glp_ios_tree_size(T, NULL, NULL, &total);
		if (total > ci->node_limit) { /* the plan so far, not proven */
			ci->limited = 1;
			glp_ios_terminate(T);
			return;
		}
	}
	if (reason == GLP_ISELECT && isfinite(ci->cutoff_us)) {
		glp_prob *P = glp_ios_get_prob(T);
		double inc = glp_mip_status(P) == GLP_FEAS ? glp_mip_obj_val(P) : INFINITY;
		if (above_cutoff(ci, best_bound(T)) && above_cutoff(ci, inc))
			ci->cut = 1;
	}
	if (ci->stop || ci->cut)
		glp_ios_terminate(T);
}

/* The LP relaxation in chunks of LP_CHUNK dual simplex iterations, each call
 * resuming from the basis the previous one left, so that the progress
 * callback runs between chunks (the stepping solver yields there; a root LP
 * of bert_base_like takes ~12 chunks of ~60 ms). The chunks are fixed
 * iteration counts in every mode, so the pivots and the optimum vertex are
 * the same whether anyone yields or not (10% slower than one call on
 * bert_base_like 2x8; 100-iteration chunks cost 25%). Between chunks the
 * objective is a lower bound when the basis is dual feasible. Returns
 * glp_simplex's code, GLP_EITLIM when the callback asked to stop. */
#define LP_CHUNK 200
static int lp_chunks(glp_prob *P, glp_smcp *sm, cbinfo *ci)
{
	int it_lim = sm->it_lim;
	sm->it_lim = LP_CHUNK;
	int rc;
	while ((rc = glp_simplex(P, sm)) == GLP_EITLIM && !ci->stop) {
		if (sm->tm_lim < INT_MAX && now() - ci->t0 > sm->tm_lim * 1e-3) {
			rc = GLP_ETMLIM;
			break;
		}
		if (ci->cb) {
			double bound = glp_get_dual_stat(P) == GLP_FEAS ? glp_get_obj_val(P) : NAN;
			ci->stop = ci->cb(ci->ud, NAN, bound, now() - ci->t0);
		}
	}
	sm->it_lim = it_lim;
	return rc;
}

/* 1 when an x column of the LP optimum is fractional (a branch and bound
 * follows). */
static int fractional(const model *md)
{
	int n = glp_get_num_cols(md->P);
	for (int j = 1; j <= n; j++)
		if (glp_get_col_kind(md->P, j) == GLP_BV) {
			double x = glp_get_col_prim(md->P, j);
			if (x > 1e-9 && x < 1 - 1e-9)
				return 1;
		}
	return 0;
}

/* A lower bound of the LP of t - w g from the duals of the LP of t just
 * solved (weak duality, no simplex): for row duals pi and reduced costs
 * d - w g, the objective is c0 + sum_i pi_i r_i + sum_j (d_j - w g_j) x_j,
 * each term at least its value at the better of its bounds. */
static double weak_dual(const model *md, double w)
{
	glp_prob *P = md->P;
	double lb = glp_get_obj_coef(P, 0);
	int m = glp_get_num_rows(P), n = glp_get_num_cols(P);
	for (int k = 1; k <= m + n && isfinite(lb); k++) {
		int row = k <= m, j = row ? k : k - m;
		double d = row ? glp_get_row_dual(P, j) : glp_get_col_dual(P, j) - w * md->xgrad[j];
		int type = row ? glp_get_row_type(P, j) : glp_get_col_type(P, j);
		double lo = row ? glp_get_row_lb(P, j) : glp_get_col_lb(P, j);
		double up = row ? glp_get_row_ub(P, j) : glp_get_col_ub(P, j);
		int has_lo = type == GLP_LO || type == GLP_DB || type == GLP_FX;
		int has_up = type == GLP_UP || type == GLP_DB || type == GLP_FX;
		if (d > 0)
			lb += has_lo ? d * lo : -INFINITY;
		else if (d < 0)
			lb += has_up ? d * up : -INFINITY;
	}
	return lb;
}

/* The root LP for t - w g (grad_columns) above the cutoff: no plan of the
 * chunk helps. First the bound from the duals at hand; then, with resolve
 * (the memory row binds or the LP optimum is fractional: a branch and bound
 * follows, worth an LP; elsewhere the LPs cost more than they save: bert
 * 2x8 --pipeline auto 4.8 -> 9.8 s CPU), that LP by the primal simplex from
 * the basis at hand (the rows are unchanged), the objective and the basis
 * put back after. */
static int discounted_cut(const pb_shard_problem *p, model *md, cbinfo *ci, glp_smcp *sm0,
                          int resolve)
{
	glp_smcp sm = *sm0;
	sm.meth = GLP_PRIMAL;
	double w = p->opts.cutoff_grad;
	int n = glp_get_num_cols(md->P), m = glp_get_num_rows(md->P), cut = 0;
	/* the LP optimum of t is a point of the LP of t - w g: when its t - w g
	 * is not above the cutoff, neither is that LP's optimum (no cut) */
	double at = glp_get_obj_val(md->P);
	for (int j = 1; j <= n; j++)
		at -= w * md->xgrad[j] * glp_get_col_prim(md->P, j);
	if (!(at > ci->base_us * (1 + 1e-9) + 1e-9))
		return 0;
	if (weak_dual(md, w) > ci->base_us * (1 + 1e-9) + 1e-9)
		return 1;
	if (!resolve)
		return 0;
	/* the basis, put back after: GLPK's branch and bound then starts where
	 * it would have (the same plan among plans of equal cost) */
	int *stat = malloc(((size_t)n + m + 1) * sizeof(int));
	if (!stat)
		return 0;
	for (int i = 1; i <= m; i++)
		stat[i] = glp_get_row_stat(md->P, i);
	for (int j = 1; j <= n; j++)
		stat[m + j] = glp_get_col_stat(md->P, j);
	for (int j = 1; j <= n; j++)
		if (md->xgrad[j] != 0)
			glp_set_obj_coef(md->P, j, glp_get_obj_coef(md->P, j) - w * md->xgrad[j]);
	if (glp_simplex(md->P, &sm) == 0 && glp_get_status(md->P) == GLP_OPT) {
		double v = glp_get_obj_val(md->P);
		cut = isfinite(ci->base_us) && v > ci->base_us * (1 + 1e-9) + 1e-9;
	}
	for (int j = 1; j <= n; j++)
		if (md->xgrad[j] != 0)
			glp_set_obj_coef(md->P, j, glp_get_obj_coef(md->P, j) + w * md->xgrad[j]);
	if (!cut) {
		for (int i = 1; i <= m; i++)
			glp_set_row_stat(md->P, i, stat[i]);
		for (int j = 1; j <= n; j++)
			glp_set_col_stat(md->P, j, stat[m + j]);
		/* the same basis: optimal again without an iteration (else solved on) */
		if (glp_warm_up(md->P) != 0 || glp_get_status(md->P) != GLP_OPT)
			glp_simplex(md->P, &sm);
	}
	free(stat);
	return cut;
}

/* Solves the model; fills choice for groups in the set. Returns 1 when an
 * integer solution exists, 0 when infeasible. */
static int run_model(const pb_shard_problem *p, const unsigned char *st, model *md, cbinfo *ci,
                     int *choice, int *optimal, int *mem_free)
{
	glp_term_out(GLP_OFF);
	glp_smcp sm;
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	/* The dual simplex without presolve is the fastest on these models (on
	 * bert_base_like 2x8: 2.3 s against 5.4 s primal, 15 s with presolve),
	 * started from Bixby's crash basis (glp_cpx_basis): 4x4 takes 0.6 s
	 * instead of 1.8 s from GLPK's all-slack basis (glp_adv_basis: 11 s,
	 * scaling or the long-step ratio test: slower). */
	sm.meth = GLP_DUALP;
	sm.presolve = GLP_OFF;
	if (p->opts.time_limit > 0)
		sm.tm_lim = (int)(p->opts.time_limit * 1000);
	glp_cpx_basis(md->P);
	int rc = lp_chunks(md->P, &sm, ci);
	if (rc == GLP_EITLIM) /* stopped by the callback */
		return 0;
	if (rc != 0 || glp_get_status(md->P) != GLP_OPT) {
		/* retry with the primal simplex before declaring it infeasible */
		sm.meth = GLP_PRIMAL;
		rc = glp_simplex(md->P, &sm);
		if (rc != 0 || glp_get_status(md->P) != GLP_OPT) {
			/* and scaled, from GLPK's advanced basis (costs spanning many
			 * orders of magnitude: the unscaled simplex can fail) */
			glp_scale_prob(md->P, GLP_SF_AUTO);
			glp_adv_basis(md->P, 0);
			sm.meth = GLP_DUALP;
			rc = glp_simplex(md->P, &sm);
			if (rc != 0 || glp_get_status(md->P) != GLP_OPT)
				return 0;
		}
	}
	/* a memory row left slack by the LP optimum (basic, or no dual value) is
	 * also slack for the LP without it: same LP optimum */
	double lp_obj = glp_get_obj_val(md->P);
	int mem_slack = !md->memrow || glp_get_row_stat(md->P, md->memrow) == GLP_BS ||
	                glp_get_row_dual(md->P, md->memrow) == 0;
	if (above_cutoff(ci, lp_obj) || (ci->probe && !mem_slack)) {
		ci->cut = 1;
		return 0;
	}
	if (md->xgrad && ci->base_us > 0 &&
	    discounted_cut(p, md, ci, &sm, !mem_slack || fractional(md))) {
		ci->cut = 1;
		return 0;
	}
	glp_iocp io;
	glp_init_iocp(&io);
	io.msg_lev = GLP_MSG_OFF;
	io.cb_func = glpk_cb;
	io.cb_info = ci;
	if (p->opts.mip_gap > 0) {
		/* the pipeline's stage MILPs, memory binding: Driebeck-Tomlin
		 * branching (a tableau row per fractional column) closes the last
		 * 0.1% of a 10k-column knapsack in minutes; pseudocosts reach it
		 * in seconds (GPT-3 pp 2 16x32: 185 s exact, 4.2 s at 1e-3) */
		io.mip_gap = p->opts.mip_gap;
		io.br_tech = GLP_BR_PCH;
	}
	if (p->opts.time_limit > 0)
		io.tm_lim = (int)(p->opts.time_limit * 1000);
	rc = glp_intopt(md->P, &io);
	int ms = glp_mip_status(md->P);
	if (ms != GLP_OPT && ms != GLP_FEAS)
		return 0;
	*optimal = ms == GLP_OPT && rc == 0;
	double mip = glp_mip_obj_val(md->P);
	if (mem_free)
		*mem_free = *optimal && mem_slack && mip - lp_obj <= 1e-11 * fabs(mip) + 1e-12;
	for (int G = 0; G < p->n_groups; G++) {
		if (st[G] != ST_SET)
			continue;
		int best = 0;
		double bv = -1;
		for (int s = 0; s < p->groups[G].n_strat; s++) {
			double v = glp_mip_col_val(md->P, md->xcol[G] + s);
			if (v > bv) {
				bv = v;
				best = s;
			}
		}
		choice[G] = best;
	}
	return 1;
}

void pb_strategy_milp_size(const pb_shard_problem *p, pb_milp_size *sz)
{
	memset(sz, 0, sizeof *sz);
	for (int G = 0; G < p->n_groups; G++) {
		if (p->groups[G].tie >= 0)
			continue;
		sz->cols += p->groups[G].n_strat;
		sz->bins += p->groups[G].n_strat;
		sz->rows += 1;
		sz->nnz += p->groups[G].n_strat;
	}
	for (int e = 0; e < p->n_edges; e++) {
		const pb_shard_edge *ed = &p->edges[e];
		if (ed->twin >= 0)
			continue; /* its costs ride on the twin's columns */
		sz->cols += (long)ed->na * ed->nb;
		sz->rows += ed->na + ed->nb - 1;
		sz->nnz +=
		    2L * ed->na * ed->nb + p->groups[ed->from].n_strat + p->groups[ed->to].n_strat;
	}
	sz->rows += 1 + (p->opts.train ? 0 : p->n_groups);
	sz->cols += p->opts.train ? 0 : 1;
	for (int G = 0; G < p->n_groups; G++)
		sz->nnz += p->groups[G].n_strat * (p->opts.train ? 1 : 2);
}

static double **free_slack(double **slack, int n)
{
	for (int G = 0; slack && G < n; G++)
		free(slack[G]);
	free(slack);
	return NULL;
}

/* Reduced-cost fixing: every plan costs at least the bound plus its
 * strategies' slacks, so a strategy whose slack (summed over a class of tied
 * groups, which take it together) exceeds gap = (a plan that fits) - bound
 * is in no optimal plan; q keeps the rest. */
static int restrict_by_slack(const pb_shard_problem *p, double *const *slack, double gap,
                             pb_shard_problem **q, int ***qmap, pb_error *err)
{
	gap += 1e-9 * fabs(gap) + 1e-15;
	unsigned char **keep = calloc((size_t)p->n_groups + 1, sizeof *keep);
	double **cls = calloc((size_t)p->n_groups + 1, sizeof *cls);
	int ok = keep && cls;
	for (int G = 0; ok && G < p->n_groups; G++) {
		int n = p->groups[G].n_strat;
		keep[G] = malloc((size_t)n + 1);
		cls[G] = calloc((size_t)n + 1, sizeof(double));
		ok = keep[G] && cls[G];
	}
	long kept = 0, all = 0;
	for (int G = 0; ok && G < p->n_groups; G++) {
		int R = p->groups[G].tie >= 0 ? p->groups[G].tie : G;
		for (int s = 0; s < p->groups[G].n_strat; s++)
			cls[R][s] += slack[G][s];
	}
	for (int G = 0; ok && G < p->n_groups; G++) {
		int R = p->groups[G].tie >= 0 ? p->groups[G].tie : G;
		for (int s = 0; s < p->groups[G].n_strat; s++) {
			keep[G][s] = cls[R][s] <= gap;
			kept += keep[G][s];
		}
		all += p->groups[G].n_strat;
	}
	int rc = ok ? PB_OK : pb_err(err, PB_ENOMEM, "shard: out of memory");
	if (rc == PB_OK && kept < all)
		rc = pb_strategy_restrict(p, (const unsigned char *const *)keep, q, qmap, err);
	for (int G = 0; G < p->n_groups; G++) {
		if (keep)
			free(keep[G]);
		if (cls)
			free(cls[G]);
	}
	free(keep);
	free(cls);
	return rc;
}

/* One Lagrangian bound at lambda: updates the best bound (and its lambda)
 * and the best plan that fits; returns whether the decoded plan fits. */
static int lagrange_at(const pb_shard_problem *p, cbinfo *ci, double lambda, int *cur, int *best,
                       double *lb, double *lam, double *ub)
{
	int stop = 0;
	double target =
	    isfinite(ci->cutoff_us) ? ci->cutoff_us / US * (1 + 1e-9) + 1e-15 : INFINITY;
	double v = pb_strategy_bound_lower(p, lambda, target, PB_BOUND_WORK, ci->cb, ci->ud, cur,
	                                   NULL, &stop);
	if (stop) {
		ci->stop = 1;
		return 0;
	}
	if (v > *lb) {
		*lb = v;
		*lam = lambda;
	}
	if (above_cutoff(ci, v * US)) {
		ci->cut = 1;
		return 0;
	}
	pb_shard_result t;
	pb_strategy_problem_evaluate(p, cur, &t);
	if (t.feasible && t.objective < *ub) {
		*ub = t.objective;
		memcpy(best, cur, (size_t)p->n_groups * sizeof(int));
	}
	return t.feasible;
}

/* Training, memory binding (the plan decoded without it does not fit):
 * bounds with memory priced at lambda, lambda grown from cost/memory until
 * the decoded plan fits, then bisected. *lb: the best bound (in: lambda 0's),
 * slack: at its lambda; *ub and choice: the cheapest plan found that fits
 * (INFINITY when none). Stops on ci->stop or ci->cut. */
static int lagrange(const pb_shard_problem *p, cbinfo *ci, double *const *slack, int *choice,
                    double *lb, double *ub, pb_error *err)
{
	int *cur = malloc(((size_t)p->n_groups + 1) * sizeof *cur);
	if (!cur)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	double M = p->cl.memory, lam = 0, lo = 0;
	double hi = (*lb > 0 ? *lb : 1e-6) / (M > 0 ? M : 1);
	int fits = 0;
	for (int k = 0; k < 10 && !fits && !ci->stop && !ci->cut; k++) {
		fits = lagrange_at(p, ci, hi, cur, choice, lb, &lam, ub);
		if (!fits) {
			lo = hi;
			hi *= 4;
		}
	}
	for (int k = 0; k < 6 && fits && !ci->stop && !ci->cut; k++) {
		double mid = 0.5 * (lo + hi);
		if (lagrange_at(p, ci, mid, cur, choice, lb, &lam, ub))
			hi = mid;
		else
			lo = mid;
	}
	if (!ci->stop && !ci->cut && lam > 0) { /* the slacks of the best bound */
		int stop = 0;
		pb_strategy_bound_lower(p, lam, INFINITY, PB_BOUND_WORK, NULL, NULL, NULL, slack,
		                        &stop);
	}
	free(cur);
	return PB_OK;
}

static long n_limited; /* solves stopped by a node limit (main thread only) */

long pb_strategy_milp_node_limited(void)
{
	return n_limited;
}

int pb_strategy_milp_solve(pb_shard_problem *p, const char *lp_path, pb_shard_incumbent_fn cb,
                           void *ud, pb_shard_result *r, pb_error *err)
{
	memset(r, 0, sizeof *r);
	double t0 = now();
	r->choice = calloc((size_t)(p->n_groups + 1), sizeof(int));
	unsigned char *st = malloc((size_t)(p->n_groups + 1));
	if (!r->choice || !st) {
		free(st);
		pb_strategy_problem_result_free(r);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	int chunked = p->opts.opt_level >= 3 && p->n_groups > p->opts.chunk;
	/* the cutoff: a better recomputation choice's plan, or the caller's */
	double cutoff = p->cutoff > 0 ? p->cutoff : INFINITY;
	if (p->opts.cutoff > 0 && !chunked) {
		double ext = p->opts.cutoff + p->opts.cutoff_grad * pb_strategy_grad_max(p);
		cutoff = ext < cutoff ? ext : cutoff;
	}
	cbinfo ci = {cb,
	             ud,
	             t0,
	             0,
	             0,
	             !chunked ? cutoff * US : INFINITY,
	             0,
	             p->probe_mem && !chunked,
	             chunked ? 0 : p->opts.node_limit,
	             0,
	             !chunked && p->opts.cutoff > 0 ? p->opts.cutoff * US : 0};
	int rc = PB_OK, ok = 1, optimal = 1, mem_free = 0, unc_opt = 0;
	/* no plan fits for sure (the least memory exceeds the device): straight
	 * to the plan ignoring memory (GLPK would prove the MILP infeasible
	 * first, slowly when its LP is large) */
	int over = !chunked && pb_strategy_problem_min_memory(p) > p->cl.memory * (1 + 1e-9);
	/* The dual bound first (strategy_bound.c): a bound past the cutoff cuts;
	 * a plan decoded from it that attains it is optimal without the memory
	 * limit, so when it fits (or no plan fits) GLPK is not needed. */
	int by_bound = 0;
	pb_milp_size sz;
	pb_strategy_milp_size(p, &sz);
	int big = p->opts.bound > 0 || sz.cols >= PB_BOUND_MIN_COLS;
	double **slack = NULL;      /* big: per group, per strategy */
	pb_shard_problem *q = NULL; /* p without strategies the bound excludes */
	int **qmap = NULL;
	if (big && !chunked) {
		slack = calloc((size_t)p->n_groups + 1, sizeof *slack);
		for (int G = 0; slack && G < p->n_groups; G++)
			if (!(slack[G] =
			          malloc(((size_t)p->groups[G].n_strat + 1) * sizeof(double))))
				slack = free_slack(slack, G);
	}
	if (!chunked && p->opts.bound >= 0 && !(over && isfinite(ci.cutoff_us)) &&
	    (big || isfinite(ci.cutoff_us))) {
		int stop = 0;
		double lb = pb_strategy_bound_lower(p, 0, ci.cutoff_us / US * (1 + 1e-9) + 1e-15,
		                                    PB_BOUND_WORK, cb, ud, big ? r->choice : NULL,
		                                    slack, &stop);
		if (stop) {
			ci.stop = 1;
		} else if (above_cutoff(&ci, lb * US)) {
			ci.cut = 1;
		} else if (isfinite(lb) && big) {
			pb_shard_result t;
			pb_strategy_problem_evaluate(p, r->choice, &t);
			if ((t.feasible || over) && t.objective <= lb + 1e-9 * fabs(lb)) {
				by_bound = 1;
				optimal = !over;
				mem_free = !over;
				unc_opt = over;
				ci.n = 1;
				if (cb)
					ci.stop = cb(ud, t.objective * US, lb * US, now() - t0);
			} else if (t.feasible && !over && slack) {
				rc = restrict_by_slack(p, slack, t.objective - lb, &q, &qmap, err);
			} else if (!over && slack && p->opts.train) {
				/* memory binds: price it (Lagrangian) */
				double lbm = lb, ub = INFINITY;
				rc = lagrange(p, &ci, slack, r->choice, &lbm, &ub, err);
				if (rc == PB_OK && isfinite(ub) &&
				    pb_strategy_polish(p, r->choice)) {
					pb_shard_result t; /* cheaper by local moves, still fits */
					pb_strategy_problem_evaluate(p, r->choice, &t);
					ub = t.objective;
				}
				if (rc == PB_OK && !ci.stop && !ci.cut) {
					if (ub <= lbm + 1e-9 * fabs(lbm)) {
						by_bound =
						    1; /* the fitting plan attains the bound */
						ci.n = 1;
						if (cb)
							ci.stop =
							    cb(ud, ub * US, lbm * US, now() - t0);
					} else if (ci.probe) {
						ci.cut = 1; /* memory binds: solved later, with a
						               cutoff */
					} else if (isfinite(ub)) {
						rc = restrict_by_slack(p, slack, ub - lbm, &q,
						                       &qmap, err);
					}
				}
			}
		}
	}
	slack = free_slack(slack, p->n_groups);
	if (rc == PB_OK && lp_path && q) { /* the whole MILP is written */
		memset(st, ST_SET, (size_t)p->n_groups);
		model mw;
		rc = build_model(p, st, r->choice, 1, &mw, err);
		if (rc == PB_OK)
			rc = pb_lp_write_atomic(mw.P, lp_path, err);
		model_free(&mw);
	}
	/* the MILP solved: p's, or q's (its choices mapped back below) */
	const pb_shard_problem *sp = q ? q : p;
	if (rc == PB_OK && (!chunked || lp_path) && !ci.stop && !ci.cut) {
		memset(st, ST_SET, (size_t)p->n_groups);
		model md;
		rc = build_model(sp, st, r->choice, 1, &md, err);
		if (rc == PB_OK && lp_path && !q) /* atomically, like every output */
			rc = pb_lp_write_atomic(md.P, lp_path, err);
		if (rc == PB_OK && !q && ci.base_us > 0 && p->opts.cutoff_grad > 0 &&
		    p->opts.train && grad_columns(sp, st, &md))
			rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
		if (rc == PB_OK && !chunked && !by_bound) {
			ok = !over && run_model(sp, st, &md, &ci, r->choice, &optimal, &mem_free);
			if (!ok && !ci.stop && !ci.cut && isfinite(ci.cutoff_us)) {
				/* no plan fits: it cannot beat the cutoff (a plan that fits) */
				ci.cut = 1;
			} else if (!ok && !ci.stop && !ci.cut) {
				/* Memory does not fit: best plan ignoring memory, reported
				 * infeasible. */
				model m2;
				rc = build_model(sp, st, r->choice, 0, &m2, err);
				if (rc == PB_OK)
					ok = run_model(sp, st, &m2, &ci, r->choice, &optimal, NULL);
				unc_opt = ok && optimal;
				mem_free = 0;
				model_free(&m2);
				optimal = 0;
			}
		}
		model_free(&md);
		for (int G = 0; q && ok && G < p->n_groups; G++)
			r->choice[G] = qmap[G][r->choice[G]];
	}
	pb_strategy_restrict_free(q, qmap);
	if (rc == PB_OK && chunked) {
		optimal = 0;
		memset(st, ST_FUTURE, (size_t)p->n_groups);
		for (int c0 = 0; c0 < p->n_groups && rc == PB_OK && !ci.stop; c0 += p->opts.chunk) {
			int c1 =
			    c0 + p->opts.chunk < p->n_groups ? c0 + p->opts.chunk : p->n_groups;
			for (int G = c0; G < c1; G++)
				st[G] = ST_SET;
			model md;
			int opt_chunk = 0;
			rc = build_model(p, st, r->choice, 1, &md, err);
			if (rc == PB_OK &&
			    !run_model(p, st, &md, &ci, r->choice, &opt_chunk, NULL) && !ci.stop) {
				model_free(&md);
				rc = build_model(p, st, r->choice, 0, &md, err);
				if (rc == PB_OK &&
				    !run_model(p, st, &md, &ci, r->choice, &opt_chunk, NULL))
					rc = pb_err(err, PB_EINTERNAL,
					            "shard: a level-3 sub-MILP has no solution");
			}
			model_free(&md);
			for (int G = c0; G < c1; G++)
				st[G] = ST_FIXED;
		}
	}
	free(st);
	if (rc == PB_OK && !ci.stop && ci.cut) {
		pb_strategy_problem_result_free(r);
		r->cut = 1;
		r->solve_seconds = now() - t0;
		return PB_OK;
	}
	if (rc == PB_OK && ci.stop)
		rc = pb_err(err, PB_ECANCEL, "shard: solve stopped");
	if (rc) {
		pb_strategy_problem_result_free(r);
		return rc;
	}
	if (!ok) {
		pb_strategy_problem_result_free(r);
		return pb_err(err, PB_EINTERNAL, "shard: GLPK found no solution");
	}
	pb_strategy_problem_evaluate(p, r->choice, r);
	n_limited += ci.limited;
	r->optimal = optimal && r->feasible;
	r->mem_free = mem_free && r->optimal;
	r->unc_opt = r->mem_free || (unc_opt && !r->feasible);
	r->solve_seconds = now() - t0;
	r->n_incumbents = ci.n;
	return PB_OK;
}

int pb_strategy_milp_brute_force(pb_shard_problem *p, long max_combos, pb_shard_result *r,
                                 pb_error *err)
{
	memset(r, 0, sizeof *r);
	double space = 1;
	for (int G = 0; G < p->n_groups; G++)
		if (p->groups[G].tie < 0)
			space *= p->groups[G].n_strat;
	if (space > (double)max_combos)
		return pb_err(err, PB_EUSAGE,
		              "shard: brute force over %.0f combinations is too large", space);
	int *cur = calloc((size_t)(p->n_groups + 1), sizeof(int));
	r->choice = calloc((size_t)(p->n_groups + 1), sizeof(int));
	if (!cur || !r->choice) {
		free(cur);
		pb_strategy_problem_result_free(r);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	double best = INFINITY;
	int found = 0;
	for (;;) {
		for (int G = 0; G < p->n_groups; G++)
			if (p->groups[G].tie >= 0)
				cur[G] = cur[p->groups[G].tie];
		pb_shard_result t;
		pb_strategy_problem_evaluate(p, cur, &t);
		if (t.feasible && t.objective < best - 1e-15) {
			best = t.objective;
			memcpy(r->choice, cur, (size_t)p->n_groups * sizeof(int));
			found = 1;
		}
		int G = 0;
		for (; G < p->n_groups; G++) {
			if (p->groups[G].tie >= 0)
				continue;
			if (++cur[G] < p->groups[G].n_strat)
				break;
			cur[G] = 0;
		}
		if (G == p->n_groups)
			break;
	}
	free(cur);
	if (!found) {
		pb_strategy_problem_result_free(r);
		return pb_err(err, PB_EINPUT, "shard: no plan fits the device memory");
	}
	pb_strategy_problem_evaluate(p, r->choice, r);
	r->optimal = 1;
	return PB_OK;
}
