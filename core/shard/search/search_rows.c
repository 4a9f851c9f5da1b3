/*
 * shard/search/search_rows.c — the state of a strategy search (search_rows.h): the
 * scheme table, solving one row, the incumbent events, the comparison of
 * rows.
 *
 * Solving a row builds the scheme's problem and runs the MILP; GLPK reports
 * every new incumbent through on_incumbent, which records an event and, on
 * the stepping solver's coroutine (search.c), yields back to the step at a
 * new incumbent or after yield_after seconds of branch and bound.
 * Invariants: rows[i].status is 0 until row i is solved, then 1 (figures
 * filled) or -1 (error text); events are appended in the order they arrive;
 * best (kept by the steps and the workers' merge, with pb_search_rows_better)
 * is -1 or a solved row that no other solved row beats.
 */
#include "shard/search/search_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shard/search/search_label.h"
#include "shard/strategy/strategy_milp.h"
#include "shard/strategy/strategy_problem.h"
#include "shard/strategy/dist_opt.h"
#include "util/coro.h"
#include "util/job.h"

void pb_search_rows_add_event(pb_shard_search *s, int row, double objective, double bound,
                              double at)
{
	if (s->n_events == s->cap_events) {
		int nc = s->cap_events ? s->cap_events * 2 : 32;
		pb_shard_event *e = realloc(s->events, (size_t)nc * sizeof *e);
		if (!e)
			return;
		s->events = e;
		s->cap_events = nc;
	}
	s->events[s->n_events++] = (pb_shard_event){row, objective, bound, at};
}

static double clock_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void pb_search_rows_slice_start(pb_shard_search *s)
{
	s->co_new = 0;
	s->co_last = clock_now();
}

/* GLPK's progress: new incumbents, nodes of the branch and bound, chunks of
 * the root LP (milp.c). On the stepping solver's coroutine a new incumbent,
 * or yield_after seconds since the last yield, hands control back to the
 * step. */
static int on_incumbent(void *ud, double obj_us, double bound_us, double at)
{
	pb_shard_search *s = ud;
	pb_job_tick(); /* run as a workbench job: the screen stays live */
	if (isfinite(obj_us)) {
		pb_search_rows_add_event(s, s->running, obj_us * 1e-6, bound_us * 1e-6, at);
		s->co_incumbent = obj_us * 1e-6;
		s->co_new = 1;
	}
	s->co_bound = bound_us * 1e-6;
	if (s->in_co && !s->aborting && (s->co_new || clock_now() - s->co_last >= s->yield_after))
		pb_coro_yield(s->co);
	return s->aborting;
}

int pb_search_rows_new(const pb_graph *g, const pb_cluster *c, const pb_shard_opts *o,
                       const char *scheme, int max_axes, const char *lp_path, pb_shard_search **out,
                       pb_error *err)
{
	*out = NULL;
	pb_shard_search *s = calloc(1, sizeof *s);
	if (!s)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	s->g = g;
	s->cl = *c;
	s->cl.name = c->name ? strdup(c->name) : NULL; /* the solver may outlive the layout */
	s->opts = *o;
	s->best = -1;
	s->jobs = 1;
	s->yield_after = 0.05;
	if (s->opts.opt_level >= 1 && !s->opts.rules) {
		s->own_rules = pb_rules_new(1);
		s->opts.rules = s->own_rules;
	}
	s->lp_path = lp_path ? strdup(lp_path) : NULL;
	pb_mesh meshes[256];
	int n;
	if (scheme) {
		int rc = pb_cluster_mesh_parse(&meshes[0], c, scheme, err);
		if (rc) {
			pb_search_rows_free(s);
			return rc;
		}
		n = 1;
	} else {
		n = pb_cluster_mesh_schemes(c, max_axes, meshes, 256, s->dropped, &s->n_dropped,
		                            64);
	}
	s->rows = calloc((size_t)(n ? n : 1), sizeof *s->rows);
	if (!s->rows) {
		pb_search_rows_free(s);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	for (int i = 0; i < n; i++) {
		s->rows[i].mesh = meshes[i];
		s->rows[i].lb = NAN;
	}
	s->n_rows = n;
	*out = s;
	return PB_OK;
}

void pb_search_rows_free(pb_shard_search *s)
{
	if (!s)
		return;
	if (s->co) {
		/* let GLPK unwind: the callback stops the branch and bound */
		s->aborting = 1;
		while (!pb_coro_resume(s->co))
			;
		pb_coro_free(s->co);
		pb_strategy_problem_free(s->co_p);
		pb_strategy_problem_result_free(&s->co_r);
	}
	pb_strategy_problem_free(s->best_problem);
	pb_strategy_problem_result_free(&s->best_result);
	pb_plan_free(s->plan);
	free(s->events);
	free(s->rows);
	free(s->lp_path);
	pb_rules_free(s->own_rules);
	free(s->cl.name);
	free(s);
}

/* Builds and solves row i; fills the row. On success *pp and *r hold the problem
 * and result (the caller owns them); a failed scheme is a row error, only
 * running out of memory is returned. */
int pb_search_rows_solve_row(pb_shard_search *s, int i, pb_shard_problem **pp, pb_shard_result *r,
                             pb_error *err)
{
	pb_shard_row *row = &s->rows[i];
	pb_shard_problem *p = NULL;
	pb_error e2 = {0};
	*pp = NULL;
	memset(r, 0, sizeof *r);
	s->running = i;
	/* recomputation: the one asked for, or (auto, training) each of none,
	 * selective and full, keeping the fastest plan that fits (less memory
	 * can buy a faster sharding, so the first that fits is not always it;
	 * equal times: the least recomputation). Not solved, as they cannot win:
	 * a choice whose least memory exceeds the device when another's fits;
	 * a choice that only adds compute to the best so far when that is
	 * optimal without the memory limit too (pb_strategy_problem_costlier; when
	 * it does not fit, only a choice that cannot fit either); a choice whose bound
	 * passes the best plan that fits (its cutoff). Order: the least
	 * recomputation that can fit first, stopped at its root LP if memory
	 * binds there (then its branch and bound is long, and a cutoff shortens
	 * it); then the most that can fit; then the rest in order. */
	int autorc = s->opts.recompute == PB_RECOMP_AUTO;
	int k0 = autorc ? PB_RECOMP_NONE : s->opts.recompute;
	int k1 = autorc && s->opts.train ? PB_RECOMP_FULL : k0;
	int many = k0 != k1;
	const char *lp = s->n_rows == 1 ? s->lp_path : NULL;
	int rc = PB_OK;
	pb_shard_problem *qs[PB_RECOMP_FULL + 1] = {NULL};
	int over[PB_RECOMP_FULL + 1] = {0}, any_fit = 0; /* over: no plan fits for sure */
	/* the caller's cutoff, or under waves the best plan that fits before */
	double wcut = pb_search_rows_wave_cutoff(s, i), cut = s->opts.cutoff;
	if (wcut > 0 && (cut <= 0 || wcut < cut))
		cut = wcut;
	for (int k = k0; k <= k1 && rc == PB_OK; k++) {
		pb_shard_opts o = s->opts;
		o.recompute = k;
		o.cutoff = cut;
		rc = pb_strategy_problem_build(s->g, &s->cl, &row->mesh, &o, &qs[k], &e2);
		pb_job_tick();
		if (rc == PB_OK && many && s->opts.time_limit <= 0) {
			over[k] = pb_strategy_problem_min_memory(qs[k]) > s->cl.memory * (1 + 1e-9);
			any_fit |= !over[k];
		}
	}
	int first = -1, last = -1;
	for (int k = k0; k <= k1 && rc == PB_OK; k++) {
		if (!(many && any_fit && over[k])) {
			first = first < 0 ? k : first;
			last = k;
		}
	}
	int best_k = -1, best_unc = 0, cutting = many && s->opts.opt_level < 3;
	/* pass 3: the choices that cannot fit, only if no plan that fits was
	 * found after all (GLPK failing on a MILP that has one) */
	for (int pass = 0; pass < 4 && rc == PB_OK; pass++) {
		if (pass == 3 && (!p || r->feasible))
			break;
		for (int k = k0; k <= k1 && rc == PB_OK; k++) {
			pb_shard_problem *q = qs[k];
			int skip_over = many && any_fit && over[k];
			if (!q || (pass == 0 && k != first) || (pass == 1 && k != last) ||
			    (pass < 3 && skip_over))
				continue;
			if (best_unc && k > best_k && (r->feasible || over[k]) &&
			    pb_strategy_problem_costlier(p, q)) {
				pb_strategy_problem_free(q);
				qs[k] = NULL;
				continue;
			}
			q->probe_mem = cutting && pass == 0 && first != last;
			q->cutoff = cutting && p && r->feasible ? r->objective : 0;
			pb_shard_result rq;
			memset(&rq, 0, sizeof rq);
			rc = pb_strategy_milp_solve(q, many ? NULL : lp, on_incumbent, s, &rq, &e2);
			if (rc)
				break;
			if (rq.cut) { /* probed: solved later; or it cannot win */
				if (!q->probe_mem) {
					pb_strategy_problem_free(q);
					qs[k] = NULL;
					continue;
				}
				q->probe_mem = 0;
				continue;
			}
			qs[k] = NULL;
			int better = !p || (rq.feasible && !r->feasible) ||
			             (rq.feasible == r->feasible &&
			              (rq.objective < r->objective ||
			               (rq.objective == r->objective && k < best_k)));
			if (better) {
				pb_strategy_problem_free(p);
				pb_strategy_problem_result_free(r);
				p = q;
				*r = rq;
				row->recompute = best_k = k;
				best_unc = rq.unc_opt;
			} else {
				pb_strategy_problem_free(q);
				pb_strategy_problem_result_free(&rq);
			}
		}
	}
	for (int k = k0; k <= k1; k++)
		pb_strategy_problem_free(qs[k]);
	if (p) {
		p->cutoff = 0;
		p->probe_mem = 0;
	} else if (rc == PB_OK && cut > 0 && cut == wcut) { /* cannot beat a row before */
		row->cut = 1;
		rc = pb_err(&e2, PB_EINPUT, "pruned: cannot beat %.6g s of a plan that fits", cut);
	} else if (rc == PB_OK && cut > 0) { /* the caller's cutoff */
		row->cut = 1;
		rc = pb_err(&e2, PB_EINPUT, "shard: no plan below the cutoff");
	} else if (rc == PB_OK) { /* cannot happen: the first solved has no cutoff */
		rc = pb_err(&e2, PB_EINTERNAL, "shard: no recomputation choice solved");
	}
	if (rc == PB_OK && lp && many) { /* the MILP of the plan kept */
		pb_shard_result rl;
		rc = pb_strategy_milp_solve(p, lp, NULL, NULL, &rl, &e2);
		pb_strategy_problem_result_free(&rl);
	}
	if (rc)
		pb_strategy_problem_result_free(r);
	if (rc == PB_ENOMEM) {
		pb_strategy_problem_free(p);
		*err = e2;
		return rc;
	}
	if (rc) {
		row->status = -1;
		snprintf(row->error, sizeof row->error, "%.190s", e2.msg);
		pb_strategy_problem_free(p);
		return pb_search_label_row(s, i, NULL, NULL, on_incumbent, err);
	}
	row->status = 1;
	row->step_time = r->objective;
	row->compute = r->compute;
	row->comm = r->comm;
	row->memory = r->memory;
	/* the distributed optimizer and sequence parallelism: the MILP solved
	 * with them (when asked or auto); under auto a plan that fits without
	 * one runs without it */
	double sa, so;
	pb_strategy_problem_seq_parallel_saved(p, r->choice, &sa, &so);
	memset(&row->mopts, 0, sizeof row->mopts);
	pb_memory_options_add(&row->mopts, r->memory, pb_dist_opt_saved(p, r->choice),
	                      so + p->act_mult * sa);
	row->memory = pb_memory_options_settle(&row->mopts, s->opts.dist_opt, s->opts.seq_parallel,
	                                       s->cl.memory);
	row->feasible = r->feasible;
	row->optimal = r->optimal;
	row->seconds = r->solve_seconds;
	row->incumbents = r->n_incumbents;
	row->groups = p->n_groups;
	row->edges = p->n_edges;
	row->active = p->n_active;
	pb_strategy_milp_size(p, &row->size);
	if ((rc = pb_search_label_row(s, i, p, r, on_incumbent, err))) {
		pb_strategy_problem_free(p);
		pb_strategy_problem_result_free(r);
		return rc;
	}
	*pp = p;
	return PB_OK;
}

void pb_search_rows_row_opts(const pb_shard_search *s, int i, pb_shard_opts *o)
{
	*o = s->opts;
	o->recompute = s->rows[i].recompute;
}

int pb_search_rows_wave_end(const pb_shard_search *s, int i)
{
	if (s->cut_wave <= 0)
		return s->n_rows;
	int end = (i / s->cut_wave + 1) * s->cut_wave;
	return end < s->n_rows ? end : s->n_rows;
}

double pb_search_rows_wave_cutoff(const pb_shard_search *s, int i)
{
	if (s->cut_wave <= 0)
		return 0;
	double b = INFINITY;
	for (int k = 0; k < i / s->cut_wave * s->cut_wave; k++)
		if (s->rows[k].status == 1 && s->rows[k].feasible && s->rows[k].step_time < b)
			b = s->rows[k].step_time;
	return isfinite(b) ? b : 0;
}

int pb_search_rows_better(const pb_shard_search *s, int i)
{
	const pb_shard_row *row = &s->rows[i];
	if (row->status != 1)
		return 0;
	return s->best < 0 || (row->feasible && !s->rows[s->best].feasible) ||
	       (row->feasible == s->rows[s->best].feasible &&
	        row->step_time < s->rows[s->best].step_time);
}
