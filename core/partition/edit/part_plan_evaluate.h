/*
 * partition/edit/part_plan_evaluate.h — a partition plan priced again with
 * the exact optimum of its problem (the `evaluate` command): the optimum,
 * the gap, and on a placed plan its placement priced by the routed model.
 */
#ifndef PB_PARTITION_EDIT_PART_PLAN_EVALUATE_H
#define PB_PARTITION_EDIT_PART_PLAN_EVALUATE_H

#include "partition/edit/part_plan_edit.h"

/* *out = e's plan under its own method with the optimum its problem has. */
int pb_part_plan_evaluate(pb_part_plan_edit *e, pb_plan **out, pb_error *err);

#endif
