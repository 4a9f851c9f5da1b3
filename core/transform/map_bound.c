/*
 * map_bound.c — a lower bound on the pipelined period (map.h): the linear
 * relaxation of the assignment (GLPK).
 *
 * Every mapped node v is split over its allowed backends (x_vb >= 0,
 * sum_b x_vb = 1); each backend's load sum_v t(v, b) x_vb is at most T;
 * minimise T. Any assignment is a 0/1 point of this LP and its period is at
 * least its largest backend load (launches and transfers only add), so the
 * LP optimum bounds the period of every assignment from below. It is much
 * tighter than spreading the least node times evenly when the backends'
 * speeds differ (the CPU of layouts/hetero.lua runs a Conv 35x slower than
 * the GPU).
 */
#include <glpk.h>
#include <math.h>
#include <stdlib.h>

#include "transform/map.h"

static int allowed(const pb_map_result *r, const int *force, int nb, int v, int b)
{
	if (r->folded[v] || r->prio[(size_t)v * nb + b] <= 0)
		return 0;
	return !(force && force[v] >= 0 && force[v] < nb &&
	         r->prio[(size_t)v * nb + force[v]] > 0 && force[v] != b);
}

int pb_map_period_lp(const pb_graph *g, const pb_hetero *h, const pb_map_result *r,
                     const int *force, double *lb, pb_error *err)
{
	*lb = 0;
	int n = g->n_nodes, nb = h->n, cols = 1, nz = 0;
	for (int v = 0; v < n; v++)
		for (int b = 0; b < nb; b++)
			if (allowed(r, force, nb, v, b)) {
				cols++;
				nz += 2;
			}
	nz += nb;
	int *ia = malloc(((size_t)nz + 1) * sizeof *ia),
	    *ja = malloc(((size_t)nz + 1) * sizeof *ja);
	double *ar = malloc(((size_t)nz + 1) * sizeof *ar);
	int *row_of = malloc(((size_t)n + 1) * sizeof *row_of);
	if (!ia || !ja || !ar || !row_of) {
		free(ia);
		free(ja);
		free(ar);
		free(row_of);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	}
	glp_prob *lp = glp_create_prob();
	glp_set_obj_dir(lp, GLP_MIN);
	/* Rows 1..nb: backend loads - T <= 0; then one row per mapped node. */
	int rows = nb;
	for (int v = 0; v < n; v++)
		row_of[v] = r->folded[v] ? -1 : ++rows;
	glp_add_rows(lp, rows);
	for (int b = 1; b <= nb; b++)
		glp_set_row_bnds(lp, b, GLP_UP, 0, 0);
	for (int i = nb + 1; i <= rows; i++)
		glp_set_row_bnds(lp, i, GLP_FX, 1, 1);
	glp_add_cols(lp, cols);
	glp_set_col_bnds(lp, 1, GLP_LO, 0, 0); /* T */
	glp_set_obj_coef(lp, 1, 1);
	int k = 0, c = 1;
	for (int b = 1; b <= nb; b++) {
		++k;
		ia[k] = b;
		ja[k] = 1;
		ar[k] = -1;
	}
	for (int v = 0; v < n; v++)
		for (int b = 0; b < nb; b++) {
			if (!allowed(r, force, nb, v, b))
				continue;
			++c;
			glp_set_col_bnds(lp, c, GLP_LO, 0, 0);
			++k;
			ia[k] = b + 1;
			ja[k] = c;
			ar[k] = pb_map_node_time(g, h, b, v);
			++k;
			ia[k] = row_of[v];
			ja[k] = c;
			ar[k] = 1;
		}
	glp_load_matrix(lp, k, ia, ja, ar);
	glp_smcp parm;
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_ON;
	int rc = PB_OK;
	if (glp_simplex(lp, &parm) == 0 && glp_get_status(lp) == GLP_OPT)
		*lb = glp_get_obj_val(lp) * (1 - 1e-9); /* the solver's tolerance */
	else
		rc = pb_err(err, PB_EINTERNAL, "%s: the period's LP bound was not solved (GLPK)",
		            g->path);
	glp_delete_prob(lp);
	free(ia);
	free(ja);
	free(ar);
	free(row_of);
	return rc;
}
