/*
 * partition/milp/chain_milp.c — probing and the optimisation MILP, stepped unit by unit
 * (chain_milp.h documents the formulation).
 *
 * Stages: PROBE (one probe per unit: build its arcs, then the fewest-core path over
 * them, a shortest path in a DAG; both loops tick) -> COLUMNS (generate the MILP's
 * columns for the bracket [L, U], in slices of end positions) -> ROOT (its LP relaxation
 * in slices) -> BB (glp_intopt on a coroutine; one unit = one node) -> DONE; chains of
 * MILP_FINISH_LAYERS or more go PROBE -> FINISH (candidate list, then one probe per
 * unit) -> DONE.
 * Invariants: L <= optimum <= U; U is the max(t) of inc_ac; every column and arc is
 * evaluated with the same formulas as pb_part_eval_group (routing bytes accumulated
 * while the segment start moves down, as in chain_problem.c).
 */
#include "partition/milp/chain_milp.h"

#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <poll.h>

#include "partition/chain/baselines.h"
#include "partition/milp/chain_milp_root.h"
#include "partition/milp/chain_milp_seg.h"
#include "partition/milp/chain_milp_weighted.h"
#include "util/coro.h"
#include "util/job.h"
#include "util/lp_file.h"

#define MILP_STACK (4u << 20)
#define MILP_SLICE 0.05           /* seconds of work per unit, at most about */
#define MILP_PROBE_GAP 0.002      /* default: probe until U <= L (1 + this) */
#define MILP_MODEL_COLUMNS 250000 /* probe further while the MILP would be larger */
#define MILP_MAX_COLUMNS 2000000  /* never build a larger MILP */
#define MILP_CLOSED 1e-9          /* U <= L (1 + this): nothing left to bisect */
/* Seconds per glp_simplex call of the root LP (PB_MILP_ROOT_CHUNK). Not shorter: each
 * call starts GLPK's dual simplex unperturbed, and swin_t x 64's root LP is so dual
 * degenerate that calls of 0.1 s (about 10 iterations each under load) stalled at one
 * objective value: no optimum after 1400 calls (5 min) where 1 s calls need 7
 * (2026-11-26). In a workbench job the root LP runs in a child (chain_milp_root.h). */
#define MILP_CANCELLED (-1000) /* a unit stopped for a cancelled job (not an error) */

enum { ST_PROBE, ST_COLUMNS, ST_ROOT, ST_BB, ST_FINISH, ST_WEIGHTED, ST_DONE };
static const char *const stage_names[] = {
    "probing", "columns", "root LP", "branch and bound", "probing", "branch and bound", "done"};
/* Chains of this many layers or more end with probes on candidate values (finish_unit)
 * instead of the MILP: its 3m + 2 rows made it grow about m^1.7 (a 10,000-layer conv
 * chain on 64 cores: 45 s to the proof). */
#define MILP_FINISH_LAYERS 1000
#define MILP_MAX_CANDIDATES 4000000 /* else probe the bracket narrower first */

struct pb_milp {
	pb_part_problem *P;
	pb_milp_opts o;
	double probe_gap; /* current target; shrinks when the MILP would be too large */
	char *emit_lp;
	int emitted;
	int use_mem;
	double L, U, unit, bb_bound;
	int *inc_ac, *g_cores, *g_layers; /* incumbent; a path's groups (n entries each) */
	int improved;
	int stage;
	pb_milp_state state;
	double elapsed, deadline_abs;
	double stage_s[ST_DONE]; /* seconds spent in each stage */
	long probes, nodes;
	double *wm, *wr, *ws; /* walk(): MACs, routing time, storage of [b-1-k, b) */
	/* the probe in progress */
	double theta;
	int n_arcs, arc_cap, last_arcs;
	int *arc_a, *arc_b, *arc_c;
	int *path_cost, *path_via; /* probe_path's labels (m + 1 entries each) */
	pb_milp_seg seg;           /* segment costs by end (chain_milp_seg.h) */
	int *start;                /* probe_build: per core count, the longest start */
	int *start_l;              /* collect: per core count, the first start under L */
	double *cand;              /* finish: candidate optima in [L, U], ascending */
	int n_cand, cand_lo, cand_hi, cand_ready;
	/* the optimisation MILP */
	glp_prob *lp;
	int n_cols, col_cap, gen_b;
	int *ca, *cb, *cc;
	double *ct;
	double gen_L, gen_U;
	int *first, *order; /* columns by start position: order[first[a] .. first[a+1]) */
	pb_coro *co;
	int aborting, budget, glp_status, heur_given;
	int in_co, paused;      /* GLPK runs on co; it yielded for a job's slice (1), or for a
	                         * frame now (2) */
	int root_done, root_rc; /* the root LP's glp_simplex has returned, its code */
	pb_milp_root root;      /* the root LP's child in a job */
	int child; /* 0: none yet; 1: running; 2: its basis is loaded; -1: solve in process */
	double slice_end; /* the root LP's current unit ends here */
	char note[200];
	int rules_columns; /* the whole MILP of chain_milp_rules.c, 0 otherwise */
	pb_milp_w *W;      /* the weighted objective's search (chain_milp_weighted.h), or NULL */
};

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double seg_time(const pb_milp *M, int k, int c)
{
	return M->wm[k] / ((double)c * M->P->hw.mac_rate) + M->wr[k];
}

/* [b-1-k, b) on c cores within T and (when it counts) the memory. */
static int fits(const pb_milp *M, int k, int c, double T)
{
	return seg_time(M, k, c) <= T && (!M->use_mem || M->ws[k] / c <= M->P->hw.memory);
}

/* Segments ending at b, growing: fills wm/wr/ws for starts a = b-1, b-2, ... while
 * [a, b) on all n cores takes at most tmax (and fits the memory); returns how many.
 * All three only grow as a moves down, so the first failure ends the walk. */
static int walk(pb_milp *M, int b, double tmax)
{
	pb_part_problem *P = M->P;
	const double rate = P->hw.mac_rate, bw = P->hw.bandwidth, mem = P->hw.memory;
	double in = 0, own = 0;
	int k = 0;
	for (int a = b - 1; a >= 0; a--) {
		if (P->min_succ[a] < b) { /* a's output now stays inside */
			in -= P->ob[a];
			own += P->ob[a];
		}
		for (int e = P->pred_off[a]; e < P->pred_off[a + 1]; e++)
			if (P->pred_next[e] >= b) /* a is the producer's last consumer here */
				in += P->ob[P->pred[e]];
		double inb = in > 0 ? in : 0;
		double macs = P->pmacs[b] - P->pmacs[a];
		double rt = (inb + own) / bw;
		double st = P->pstore[b] - P->pstore[a] + inb;
		if (macs / ((double)P->n * rate) + rt > tmax)
			break;
		if (M->use_mem && st / P->n > mem)
			break;
		M->wm[k] = macs;
		M->wr[k] = rt;
		M->ws[k] = st;
		k++;
	}
	return k;
}

/* Fewest cores that run walk entry k within T (and the memory); n + 1 if none. */
static int cores_needed(const pb_milp *M, int k, double T)
{
	const pb_part_problem *P = M->P;
	const int n = P->n;
	double need = 1;
	if (M->wm[k] > 0 && isfinite(T)) {
		if (!(T > M->wr[k]))
			return n + 1;
		double x = M->wm[k] / (P->hw.mac_rate * (T - M->wr[k]));
		if (x > need)
			need = x;
	}
	if (M->use_mem && M->ws[k] > 0) {
		double y = M->ws[k] / P->hw.memory;
		if (y > need)
			need = y;
	}
	if (!(need <= n + 1))
		return n + 1;
	int c = (int)ceil(need);
	if (c < 1)
		c = 1;
	while (c <= n && !fits(M, k, c, T)) /* the closed form may be off by rounding */
		c++;
	while (c > 1 && fits(M, k, c - 1, T))
		c--;
	return c;
}

/* The groups of a path (cores, layers) become a state: spare cores go one by one
 * to the slowest group (never slower), then the state is evaluated; it becomes the
 * incumbent when its max(t) beats U. */
static void install(pb_milp *M, int ng)
{
	pb_part_problem *P = M->P;
	int used = 0;
	for (int g = 0; g < ng; g++)
		used += M->g_cores[g];
	if (ng < 1 || used > P->n)
		return;
	for (int spare = P->n - used; spare > 0; spare--) {
		pb_job_tick();
		int best = 0, a = 0;
		double tb = -1;
		for (int g = 0; g < ng; g++) {
			pb_part_group gr;
			pb_part_eval_group(P, a, a + M->g_layers[g], M->g_cores[g], &gr);
			if (gr.time > tb) {
				tb = gr.time;
				best = g;
			}
			a += M->g_layers[g];
		}
		M->g_cores[best]++;
	}
	int *ac = malloc((size_t)P->n * sizeof *ac);
	if (!ac)
		return;
	pb_part_state_from_groups(ng, M->g_cores, M->g_layers, ac);
	pb_part_eval ev;
	pb_part_evaluate(P, ac, &ev, NULL);
	if (ev.max_time < M->U) {
		M->U = ev.max_time;
		memcpy(M->inc_ac, ac, (size_t)P->n * sizeof *ac);
		M->improved = 1;
	}
	free(ac);
}

static int grow(void **p, int cap, size_t size)
{
	void *q = realloc(*p, (size_t)cap * size);
	if (!q)
		return -1;
	*p = q;
	return 0;
}

/* ---- probing ---------------------------------------------------------------------- */

static int add_arc(pb_milp *M, int a, int b, int c)
{
	if (M->n_arcs == M->arc_cap) {
		int nc = M->arc_cap ? 2 * M->arc_cap : 1024;
		if (grow((void **)&M->arc_a, nc, sizeof(int)) ||
		    grow((void **)&M->arc_b, nc, sizeof(int)) ||
		    grow((void **)&M->arc_c, nc, sizeof(int)))
			return -1;
		M->arc_cap = nc;
	}
	M->arc_a[M->n_arcs] = a;
	M->arc_b[M->n_arcs] = b;
	M->arc_c[M->n_arcs] = c;
	M->n_arcs++;
	return 0;
}

/* [a, b) (costs C) on c cores within T and (when it counts) the memory: fits()'s test. */
static int cost_fits(const pb_milp *M, const pb_milp_seg_cost *C, int c, double T)
{
	double t = C->macs / ((double)c * M->P->hw.mac_rate) + C->routing;
	return t <= T && (!M->use_mem || C->storage / c <= M->P->hw.memory);
}

/* The arcs of the feasibility problem for θ: for each end b and core count c, the
 * longest segment [a, b) that c cores run within θ (one arc per distinct segment,
 * with the fewest cores). That start only moves up as b grows (a segment inside
 * another never costs more), so one pointer per core count walks the chain once:
 * O(n m log m) per probe (chain_milp_seg.h), where moving the start down from each
 * end was O(m^2). Arcs come out by end b ascending, every start a < b. Returns
 * MILP_CANCELLED when the workbench job was cancelled or the time limit passed
 * meanwhile (the probe is lost); the deadline is checked per end b. */
static int probe_build(pb_milp *M, double theta, pb_error *err)
{
	pb_part_problem *P = M->P;
	const int m = P->m, n = P->n;
	int *start = M->start;
	M->n_arcs = 0;
	pb_milp_seg_reset(&M->seg);
	for (int c = 1; c <= n; c++)
		start[c] = 0;
	for (int b = 1; b <= m; b++) {
		pb_job_tick();
		if (pb_job_cancelled() || ((b & 63) == 0 && now_seconds() >= M->deadline_abs))
			return MILP_CANCELLED;
		pb_milp_seg_advance(&M->seg);
		int prev_a = b; /* the start of the last arc added for this b */
		for (int c = 1; c <= n; c++) {
			pb_milp_seg_cost C;
			int a = start[c];
			for (; a < b; a++) {
				pb_milp_seg_cost_of(&M->seg, a, &C);
				if (cost_fits(M, &C, c, theta))
					break;
			}
			start[c] = a;
			if (a < prev_a) {
				if (add_arc(M, a, b, c))
					return pb_err(err, PB_ENOMEM, "milp: out of memory");
				prev_a = a;
			}
		}
	}
	M->last_arcs = M->n_arcs;
	return PB_OK;
}

/* The fewest cores over paths 0 -> m of the arcs (a shortest path in a DAG whose
 * arcs come by end ascending, so every arc into a is relaxed before arcs leave a);
 * the path's groups go to g_cores/g_layers. Returns the cores (INT_MAX: no path)
 * and the number of groups in *ng. Ties keep the first arc found. */
static int probe_path(pb_milp *M, int *ng)
{
	const int m = M->P->m;
	int *cost = M->path_cost, *via = M->path_via;
	for (int p = 0; p <= m; p++) {
		cost[p] = INT_MAX;
		via[p] = -1;
	}
	cost[0] = 0;
	for (int j = 0; j < M->n_arcs; j++) {
		if ((j & 4095) == 0) {
			pb_job_tick();
			if (pb_job_cancelled())
				return INT_MAX; /* probe_unit drops the probe */
		}
		int a = M->arc_a[j], b = M->arc_b[j];
		if (cost[a] != INT_MAX && cost[a] + M->arc_c[j] < cost[b]) {
			cost[b] = cost[a] + M->arc_c[j];
			via[b] = j;
		}
	}
	*ng = 0;
	if (cost[m] == INT_MAX || cost[m] > M->P->n)
		return cost[m];
	int k = 0;
	for (int p = m; p > 0; p = M->arc_a[via[p]])
		k++;
	*ng = k;
	for (int p = m; p > 0; p = M->arc_a[via[p]]) {
		int j = via[p];
		k--;
		M->g_cores[k] = M->arc_c[j];
		M->g_layers[k] = M->arc_b[j] - M->arc_a[j];
	}
	return cost[m];
}

static double next_theta(const pb_milp *M)
{
	if (!isfinite(M->U))
		return INFINITY;
	return M->L > 0 ? sqrt(M->L * M->U) : 0.5 * M->U;
}

static int closed(const pb_milp *M)
{
	return M->U <= M->L * (1 + MILP_CLOSED);
}

/* One probe at θ: build its arcs, find the fewest-core path; installs it when it has
 * at most n cores (*feasible = 1). MILP_CANCELLED: the probe is lost. */
static int probe_at(pb_milp *M, double theta, int *feasible, pb_error *err)
{
	int rc;
	*feasible = 0;
	if ((rc = probe_build(M, theta, err)))
		return rc;
	int ng = 0, cores = M->n_arcs > 0 ? probe_path(M, &ng) : INT_MAX;
	if (pb_job_cancelled())
		return MILP_CANCELLED;
	if (cores <= M->P->n && ng > 0) {
		*feasible = 1;
		install(M, ng);
	}
	M->probes++;
	return PB_OK;
}

/* One probe: build its arcs, find the fewest-core path. A cancelled job drops the
 * probe (L and U stay; the next unit probes the same θ again). */
static int probe_unit(pb_milp *M, pb_error *err)
{
	int rc, feasible;
	M->theta = next_theta(M);
	if ((rc = probe_at(M, M->theta, &feasible, err)))
		return rc == MILP_CANCELLED ? PB_OK : rc;
	if (!isfinite(M->theta)) {
		if (!feasible && !M->use_mem)
			return pb_err(err, PB_EINTERNAL, "milp: no partition at all (internal)");
		if (!feasible) /* nothing fits the memory: solve without it, as exact does */
			M->use_mem = 0;
	} else if (!feasible && M->theta > M->L) {
		M->L = M->theta;
	}
	if (isfinite(M->U) && (M->U <= M->L * (1 + M->probe_gap) || closed(M))) {
		M->stage = !M->emit_lp && M->P->m >= MILP_FINISH_LAYERS ? ST_FINISH : ST_COLUMNS;
		M->gen_b = 0;
		M->cand_ready = 0;
	}
	return PB_OK;
}

/* ---- the finish by probes on candidate values -----------------------------------
 * The optimum is the time of one of its groups, t(a, b, c) for some segment and core
 * count, and lies in [L, U]. collect() lists every such time in [L, U] (for each end b
 * and count c the starts a with t in range form one interval, found with two pointers
 * that only move up as b grows); a binary search over them with probes finds the
 * smallest one at which a partition exists: that is the optimum, proven (every smaller
 * candidate was infeasible, and no optimum lies between two candidates). */

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static double seg_cost_time(const pb_milp *M, const pb_milp_seg_cost *C, int c)
{
	return C->macs / ((double)c * M->P->hw.mac_rate) + C->routing;
}

/* Fills M->cand; 1 when done, 0 when cancelled or past the deadline, -1 when there are
 * more than MILP_MAX_CANDIDATES, -2 out of memory. */
static int collect(pb_milp *M)
{
	pb_part_problem *P = M->P;
	const int m = P->m, n = P->n;
	const double lo = M->L, hi = M->U * (1 + 1e-12);
	int *su = M->start, *sl = M->start_l, cap = 0;
	M->n_cand = 0;
	pb_milp_seg_reset(&M->seg);
	for (int c = 1; c <= n; c++)
		su[c] = sl[c] = 0;
	for (int b = 1; b <= m; b++) {
		pb_job_tick();
		if (pb_job_cancelled() || ((b & 63) == 0 && now_seconds() >= M->deadline_abs))
			return 0;
		pb_milp_seg_advance(&M->seg);
		for (int c = 1; c <= n; c++) {
			pb_milp_seg_cost C;
			while (su[c] < b) { /* first start within hi */
				pb_milp_seg_cost_of(&M->seg, su[c], &C);
				if (seg_cost_time(M, &C, c) <= hi)
					break;
				su[c]++;
			}
			if (sl[c] < su[c])
				sl[c] = su[c];
			while (sl[c] < b) { /* first start under lo */
				pb_milp_seg_cost_of(&M->seg, sl[c], &C);
				if (seg_cost_time(M, &C, c) < lo)
					break;
				sl[c]++;
			}
			for (int a = su[c]; a < sl[c]; a++) {
				if (M->n_cand == cap) {
					if (cap >= MILP_MAX_CANDIDATES)
						return -1;
					cap = cap ? 2 * cap : 4096;
					if (grow((void **)&M->cand, cap, sizeof(double)))
						return -2;
				}
				pb_milp_seg_cost_of(&M->seg, a, &C);
				M->cand[M->n_cand++] = seg_cost_time(M, &C, c);
			}
		}
	}
	qsort(M->cand, (size_t)M->n_cand, sizeof *M->cand, cmp_double);
	int k = 0;
	for (int i = 0; i < M->n_cand; i++)
		if (k == 0 || M->cand[i] > M->cand[k - 1])
			M->cand[k++] = M->cand[i];
	M->n_cand = k;
	return 1;
}

static int finish_unit(pb_milp *M, pb_error *err)
{
	if (!M->cand_ready) {
		int r = collect(M);
		if (r == -2)
			return pb_err(err, PB_ENOMEM, "milp: out of memory");
		if (r == -1) { /* too many: narrow the bracket by probing further */
			M->probe_gap *= 0.25;
			M->stage = ST_PROBE;
			return PB_OK;
		}
		if (r == 0)
			return PB_OK;
		M->cand_ready = 1;
		M->cand_lo = 0;
		M->cand_hi = M->n_cand; /* n_cand stands for U itself */
		return PB_OK;
	}
	if (M->cand_lo < M->cand_hi) {
		int mid = M->cand_lo + (M->cand_hi - M->cand_lo) / 2, feasible, rc;
		if ((rc = probe_at(M, M->cand[mid], &feasible, err)))
			return rc == MILP_CANCELLED ? PB_OK : rc;
		if (feasible) {
			M->cand_hi = mid;
		} else {
			M->cand_lo = mid + 1;
			if (M->cand[mid] > M->L)
				M->L = M->cand[mid];
		}
		return PB_OK;
	}
	/* The smallest feasible candidate (or U when none below it is): the optimum. */
	M->L = M->bb_bound = M->U;
	M->state = PB_MILP_OPTIMAL;
	M->stage = ST_DONE;
	return PB_OK;
}

/* ---- the optimisation MILP ------------------------------------------------------- */

static int add_column(pb_milp *M, int a, int b, int c, double t)
{
	if (M->n_cols == M->col_cap) {
		int nc = M->col_cap ? 2 * M->col_cap : 4096;
		if (grow((void **)&M->ca, nc, sizeof(int)) ||
		    grow((void **)&M->cb, nc, sizeof(int)) ||
		    grow((void **)&M->cc, nc, sizeof(int)) ||
		    grow((void **)&M->ct, nc, sizeof(double)))
			return -1;
		M->col_cap = nc;
	}
	M->ca[M->n_cols] = a;
	M->cb[M->n_cols] = b;
	M->cc[M->n_cols] = c;
	M->ct[M->n_cols] = t;
	M->n_cols++;
	return 0;
}

/* Columns for the ends b = gen_b.. until the deadline; returns 1 when all are done,
 * 0 when it must continue, -1 when the MILP would exceed `limit` columns. */
static int gen_columns(pb_milp *M, double deadline, int limit)
{
	pb_part_problem *P = M->P;
	const int m = P->m, n = P->n;
	const double Lg = M->gen_L, Ug = M->gen_U * (1 + 1e-12);
	for (; M->gen_b <= m; M->gen_b++) {
		int b = M->gen_b;
		if (now_seconds() > deadline)
			return 0;
		pb_job_tick();
		if (pb_job_cancelled())
			return 0;
		int len = walk(M, b, Ug);
		for (int k = 0; k < len; k++) {
			int c_lo = cores_needed(M, k, Ug);
			for (int c = c_lo; c <= n; c++) {
				double t = seg_time(M, k, c);
				/* c-minimal: c - 1 cores would do within max(L, t) */
				if (c > c_lo && seg_time(M, k, c - 1) <= fmax(Lg, t))
					break;
				/* left-maximal: [a-1, b) on c cores fits within L */
				if (k + 1 < len && fits(M, k + 1, c, Lg))
					continue;
				if (add_column(M, b - 1 - k, b, c, t))
					return -2;
				if (M->n_cols > limit)
					return -1;
			}
		}
	}
	return 1;
}

static int build_model(pb_milp *M, pb_error *err)
{
	pb_part_problem *P = M->P;
	const int m = P->m, nx = M->n_cols;
	free(M->first);
	free(M->order);
	if (M->lp)
		glp_delete_prob(M->lp);
	M->lp = NULL;
	/* Columns by start position. */
	M->first = calloc((size_t)m + 2, sizeof *M->first);
	M->order = malloc(((size_t)nx + 1) * sizeof *M->order);
	if (!M->first || !M->order)
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	for (int j = 0; j < nx; j++)
		M->first[M->ca[j] + 1]++;
	for (int a = 0; a <= m; a++)
		M->first[a + 1] += M->first[a];
	int *fill = calloc((size_t)m + 1, sizeof *fill);
	if (!fill)
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	for (int j = 0; j < nx; j++)
		M->order[M->first[M->ca[j]] + fill[M->ca[j]]++] = j;
	free(fill);

	glp_prob *lp = glp_create_prob();
	M->lp = lp;
	glp_set_prob_name(lp, "partbench_partition");
	glp_set_obj_name(lp, "max_time_over_lower_bound");
	glp_set_obj_dir(lp, GLP_MIN);
	/* Rows: flow 0..m, cores, start 0..m-1, end 1..m. */
	const int r_flow = 1, r_cores = m + 2, r_start = m + 3, r_end = 2 * m + 3;
	glp_add_rows(lp, 3 * m + 2);
	char name[64];
	const double Lu = M->gen_L / M->unit;
	for (int p = 0; p <= m; p++) {
		snprintf(name, sizeof name, "flow_%d", p);
		glp_set_row_name(lp, r_flow + p, name);
		double rhs = p == 0 ? -1.0 : p == m ? 1.0 : 0.0;
		glp_set_row_bnds(lp, r_flow + p, GLP_FX, rhs, rhs);
	}
	glp_set_row_name(lp, r_cores, "cores");
	glp_set_row_bnds(lp, r_cores, GLP_UP, 0.0, (double)P->n);
	for (int p = 0; p < m; p++) {
		snprintf(name, sizeof name, "start_%d", p);
		glp_set_row_name(lp, r_start + p, name);
		glp_set_row_bnds(lp, r_start + p, GLP_LO, Lu, 0.0); /* T - sum >= L */
		snprintf(name, sizeof name, "end_%d", p + 1);
		glp_set_row_name(lp, r_end + p, name);
		glp_set_row_bnds(lp, r_end + p, GLP_LO, Lu, 0.0);
	}
	glp_add_cols(lp, nx + 1);
	/* Column by column, ticking between (glp_load_matrix took ~330 ms at once on
	 * swin_t x 64's 763k elements). Each column's rows ascend, so GLPK's row and
	 * column lists come out as glp_load_matrix builds them from these triplets. */
	int *ind = malloc(((size_t)2 * m + 6) * sizeof *ind);
	double *val = malloc(((size_t)2 * m + 6) * sizeof *val);
	if (!ind || !val) {
		free(ind);
		free(val);
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	}
	for (int j = 0; j < nx; j++) {
		if ((j & 1023) == 0) {
			pb_job_tick();
			if (pb_job_cancelled()) { /* the next unit builds it again */
				free(ind);
				free(val);
				glp_delete_prob(lp);
				M->lp = NULL;
				return MILP_CANCELLED;
			}
		}
		int a = M->ca[j], b = M->cb[j], col = j + 1, k = 0;
		snprintf(name, sizeof name, "x_%d_%d_%d", a, b, M->cc[j]);
		glp_set_col_name(lp, col, name);
		glp_set_col_kind(lp, col, GLP_BV);
		ind[++k] = r_flow + a, val[k] = -1.0; /* leaves position a */
		ind[++k] = r_flow + b, val[k] = 1.0;  /* arrives at position b */
		ind[++k] = r_cores, val[k] = M->cc[j];
		double over = (M->ct[j] - M->gen_L) / M->unit;
		if (over > 0) {
			ind[++k] = r_start + a, val[k] = -over;
			ind[++k] = r_end + b - 1, val[k] = -over;
		}
		glp_set_mat_col(lp, col, k, ind, val);
	}
	int tcol = nx + 1, k = 0;
	glp_set_col_name(lp, tcol, "T");
	glp_set_col_bnds(lp, tcol, GLP_LO, Lu, 0.0);
	glp_set_obj_coef(lp, tcol, 1.0);
	for (int p = 0; p < m; p++)
		ind[++k] = r_start + p, val[k] = 1.0;
	for (int p = 0; p < m; p++)
		ind[++k] = r_end + p, val[k] = 1.0;
	glp_set_mat_col(lp, tcol, k, ind, val);
	free(ind);
	free(val);
	return PB_OK;
}

static void write_lp(pb_milp *M)
{
	if (!M->emit_lp || M->emitted || !M->lp)
		return;
	pb_error e = {0};
	if (pb_lp_write_atomic(M->lp, M->emit_lp, &e) != PB_OK)
		snprintf(M->note, sizeof M->note, "%s", e.msg);
	else
		M->emitted = 1;
}

static void free_model(pb_milp *M)
{
	if (M->lp)
		glp_delete_prob(M->lp);
	M->lp = NULL;
	free(M->first);
	free(M->order);
	M->first = M->order = NULL;
	M->n_cols = 0;
}

/* One slice of column generation; builds the model (and writes the LP) at the end. */
static int columns_unit(pb_milp *M, double deadline, pb_error *err)
{
	if (M->gen_b == 0) {
		M->n_cols = 0;
		M->gen_b = 1;
		M->gen_L = M->L;
		M->gen_U = M->U;
	}
	int cl = closed(M);
	int r = gen_columns(M, deadline, cl ? MILP_MAX_COLUMNS : MILP_MODEL_COLUMNS);
	if (r == -2)
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	if (r == -1) {
		if (cl)
			return pb_err(err, PB_EUSAGE,
			              "milp: the model would have more than %d columns (%d layers, "
			              "%d cores); use --method exact for a model this large",
			              MILP_MAX_COLUMNS, M->P->m, M->P->n);
		/* Too large for this bracket: narrow it by probing further. */
		M->n_cols = 0;
		M->probe_gap *= 0.25;
		M->stage = ST_PROBE;
		return PB_OK;
	}
	if (r == 0)
		return PB_OK;
	int rc = build_model(M, err);
	if (rc)
		return rc == MILP_CANCELLED ? PB_OK : rc;
	write_lp(M);
	M->stage = ST_ROOT;
	return PB_OK;
}

/* The path of a model solution (LP values at a node, or the MIP solution). */
static void decode(pb_milp *M, int from_mip)
{
	pb_part_problem *P = M->P;
	int pos = 0, ng = 0;
	while (pos < P->m && ng < P->n) {
		int found = -1;
		for (int i = M->first[pos]; i < M->first[pos + 1]; i++) {
			int j = M->order[i];
			double v = from_mip ? glp_mip_col_val(M->lp, j + 1)
			                    : glp_get_col_prim(M->lp, j + 1);
			if (v > 0.5) {
				found = j;
				break;
			}
		}
		if (found < 0)
			return;
		M->g_cores[ng] = M->cc[found];
		M->g_layers[ng++] = M->cb[found] - pos;
		pos = M->cb[found];
	}
	if (pos == P->m)
		install(M, ng);
}

/* GLPK's first incumbent: the fewest-core path over the model's columns. The
 * incumbent reduces to such a path (chain_milp.h), so it has at most n cores. */
static void give_heuristic(pb_milp *M, glp_tree *tree)
{
	pb_part_problem *P = M->P;
	const int m = P->m;
	int *cost = malloc(((size_t)m + 1) * sizeof *cost),
	    *via = malloc(((size_t)m + 1) * sizeof *via);
	double *x = calloc((size_t)M->n_cols + 2, sizeof *x);
	if (!cost || !via || !x)
		goto out;
	for (int p = 0; p <= m; p++) {
		cost[p] = INT_MAX;
		via[p] = -1;
	}
	cost[0] = 0;
	for (int a = 0; a < m; a++) {
		if (cost[a] == INT_MAX)
			continue;
		for (int i = M->first[a]; i < M->first[a + 1]; i++) {
			int j = M->order[i], b = M->cb[j];
			if (cost[a] + M->cc[j] < cost[b]) {
				cost[b] = cost[a] + M->cc[j];
				via[b] = j;
			}
		}
	}
	if (cost[m] > P->n)
		goto out;
	double tmax = M->gen_L;
	for (int p = m; p > 0; p = M->ca[via[p]]) {
		x[via[p] + 1] = 1.0;
		if (M->ct[via[p]] > tmax)
			tmax = M->ct[via[p]];
	}
	x[M->n_cols + 1] = tmax / M->unit * (1 + 1e-12); /* no row violated by rounding */
	glp_ios_heur_sol(tree, x);
out:
	free(cost);
	free(via);
	free(x);
}

/* ---- GLPK on a coroutine -----------------------------------------------------------
 * The root LP and then glp_intopt run on M->co. The root LP is solved by glp_simplex
 * calls of at most PB_MILP_ROOT_CHUNK seconds (each resumes from the basis the last one
 * left; a call bounds how long a cancel waits, as a running simplex cannot be
 * stopped: its time limit is read once, at its start). Between two calls in a job the coroutine
 * yields for a frame: the ends and starts of the calls (GLPK copies the model in and out) never
 * reach the hook. Inside a call GLPK reports to a terminal hook: with messages on and an output
 * period of 1 ms its simplex calls the hook about once per iteration; the hook swallows the text
 * (core/ never prints) and yields the coroutine when the unit's slice is spent (root LP) or a
 * workbench job's slice is (util/job.h). A yield for the job does not end the unit: the step lets
 * the job tick and resumes, unless the job was cancelled meanwhile (GLPK is then left where it
 * yielded until the free unwinds it). glp_intopt reports through its callback (one unit = one
 * node), which yields the same way at every reason, so that a cancel is read before GLPK's
 * stretches between two callbacks (the branching choice, cut rounds). */

static void stop(pb_milp *M);

static void callback(glp_tree *tree, void *info)
{
	pb_milp *M = info;
	if (M->aborting) {
		glp_ios_terminate(tree);
		return;
	}
	int reason = glp_ios_reason(tree);
	switch (reason) {
	case GLP_IHEUR:
		if (!M->heur_given) {
			M->heur_given = 1;
			give_heuristic(M, tree);
		}
		break;
	case GLP_IBINGO:
		decode(M, 0);
		break;
	case GLP_ISELECT: {
		M->nodes++;
		int best = glp_ios_best_node(tree);
		if (best) {
			double b = glp_ios_node_bound(tree, best);
			if (isfinite(b) && b > -1e300 && b * M->unit > M->bb_bound)
				M->bb_bound = b * M->unit;
		}
		if (--M->budget <= 0 || now_seconds() >= M->deadline_abs) {
			pb_coro_yield(M->co);
			reason = 0; /* yielded */
		}
		break;
	}
	default:
		break;
	}
	/* Before GLPK's next stretch (its branching choice after GLP_IBRANCH ran 230 ms
	 * on a 59k-column model between two callbacks): a cancelled job's unit ends here
	 * (the free terminates the search), a spent slice lets the job tick. */
	if (reason && pb_job_cancelled()) {
		pb_coro_yield(M->co);
	} else if (reason && pb_job_due()) {
		M->paused = 1;
		pb_coro_yield(M->co);
	}
	if (M->aborting)
		glp_ios_terminate(tree);
}

static int glpk_hook(void *info, const char *text)
{
	pb_milp *M = info;
	(void)text;
	if (!M->in_co || M->aborting)
		return 1;
	if (M->stage == ST_ROOT && now_seconds() >= M->slice_end) {
		pb_coro_yield(M->co);
	} else if (pb_job_due()) {
		M->paused = 1;
		pb_coro_yield(M->co);
	}
	return 1;
}

static void co_main(void *arg)
{
	pb_milp *M = arg;
	glp_smcp sp;
	pb_milp_root_params(&sp);
	sp.msg_lev = GLP_MSG_ON; /* to glpk_hook only */
	sp.out_frq = 1;
	sp.out_dly = 0;
	for (;;) {
		double chunk = PB_MILP_ROOT_CHUNK;
		if (isfinite(M->deadline_abs) && M->deadline_abs - now_seconds() < chunk)
			chunk = M->deadline_abs - now_seconds();
		sp.tm_lim = chunk * 1e3 < 1 ? 1 : (int)(chunk * 1e3);
		M->root_rc = glp_simplex(M->lp, &sp);
		if (M->root_rc != GLP_ETMLIM || M->aborting || now_seconds() >= M->deadline_abs)
			break;
		if (pb_job_running()) {
			/* a frame between this call's wind-down and the next one's set-up:
			 * neither reaches the hook */
			M->paused = 2;
			pb_coro_yield(M->co);
			if (M->aborting)
				break;
		}
	}
	M->root_done = 1;
	if (M->root_rc != 0 || glp_get_status(M->lp) != GLP_OPT)
		return;
	pb_coro_yield(M->co); /* the root LP's last unit ends here */
	if (M->aborting)
		return;
	glp_iocp ip;
	glp_init_iocp(&ip);
	ip.msg_lev = GLP_MSG_ON; /* to glpk_hook only */
	ip.out_frq = 1;
	ip.out_dly = 0;
	/* GLPK's bound tightening runs seconds on a 250k-column model between two of its
	 * callbacks; the bracket's columns leave it little to find */
	ip.pp_tech = GLP_PP_NONE;
	ip.cb_func = callback;
	ip.cb_info = M;
	ip.mip_gap = 0.0;
	int rc = glp_intopt(M->lp, &ip);
	M->glp_status = rc == 0 ? glp_mip_status(M->lp) : -rc;
}

/* Runs M->co until it yields for its unit or returns; yields for a job's slice tick
 * the job in between (GLPK silent again meanwhile: no other GLPK user sees the hook). */
static int co_run(pb_milp *M, pb_error *err)
{
	if (!M->co && !(M->co = pb_coro_new(co_main, M, MILP_STACK)))
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	for (;;) {
		int out = glp_term_out(GLP_ON);
		glp_term_hook(glpk_hook, M);
		M->in_co = 1;
		M->paused = 0;
		pb_coro_resume(M->co);
		M->in_co = 0;
		glp_term_hook(NULL, NULL);
		glp_term_out(out);
		if (!M->paused)
			return PB_OK;
		if (M->paused == 2)
			pb_job_yield();
		else
			pb_job_tick();
		if (pb_job_cancelled())
			return PB_OK; /* not resumed: GLPK would run on to its next callback */
	}
}

/* In a job: starts the root LP's child or waits for it until the unit's deadline,
 * ticking. Returns 1 when the in-process solve runs next (the child's basis is
 * loaded and factorized, or the child failed), 0 when the unit ends first. */
static int root_child_unit(pb_milp *M, double deadline)
{
	if (M->child == 0) {
		pb_error e = {0};
		M->child = pb_milp_root_start(&M->root, M->lp, M->deadline_abs, &e) ? -1 : 1;
	}
	while (M->child == 1) {
		int rc = 0, r = pb_milp_root_poll(&M->root, M->lp, &rc);
		if (r != 0) {
			M->child = r > 0 && rc == 0 ? 2 : -1;
			if (M->child == 2) {
				glp_factorize(M->lp); /* its own frame; glp_simplex would do it */
				return 0;
			}
			return 1;
		}
		if (now_seconds() >= deadline || pb_job_cancelled())
			return 0;
		struct pollfd p = {M->root.fd, POLLIN, 0};
		poll(&p, 1, 5);
		pb_job_tick();
	}
	return 1;
}

static int root_unit(pb_milp *M, double deadline, pb_error *err)
{
	M->slice_end = deadline;
	if ((M->child == 1 || (M->child == 0 && pb_job_running())) && !root_child_unit(M, deadline))
		return PB_OK;
	int rc = co_run(M, err);
	if (rc || !M->root_done)
		return rc;              /* the slice ended */
	if (M->root_rc == GLP_ETMLIM) { /* the time limit */
		stop(M);
		return PB_OK;
	}
	if (M->root_rc != 0 || glp_get_status(M->lp) != GLP_OPT)
		return pb_err(err, PB_EINTERNAL,
		              "milp: GLPK could not solve the LP relaxation (code %d, status %d)",
		              M->root_rc, glp_get_status(M->lp));
	double z = glp_get_obj_val(M->lp) * M->unit;
	if (z > M->bb_bound)
		M->bb_bound = z;
	M->stage = ST_BB;
	return PB_OK;
}

static int bb_unit(pb_milp *M, int units, int *used, pb_error *err)
{
	long before = M->nodes;
	M->budget = units;
	int rc = co_run(M, err);
	if (rc)
		return rc;
	*used = M->nodes - before > 0 ? (int)(M->nodes - before) : 1;
	if (!pb_coro_done(M->co))
		return PB_OK;
	if (M->glp_status == GLP_OPT) {
		decode(M, 1);
		M->state = PB_MILP_OPTIMAL;
		M->stage = ST_DONE;
		M->bb_bound = M->U;
		return PB_OK;
	}
	M->stage = ST_DONE;
	return pb_err(err, PB_EINTERNAL, "milp: GLPK ended without an optimum (status %d)",
	              M->glp_status);
}

/* Stops at the time limit: unwinds GLPK normally, writes the LP if still due. */
static void stop(pb_milp *M)
{
	pb_milp_root_stop(&M->root);
	if (M->co && pb_coro_started(M->co) && !pb_coro_done(M->co)) {
		M->aborting = 1;
		while (!pb_coro_done(M->co))
			pb_coro_resume(M->co);
	}
	M->state = PB_MILP_TIME_LIMIT;
	M->stage = ST_DONE;
	if (M->emit_lp && !M->emitted && !M->lp && isfinite(M->U)) {
		/* The model for the bracket reached so far. */
		M->n_cols = 0;
		M->gen_b = 1;
		M->gen_L = M->L;
		M->gen_U = M->U;
		pb_error e = {0};
		int r = gen_columns(M, INFINITY, MILP_MAX_COLUMNS);
		if (r == 1 && build_model(M, &e) == PB_OK)
			write_lp(M);
		else
			snprintf(M->note, sizeof M->note, "%s not written: %s", M->emit_lp,
			         pb_job_cancelled()
			             ? "cancelled"
			             : "the model for the bracket reached is too large");
	}
}

/* ---- interface ------------------------------------------------------------------- */

int pb_milp_new(pb_part_problem *P, double reference, const char *emit_lp, pb_milp **out,
                pb_error *err)
{
	(void)reference; /* never an input of the solve */
	return pb_milp_new_opts(P, NULL, emit_lp, out, err);
}

/* Copies the weighted search's incumbent, bound and state into M. */
static void weighted_sync(pb_milp *M)
{
	const pb_milp_w *W = M->W;
	double u = pb_milp_w_incumbent(W);
	if (u < M->U) {
		M->U = u;
		memcpy(M->inc_ac, pb_milp_w_state(W), (size_t)M->P->n * sizeof *M->inc_ac);
		M->improved = 1;
	}
	M->L = M->bb_bound = pb_milp_w_bound(W);
	M->use_mem = pb_milp_w_memory_used(W);
	M->nodes = pb_milp_w_labels(W);
	if (pb_milp_w_done(W)) {
		M->stage = ST_DONE;
		M->state = pb_milp_w_proven(W) ? PB_MILP_OPTIMAL : PB_MILP_TIME_LIMIT;
		snprintf(M->note, sizeof M->note, "%s", pb_milp_w_note(W));
	}
}

int pb_milp_new_opts(pb_part_problem *P, const pb_milp_opts *o, const char *emit_lp, pb_milp **out,
                     pb_error *err)
{
	*out = NULL;
	glp_term_out(GLP_OFF);
	pb_milp *M = calloc(1, sizeof *M);
	if (!M)
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	M->P = P;
	if (o)
		M->o = *o;
	M->probe_gap = M->o.probe_gap > 0 ? M->o.probe_gap : MILP_PROBE_GAP;
	M->unit = P->lower_bound > 0 ? P->lower_bound : 1.0;
	M->U = INFINITY;
	M->deadline_abs = INFINITY;
	M->use_mem = isfinite(P->hw.memory) && P->hw.memory > 0;
	size_t m1 = (size_t)P->m + 1, n = (size_t)P->n;
	M->inc_ac = malloc(n * sizeof *M->inc_ac);
	M->g_cores = malloc(n * sizeof *M->g_cores);
	M->g_layers = malloc(n * sizeof *M->g_layers);
	M->wm = malloc(m1 * sizeof *M->wm);
	M->wr = malloc(m1 * sizeof *M->wr);
	M->ws = malloc(m1 * sizeof *M->ws);
	M->path_cost = malloc(m1 * sizeof *M->path_cost);
	M->path_via = malloc(m1 * sizeof *M->path_via);
	M->start = malloc((n + 1) * sizeof *M->start);
	M->start_l = malloc((n + 1) * sizeof *M->start_l);
	int seg_rc = pb_milp_seg_init(&M->seg, P);
	M->emit_lp = emit_lp ? strdup(emit_lp) : NULL;
	if (!M->inc_ac || !M->g_cores || !M->g_layers || !M->wm || !M->wr || !M->ws ||
	    !M->path_cost || !M->path_via || !M->start || !M->start_l || seg_rc ||
	    (emit_lp && !M->emit_lp)) {
		pb_milp_free(M);
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	}
	/* L0: perfect balance, and no group is faster than one of its layers alone
	 * on all n cores (compute and incoming bytes only grow with the group). */
	M->L = P->lower_bound;
	for (int k = 0; k < P->m; k++) {
		pb_part_group g;
		pb_part_eval_group(P, k, k + 1, P->n, &g);
		if (g.time > M->L)
			M->L = g.time;
	}
	int rc = PB_OK;
	double t0 = now_seconds();
	if (P->hw.reward_mode == PB_REWARD_WEIGHTED && !P->cut && !P->pin && !emit_lp) {
		/* The weighted objective: a branch and bound over prefixes, stepped in
		 * slices (chain_milp_weighted.h); its incumbent comes from its own probes. */
		rc = pb_milp_w_new(P, &M->W, err);
		if (rc) {
			pb_milp_free(M);
			return rc;
		}
		weighted_sync(M);
		M->improved = 1;
		M->stage = ST_WEIGHTED;
		M->state = PB_MILP_RUNNING;
		M->elapsed = M->stage_s[ST_WEIGHTED] = now_seconds() - t0;
		*out = M;
		return PB_OK;
	}
	if (P->cut || P->pin || P->hw.reward_mode == PB_REWARD_WEIGHTED) {
		/* Rules or the weighted objective: one whole MILP (chain_milp_rules.c). */
		pb_milp_rules_result r;
		rc = pb_milp_rules_solve(P, M->o.time_limit, emit_lp, M->inc_ac, &r, err);
		if (rc) {
			pb_milp_free(M);
			return rc;
		}
		M->U = r.objective;
		M->L = M->bb_bound = r.bound;
		M->state = r.optimal ? PB_MILP_OPTIMAL : PB_MILP_TIME_LIMIT;
		M->stage = ST_DONE;
		M->use_mem = r.memory_used;
		M->emitted = r.lp_written;
		M->rules_columns = r.columns;
		M->nodes = 1;
		M->improved = 1;
		M->elapsed = M->stage_s[ST_BB] = now_seconds() - t0;
		*out = M;
		return PB_OK;
	}
	/* The first probe (θ = inf) runs now: memory feasibility and an incumbent.
	 * It counts against the time limit; when the limit ends it, the greedy
	 * partition is the incumbent and the solve stops at the limit. */
	if (M->o.time_limit > 0)
		M->deadline_abs = t0 + M->o.time_limit;
	while (rc == PB_OK && !isfinite(M->U) && !pb_job_cancelled() &&
	       now_seconds() < M->deadline_abs)
		rc = probe_unit(M, err);
	if (rc == PB_OK && !isfinite(M->U) && !pb_job_cancelled()) {
		pb_part_greedy(P, M->inc_ac);
		pb_part_eval ev;
		pb_part_evaluate(P, M->inc_ac, &ev, NULL);
		M->U = ev.max_time;
		M->improved = 1;
		stop(M); /* time limit; --emit-lp still writes the bracket's model */
	}
	M->deadline_abs = INFINITY;
	if (rc == PB_OK && !isfinite(M->U))
		rc = pb_err(err, PB_ECANCEL,
		            "milp: cancelled during the first probe (no partition yet)");
	M->elapsed = M->stage_s[ST_PROBE] = now_seconds() - t0;
	if (rc) {
		pb_milp_free(M);
		return rc;
	}
	*out = M;
	return PB_OK;
}

int pb_milp_step(pb_milp *M, int units, int *ac, int *improved, pb_error *err)
{
	*improved = 0;
	int rc = PB_OK;
	if (units < 1)
		units = 1;
	double t0 = now_seconds();
	M->deadline_abs =
	    M->o.time_limit > 0 ? t0 + (M->o.time_limit - M->elapsed) : (double)INFINITY;
	while (units > 0 && M->stage != ST_DONE && rc == PB_OK && !pb_job_cancelled()) {
		double t = now_seconds();
		if (t >= M->deadline_abs) {
			stop(M);
			break;
		}
		double slice = fmin(t + MILP_SLICE, M->deadline_abs);
		int used = 1, stage = M->stage;
		switch (M->stage) {
		case ST_PROBE:
			rc = probe_unit(M, err);
			break;
		case ST_FINISH:
			rc = finish_unit(M, err);
			break;
		case ST_WEIGHTED:
			rc = pb_milp_w_run(M->W, slice, err);
			weighted_sync(M);
			break;
		case ST_COLUMNS:
			rc = columns_unit(M, slice, err);
			break;
		case ST_ROOT:
			rc = root_unit(M, slice, err);
			break;
		default:
			rc = bb_unit(M, units, &used, err);
			break;
		}
		units -= used;
		M->stage_s[stage] += now_seconds() - t;
	}
	if (rc == PB_OK && M->stage != ST_DONE && now_seconds() >= M->deadline_abs)
		stop(M);
	M->elapsed += now_seconds() - t0;
	if (M->improved) {
		memcpy(ac, M->inc_ac, (size_t)M->P->n * sizeof *ac);
		*improved = 1;
		M->improved = 0;
	}
	return rc;
}

int pb_milp_done(const pb_milp *M)
{
	return M->stage == ST_DONE;
}

long pb_milp_nodes(const pb_milp *M)
{
	return M->nodes;
}

double pb_milp_bound(const pb_milp *M)
{
	if (M->state == PB_MILP_OPTIMAL)
		return M->U;
	double b = M->bb_bound > M->L ? M->bb_bound : M->L;
	return b < M->U ? b : M->U;
}

double pb_milp_incumbent(const pb_milp *M)
{
	return M->U;
}

const int *pb_milp_incumbent_state(const pb_milp *M)
{
	return isfinite(M->U) ? M->inc_ac : NULL;
}

int pb_milp_columns(const pb_milp *M)
{
	return M->lp ? M->n_cols : M->last_arcs;
}

void pb_milp_stats_get(const pb_milp *M, pb_milp_stats *st)
{
	memset(st, 0, sizeof *st);
	st->state = M->state;
	st->incumbent = M->U;
	st->weighted = M->P->hw.reward_mode == PB_REWARD_WEIGHTED;
	st->bound = pb_milp_bound(M);
	st->gap = isfinite(M->U) && M->U > 0 ? (M->U - st->bound) / M->U : NAN;
	if (st->gap < 0)
		st->gap = 0;
	st->seconds = M->elapsed;
	st->probe_seconds = M->stage_s[ST_PROBE] + M->stage_s[ST_FINISH];
	st->model_seconds = M->stage_s[ST_COLUMNS] + M->stage_s[ST_ROOT];
	st->bb_seconds = M->stage_s[ST_BB] + M->stage_s[ST_WEIGHTED];
	st->probes = M->probes;
	st->nodes = M->nodes;
	st->columns = M->lp ? M->n_cols : M->rules_columns;
	st->memory_used = M->use_mem;
	st->stage = stage_names[M->stage];
	snprintf(st->lp_written, sizeof st->lp_written, "%s", M->emitted ? M->emit_lp : "");
	snprintf(st->note, sizeof st->note, "%s", M->note);
}

void pb_milp_free(pb_milp *M)
{
	if (!M)
		return;
	pb_milp_root_stop(&M->root); /* a cancel waits for nothing in the root LP */
	if (M->co && pb_coro_started(M->co) && !pb_coro_done(M->co)) {
		/* Let GLPK unwind normally: the callback terminates the search. */
		M->aborting = 1;
		while (!pb_coro_done(M->co))
			pb_coro_resume(M->co);
	}
	pb_coro_free(M->co);
	pb_milp_w_free(M->W);
	free_model(M);
	free(M->arc_a);
	free(M->arc_b);
	free(M->arc_c);
	free(M->path_cost);
	free(M->path_via);
	free(M->start);
	free(M->start_l);
	free(M->cand);
	pb_milp_seg_free(&M->seg);
	free(M->ca);
	free(M->cb);
	free(M->cc);
	free(M->ct);
	free(M->wm);
	free(M->wr);
	free(M->ws);
	free(M->inc_ac);
	free(M->g_cores);
	free(M->g_layers);
	free(M->emit_lp);
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
	if (!scratch) {
		pb_milp_free(M);
		return pb_err(err, PB_ENOMEM, "milp: out of memory");
	}
	while (!pb_milp_done(M) && rc == PB_OK)
		rc = pb_milp_step(M, 1000, scratch, &improved, err);
	free(scratch);
	if (rc == PB_OK) {
		*optimum = M->U;
		if (ac)
			memcpy(ac, M->inc_ac, (size_t)P->n * sizeof *ac);
	}
	pb_milp_free(M);
	return rc;
}
