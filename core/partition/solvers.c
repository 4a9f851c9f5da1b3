/*
 * solvers.c — the partition methods behind the steppable solver interface
 * (partition.h). Each solver owns its problem (a copy of the graph's costs),
 * so it outlives a model being closed in the session.
 *
 * Invariants: ps->ac is always a valid state and ps->plan its plan; the
 * incumbent only changes when the objective (baselines.h) strictly improves.
 * The exact optimum computed at the start of the other methods labels their plans
 * (optimum, gap); the milp method never sees it (nor any other method's plan): it
 * starts from its own first probe and proves its own bounds (chain_milp.h). Nor
 * does the rl agent (rl_reinforce.h); --no-reference skips the exact solve, and the
 * weighted milp (no rules) never runs it: its own proof is the reference.
 */
#include "partition/partition.h"

#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "partition/rl_policy.h"
#include "partition/rl_reinforce.h"
#include "partition/env.h"
#include "partition/baselines.h"
#include "partition/exact.h"
#include "partition/mesh_plan.h"
#include "partition/chain_milp.h"
#include "partition/chain_rules.h"
#include "partition/rule_search.h"
#include "tune/node_costs.h"

enum { M_EXACT, M_MILP, M_RL, M_GREEDY, M_EQUAL, M_LOCAL, M_PACK };
static const char *const method_names[] = {"exact", "milp",  "rl",   "greedy",
                                           "equal", "local", "pack", NULL};

typedef struct psolver {
	pb_solver base;
	pb_part_problem *P;
	int method;
	double optimum; /* exact reference for the gap (NAN until known) */
	int memory_feasible;
	int *ac; /* incumbent state */
	int *scratch;
	double inc_obj;
	pb_plan *plan;
	long iters;
	int done;
	pb_part_exact ex;
	pb_milp *milp;
	pb_rl_trainer *rl;
	char *costs_path; /* tuning log the costs came from, or NULL */
	/* rules (chain_rules.h): the RL agent's mask composes the Lua mask with
	 * one that forbids actions breaking more rules than the state does */
	pb_action_mask_fn user_mask;
	void *user_mask_ud;
	int *mask_next;
	int not_exact; /* exact: the label DP gave up (the plan is a heuristic's) */
	int rsearched; /* local: the rule-aware search ran (rule_search.h) */
} psolver;

int pb_partition_method_known(const char *name)
{
	for (int i = 0; method_names[i]; i++)
		if (strcmp(method_names[i], name) == 0)
			return 1;
	return 0;
}

static void set_incumbent(psolver *ps, const int *ac)
{
	pb_part_eval ev;
	pb_part_evaluate(ps->P, ac, &ev, NULL);
	memcpy(ps->ac, ac, (size_t)ps->P->n * sizeof *ac);
	ps->inc_obj = pb_part_objective(&ev);
	pb_plan_free(ps->plan);
	ps->plan = pb_part_to_plan(ps->P, ps->ac, method_names[ps->method], ps->optimum);
	/* a routed mesh: the snake placement, priced with routes (mesh_plan.h) */
	if (ps->plan && ps->P->hw.mesh_routed &&
	    pb_mesh_plan_apply(ps->P, ps->ac, NULL, ps->plan,
	                       ps->P->hw.reward_mode == PB_REWARD_MAX_TIME ? ps->optimum : NAN,
	                       NULL)) {
		pb_plan_free(ps->plan);
		ps->plan = NULL;
	}
	/* Edits re-evaluate the plan later: they must use the same costs. */
	if (ps->plan && ps->costs_path)
		json_object_set_new(ps->plan->detail, "costs", json_string(ps->costs_path));
	if (ps->plan && ps->not_exact) {
		char note[200];
		snprintf(note, sizeof note,
		         "the label DP gave up (past its limit of %ld labels, --max-labels): this "
		         "plan is not proven optimal; milp is the reference",
		         ps->P->max_labels > 0 ? ps->P->max_labels : PB_LABELS_MAX);
		json_object_set_new(ps->plan->detail, "exact_note", json_string(note));
	}
}

/* The agent's mask under rules: an action may not break more rules than the
 * state already does (so a state that obeys them stays obeying). */
static int rules_mask(void *ud, const int *ac, int n, unsigned char *mask)
{
	psolver *ps = ud;
	if (ps->user_mask && ps->user_mask(ps->user_mask_ud, ac, n, mask) != 0)
		return 1;
	pb_part_eval ev;
	pb_part_evaluate(ps->P, ac, &ev, NULL);
	for (int k = 0; k < pb_env_n_actions(n); k++) {
		if (!mask[k])
			continue;
		memcpy(ps->mask_next, ac, (size_t)n * sizeof *ac);
		if (!pb_part_rules_apply(ps->P, ps->mask_next, k, NULL))
			continue;
		pb_part_eval e2;
		pb_part_evaluate(ps->P, ps->mask_next, &e2, NULL);
		if (e2.violations > ev.violations)
			mask[k] = 0;
	}
	return 0;
}

/* Installs ac when it beats the incumbent; returns 1 if it did. */
static int offer(psolver *ps, const int *ac)
{
	pb_part_eval ev;
	pb_part_evaluate(ps->P, ac, &ev, NULL);
	if (ps->plan && pb_part_objective(&ev) >= ps->inc_obj)
		return 0;
	set_incumbent(ps, ac);
	return 1;
}

/* The milp method's order of plans: the problem it proves. When no partition fits
 * the memory, it solves (as exact does) without the memory, so the objective alone
 * ranks its plans there: ranking them by storage overflow first would keep its first
 * probe's one group (the least storage per core) over the incumbent it proved. */
static double milp_rank(const psolver *ps, const int *ac)
{
	pb_part_eval ev;
	pb_part_evaluate(ps->P, ac, &ev, NULL);
	pb_milp_stats st;
	pb_milp_stats_get(ps->milp, &st);
	return st.memory_used ? pb_part_objective(&ev) : 1e18 * ev.violations + ev.objective;
}

/* The milp method's line: its incumbent, proven bound and the gap between them. */
static void milp_message(psolver *ps, const pb_part_eval *ev, pb_solver_progress *p)
{
	pb_milp_stats st;
	pb_milp_stats_get(ps->milp, &st);
	if (st.weighted) { /* its incumbent and bound are the weighted objective: no unit */
		double gap = ev->objective > 0 ? (ev->objective - st.bound) / ev->objective : 0.0;
		snprintf(p->message, sizeof p->message,
		         "%s%sobjective %.4f (weighted, no unit), bound %.4f, gap %.2f%%%s, max(t) "
		         "%.4f ms%s",
		         st.state == PB_MILP_RUNNING ? st.stage : "",
		         st.state == PB_MILP_RUNNING ? ": " : "", ev->objective, st.bound,
		         100 * (gap > 0 ? gap : 0.0), ev->over_memory ? ", OVER MEMORY" : "",
		         ev->max_time * 1e3,
		         st.state == PB_MILP_OPTIMAL      ? ", proved optimal"
		         : st.state == PB_MILP_TIME_LIMIT ? ", time limit"
		                                          : "");
		return;
	}
	double gap = ev->max_time > 0 ? (ev->max_time - st.bound) / ev->max_time : 0.0;
	snprintf(p->message, sizeof p->message,
	         "%s%smax(t) %.4f ms, bound %.4f ms, gap %.2f%%%s, %ld probes, %ld nodes%s",
	         st.state == PB_MILP_RUNNING ? st.stage : "", /* the stage while it runs */
	         st.state == PB_MILP_RUNNING ? ": " : "", ev->max_time * 1e3, st.bound * 1e3,
	         100 * (gap > 0 ? gap : 0.0), ev->over_memory ? ", OVER MEMORY" : "", st.probes,
	         st.nodes,
	         st.state == PB_MILP_OPTIMAL      ? ", proved optimal"
	         : st.state == PB_MILP_TIME_LIMIT ? ", time limit"
	                                          : "");
}

static void fill_progress(psolver *ps, pb_solver_progress *p, double bound, double fraction)
{
	pb_part_eval ev;
	pb_part_evaluate(ps->P, ps->ac, &ev, NULL);
	p->incumbent = ev.max_time;
	/* the history and bound are max(t), in seconds: a bound of the weighted objective
	 * (no unit) is not one of max(t), so none is given then (the message has it) */
	p->bound = ps->P->hw.reward_mode == PB_REWARD_WEIGHTED ? NAN : bound;
	p->done = ps->done;
	p->iterations = ps->iters;
	p->fraction = ps->done ? 1.0 : fraction;
	if (ps->method == M_MILP) {
		milp_message(ps, &ev, p);
		return;
	}
	char gap[112] = "";
	if (isfinite(ps->optimum) && ps->optimum > 0)
		snprintf(gap, sizeof gap, ", gap %.2f%%", 100 * (ev.objective / ps->optimum - 1));
	if (ps->method == M_RL) { /* what the agent added to its start */
		pb_rl_report r;
		pb_rl_trainer_report(ps->rl, &r);
		int w = (int)strlen(gap);
		if (r.beat_episode >= 0)
			snprintf(gap + w, sizeof gap - (size_t)w, ", start %s %+.1f%% (ep %ld)",
			         r.start_method, 100 * (r.best_time / r.start_time - 1),
			         r.beat_episode);
		else
			snprintf(gap + w, sizeof gap - (size_t)w, ", start %s not beaten",
			         r.start_method);
	}
	snprintf(p->message, sizeof p->message, "max(t) %.4f ms, reward %.4f%s%s, %ld %s",
	         ev.max_time * 1e3, ev.reward, gap, ev.over_memory ? ", OVER MEMORY" : "",
	         ps->iters,
	         ps->method == M_RL      ? "episodes"
	         : ps->method == M_MILP  ? "nodes"
	         : ps->method == M_EXACT ? "checks"
	                                 : "moves");
}

static int step_fn(pb_solver *s, int budget, pb_solver_progress *p, pb_error *err)
{
	psolver *ps = (psolver *)s;
	double bound = NAN, fraction = -1;
	if (budget < 1)
		budget = 1;
	switch (ps->method) {
	case M_EXACT: {
		int was = ps->ex.checks;
		ps->done = pb_part_exact_step(&ps->ex, budget);
		ps->iters = ps->ex.checks;
		p->improved = offer(ps, ps->ex.best) || (ps->ex.checks == was && !ps->plan);
		bound = ps->ex.lo;
		if (ps->done) {
			if (!ps->not_exact)
				ps->optimum = ps->ex.hi;
			set_incumbent(ps, ps->ex.best);
			p->improved = 1;
		}
		break;
	}
	case M_MILP: {
		int improved = 0;
		int rc = pb_milp_step(ps->milp, budget, ps->scratch, &improved, err);
		if (rc)
			return rc;
		if (improved && milp_rank(ps, ps->scratch) < milp_rank(ps, ps->ac)) {
			set_incumbent(ps, ps->scratch);
			p->improved = 1;
		}
		ps->iters = pb_milp_nodes(ps->milp);
		ps->done = pb_milp_done(ps->milp);
		bound = pb_milp_bound(ps->milp);
		break;
	}
	case M_RL: {
		int rc = pb_rl_trainer_step(ps->rl, budget, err);
		if (rc)
			return rc;
		p->improved = offer(ps, pb_rl_trainer_best(ps->rl));
		ps->iters = pb_rl_trainer_episodes(ps->rl);
		ps->done = pb_rl_trainer_done(ps->rl);
		/* the agent's best polished under rules or the weighted objective */
		if (ps->done && pb_part_rsearch_wanted(ps->P)) {
			memcpy(ps->scratch, ps->ac, (size_t)ps->P->n * sizeof *ps->ac);
			if (pb_part_rsearch(ps->P, ps->scratch, NULL))
				p->improved |= offer(ps, ps->scratch);
		}
		fraction = pb_rl_trainer_fraction(ps->rl);
		break;
	}
	case M_LOCAL:
		for (int k = 0; k < budget && !ps->done; k++) {
			memcpy(ps->scratch, ps->ac, (size_t)ps->P->n * sizeof *ps->ac);
			int moved = pb_part_ils_step(ps->P, ps->scratch, NULL);
			/* under rules or the weighted objective, once: rule_search.h */
			if (!moved && !ps->rsearched && pb_part_rsearch_wanted(ps->P)) {
				ps->rsearched = 1;
				moved = pb_part_rsearch(ps->P, ps->scratch, NULL);
			}
			if (!moved) {
				ps->done = 1;
				break;
			}
			ps->iters++;
			p->improved |= offer(ps, ps->scratch);
		}
		break;
	default:
		ps->done = 1;
		break;
	}
	fill_progress(ps, p, bound, fraction);
	return PB_OK;
}

static const pb_plan *incumbent_fn(pb_solver *s)
{
	return ((psolver *)s)->plan;
}

static void stats_fn(pb_solver *s, FILE *out)
{
	psolver *ps = (psolver *)s;
	pb_part_eval ev;
	pb_part_evaluate(ps->P, ps->ac, &ev, NULL);
	fprintf(out, "method %s on %s: %d layers, %d cores", method_names[ps->method],
	        ps->P->hw.name, ps->P->m, ps->P->n);
	if (ps->P->n_folded > 0)
		fprintf(out, " (%d load-time constants go with their consumers)", ps->P->n_folded);
	fputc('\n', out);
	fprintf(out, "incumbent max(t) %.6f ms, reward %.4f, %d groups\n", ev.max_time * 1e3,
	        ev.reward, ev.n_groups);
	fprintf(out, "lower bound %.6f ms", ps->P->lower_bound * 1e3);
	if (isfinite(ps->optimum) && ps->P->hw.reward_mode == PB_REWARD_WEIGHTED)
		fprintf(out, ", exact optimum %.6f (weighted objective, no unit)", ps->optimum);
	else if (isfinite(ps->optimum))
		fprintf(out, ", exact optimum %.6f ms", ps->optimum * 1e3);
	fprintf(out, "\n%ld iterations%s\n", ps->iters, ps->done ? ", done" : "");
	if (ps->method == M_RL)
		pb_rl_trainer_stats(ps->rl, out);
	if (ps->method == M_MILP) {
		pb_milp_stats st;
		pb_milp_stats_get(ps->milp, &st);
		char b[48];
		if (st.weighted)
			snprintf(b, sizeof b, "%.6f (weighted objective, no unit)", st.bound);
		else
			snprintf(b, sizeof b, "%.6f ms", st.bound * 1e3);
		fprintf(out,
		        "milp: %s; bound %s, gap %.3f%%; %ld probes, %ld nodes, %d columns, "
		        "%.3f s\n",
		        st.state == PB_MILP_OPTIMAL      ? "proved optimal"
		        : st.state == PB_MILP_TIME_LIMIT ? "stopped at the time limit"
		                                         : st.stage,
		        b, 100 * (isfinite(st.gap) ? st.gap : 0.0), st.probes, st.nodes, st.columns,
		        st.seconds);
	}
}

static void free_fn(pb_solver *s)
{
	psolver *ps = (psolver *)s;
	if (ps->method == M_EXACT)
		pb_part_exact_free(&ps->ex);
	pb_milp_free(ps->milp);
	pb_rl_trainer_free(ps->rl);
	pb_plan_free(ps->plan);
	free(ps->ac);
	free(ps->scratch);
	pb_part_problem_free(ps->P);
	free(ps->costs_path);
	free(ps->mask_next);
	free(ps);
}

static const pb_solver_ops part_ops = {"partition", step_fn, incumbent_fn, stats_fn, free_fn, NULL};

/* s as a partition solver, through any wrapper (the Lua hooks of --start,
 * script/hooks_solver.c); NULL for another kind of solver. */
static psolver *as_psolver(pb_solver *s)
{
	s = pb_solver_innermost(s);
	return s && s->ops == &part_ops ? (psolver *)s : NULL;
}

pb_part_problem *pb_partition_solver_problem(pb_solver *s)
{
	psolver *ps = as_psolver(s);
	return ps ? ps->P : NULL;
}

double pb_partition_solver_optimum(pb_solver *s)
{
	psolver *ps = as_psolver(s);
	return ps ? ps->optimum : NAN;
}

int pb_partition_solver_milp_stats(pb_solver *s, pb_milp_stats *st)
{
	psolver *ps = as_psolver(s);
	if (!ps || ps->method != M_MILP || !ps->milp)
		return 0;
	pb_milp_stats_get(ps->milp, st);
	/* The installed plan may be a Lua initial partition better than the MILP's. */
	pb_part_eval ev;
	pb_part_evaluate(ps->P, ps->ac, &ev, NULL);
	const int *mi = pb_milp_incumbent_state(ps->milp);
	if (!mi || memcmp(mi, ps->ac, (size_t)ps->P->n * sizeof *mi) != 0) {
		st->incumbent = ev.objective;
		st->gap = ev.objective > 0 ? (ev.objective - st->bound) / ev.objective : 0.0;
		if (st->gap < 0)
			st->gap = 0;
	}
	return 1;
}

int pb_partition_solver_rl_report(pb_solver *s, struct pb_rl_report *r)
{
	psolver *ps = as_psolver(s);
	if (!ps || ps->method != M_RL || !ps->rl)
		return 0;
	pb_rl_trainer_report(ps->rl, r);
	return 1;
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

int pb_partition_solver_new(const pb_graph *g, const pb_hw *hw, const pb_part_opts *o,
                            pb_solver **out, pb_error *err)
{
	*out = NULL;
	const char *mname = o->method ? o->method : "exact";
	int method = -1;
	for (int i = 0; method_names[i]; i++)
		if (strcmp(method_names[i], mname) == 0)
			method = i;
	if (method < 0)
		return pb_err(
		    err, PB_EUSAGE,
		    "partition: unknown method '%s' (exact, milp, rl, greedy, equal, local, pack)",
		    mname);
	pb_manycore mc;
	int rc = pb_manycore_parse(hw, &mc, err);
	if (rc)
		return rc;
	psolver *ps = calloc(1, sizeof *ps);
	if (!ps)
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	ps->base.ops = &part_ops;
	ps->base.state = ps;
	ps->method = method;
	ps->optimum = NAN;
	rc = pb_part_problem_new_timed(g, &mc, o->node_time, &ps->P, err);
	if (rc) {
		free(ps);
		return rc;
	}
	ps->P->max_labels = o->max_labels;
	if ((rc = pb_part_problem_set_rules(ps->P, o->rules, err))) {
		pb_part_problem_free(ps->P);
		free(ps);
		return rc;
	}
	ps->costs_path = (o->node_time && o->costs_path) ? strdup(o->costs_path) : NULL;
	int n = ps->P->n;
	ps->ac = malloc((size_t)n * sizeof *ps->ac);
	ps->scratch = malloc((size_t)n * sizeof *ps->scratch);
	if (!ps->ac || !ps->scratch) {
		free_fn(&ps->base);
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	}
	if (method == M_EXACT) {
		rc = pb_part_exact_init(&ps->ex, ps->P, err);
		if (rc) {
			free_fn(&ps->base);
			return rc;
		}
		ps->memory_feasible = ps->ex.memory_feasible;
		ps->not_exact = ps->ex.not_exact;
		ps->done = ps->ex.done;
		if (ps->done && !ps->not_exact) /* a DP that gave up proves nothing */
			ps->optimum = ps->ex.hi;
		set_incumbent(ps, ps->ex.best);
		*out = &ps->base;
		return PB_OK;
	}
	/* Every other method is judged against the exact optimum of the layout's
	 * objective (for the report only: none of them reads it), unless the
	 * caller asked for no reference. With rules or the weighted objective it
	 * is the label DP's (NAN when the DP gave up). */
	if (method == M_MILP && ps->P->hw.reward_mode == PB_REWARD_WEIGHTED && !ps->P->cut &&
	    !ps->P->pin) {
		/* The weighted milp proves its own bound (chain_milp_weighted.h); the label DP
		 * as a reference would run unsliced and unbounded before it (minutes on
		 * bert_base_like, deaf to a cancel). */
	} else if (!o->no_reference && pb_part_exact_needs_labels(ps->P)) {
		int exact = 1;
		rc = pb_part_exact_labels(ps->P, ps->scratch, &ps->optimum, &ps->memory_feasible,
		                          &exact, err);
		if (!rc && !exact)
			ps->optimum = NAN;
	} else if (!o->no_reference) {
		rc = pb_part_exact_solve(ps->P, &ps->optimum, ps->scratch, &ps->memory_feasible,
		                         err);
	}
	if (rc) {
		free_fn(&ps->base);
		return rc;
	}
	if (o->init_state && !pb_part_state_valid(ps->P, o->init_state, err)) {
		pb_err_prefix(err, "initial partition");
		free_fn(&ps->base);
		return err->code ? err->code : PB_EINPUT;
	}
	switch (method) {
	case M_EQUAL:
		pb_part_equal(ps->P, ps->ac);
		break;
	case M_PACK:
		pb_part_pack(ps->P, ps->ac);
		break;
	case M_MILP: {
		/* The MILP gets no reference: it proves its own bounds. Its first plan is
		 * its own first probe's (or a Lua initial partition, when better). */
		pb_milp_opts mo = {o->time_limit, 0};
		rc = pb_milp_new_opts(ps->P, &mo, o->emit_lp, &ps->milp, err);
		if (rc)
			break;
		memcpy(ps->ac, pb_milp_incumbent_state(ps->milp), (size_t)n * sizeof *ps->ac);
		if (o->init_state && milp_rank(ps, o->init_state) < milp_rank(ps, ps->ac))
			memcpy(ps->ac, o->init_state, (size_t)n * sizeof *ps->ac);
		break;
	}
	case M_RL: {
		pb_rl_config cfg;
		pb_rl_config_default(&cfg);
		/* --seconds alone is a time budget: no episode cap then. */
		cfg.episodes = o->episodes > 0 ? o->episodes : o->seconds > 0 ? 0 : cfg.episodes;
		cfg.seed = o->seed;
		cfg.seconds = o->seconds;
		cfg.init = o->init ? pb_rl_init_parse(o->init) : PB_RL_INIT_BALANCED;
		if (cfg.init < 0)
			rc = pb_err(err, PB_EUSAGE,
			            "partition: --init must be one of " PB_RL_INIT_NAMES
			            ", got '%s'",
			            o->init);
		char dflt[1024];
		const char *agent = o->agent;
		if (agent && strcmp(agent, "none") == 0)
			agent = NULL;
		else if (!agent && hw->path &&
		         pb_partition_default_agent(hw->path, n, dflt, (int)sizeof dflt))
			agent = dflt;
		cfg.mask = o->mask;
		cfg.mask_ud = o->mask_ud;
		cfg.init_state = o->init_state;
		if (pb_part_has_rules(ps->P)) {
			ps->user_mask = o->mask;
			ps->user_mask_ud = o->mask_ud;
			ps->mask_next = malloc((size_t)n * sizeof *ps->mask_next);
			if (!ps->mask_next)
				rc = pb_err(err, PB_ENOMEM, "partition: out of memory");
			cfg.mask = rules_mask;
			cfg.mask_ud = ps;
			/* start where the rules hold: greedy obeys the cut rules */
			if (!o->init_state) {
				pb_part_greedy(ps->P, ps->ac);
				cfg.init_state = ps->ac;
			}
		}
		if (!rc)
			rc = pb_rl_trainer_new(ps->P, &cfg, agent, &ps->rl, err);
		if (!rc)
			memcpy(ps->ac, pb_rl_trainer_best(ps->rl), (size_t)n * sizeof *ps->ac);
		break;
	}
	default: /* greedy, and the start of local */
		if (o->init_state && method == M_LOCAL)
			memcpy(ps->ac, o->init_state, (size_t)n * sizeof *ps->ac);
		else
			pb_part_greedy(ps->P, ps->ac);
		break;
	}
	if (rc) {
		free_fn(&ps->base);
		return rc;
	}
	ps->done = method == M_EQUAL || method == M_GREEDY || method == M_PACK;
	set_incumbent(ps, ps->ac);
	*out = &ps->base;
	return PB_OK;
}

int pb_part_load_costs(const pb_graph *g, const char *log_path, double **times, int *n_found,
                       pb_error *err)
{
	*times = malloc(((size_t)g->n_nodes + 1) * sizeof **times);
	if (!*times)
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	int rc = pb_tune_node_times(g, log_path, *times, n_found, err);
	if (rc == PB_OK && *n_found == 0)
		rc = pb_err(err, PB_EINPUT,
		            "%s: the tuning log has no measurement for any node of %s (tune some "
		            "first: partbench tune MODEL --node NAME --log %s)",
		            log_path, g->path, log_path);
	if (rc) {
		free(*times);
		*times = NULL;
	}
	return rc;
}
