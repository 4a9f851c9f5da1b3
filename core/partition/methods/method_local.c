/*
 * method_local.c — `--method local`: the iterated local search
 * (local_search.c) from greedy's partition or a Lua initial partition; one
 * unit of a step is one improving move. Under rules or the weighted objective
 * the rule-aware search (rule_search.h) runs once when the search stalls.
 */
#include <stdlib.h>
#include <string.h>

#include "partition/chain/baselines.h"
#include "partition/methods/method.h"
#include "partition/chain/rule_search.h"

typedef struct local_state {
	int rsearched; /* the rule-aware search ran */
} local_state;

static int local_start(pb_part_run *r, const pb_hw *hw, const pb_part_opts *o, pb_error *err)
{
	if (!(r->state = calloc(1, sizeof(local_state))))
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	if (o->init_state)
		memcpy(r->ac, o->init_state, (size_t)r->P->n * sizeof *r->ac);
	else
		pb_part_greedy(r->P, r->ac);
	return PB_OK;
}

static int local_step(pb_part_run *r, int budget, pb_solver_progress *p, double *bound,
                      double *fraction, pb_error *err)
{
	local_state *ls = r->state;
	for (int k = 0; k < budget && !r->done; k++) {
		memcpy(r->scratch, r->ac, (size_t)r->P->n * sizeof *r->ac);
		int moved = pb_part_ils_step(r->P, r->scratch, NULL);
		/* under rules or the weighted objective, once: rule_search.h */
		if (!moved && !ls->rsearched && pb_part_rsearch_wanted(r->P)) {
			ls->rsearched = 1;
			moved = pb_part_rsearch(r->P, r->scratch, NULL);
		}
		if (!moved) {
			r->done = 1;
			break;
		}
		r->iters++;
		p->improved |= pb_part_run_offer(r, r->scratch);
	}
	return PB_OK;
}

static void local_free(pb_part_run *r)
{
	free(r->state);
}

const pb_part_method pb_part_method_local = {
    .name = "local",
    .summary = "iterated local search from greedy (window re-forms, whole-chain re-cuts, "
               "kicks)",
    .options = "",
    .unit = "moves",
    .key = 'O',
    .start = local_start,
    .step = local_step,
    .free = local_free,
};
