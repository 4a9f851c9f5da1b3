/*
 * mesh_milp.c — the placement MILP (mesh_milp.h): builds the model from a
 * mesh cost workspace, solves it with GLPK (presolve, branch and cut, a
 * time limit), and reads back the placement, which mesh_cost_eval prices
 * again (the reported figures are the cost model's, not the MILP's).
 * Times are scaled by the start's max(t) so the model's numbers are near 1.
 */
#include "partition/mesh/mesh_milp.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partition/mesh/mesh_place.h"

typedef struct mm_build {
	int *ia, *ja;
	double *ar;
	long nz, cap;
	int oom;
} mm_build;

static void mm_put(mm_build *b, int row, int col, double v)
{
	if (b->oom || v == 0)
		return;
	if (b->nz + 1 >= b->cap) {
		long cap = b->cap ? 2 * b->cap : 4096;
		int *ia = realloc(b->ia, (size_t)cap * sizeof *ia);
		if (ia)
			b->ia = ia;
		int *ja = realloc(b->ja, (size_t)cap * sizeof *ja);
		if (ja)
			b->ja = ja;
		double *ar = realloc(b->ar, (size_t)cap * sizeof *ar);
		if (ar)
			b->ar = ar;
		if (!ia || !ja || !ar) {
			b->oom = 1;
			return;
		}
		b->cap = cap;
	}
	b->nz++; /* GLPK's triplets are 1-based */
	b->ia[b->nz] = row;
	b->ja[b->nz] = col;
	b->ar[b->nz] = v;
}

static int mm_row(glp_prob *lp, int type, double lo, double hi)
{
	int r = glp_add_rows(lp, 1);
	glp_set_row_bnds(lp, r, type, lo, hi);
	return r;
}

static int mm_cols(glp_prob *lp, int k, int kind, int type, double lo, double hi)
{
	int first = glp_add_cols(lp, k);
	for (int j = first; j < first + k; j++) {
		glp_set_col_kind(lp, j, kind);
		if (kind != GLP_BV)
			glp_set_col_bnds(lp, j, type, lo, hi);
	}
	return first;
}

/* A core pair of a transfer, in the route order of mesh_cost.c. */
typedef struct mm_pair {
	int s, d, hops;
} mm_pair;

static int mm_pair_cmp(const void *a, const void *b)
{
	const mm_pair *x = a, *y = b;
	if (x->hops != y->hops)
		return x->hops < y->hops ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return (x->d > y->d) - (x->d < y->d);
}

/* Relative slack of the cutoff row (z <= 1 + MM_TOL, the start scaled to 1)
 * and of the proof by the tree's bound (>= 1 - MM_TOL). */
#define MM_TOL 1e-7

typedef struct mm_info {
	pb_mesh_cost *C; /* its stop callback is asked at every call */
	double scale, bound;
	long nodes;
	int have_bound;
	int closed; /* the tree's bound reached the start: nothing left is better */
} mm_info;

static void mm_callback(glp_tree *tree, void *info)
{
	mm_info *I = info;
	if (pb_mesh_cost_stop(I->C)) { /* cancelled: GLPK's incumbent, if any, counts */
		glp_ios_terminate(tree);
		return;
	}
	if (glp_ios_reason(tree) != GLP_ISELECT)
		return;
	I->nodes++;
	int best = glp_ios_best_node(tree);
	if (best) {
		double b = glp_ios_node_bound(tree, best);
		if (isfinite(b) && b > -1e300) {
			I->bound = b * I->scale;
			I->have_bound = 1;
			/* No open node can go below the start (the cutoff keeps it
			 * feasible, so GLPK, which has no incumbent, would go on
			 * branching over placements tied with it until the limit). */
			if (b >= 1 - MM_TOL) {
				I->closed = 1;
				glp_ios_terminate(tree);
			}
		}
	}
}

static double mm_wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 1 when every pin of the problem holds in owner. */
static int mm_pins_hold(const pb_mesh_cost *C, const int *owner)
{
	const pb_part_problem *P = C->P;
	if (!P->pin)
		return 1;
	for (int q = 0; q < C->n_groups; q++)
		for (int v = C->first[q]; v < C->first[q] + C->layers[q]; v++)
			if (P->pin[v] >= 0 && P->pin[v] < C->n && owner[C->order[P->pin[v]]] != q)
				return 0;
	return 1;
}

int pb_mesh_milp_place(pb_mesh_cost *C, int *owner, double time_limit, pb_mesh_eval *ev,
                       pb_mesh_milp_stats *st, pb_error *err)
{
	memset(st, 0, sizeof *st);
	st->bound = NAN;
	pb_part_problem *P = C->P;
	const pb_manycore *hw = &P->hw;
	const pb_mesh_grid *g = &C->grid;
	int n = C->n, G = C->n_groups, S = n - G + 1;
	if (hw->reward_mode != PB_REWARD_MAX_TIME)
		return pb_err(err, PB_EUSAGE,
		              "milp placement: models max(t) only (the layout's reward mode is "
		              "weighted); use --place local or exact");
	if (!mm_pins_hold(C, owner))
		return pb_err(err, PB_EUSAGE,
		              "milp placement: the start placement breaks a pin rule; the MILP "
		              "keeps pins as fixed cores");
	pb_mesh_cost_eval(C, owner, ev);
	double t0 = mm_wall();
	if (pb_mesh_cost_stop(C)) /* cancelled before: the start stays, no bound */
		return PB_OK;
	if (G <= 1) {
		st->proved = 1;
		st->bound = ev->max_time;
		return PB_OK;
	}
	/* directed links (arcs) and the transfers */
	int A = 0, *arc_of = malloc(4 * (size_t)n * sizeof *arc_of);
	int *tail = malloc(4 * (size_t)n * sizeof *tail),
	    *head = malloc(4 * (size_t)n * sizeof *head);
	int npairs = 0, *pp_p = malloc((size_t)G * G * sizeof *pp_p);
	int *pp_q = malloc((size_t)G * G * sizeof *pp_q);
	int K = n * (n - 1);
	mm_pair *pairs = malloc((size_t)K * sizeof *pairs);
	int *route = malloc((size_t)(g->rows + g->cols + 1) * sizeof *route);
	unsigned char *on = NULL; /* on[k * A + arc]: arc on the route of pair k */
	if (!arc_of || !tail || !head || !pp_p || !pp_q || !pairs || !route)
		goto oom;
	for (int l = 0; l < 4 * n; l++) {
		int f, t;
		pb_mesh_route_ends(g, l, &f, &t);
		arc_of[l] = -1;
		int r = l / 4 / g->cols, c = l / 4 % g->cols, d = l % 4;
		int ok = d == PB_MESH_E   ? c + 1 < g->cols
		         : d == PB_MESH_W ? c > 0
		         : d == PB_MESH_S ? r + 1 < g->rows
		                          : r > 0;
		if (ok) {
			arc_of[l] = A;
			tail[A] = f;
			head[A] = t;
			A++;
		}
	}
	for (int p = 0; p < G; p++)
		for (int q = p + 1; q < G; q++)
			if (C->T[p * G + q] > 0) {
				pp_p[npairs] = p;
				pp_q[npairs++] = q;
			}
	K = 0;
	for (int s = 0; s < n; s++)
		for (int d = 0; d < n; d++)
			if (s != d)
				pairs[K++] = (mm_pair){s, d, pb_mesh_route_hops(g, s, d)};
	qsort(pairs, (size_t)K, sizeof *pairs, mm_pair_cmp);
	long est = (long)n * G * 8 + (long)G * A * 4 + (long)npairs * ((long)K * 12 + (long)A * 8);
	if (est > PB_MESH_MILP_MAX_NZ) {
		free(arc_of);
		free(tail);
		free(head);
		free(pp_p);
		free(pp_q);
		free(pairs);
		free(route);
		return pb_err(err, PB_EUSAGE,
		              "milp placement: %d groups with %d transfers on %d cores is about "
		              "%ld matrix entries (at most %ld); use --place local",
		              G, npairs, n, est, PB_MESH_MILP_MAX_NZ);
	}
	on = calloc((size_t)K * (size_t)A + 1, 1);
	if (!on)
		goto oom;
	for (int k = 0; k < K; k++) {
		int h = pb_mesh_route_links(g, pairs[k].s, pairs[k].d, route);
		for (int i = 0; i < h; i++)
			on[(size_t)k * A + arc_of[route[i]]] = 1;
	}

	double scale = ev->max_time > 0 && isfinite(ev->max_time) ? ev->max_time : 1.0;
	double bw = hw->bandwidth, lbw = hw->link_bw;
	glp_prob *lp = glp_create_prob();
	glp_set_obj_dir(lp, GLP_MIN);
	mm_build B = {0};
	int cz = mm_cols(lp, 1, GLP_CV, GLP_LO, 0, 0);
	glp_set_obj_coef(lp, cz, 1.0);
	int cx = mm_cols(lp, n * G, GLP_BV, 0, 0, 0);
	int cy = mm_cols(lp, G * S, GLP_BV, 0, 0, 0);
	int cr = mm_cols(lp, n * G, GLP_BV, 0, 0, 0);
	int cf = mm_cols(lp, G * A, GLP_CV, GLP_DB, 0, n - 1);
	int cload = mm_cols(lp, A, GLP_CV, GLP_LO, 0, 0);
	int cL = mm_cols(lp, G, GLP_CV, GLP_LO, 0, 0);
	int cm = mm_cols(lp, G, GLP_CV, GLP_LO, 0, 0);
	int cH = mm_cols(lp, G, GLP_CV, GLP_LO, 0, 0);
#define X(c, q) (cx + (c)*G + (q))
	/* each core in one group; sizes; roots (the lowest core); flows */
	for (int c = 0; c < n; c++) {
		int r = mm_row(lp, GLP_FX, 1, 1);
		for (int q = 0; q < G; q++)
			mm_put(&B, r, X(c, q), 1);
	}
	for (int q = 0; q < G; q++) {
		int rs = mm_row(lp, GLP_FX, 0, 0), r1 = mm_row(lp, GLP_FX, 1, 1);
		for (int c = 0; c < n; c++)
			mm_put(&B, rs, X(c, q), 1);
		for (int s = 1; s <= S; s++) {
			mm_put(&B, rs, cy + q * S + s - 1, -(double)s);
			mm_put(&B, r1, cy + q * S + s - 1, 1);
		}
		int rr = mm_row(lp, GLP_FX, 1, 1);
		for (int c = 0; c < n; c++) {
			int col = cr + c * G + q;
			mm_put(&B, rr, col, 1);
			int a = mm_row(lp, GLP_UP, 0, 0);
			mm_put(&B, a, col, 1);
			mm_put(&B, a, X(c, q), -1);
			if (c > 0) { /* the root is the group's lowest core */
				int b = mm_row(lp, GLP_UP, 0, c);
				mm_put(&B, b, col, c);
				for (int c2 = 0; c2 < c; c2++)
					mm_put(&B, b, X(c2, q), 1);
			}
			/* in - out - x + n r >= 0 */
			int fl = mm_row(lp, GLP_LO, 0, 0);
			mm_put(&B, fl, X(c, q), -1);
			mm_put(&B, fl, col, n);
			for (int e = 0; e < A; e++) {
				if (head[e] == c)
					mm_put(&B, fl, cf + q * A + e, 1);
				if (tail[e] == c)
					mm_put(&B, fl, cf + q * A + e, -1);
			}
		}
		for (int e = 0; e < A; e++) {
			int a = mm_row(lp, GLP_UP, 0, 0), b = mm_row(lp, GLP_UP, 0, 0);
			mm_put(&B, a, cf + q * A + e, 1);
			mm_put(&B, a, X(tail[e], q), -(double)(n - 1));
			mm_put(&B, b, cf + q * A + e, 1);
			mm_put(&B, b, X(head[e], q), -(double)(n - 1));
		}
	}
	/* pins: fixed cores */
	if (P->pin)
		for (int q = 0; q < G; q++)
			for (int v = C->first[q]; v < C->first[q] + C->layers[q]; v++)
				if (P->pin[v] >= 0 && P->pin[v] < n)
					glp_set_col_bnds(lp, X(C->order[P->pin[v]], q), GLP_FX, 1,
					                 1);
	/* the load rows: load_l = sum of the chosen routes' traffic over l */
	int rload = glp_add_rows(lp, A);
	for (int e = 0; e < A; e++) {
		glp_set_row_bnds(lp, rload + e, GLP_FX, 0, 0);
		mm_put(&B, rload + e, cload + e, 1);
	}
	double M = 0;
	for (int i = 0; i < npairs; i++)
		M += C->T[pp_p[i] * G + pp_q[i]] / lbw / scale;
	for (int i = 0; i < npairs; i++) {
		int p = pp_p[i], q = pp_q[i];
		double Tt = C->T[p * G + q] / lbw / scale;
		int ca = mm_cols(lp, K, GLP_CV, GLP_DB, 0, 1);
		glp_set_col_bnds(lp, ca + K - 1, GLP_FX, 1, 1);
		for (int k = 0; k < K; k++) {
			int xs = X(pairs[k].s, p), xd = X(pairs[k].d, q);
			/* a[k] >= x_s + x_d - 1 (the pair is in both regions: a is on) */
			int r3 = mm_row(lp, GLP_LO, -1, 0);
			mm_put(&B, r3, ca + k, 1);
			mm_put(&B, r3, xs, -1);
			mm_put(&B, r3, xd, -1);
			/* a[k] - a[k-1] <= x_s and <= x_d (a turns on only at a pair of both) */
			int r1 = mm_row(lp, GLP_UP, 0, 0), r2 = mm_row(lp, GLP_UP, 0, 0);
			mm_put(&B, r1, ca + k, 1);
			mm_put(&B, r1, xs, -1);
			mm_put(&B, r2, ca + k, 1);
			mm_put(&B, r2, xd, -1);
			if (k > 0) {
				mm_put(&B, r1, ca + k - 1, -1);
				mm_put(&B, r2, ca + k - 1, -1);
				int r5 = mm_row(lp, GLP_LO, 0, 0); /* monotone */
				mm_put(&B, r5, ca + k, 1);
				mm_put(&B, r5, ca + k - 1, -1);
			}
		}
		/* chosen(k) = a[k] - a[k-1]: a coefficient c(k) on chosen(k) is
		 * c(k) - c(k+1) on a[k] (c(K) = 0) */
		int rh = mm_row(lp, GLP_LO, 0, 0);
		mm_put(&B, rh, cH + q, 1);
		for (int k = 0; k < K; k++) {
			double hk = pairs[k].hops, hn = k + 1 < K ? pairs[k + 1].hops : 0;
			mm_put(&B, rh, ca + k, -(hk - hn));
		}
		for (int e = 0; e < A; e++) {
			/* L_q - load_e - M on_e >= -M; load_e -= Tt on_e */
			int rl = mm_row(lp, GLP_LO, -M, 0);
			mm_put(&B, rl, cL + q, 1);
			mm_put(&B, rl, cload + e, -1);
			for (int k = 0; k < K; k++) {
				int ok = on[(size_t)k * A + e];
				int nk = k + 1 < K ? on[(size_t)(k + 1) * A + e] : 0;
				if (ok != nk) {
					mm_put(&B, rl, ca + k, -M * (ok - nk));
					mm_put(&B, rload + e, ca + k, -Tt * (ok - nk));
				}
			}
		}
	}
	/* valid bounds that tighten the relaxation: a transfer into q takes at
	 * least one hop (the regions are disjoint) and its route's links carry
	 * at least its bytes */
	for (int i = 0; i < npairs; i++) {
		int q = pp_q[i];
		double Tt = C->T[pp_p[i] * G + q] / lbw / scale;
		glp_set_col_bnds(lp, cH + q, GLP_LO, 1, 0);
		if (Tt > glp_get_col_lb(lp, cL + q))
			glp_set_col_bnds(lp, cL + q, GLP_LO, Tt, 0);
	}
	/* z >= compute(q, s) + own(q) + max(in(q), L(q)) + H(q) hop */
	for (int q = 0; q < G; q++) {
		glp_set_col_bnds(lp, cm + q, GLP_LO, C->in_b[q] / bw / scale, 0);
		int rm = mm_row(lp, GLP_LO, 0, 0);
		mm_put(&B, rm, cm + q, 1);
		mm_put(&B, rm, cL + q, -1);
		int rz = mm_row(lp, GLP_LO, 0, 0);
		mm_put(&B, rz, cz, 1);
		mm_put(&B, rz, cm + q, -1);
		mm_put(&B, rz, cH + q, -hw->hop_s / scale);
		for (int s = 1; s <= S; s++) {
			pb_part_group pg;
			int a = C->first[q];
			pb_part_eval_group(P, a, a + C->layers[q], s, &pg);
			double base = (pg.compute + C->own_b[q] / bw) / scale;
			mm_put(&B, rz, cy + q * S + s - 1, -(isfinite(base) ? base : 1e6));
		}
	}
	/* the cutoff: better than or equal to the start */
	int rc_ = mm_row(lp, GLP_UP, 0, 1 + MM_TOL);
	mm_put(&B, rc_, cz, 1);
#undef X
	if (B.oom) {
		glp_delete_prob(lp);
		free(B.ia);
		free(B.ja);
		free(B.ar);
		goto oom;
	}
	glp_load_matrix(lp, (int)B.nz, B.ia, B.ja, B.ar);
	st->rows = glp_get_num_rows(lp);
	st->cols = glp_get_num_cols(lp);
	st->nonzeros = B.nz;
	free(B.ia);
	free(B.ja);
	free(B.ar);

	mm_info I = {C, scale, NAN, 0, 0, 0};
	glp_iocp ip;
	glp_init_iocp(&ip);
	ip.msg_lev = GLP_MSG_OFF;
	ip.presolve = GLP_ON;
	ip.mip_gap = 0.0;
	ip.tm_lim = time_limit > 0 && time_limit < 2e6 ? (int)(time_limit * 1e3) : 2000000000;
	ip.cb_func = mm_callback;
	ip.cb_info = &I;
	int out = glp_term_out(GLP_OFF);
	int rc = glp_intopt(lp, &ip);
	glp_term_out(out);
	/* stopped by the limit or by the bound: GLPK's incumbent, if any, counts */
	int status = rc == 0 || rc == GLP_ETMLIM || rc == GLP_ESTOP ? glp_mip_status(lp) : 0;
	st->nodes = I.nodes;
	if ((rc == 0 && status == GLP_NOFEAS) || rc == GLP_ENOPFS) {
		/* nothing at or below the start: the start is optimal */
		st->proved = 1;
	} else if (status == GLP_OPT || status == GLP_FEAS) {
		int *cand = malloc((size_t)n * sizeof *cand);
		int *seen = malloc((size_t)n * sizeof *seen),
		    *queue = malloc((size_t)n * sizeof *queue);
		if (!cand || !seen || !queue) {
			free(cand);
			free(seen);
			free(queue);
			glp_delete_prob(lp);
			goto oom;
		}
		for (int c = 0; c < n; c++) {
			int best = 0;
			for (int q = 1; q < G; q++)
				if (glp_mip_col_val(lp, cx + c * G + q) >
				    glp_mip_col_val(lp, cx + c * G + best))
					best = q;
			cand[c] = best;
		}
		int valid = 1;
		for (int q = 0; q < G && valid; q++)
			valid = pb_mesh_place_connected(g, cand, q, -1, seen, queue);
		pb_mesh_eval e;
		if (valid) {
			pb_mesh_cost_eval(C, cand, &e);
			if (pb_mesh_cost_better(&e, ev)) {
				*ev = e;
				memcpy(owner, cand, (size_t)n * sizeof *owner);
				st->improved = 1;
			}
		}
		st->proved = (rc == 0 && status == GLP_OPT && valid) || (I.closed && valid);
		free(cand);
		free(seen);
		free(queue);
	}
	if (I.closed && status != GLP_OPT && status != GLP_FEAS)
		st->proved = 1; /* no incumbent in the tree: the start is optimal */
	if (st->proved)
		st->bound = ev->max_time;
	else if (I.have_bound)
		st->bound = fmin(I.bound, ev->max_time);
	glp_delete_prob(lp);
	pb_mesh_cost_eval(C, owner, ev); /* C->g and loads of the kept placement */
	st->seconds = mm_wall() - t0;
	int out_rc = PB_OK;
	goto out;
oom:
	out_rc = pb_err(err, PB_ENOMEM, "milp placement: out of memory");
out:
	free(arc_of);
	free(tail);
	free(head);
	free(pp_p);
	free(pp_q);
	free(pairs);
	free(route);
	free(on);
	return out_rc;
}
