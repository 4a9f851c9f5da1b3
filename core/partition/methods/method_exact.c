/*
 * method_exact.c — `--method exact`: bisection on max(t) with a feasibility
 * DP (exact.h); under rules or the weighted objective the label DP. It is
 * its own reference: run to its end, its plan is the optimum (unless the
 * label DP gave up past its limit, which the plan then says). One unit of a
 * step is one feasibility check.
 */
#include <stdlib.h>
#include <string.h>

#include "partition/chain/exact.h"
#include "partition/methods/method.h"

static int exact_start(pb_part_run *r, const pb_hw *hw, const pb_part_opts *o, pb_error *err)
{
	pb_part_exact *ex = calloc(1, sizeof *ex);
	if (!ex)
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	r->state = ex;
	int rc = pb_part_exact_init(ex, r->P, err);
	if (rc)
		return rc;
	r->memory_feasible = ex->memory_feasible;
	r->not_exact = ex->not_exact;
	r->done = ex->done;
	if (r->done && !r->not_exact) /* a DP that gave up proves nothing */
		r->optimum = ex->hi;
	memcpy(r->ac, ex->best, (size_t)r->P->n * sizeof *r->ac);
	return PB_OK;
}

static int exact_step(pb_part_run *r, int budget, pb_solver_progress *p, double *bound,
                      double *fraction, pb_error *err)
{
	pb_part_exact *ex = r->state;
	long was = ex->checks;
	r->done = pb_part_exact_step(ex, budget);
	r->iters = ex->checks;
	p->improved = pb_part_run_offer(r, ex->best) || (ex->checks == was && !r->plan);
	*bound = ex->lo;
	if (r->done) {
		if (!r->not_exact)
			r->optimum = ex->hi;
		pb_part_run_install(r, ex->best);
		p->improved = 1;
	}
	return PB_OK;
}

static void exact_free(pb_part_run *r)
{
	if (r->state)
		pb_part_exact_free(r->state);
	free(r->state);
}

const pb_part_method pb_part_method_exact = {
    .name = "exact",
    .summary = "the proven optimum: bisection on max(t) with a feasibility DP (label DP "
               "under rules or the weighted objective)",
    .options = "max-labels",
    .unit = "checks",
    .key = 'E',
    .flags = PB_PART_M_SELF_REFERENCE,
    .start = exact_start,
    .step = exact_step,
    .free = exact_free,
};
