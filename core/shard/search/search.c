/*
 * shard/search/search.c — the strategy search as the commands and the TUI drive it
 * (search.h): serial steps, the stepping solver on a coroutine, finishing
 * the remaining schemes serially or in worker processes (parallel.c).
 *
 * A step solves one row (search_rows.c) and takes over its problem and
 * result when the row beats the best so far, refreshing the plan
 * (search_report.c). The stepping solver runs the row on a coroutine that
 * yields at every new incumbent and after ~50 ms of branch and bound.
 * Layering inside shard/, each file using only those after it:
 * search.c -> parallel.c -> search_report.c -> search_rows.c.
 */
#include "shard/search/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "shard/search/parallel.h"
#include "shard/strategy/strategy_milp.h"
#include "shard/strategy/strategy_problem.h"
#include "util/coro.h"

/* Takes over a solved row's problem and result: kept when better, freed
 * otherwise. */
static void accept_row(pb_shard_search *s, int i, pb_shard_problem *p, pb_shard_result *r)
{
	if (p && pb_search_rows_better(s, i)) {
		pb_strategy_problem_free(s->best_problem);
		pb_strategy_problem_result_free(&s->best_result);
		s->best_problem = p;
		s->best_result = *r;
		s->best = i;
		pb_plan_free(s->plan);
		s->plan = NULL;
		s->plan = pb_search_report_plan(s);
	} else {
		pb_strategy_problem_free(p);
		pb_strategy_problem_result_free(r);
	}
}

/* Body of the stepping solver's coroutine: row s->next. */
static void co_body(void *arg)
{
	pb_shard_search *s = arg;
	s->in_co = 1;
	s->co_rc = pb_search_rows_solve_row(s, s->next, &s->co_p, &s->co_r, &s->co_err);
	s->in_co = 0;
}

#define CO_STACK (8u << 20)

/* Resumes (starting it when needed) the coroutine of row s->next; *finished
 * when that row is done (accepted, s->next advanced). */
static int co_advance(pb_shard_search *s, int *finished, pb_error *err)
{
	*finished = 0;
	if (!s->co) {
		s->co = pb_coro_new(co_body, s, CO_STACK);
		if (!s->co)
			return pb_err(err, PB_ENOMEM, "shard: out of memory");
		s->co_incumbent = NAN;
		s->co_bound = NAN;
		s->co_p = NULL;
	}
	pb_search_rows_slice_start(s);
	if (!pb_coro_resume(s->co))
		return PB_OK;
	pb_coro_free(s->co);
	s->co = NULL;
	if (s->co_rc) {
		*err = s->co_err;
		return s->co_rc;
	}
	accept_row(s, s->next, s->co_p, &s->co_r);
	s->co_p = NULL;
	s->next++;
	*finished = 1;
	return PB_OK;
}

int pb_search_step(pb_shard_search *s, int *done, pb_error *err)
{
	*done = s->next >= s->n_rows;
	if (*done)
		return PB_OK;
	if (s->co) {
		int finished = 0;
		while (!finished) {
			int rc = co_advance(s, &finished, err);
			if (rc)
				return rc;
		}
		*done = s->next >= s->n_rows;
		return PB_OK;
	}
	pb_shard_problem *p = NULL;
	pb_shard_result r;
	int rc = pb_search_rows_solve_row(s, s->next, &p, &r, err);
	if (rc)
		return rc;
	accept_row(s, s->next, p, &r);
	s->next++;
	*done = s->next >= s->n_rows;
	return PB_OK;
}

int pb_search_run_parallel(pb_shard_search *s, int jobs,
                           int (*progress)(void *ud, int done, int total), void *ud, pb_error *err)
{
	if (s->co) {
		/* finish the scheme the stepping solver is in */
		int done;
		int rc = pb_search_step(s, &done, err);
		if (rc)
			return rc;
	}
	int todo = s->n_rows - s->next;
	if (jobs <= 1 || todo <= 1 || s->lp_path) {
		/* --emit-lp with one scheme writes the LP inside the solve. */
		int done = s->next >= s->n_rows;
		while (!done) {
			if (progress && progress(ud, s->next, s->n_rows))
				return pb_err(err, PB_ECANCEL, "shard: cancelled");
			int rc = pb_search_step(s, &done, err);
			if (rc)
				return rc;
		}
		return PB_OK;
	}
	return pb_parallel_solve(s, jobs, progress, ud, err);
}

int pb_search_finish(pb_shard_search *s, pb_error *err)
{
	int rc = pb_search_run_parallel(s, s->jobs, NULL, NULL, err);
	if (rc)
		return rc;
	if (s->best < 0)
		return pb_err(err, PB_EINPUT, "shard: no grouping scheme could be solved: %s",
		              s->n_rows ? s->rows[0].error : "no scheme");
	if (s->lp_path && s->n_rows > 1) {
		/* Several schemes: write the MILP of the best one. */
		pb_shard_result r;
		rc = pb_strategy_milp_solve(s->best_problem, s->lp_path, NULL, NULL, &r, err);
		pb_strategy_problem_result_free(&r);
		if (rc)
			return rc;
	}
	/* refresh the plan so that the scheme table in it is complete */
	pb_plan_free(s->plan);
	s->plan = pb_search_report_plan(s);
	return PB_OK;
}

/* ----------------------------------------------------------------- solver */

typedef struct solver_state {
	pb_solver base;
	pb_shard_search *s;
} solver_state;

static int sv_step(pb_solver *sv, int budget, pb_solver_progress *pr, pb_error *err)
{
	pb_shard_search *s = ((solver_state *)sv)->s;
	int before = s->best;
	double before_t = s->best >= 0 ? s->rows[s->best].step_time : INFINITY;
	int live = 0, finished = 0;
	for (int k = 0; k < (budget > 0 ? budget : 1) && s->next < s->n_rows; k++) {
		int rc = co_advance(s, &finished, err);
		if (rc)
			return rc;
		if (s->co_new) {
			live = 1;
			break; /* every incumbent is its own step */
		}
	}
	int done = s->next >= s->n_rows;
	double best_t = s->best >= 0 ? s->rows[s->best].step_time : INFINITY;
	pr->fraction = s->n_rows ? (s->next + (s->co ? 0.5 : 0.0)) / s->n_rows : 1;
	pr->done = done;
	pr->iterations = s->n_events;
	pr->improved = (s->best >= 0 && (before != s->best || best_t < before_t)) ||
	               (live && s->co_incumbent < before_t);
	/* the running scheme's new incumbent, else the best finished scheme */
	pr->incumbent = live ? s->co_incumbent : best_t;
	pr->bound = s->co ? s->co_bound : NAN;
	const char *bn = s->best >= 0 ? s->rows[s->best].mesh.name : "-";
	if (s->co) {
		char inc[32] = "-", bnd[32] = "-";
		if (isfinite(s->co_incumbent))
			snprintf(inc, sizeof inc, "%.4g ms", s->co_incumbent * 1e3);
		if (isfinite(s->co_bound))
			snprintf(bnd, sizeof bnd, "%.4g ms", s->co_bound * 1e3);
		snprintf(pr->message, sizeof pr->message,
		         "scheme %.12s (%d/%d): incumbent %s bound %s | best %.12s %.4g ms",
		         s->rows[s->next].mesh.name, s->next + 1, s->n_rows, inc, bnd, bn,
		         best_t * 1e3);
	} else if (s->next > 0) {
		const pb_shard_row *last = &s->rows[s->next - 1];
		if (last->status == 1)
			snprintf(pr->message, sizeof pr->message,
			         "scheme %.12s: %.4g ms (%ld incumbents) | best %.12s %.4g ms | "
			         "%d/%d schemes",
			         last->mesh.name, last->step_time * 1e3, last->incumbents, bn,
			         best_t * 1e3, s->next, s->n_rows);
		else
			snprintf(pr->message, sizeof pr->message, "scheme %.12s failed: %.100s",
			         last->mesh.name, last->error);
	}
	return PB_OK;
}

static const pb_plan *sv_incumbent(pb_solver *sv)
{
	return ((solver_state *)sv)->s->plan;
}

static void sv_stats(pb_solver *sv, FILE *out)
{
	pb_shard_search *s = ((solver_state *)sv)->s;
	for (int i = 0; i < s->n_rows; i++) {
		const pb_shard_row *r = &s->rows[i];
		if (r->status == 1)
			fprintf(
			    out,
			    "%-10s step %.4g ms  compute %.4g ms  comm %.4g ms  mem %.3g GB%s\n",
			    r->mesh.name, r->step_time * 1e3, r->compute * 1e3, r->comm * 1e3,
			    r->memory / 1e9, i == s->best ? "  (best)" : "");
		else
			fprintf(out, "%-10s %s\n", r->mesh.name, r->status ? r->error : "pending");
	}
	fprintf(out, "incumbents found: %d\n", s->n_events);
}

static void sv_free(pb_solver *sv)
{
	pb_search_rows_free(((solver_state *)sv)->s);
	free(sv);
}

static const pb_solver_ops shard_solver_ops = {"shard-milp", sv_step, sv_incumbent,
                                               sv_stats,     sv_free, NULL};

pb_solver *pb_search_solver_new(pb_shard_search *s)
{
	solver_state *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->base.ops = &shard_solver_ops;
	st->base.state = st;
	st->s = s;
	return &st->base;
}
