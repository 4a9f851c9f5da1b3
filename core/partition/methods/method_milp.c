/*
 * method_milp.c — `--method milp`: probes on the bottleneck, then GLPK's
 * branch and bound proves the optimum (chain_milp.h; under rules one MILP,
 * under the weighted objective its own branch and bound). It reads no other
 * method's plan nor the exact reference: it starts from its own first probe
 * (or a Lua initial partition when better) and proves its own bounds. One
 * unit of a step is one probe, one <= 50 ms slice of an LP or of column
 * generation, or one branch-and-bound node.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "partition/chain/baselines.h"
#include "partition/milp/chain_milp.h"
#include "partition/methods/method.h"

extern const pb_part_method pb_part_method_milp;

/* The weighted milp without rules proves its own bound (chain_milp_weighted.h); the
 * label DP as a reference would run unsliced and unbounded before it (minutes on
 * bert_base_like, deaf to a cancel). */
static int milp_wants_reference(const pb_part_run *r)
{
	return !(r->P->hw.reward_mode == PB_REWARD_WEIGHTED && !r->P->cut && !r->P->pin);
}

/* The milp method's order of plans: the problem it proves. When no partition fits
 * the memory, it solves (as exact does) without the memory, so the objective alone
 * ranks its plans there: ranking them by storage overflow first would keep its first
 * probe's one group (the least storage per core) over the incumbent it proved. */
static double milp_rank(const pb_part_run *r, const int *ac)
{
	pb_part_eval ev;
	pb_part_evaluate(r->P, ac, &ev, NULL);
	pb_milp_stats st;
	pb_milp_stats_get(r->state, &st);
	return st.memory_used ? pb_part_objective(&ev) : 1e18 * ev.violations + ev.objective;
}

static int milp_start(pb_part_run *r, const pb_hw *hw, const pb_part_opts *o, pb_error *err)
{
	pb_milp_opts mo = {o->time_limit, 0};
	pb_milp *milp = NULL;
	int rc = pb_milp_new_opts(r->P, &mo, o->emit_lp, &milp, err);
	r->state = milp;
	if (rc)
		return rc;
	size_t bytes = (size_t)r->P->n * sizeof *r->ac;
	memcpy(r->ac, pb_milp_incumbent_state(milp), bytes);
	if (o->init_state && milp_rank(r, o->init_state) < milp_rank(r, r->ac))
		memcpy(r->ac, o->init_state, bytes);
	return PB_OK;
}

static int milp_step(pb_part_run *r, int budget, pb_solver_progress *p, double *bound,
                     double *fraction, pb_error *err)
{
	int improved = 0;
	int rc = pb_milp_step(r->state, budget, r->scratch, &improved, err);
	if (rc)
		return rc;
	if (improved && milp_rank(r, r->scratch) < milp_rank(r, r->ac)) {
		pb_part_run_install(r, r->scratch);
		p->improved = 1;
	}
	r->iters = pb_milp_nodes(r->state);
	r->done = pb_milp_done(r->state);
	*bound = pb_milp_bound(r->state);
	return PB_OK;
}

/* The milp method's line: its incumbent, proven bound and the gap between them. */
static void milp_message(pb_part_run *r, const pb_part_eval *ev, pb_solver_progress *p)
{
	pb_milp_stats st;
	pb_milp_stats_get(r->state, &st);
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

static void milp_stats(pb_part_run *r, FILE *out)
{
	pb_milp_stats st;
	pb_milp_stats_get(r->state, &st);
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

static void milp_free(pb_part_run *r)
{
	pb_milp_free(r->state);
}

int pb_partition_solver_milp_stats(pb_solver *s, pb_milp_stats *st)
{
	pb_part_run *r = pb_part_run_of(s);
	if (!r || r->method != &pb_part_method_milp || !r->state)
		return 0;
	pb_milp_stats_get(r->state, st);
	/* The installed plan may be a Lua initial partition better than the MILP's. */
	pb_part_eval ev;
	pb_part_evaluate(r->P, r->ac, &ev, NULL);
	const int *mi = pb_milp_incumbent_state(r->state);
	if (!mi || memcmp(mi, r->ac, (size_t)r->P->n * sizeof *mi) != 0) {
		st->incumbent = ev.objective;
		st->gap = ev.objective > 0 ? (ev.objective - st->bound) / ev.objective : 0.0;
		if (st->gap < 0)
			st->gap = 0;
	}
	return 1;
}

const pb_part_method pb_part_method_milp = {
    .name = "milp",
    .summary = "probes on the bottleneck, then GLPK branch and bound proves the optimum "
               "(--time-limit: incumbent, bound, gap)",
    .options = "emit-lp",
    .unit = "nodes",
    .key = 'I',
    .flags = PB_PART_M_STEPPED,
    .wants_reference = milp_wants_reference,
    .start = milp_start,
    .step = milp_step,
    .message = milp_message,
    .stats = milp_stats,
    .free = milp_free,
};
