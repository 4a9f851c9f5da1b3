/*
 * partition/chain_milp.c — GLPK model and coroutine-driven branch and bound (chain_milp.h).
 */
#include "partition/chain_milp.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partition/baselines.h"
#include "util/coro.h"
#include "partition/exact.h"

#define MILP_STACK (4u << 20)
#define MILP_MAX_COLUMNS 2000000
#define MILP_MAX_NONZEROS 8000000L

struct pb_milp {
	pb_part_problem *P;
	glp_prob *lp;
	int n_cols;        /* x columns; column n_cols + 1 is T */
	int *ca, *cb, *cc; /* per x column (0-based): a, b, cores */
	double unit;       /* seconds per objective unit (the lower bound) */
	pb_coro *co;       /* runs glp_simplex + glp_intopt (co_main) */
	int started, finished, aborting;
	int budget;
	double step_deadline;
	long nodes;
	double bound, incumbent;
	int improved;
	int *inc_ac;
	int glp_status;
};

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void solution_to_state(pb_milp *M, int from_mip)
{
	pb_part_problem *P = M->P;
	int *cores = malloc((size_t)P->n * 2 * sizeof *cores), *layers = cores + P->n;
	/* Follow the path from position 0. */
	int pos = 0, ng = 0, used = 0;
	while (pos < P->m && ng < P->n) {
		int found = -1;
		for (int j = 0; j < M->n_cols; j++)
			if (M->ca[j] == pos) {
				double v = from_mip ? glp_mip_col_val(M->lp, j + 1)
				                    : glp_get_col_prim(M->lp, j + 1);
				if (v > 0.5) {
					found = j;
					break;
				}
			}
		if (found < 0)
			break;
		cores[ng] = M->cc[found];
		layers[ng] = M->cb[found] - M->ca[found];
		used += cores[ng];
		ng++;
		pos = M->cb[found];
	}
	if (pos == P->m && used <= P->n) {
		/* Spare cores go to the slowest groups (never slower). */
		int spare = P->n - used;
		while (spare-- > 0) {
			int best = 0, a = 0;
			double tb = -1;
			for (int g = 0; g < ng; g++) {
				pb_part_group gr;
				pb_part_eval_group(P, a, a + layers[g], cores[g], &gr);
				if (gr.time > tb) {
					tb = gr.time;
					best = g;
				}
				a += layers[g];
			}
			cores[best]++;
		}
		pb_part_state_from_groups(ng, cores, layers, M->inc_ac);
		M->improved = 1;
	}
	free(cores);
}

static void callback(glp_tree *tree, void *info)
{
	pb_milp *M = info;
	if (M->aborting) {
		glp_ios_terminate(tree);
		return;
	}
	switch (glp_ios_reason(tree)) {
	case GLP_IBINGO:
		M->incumbent = glp_get_obj_val(M->lp) * M->unit;
		solution_to_state(M, 0);
		break;
	case GLP_ISELECT: {
		M->nodes++;
		int best = glp_ios_best_node(tree);
		if (best)
			M->bound = glp_ios_node_bound(tree, best) * M->unit;
		if (--M->budget <= 0 || now_seconds() > M->step_deadline)
			pb_coro_yield(M->co);
		if (M->aborting)
			glp_ios_terminate(tree);
		break;
	}
	default:
		break;
	}
}

static void co_main(void *arg)
{
	pb_milp *M = arg;
	glp_smcp sp;
	glp_init_smcp(&sp);
	sp.msg_lev = GLP_MSG_OFF;
	int rc = glp_simplex(M->lp, &sp);
	if (rc == 0 && glp_get_status(M->lp) == GLP_OPT) {
		M->bound = glp_get_obj_val(M->lp) * M->unit;
		glp_iocp ip;
		glp_init_iocp(&ip);
		ip.msg_lev = GLP_MSG_OFF;
		ip.cb_func = callback;
		ip.cb_info = M;
		ip.mip_gap = 0.0;
		rc = glp_intopt(M->lp, &ip);
		M->glp_status = rc == 0 ? glp_mip_status(M->lp) : -rc;
		if (M->glp_status == GLP_OPT) {
			double z = glp_mip_obj_val(M->lp) * M->unit;
			if (z < M->incumbent || !isfinite(M->incumbent)) {
				M->incumbent = z;
				solution_to_state(M, 1);
			}
			M->bound = M->incumbent;
		}
	} else {
		M->glp_status = -1;
	}
	M->finished = 1;
}

static int add_column(pb_milp *M, int *cap, int a, int b, int c)
{
	if (M->n_cols == *cap) {
		int nc = *cap ? *cap * 2 : 1024;
		int *na = realloc(M->ca, (size_t)nc * sizeof *na);
		if (!na)
			return -1;
		M->ca = na;
		int *nb = realloc(M->cb, (size_t)nc * sizeof *nb);
		if (!nb)
			return -1;
		M->cb = nb;
		int *ncc = realloc(M->cc, (size_t)nc * sizeof *ncc);
		if (!ncc)
			return -1;
		M->cc = ncc;
		*cap = nc;
	}
	M->ca[M->n_cols] = a;
	M->cb[M->n_cols] = b;
	M->cc[M->n_cols] = c;
	M->n_cols++;
	return 0;
}

int pb_milp_new(pb_part_problem *P, double reference, const char *emit_lp, pb_milp **out,
                pb_error *err)
{
	*out = NULL;
	pb_milp *M = calloc(1, sizeof *M);
	if (!M)
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	M->P = P;
	M->bound = NAN;
	M->incumbent = INFINITY;
	M->unit = P->lower_bound > 0 ? P->lower_bound : 1.0;
	M->inc_ac = malloc((size_t)P->n * sizeof *M->inc_ac);
	/* Upper bound from local search; memory feasibility from the DP. */
	int *dp = malloc(((size_t)P->m + 1) * 2 * sizeof *dp), *from = dp + P->m + 1;
	int use_mem = pb_part_exact_min_cores(P, INFINITY, 1, dp, from, NULL) <= P->n;
	int *ub_ac = malloc((size_t)P->n * sizeof *ub_ac);
	pb_part_greedy(P, ub_ac);
	pb_part_local_search(P, ub_ac, 1 << 20);
	pb_part_eval ev;
	pb_part_evaluate(P, ub_ac, &ev, NULL);
	double UB = (!ev.over_memory || !use_mem) ? ev.max_time * (1 + 1e-9) : INFINITY;
	free(ub_ac);
	free(dp);
	/* Generate columns. */
	int cap = 0;
	long nnz = 0;
	const double rate = P->hw.mac_rate, bw = P->hw.bandwidth, LB = P->lower_bound;
	for (int b = 1; b <= P->m; b++) {
		double in = 0, own = 0;
		for (int a = b - 1; a >= 0; a--) {
			if (P->min_succ[a] < b) {
				in -= P->ob[a];
				own += P->ob[a];
			}
			for (int k = P->pred_off[a]; k < P->pred_off[a + 1]; k++)
				if (P->pred_next[k] >= b)
					in += P->ob[P->pred[k]];
			double macs = P->pmacs[b] - P->pmacs[a];
			double rt = ((in > 0 ? in : 0) + own) / bw;
			double store = P->pstore[b] - P->pstore[a] + (in > 0 ? in : 0);
			if (macs / (rate * P->n) + rt > UB)
				continue;
			double prev = INFINITY;
			for (int c = 1; c <= P->n; c++) {
				double t = macs / (c * rate) + rt;
				if (use_mem && store / c > P->hw.memory)
					continue;
				if (t > UB || !(t < prev * (1 - 1e-12)))
					continue;
				prev = t;
				if (add_column(M, &cap, a, b, c)) {
					pb_milp_free(M);
					return pb_err(err, PB_ENOMEM, "milp: out of memory");
				}
				nnz += 2 + 1 + (b - a);
				if (M->n_cols > MILP_MAX_COLUMNS || nnz > MILP_MAX_NONZEROS) {
					pb_milp_free(M);
					return pb_err(
					    err, PB_EUSAGE,
					    "milp: the model would have more than %d columns "
					    "or %ld nonzeros (%d layers, %d cores); use "
					    "--method exact for a model this large",
					    MILP_MAX_COLUMNS, MILP_MAX_NONZEROS, P->m, P->n);
				}
				if (t <= LB * (1 + 1e-12))
					break;
			}
		}
	}
	(void)reference;
	/* Rows: m+1 flow, 1 cores, m time. Columns: x..., T. */
	glp_term_out(GLP_OFF);
	glp_prob *lp = glp_create_prob();
	M->lp = lp;
	glp_set_prob_name(lp, "partbench_partition");
	glp_set_obj_name(lp, "max_time_over_lower_bound");
	glp_set_obj_dir(lp, GLP_MIN);
	int m = P->m, nx = M->n_cols;
	glp_add_rows(lp, (m + 1) + 1 + m);
	char name[64];
	for (int p = 0; p <= m; p++) {
		snprintf(name, sizeof name, "flow_%d", p);
		glp_set_row_name(lp, p + 1, name);
		double rhs = p == 0 ? -1.0 : p == m ? 1.0 : 0.0;
		glp_set_row_bnds(lp, p + 1, GLP_FX, rhs, rhs);
	}
	glp_set_row_name(lp, m + 2, "cores");
	glp_set_row_bnds(lp, m + 2, GLP_UP, 0.0, (double)P->n);
	for (int k = 0; k < m; k++) {
		snprintf(name, sizeof name, "time_%d", k);
		glp_set_row_name(lp, m + 3 + k, name);
		glp_set_row_bnds(lp, m + 3 + k, GLP_UP, 0.0, 0.0); /* sum t x - T <= 0 */
	}
	glp_add_cols(lp, nx + 1);
	size_t NZ = (size_t)nnz + (size_t)m + 1;
	int *ia = malloc((NZ + 1) * sizeof *ia), *ja = malloc((NZ + 1) * sizeof *ja);
	double *ar = malloc((NZ + 1) * sizeof *ar);
	if (!ia || !ja || !ar) {
		free(ia);
		free(ja);
		free(ar);
		pb_milp_free(M);
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	}
	size_t z = 0;
	for (int j = 0; j < nx; j++) {
		int a = M->ca[j], b = M->cb[j], c = M->cc[j], col = j + 1;
		snprintf(name, sizeof name, "x_%d_%d_%d", a, b, c);
		glp_set_col_name(lp, col, name);
		glp_set_col_kind(lp, col, GLP_BV);
		pb_part_group gr;
		pb_part_eval_group(P, a, b, c, &gr);
		double t = gr.time / M->unit;
		z++, ia[z] = a + 1, ja[z] = col, ar[z] = -1.0; /* leaves position a */
		z++, ia[z] = b + 1, ja[z] = col, ar[z] = 1.0;  /* arrives at position b */
		z++, ia[z] = m + 2, ja[z] = col, ar[z] = c;
		for (int k = a; k < b; k++)
			z++, ia[z] = m + 3 + k, ja[z] = col, ar[z] = t;
	}
	int tcol = nx + 1;
	glp_set_col_name(lp, tcol, "T");
	glp_set_col_bnds(lp, tcol, GLP_LO, 0.0, 0.0);
	glp_set_obj_coef(lp, tcol, 1.0);
	for (int k = 0; k < m; k++)
		z++, ia[z] = m + 3 + k, ja[z] = tcol, ar[z] = -1.0;
	glp_load_matrix(lp, (int)z, ia, ja, ar);
	free(ia);
	free(ja);
	free(ar);
	if (emit_lp && glp_write_lp(lp, NULL, emit_lp) != 0) {
		pb_milp_free(M);
		return pb_err(err, PB_EINPUT, "%s: cannot write the LP file", emit_lp);
	}
	*out = M;
	return PB_OK;
}

int pb_milp_step(pb_milp *M, int nodes, int *ac, int *improved, pb_error *err)
{
	*improved = 0;
	if (M->finished)
		return PB_OK;
	M->budget = nodes > 0 ? nodes : 1;
	M->step_deadline = now_seconds() + 0.05;
	M->improved = 0;
	if (!M->started) {
		M->co = pb_coro_new(co_main, M, MILP_STACK);
		if (!M->co)
			return pb_err(err, PB_ENOMEM, "milp: out of memory");
		M->started = 1;
	}
	pb_coro_resume(M->co);
	if (M->improved) {
		memcpy(ac, M->inc_ac, (size_t)M->P->n * sizeof *ac);
		*improved = 1;
	}
	if (M->finished && M->glp_status != GLP_OPT && !isfinite(M->incumbent))
		return pb_err(err, PB_EINTERNAL, "milp: GLPK found no integer solution (status %d)",
		              M->glp_status);
	return PB_OK;
}

int pb_milp_done(const pb_milp *M)
{
	return M->finished;
}

long pb_milp_nodes(const pb_milp *M)
{
	return M->nodes;
}

double pb_milp_bound(const pb_milp *M)
{
	return M->bound;
}

double pb_milp_incumbent(const pb_milp *M)
{
	return M->incumbent;
}

int pb_milp_columns(const pb_milp *M)
{
	return M->n_cols;
}

void pb_milp_free(pb_milp *M)
{
	if (!M)
		return;
	if (M->started && !M->finished) {
		/* Let GLPK unwind normally: the callback terminates the search. */
		M->aborting = 1;
		while (!M->finished)
			pb_coro_resume(M->co);
	}
	if (M->lp)
		glp_delete_prob(M->lp);
	pb_coro_free(M->co);
	free(M->ca);
	free(M->cb);
	free(M->cc);
	free(M->inc_ac);
	free(M);
}

int pb_milp_solve(pb_part_problem *P, const char *emit_lp, double *optimum, int *ac, pb_error *err)
{
	pb_milp *M;
	int rc = pb_milp_new(P, NAN, emit_lp, &M, err);
	if (rc)
		return rc;
	int improved;
	int *scratch = malloc((size_t)P->n * sizeof *scratch);
	while (!M->finished && rc == PB_OK)
		rc = pb_milp_step(M, 1000, scratch, &improved, err);
	free(scratch);
	if (rc == PB_OK) {
		pb_part_eval ev;
		pb_part_evaluate(P, M->inc_ac, &ev, NULL);
		*optimum = ev.max_time;
		if (ac)
			memcpy(ac, M->inc_ac, (size_t)P->n * sizeof *ac);
	}
	pb_milp_free(M);
	return rc;
}
