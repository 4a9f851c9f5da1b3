/*
 * chain_milp_rules.c — the partition MILP for the cases the bottleneck
 * probing of chain_milp.c does not cover: cut and pin rules
 * (chain_rules.h), and the weighted objective (chain_problem.h). Built whole
 * and solved by GLPK's branch and bound (pb_milp_new_opts calls it).
 *
 *   x[a,b,c] in {0,1}: layers [a, b) form one group of c cores. Columns that
 *     a rule forbids are fixed to 0, i.e. never generated: a boundary a or b
 *     that is forbidden, a forced boundary strictly inside (a, b), pinned
 *     layers of [a, b) spread over more than c cores, a group over the core
 *     memory (when some partition fits it), a group whose own objective
 *     already exceeds the incumbent of the MILP's own greedy start.
 *   flow:    the chosen groups form a path over the positions 0..m;
 *   cores:   sum c x = n (the last group ends on the last core);
 *   pins:    layer v pinned to core k: the cores of the groups that end at
 *            or before v sum to <= k (its group starts on core k or
 *            earlier), and those of the groups that start at or before v
 *            to >= k + 1 (it ends on core k or later);
 *   objective, max_time mode: T >= sum over x leaving a of t(a,b,c) x for
 *            every position a (one group leaves a position of the path, none
 *            any other), minimise T (in units of the perfect-balance bound);
 *   weighted mode: the same rows for C (compute), S (storage) and R
 *            (routing), minimise wc C[ms] + ws S[MiB] + wr R[ms].
 * The optimum equals that of the label DP (exact_labels.c); neither reads
 * the other.
 */
#include "partition/milp/chain_milp.h"

#include <glpk.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition/chain/baselines.h"
#include "partition/chain/chain_rules.h"
#include "util/lp_file.h"

#define RULES_MAX_COLUMNS 400000

typedef struct col {
	int a, b, c;
	double t, comp, stor, rout;
} col;

static int allowed_pos(const pb_part_problem *P, int p)
{
	return p == 0 || p == P->m || !P->cut || P->cut[p] != PB_CUT_FORBID;
}

/* Generates the columns; returns their number or -1 (too many / memory). */
static int gen(pb_part_problem *P, int use_mem, int weighted, double ub, col **out)
{
	int m = P->m, n = P->n, cap = 1024, k = 0;
	col *cs = malloc((size_t)cap * sizeof *cs);
	if (!cs)
		return -1;
	const pb_manycore *h = &P->hw;
	for (int b = 1; b <= m; b++) {
		if (!allowed_pos(P, b))
			continue;
		for (int c = 1; c <= n; c++) {
			int pmin = n, pmax = -1;
			for (int a = b - 1; a >= 0; a--) {
				if (a + 1 < b && P->cut && P->cut[a + 1] == PB_CUT_FORCE)
					break;
				if (P->pin && P->pin[a] >= 0) {
					pmin = P->pin[a] < pmin ? P->pin[a] : pmin;
					pmax = P->pin[a] > pmax ? P->pin[a] : pmax;
				}
				if (pmax >= 0 && pmax - pmin + 1 > c)
					break;
				pb_part_group g;
				pb_part_eval_group(P, a, b, c, &g);
				if (use_mem && g.storage > h->memory)
					break;
				double own =
				    weighted ? h->w_compute * g.compute * 1e3 +
				                   h->w_storage * g.storage / (1024.0 * 1024.0) +
				                   h->w_routing * g.routing * 1e3
				             : g.time;
				if (own > ub)
					break;
				if (!allowed_pos(P, a))
					continue;
				if (k == cap) {
					if (cap >= RULES_MAX_COLUMNS) {
						free(cs);
						return -1;
					}
					cap *= 2;
					col *nc = realloc(cs, (size_t)cap * sizeof *nc);
					if (!nc) {
						free(cs);
						return -1;
					}
					cs = nc;
				}
				cs[k++] = (col){a, b, c, g.time, g.compute, g.storage, g.routing};
			}
		}
	}
	*out = cs;
	return k;
}

/* Adds row  sum coef[i] x[idx[i]] (+ extra var) with bounds; idx are 1-based GLPK
 * column numbers. */
static void add_row(glp_prob *lp, int len, int *idx, double *val, int type, double lb, double ub)
{
	int r = glp_add_rows(lp, 1);
	glp_set_row_bnds(lp, r, type, lb, ub);
	glp_set_mat_row(lp, r, len, idx, val);
}

int pb_milp_rules_solve(pb_part_problem *P, double time_limit, const char *emit_lp, int *ac,
                        pb_milp_rules_result *res, pb_error *err)
{
	memset(res, 0, sizeof *res);
	int m = P->m, n = P->n;
	int weighted = P->hw.reward_mode == PB_REWARD_WEIGHTED;
	/* Own start: greedy and block moves; its objective bounds the columns. */
	int *start = malloc((size_t)n * sizeof *start);
	if (!start)
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	pb_part_greedy(P, start);
	pb_part_local_search(P, start, 4 * n);
	pb_part_eval ev;
	pb_part_evaluate(P, start, &ev, NULL);
	int start_ok = !ev.violations && !ev.over_memory;
	double ub = start_ok ? ev.objective * (1 + 1e-9) : INFINITY;
	col *cs = NULL;
	int nc = -1, use_mem = 1;
	for (; use_mem >= 0; use_mem--) {
		free(cs);
		cs = NULL;
		nc = gen(P, use_mem, weighted, use_mem ? ub : INFINITY, &cs);
		if (nc < 0) {
			free(start);
			return pb_err(err, PB_EINPUT,
			              "milp: the model with rules or the weighted objective would "
			              "have more than %d columns (%d layers, %d cores): use "
			              "--method exact",
			              RULES_MAX_COLUMNS, m, n);
		}
		/* Is there a path at all within the memory? Reachability over the
		 * columns (with the core count and pins left to the MILP). */
		unsigned char *reach = calloc((size_t)m + 1, 1);
		if (!reach) {
			free(cs);
			free(start);
			return pb_err(err, PB_ENOMEM, "milp: out of memory");
		}
		reach[0] = 1;
		for (int i = 0; i < nc; i++) /* columns are sorted by end b */
			if (reach[cs[i].a])
				reach[cs[i].b] = 1;
		int ok = reach[m];
		free(reach);
		if (ok)
			break;
	}
	if (use_mem < 0)
		use_mem = 0;
	res->memory_used = use_mem;
	glp_term_out(GLP_OFF);
	glp_prob *lp = glp_create_prob();
	glp_set_prob_name(lp, "partbench_partition_rules");
	glp_set_obj_dir(lp, GLP_MIN);
	glp_set_obj_name(lp, weighted ? "weighted_objective" : "max_time_over_lower_bound");
	double unit = P->lower_bound > 0 ? P->lower_bound : 1.0;
	int nobj = weighted ? 3 : 1;
	/* columns 1..nobj: T or C, S, R; then x */
	glp_add_cols(lp, nobj + nc);
	const char *onames[] = {"C", "S", "R"};
	/* C and R in ms, S in MiB: the weights apply as they are */
	double ow[3] = {P->hw.w_compute, P->hw.w_storage, P->hw.w_routing};
	for (int j = 1; j <= nobj; j++) {
		glp_set_col_name(lp, j, weighted ? onames[j - 1] : "T");
		glp_set_col_bnds(lp, j, GLP_LO, 0, 0);
		glp_set_obj_coef(lp, j, weighted ? ow[j - 1] : 1.0);
	}
	for (int i = 0; i < nc; i++) {
		int j = nobj + 1 + i;
		char name[48];
		snprintf(name, sizeof name, "x_%d_%d_%d", cs[i].a, cs[i].b, cs[i].c);
		glp_set_col_name(lp, j, name);
		glp_set_col_kind(lp, j, GLP_BV);
	}
	int *idx = malloc(((size_t)nc + 2) * sizeof *idx);
	double *val = malloc(((size_t)nc + 2) * sizeof *val);
	int rc = PB_OK;
	if (!idx || !val) {
		rc = pb_err(err, PB_ENOMEM, "milp: out of memory");
		goto out;
	}
	/* flow */
	for (int p = 0; p <= m; p++) {
		int len = 0;
		for (int i = 0; i < nc; i++) {
			if (cs[i].a == p) {
				idx[++len] = nobj + 1 + i;
				val[len] = 1;
			} else if (cs[i].b == p) {
				idx[++len] = nobj + 1 + i;
				val[len] = -1;
			}
		}
		double rhs = p == 0 ? 1 : p == m ? -1 : 0;
		if (len || rhs != 0)
			add_row(lp, len, idx, val, GLP_FX, rhs, rhs);
	}
	/* cores */
	for (int i = 0; i < nc; i++) {
		idx[i + 1] = nobj + 1 + i;
		val[i + 1] = cs[i].c;
	}
	add_row(lp, nc, idx, val, GLP_FX, n, n);
	/* objective rows per start position */
	for (int o = 0; o < nobj; o++)
		for (int p = 0; p < m; p++) {
			int len = 0;
			idx[++len] = o + 1;
			val[len] = 1;
			for (int i = 0; i < nc; i++)
				if (cs[i].a == p) {
					idx[++len] = nobj + 1 + i;
					val[len] =
					    -(weighted ? (o == 0   ? cs[i].comp * 1e3
					                  : o == 1 ? cs[i].stor / (1024.0 * 1024.0)
					                           : cs[i].rout * 1e3)
					               : cs[i].t / unit);
				}
			if (len > 1)
				add_row(lp, len, idx, val, GLP_LO, 0, 0);
		}
	/* pins */
	for (int v = 0; P->pin && v < m; v++) {
		if (P->pin[v] < 0)
			continue;
		int len = 0;
		for (int i = 0; i < nc; i++)
			if (cs[i].b <= v) {
				idx[++len] = nobj + 1 + i;
				val[len] = cs[i].c;
			}
		if (len)
			add_row(lp, len, idx, val, GLP_UP, 0, P->pin[v]);
		len = 0;
		for (int i = 0; i < nc; i++)
			if (cs[i].a <= v) {
				idx[++len] = nobj + 1 + i;
				val[len] = cs[i].c;
			}
		add_row(lp, len, idx, val, GLP_LO, P->pin[v] + 1, 0);
	}
	res->columns = nc;
	if (emit_lp) {
		pb_error le = {0};
		if (pb_lp_write_atomic(lp, emit_lp, &le) == PB_OK)
			res->lp_written = 1;
	}
	glp_scale_prob(lp, GLP_SF_AUTO);
	glp_adv_basis(lp, 0);
	glp_smcp sm;
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	int lp_rc = glp_simplex(lp, &sm);
	if (lp_rc || glp_get_status(lp) == GLP_NOFEAS) {
		rc = pb_err(err, PB_EINPUT,
		            "milp: no partition of the %d layers on the %d cores of %s obeys the "
		            "rules (cut and core rules contradict each other or need more groups "
		            "than cores)",
		            m, n, P->hw.path[0] ? P->hw.path : P->hw.name);
		goto out;
	}
	double lp_bound = glp_get_obj_val(lp);
	glp_iocp io;
	glp_init_iocp(&io);
	io.msg_lev = GLP_MSG_OFF;
	io.presolve = GLP_OFF;
	if (time_limit > 0)
		io.tm_lim = (int)(time_limit * 1000) > 0 ? (int)(time_limit * 1000) : 1;
	int ip_rc = glp_intopt(lp, &io);
	int st = glp_mip_status(lp);
	if (st != GLP_OPT && st != GLP_FEAS) {
		if (ip_rc == GLP_ETMLIM && start_ok) {
			/* Nothing found in time: the start is the incumbent. */
			memcpy(ac, start, (size_t)n * sizeof *ac);
			res->objective = ev.objective;
			res->bound = (weighted ? lp_bound : lp_bound * unit);
			goto out;
		}
		rc = pb_err(err, PB_EINPUT,
		            "milp: no partition of the %d layers on the %d cores of %s obeys the "
		            "rules",
		            m, n, P->hw.path[0] ? P->hw.path : P->hw.name);
		goto out;
	}
	res->optimal = st == GLP_OPT;
	int ng = 0, *cores = malloc((size_t)n * 2 * sizeof *cores), *layers;
	if (!cores) {
		rc = pb_err(err, PB_ENOMEM, "milp: out of memory");
		goto out;
	}
	layers = cores + n;
	for (int p = 0; p < m && ng < n;) {
		int found = -1;
		for (int i = 0; i < nc; i++)
			if (cs[i].a == p && glp_mip_col_val(lp, nobj + 1 + i) > 0.5) {
				found = i;
				break;
			}
		if (found < 0)
			break;
		cores[ng] = cs[found].c;
		layers[ng++] = cs[found].b - p;
		p = cs[found].b;
	}
	pb_part_state_from_groups(ng, cores, layers, ac);
	free(cores);
	pb_part_evaluate(P, ac, &ev, NULL);
	res->objective = ev.objective;
	res->bound = res->optimal ? ev.objective : (weighted ? lp_bound : lp_bound * unit);
out:
	free(idx);
	free(val);
	free(cs);
	free(start);
	glp_delete_prob(lp);
	return rc;
}
