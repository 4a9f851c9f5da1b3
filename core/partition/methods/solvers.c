/*
 * solvers.c — the steppable solver (partition.h) that runs any partition
 * method of the registry (method_registry.h; each method in its own
 * method_NAME.c behind the interface of method.h). Each solver owns its
 * problem (a copy of the graph's costs), so it outlives a model being closed
 * in the session.
 *
 * Invariants: r->ac is always a valid state and r->plan its plan; the
 * incumbent only changes when the objective (baselines.h) strictly improves.
 * The exact optimum computed at the start of the other methods labels their plans
 * (optimum, gap); no method reads it (method.h: .wants_reference lets one
 * decline it, the weighted milp does); --no-reference skips it.
 */
#include "partition/methods/partition.h"

#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "partition/rl/rl_policy.h"
#include "partition/rl/rl_reinforce.h"
#include "partition/chain/baselines.h"
#include "partition/chain/chain_rules.h"
#include "partition/chain/exact.h"
#include "partition/mesh/mesh_plan.h"
#include "partition/methods/method.h"
#include "partition/methods/method_registry.h"

void pb_part_run_install(pb_part_run *r, const int *ac)
{
	pb_part_eval ev;
	pb_part_evaluate(r->P, ac, &ev, NULL);
	memcpy(r->ac, ac, (size_t)r->P->n * sizeof *ac);
	r->inc_obj = pb_part_objective(&ev);
	pb_plan_free(r->plan);
	r->plan = pb_part_to_plan(r->P, r->ac, r->method->name, r->optimum);
	/* a routed mesh: the snake placement, priced with routes (mesh_plan.h) */
	if (r->plan && r->P->hw.mesh_routed &&
	    pb_mesh_plan_apply(r->P, r->ac, NULL, r->plan,
	                       r->P->hw.reward_mode == PB_REWARD_MAX_TIME ? r->optimum : NAN,
	                       NULL)) {
		pb_plan_free(r->plan);
		r->plan = NULL;
	}
	/* Edits re-evaluate the plan later: they must use the same costs. */
	if (r->plan && r->costs_path)
		json_object_set_new(r->plan->detail, "costs", json_string(r->costs_path));
	if (r->plan && r->not_exact) {
		char note[200];
		snprintf(note, sizeof note,
		         "the label DP gave up (past its limit of %ld labels, --max-labels): this "
		         "plan is not proven optimal; milp is the reference",
		         r->P->max_labels > 0 ? r->P->max_labels : PB_LABELS_MAX);
		json_object_set_new(r->plan->detail, "exact_note", json_string(note));
	}
}

int pb_part_run_offer(pb_part_run *r, const int *ac)
{
	pb_part_eval ev;
	pb_part_evaluate(r->P, ac, &ev, NULL);
	if (r->plan && pb_part_objective(&ev) >= r->inc_obj)
		return 0;
	pb_part_run_install(r, ac);
	return 1;
}

static void fill_progress(pb_part_run *r, pb_solver_progress *p, double bound, double fraction)
{
	pb_part_eval ev;
	pb_part_evaluate(r->P, r->ac, &ev, NULL);
	p->incumbent = ev.max_time;
	/* the history and bound are max(t), in seconds: a bound of the weighted objective
	 * (no unit) is not one of max(t), so none is given then (the message has it) */
	p->bound = r->P->hw.reward_mode == PB_REWARD_WEIGHTED ? NAN : bound;
	p->done = r->done;
	p->iterations = r->iters;
	p->fraction = r->done ? 1.0 : fraction;
	if (r->method->message) {
		r->method->message(r, &ev, p);
		return;
	}
	char gap[112] = "";
	if (isfinite(r->optimum) && r->optimum > 0)
		snprintf(gap, sizeof gap, ", gap %.2f%%", 100 * (ev.objective / r->optimum - 1));
	if (r->method->note) {
		size_t w = strlen(gap);
		r->method->note(r, gap + w, sizeof gap - w);
	}
	snprintf(p->message, sizeof p->message, "max(t) %.4f ms, reward %.4f%s%s, %ld %s",
	         ev.max_time * 1e3, ev.reward, gap, ev.over_memory ? ", OVER MEMORY" : "", r->iters,
	         r->method->unit);
}

static int step_fn(pb_solver *s, int budget, pb_solver_progress *p, pb_error *err)
{
	pb_part_run *r = (pb_part_run *)s;
	double bound = NAN, fraction = -1;
	if (budget < 1)
		budget = 1;
	if (r->method->step) {
		int rc = r->method->step(r, budget, p, &bound, &fraction, err);
		if (rc)
			return rc;
	} else {
		r->done = 1;
	}
	fill_progress(r, p, bound, fraction);
	return PB_OK;
}

static const pb_plan *incumbent_fn(pb_solver *s)
{
	return ((pb_part_run *)s)->plan;
}

static void stats_fn(pb_solver *s, FILE *out)
{
	pb_part_run *r = (pb_part_run *)s;
	pb_part_eval ev;
	pb_part_evaluate(r->P, r->ac, &ev, NULL);
	fprintf(out, "method %s on %s: %d layers, %d cores", r->method->name, r->P->hw.name,
	        r->P->m, r->P->n);
	if (r->P->n_folded > 0)
		fprintf(out, " (%d load-time constants go with their consumers)", r->P->n_folded);
	fputc('\n', out);
	fprintf(out, "incumbent max(t) %.6f ms, reward %.4f, %d groups\n", ev.max_time * 1e3,
	        ev.reward, ev.n_groups);
	fprintf(out, "lower bound %.6f ms", r->P->lower_bound * 1e3);
	if (isfinite(r->optimum) && r->P->hw.reward_mode == PB_REWARD_WEIGHTED)
		fprintf(out, ", exact optimum %.6f (weighted objective, no unit)", r->optimum);
	else if (isfinite(r->optimum))
		fprintf(out, ", exact optimum %.6f ms", r->optimum * 1e3);
	fprintf(out, "\n%ld iterations%s\n", r->iters, r->done ? ", done" : "");
	if (r->method->stats)
		r->method->stats(r, out);
}

static void free_fn(pb_solver *s)
{
	pb_part_run *r = (pb_part_run *)s;
	if (r->method->free)
		r->method->free(r);
	pb_plan_free(r->plan);
	free(r->ac);
	free(r->scratch);
	pb_part_problem_free(r->P);
	free(r->costs_path);
	free(r);
}

static const pb_solver_ops part_ops = {"partition", step_fn, incumbent_fn, stats_fn, free_fn, NULL};

/* s as a partition solver, through any wrapper (the Lua hooks of --start,
 * script/hooks_solver.c); NULL for another kind of solver. */
pb_part_run *pb_part_run_of(pb_solver *s)
{
	s = pb_solver_innermost(s);
	return s && s->ops == &part_ops ? (pb_part_run *)s : NULL;
}

pb_part_problem *pb_partition_solver_problem(pb_solver *s)
{
	pb_part_run *r = pb_part_run_of(s);
	return r ? r->P : NULL;
}

double pb_partition_solver_optimum(pb_solver *s)
{
	pb_part_run *r = pb_part_run_of(s);
	return r ? r->optimum : NAN;
}

int pb_partition_default_agent(const char *layout_path, int cores, char *buf, int len)
{
	const char *slash = strrchr(layout_path, '/'), *base = slash ? slash + 1 : layout_path;
	const char *dot = strrchr(base, '.');
	int dir_len = (int)(base - layout_path),
	    stem_len = dot ? (int)(dot - base) : (int)strlen(base);
	int w = snprintf(buf, (size_t)len, "%.*s../agents/%.*s.ckpt", dir_len, layout_path,
	                 stem_len, base);
	struct stat st;
	if (w <= 0 || w >= len || stat(buf, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	/* A layout of the same name with another core count does not match. */
	struct pb_rl_policy *pol = NULL;
	long ep;
	pb_error e = {0};
	if (pb_rl_checkpoint_load(buf, cores, &pol, &ep, &e) != PB_OK)
		return 0;
	pb_rl_policy_free(pol);
	return 1;
}

/* The reference optimum that labels a method's plans (for the report only: no
 * method reads it), unless the caller asked for none. With rules or the
 * weighted objective it is the label DP's (NAN when the DP gave up). */
static int reference(pb_part_run *r, const pb_part_opts *o, pb_error *err)
{
	if (o->no_reference || (r->method->wants_reference && !r->method->wants_reference(r)))
		return PB_OK;
	if (pb_part_exact_needs_labels(r->P)) {
		int exact = 1;
		int rc = pb_part_exact_labels(r->P, r->scratch, &r->optimum, &r->memory_feasible,
		                              &exact, err);
		if (!rc && !exact)
			r->optimum = NAN;
		return rc;
	}
	return pb_part_exact_solve(r->P, &r->optimum, r->scratch, &r->memory_feasible, err);
}

int pb_partition_solver_new(const pb_graph *g, const pb_hw *hw, const pb_part_opts *o,
                            pb_solver **out, pb_error *err)
{
	*out = NULL;
	const char *mname = o->method ? o->method : "exact";
	const pb_part_method *m = pb_part_method_find(mname);
	if (!m)
		return pb_part_method_unknown(err, mname);
	pb_manycore mc;
	int rc = pb_manycore_parse(hw, &mc, err);
	if (rc)
		return rc;
	pb_part_run *r = calloc(1, sizeof *r);
	if (!r)
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	r->base.ops = &part_ops;
	r->base.state = r;
	r->method = m;
	r->optimum = NAN;
	rc = pb_part_problem_new_timed(g, &mc, o->node_time, &r->P, err);
	if (rc) {
		free(r);
		return rc;
	}
	r->P->max_labels = o->max_labels;
	if ((rc = pb_part_problem_set_rules(r->P, o->rules, err))) {
		pb_part_problem_free(r->P);
		free(r);
		return rc;
	}
	r->costs_path = (o->node_time && o->costs_path) ? strdup(o->costs_path) : NULL;
	int n = r->P->n;
	r->ac = malloc((size_t)n * sizeof *r->ac);
	r->scratch = malloc((size_t)n * sizeof *r->scratch);
	if (!r->ac || !r->scratch) {
		free_fn(&r->base);
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	}
	if (!(m->flags & PB_PART_M_SELF_REFERENCE)) {
		rc = reference(r, o, err);
		if (!rc && o->init_state && !pb_part_state_valid(r->P, o->init_state, err)) {
			pb_err_prefix(err, "initial partition");
			rc = err->code ? err->code : PB_EINPUT;
		}
	}
	if (!rc)
		rc = m->start(r, hw, o, err);
	if (rc) {
		free_fn(&r->base);
		return rc;
	}
	if (!m->step)
		r->done = 1;
	pb_part_run_install(r, r->ac);
	*out = &r->base;
	return PB_OK;
}
