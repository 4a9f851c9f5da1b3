/*
 * partition/edit/part_plan_edit.c — a hand edit of a partition plan
 * (part_plan_edit.h).
 */
#include "partition/edit/part_plan_edit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition/chain/manycore.h"
#include "partition/chain/part_costs.h"
#include "partition/chain/part_edit.h"
#include "partition/mesh/mesh_edit.h"

void pb_part_plan_edit_free(pb_part_plan_edit *e)
{
	pb_part_problem_free(e->P);
	free(e->ac);
	free(e->ac0);
	memset(e, 0, sizeof *e);
}

int pb_part_plan_edit_begin(const pb_graph *g, const pb_hw *hw, const pb_plan *plan,
                            const pb_part_rules *rules, const char *name, pb_part_plan_edit *e,
                            pb_error *err)
{
	memset(e, 0, sizeof *e);
	e->g = g;
	e->old = plan;
	pb_manycore mc;
	int rc = pb_manycore_parse(hw, &mc, err);
	/* A plan made with measured kernel times (partition --costs) is edited
	 * under the same costs. */
	const char *costs = json_string_value(json_object_get(plan->detail, "costs"));
	double *times = NULL;
	int found;
	if (!rc && costs)
		rc = pb_part_load_costs(g, costs, &times, &found, err);
	if (!rc)
		rc = pb_part_problem_new_timed(g, &mc, times, &e->P, err);
	free(times);
	/* the Lua rules: an edit may not break one the plan obeys */
	if (!rc && rules)
		rc = pb_part_problem_set_rules(e->P, rules, err);
	if (!rc) {
		e->ac = malloc((size_t)e->P->n * sizeof *e->ac);
		e->ac0 = malloc((size_t)e->P->n * sizeof *e->ac0);
		if (!e->ac || !e->ac0)
			rc = pb_err(err, PB_ENOMEM, "out of memory");
	}
	if (!rc)
		rc = pb_part_from_plan(e->P, plan, e->ac, err);
	if (rc) {
		pb_part_plan_edit_free(e);
		return pb_err_prefix(err, "%s", name);
	}
	memcpy(e->ac0, e->ac, (size_t)e->P->n * sizeof *e->ac);
	return PB_OK;
}

double pb_part_plan_edit_optimum(const pb_part_plan_edit *e)
{
	const char *lay = json_string_value(json_object_get(e->old->detail, "layout"));
	if (!lay || strcmp(lay, e->P->hw.name) != 0)
		return NAN;
	return pb_plan_metric(e->old, "optimum", NAN);
}

static int refused(int rc, const char *name, pb_error *err)
{
	if (rc == PB_EUSAGE) {
		size_t l = strlen(err->msg);
		snprintf(err->msg + l, sizeof err->msg - l, "; plan unchanged");
	}
	return pb_err_prefix(err, "%s", name);
}

int pb_part_plan_edit_apply(pb_part_plan_edit *e, pb_part_plan_edit_kind kind, int x, int y,
                            const char *name, double *optimum, pb_plan **out, char *what,
                            size_t len, pb_error *err)
{
	*out = NULL;
	int rc;
	switch (kind) {
	case PB_PART_PLAN_ACTION:
		rc = pb_part_edit_action(e->P, e->g, e->ac0, x, e->ac, err);
		break;
	case PB_PART_PLAN_BOUNDARY:
		rc = pb_part_edit_boundary(e->P, e->g, e->ac0, x, y, e->ac, err);
		break;
	case PB_PART_PLAN_MERGE:
		rc = pb_part_edit_merge(e->P, e->g, e->ac0, x, e->ac, err);
		break;
	case PB_PART_PLAN_SPLIT:
		rc = pb_part_edit_split(e->P, e->g, e->ac0, x, e->ac, err);
		break;
	default:
		return pb_err(err, PB_EUSAGE, "%s: not an edit of pb_part_plan_edit_apply", name);
	}
	if (rc)
		return refused(rc, name, err);
	if (e->P->hw.mesh_routed) {
		/* a placed plan: placed again and priced by the routed model */
		if ((rc = pb_mesh_edit_place(e->P, e->old, e->ac, "manual", *optimum, out, err)))
			return pb_err_prefix(err, "%s", name);
		*optimum = NAN;
		pb_part_edit_describe_times(e->P, e->ac0, e->ac, "placed max(t)",
		                            pb_plan_metric(e->old, "max_time", NAN),
		                            pb_plan_metric(*out, "max_time", NAN), what, len);
	} else {
		pb_part_edit_describe(e->P, e->ac0, e->ac, what, len);
		*out = pb_part_to_plan(e->P, e->ac, "manual", *optimum);
	}
	return *out ? PB_OK : pb_err(err, PB_ENOMEM, "%s: out of memory", name);
}

int pb_part_plan_edit_move_core(pb_part_plan_edit *e, int row, int col, int g, pb_plan **out,
                                char *what, size_t len, pb_error *err)
{
	*out = NULL;
	int rc = pb_mesh_edit_move(e->P, e->g, e->old, row, col, g, out, what, len, err);
	return rc ? refused(rc, "move-core", err) : PB_OK;
}
