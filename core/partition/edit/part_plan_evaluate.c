/*
 * partition/edit/part_plan_evaluate.c — a partition plan priced again with
 * its exact optimum (part_plan_evaluate.h).
 */
#include "partition/edit/part_plan_evaluate.h"

#include "partition/chain/exact.h"
#include "partition/mesh/mesh_edit.h"

int pb_part_plan_evaluate(pb_part_plan_edit *e, pb_plan **out, pb_error *err)
{
	*out = NULL;
	double opt;
	int rc = pb_part_exact_solve(e->P, &opt, NULL, NULL, err);
	if (rc)
		return rc;
	if (e->P->hw.mesh_routed) /* a placed plan keeps its placement, routed prices */
		return pb_mesh_edit_place(e->P, e->old, e->ac, e->old->method, opt, out, err);
	*out = pb_part_to_plan(e->P, e->ac, e->old->method, opt);
	return *out ? PB_OK : pb_err(err, PB_ENOMEM, "evaluate: out of memory");
}
