/*
 * partition/edit/part_plan_edit.h — a hand edit of a partition plan, the
 * engine of the edit commands (cmds/cmd_edit.c): the plan's problem rebuilt
 * (its layout, the measured kernel times it was made with, the Lua rules in
 * force), one edit of partition/chain/part_edit.h or a core moved on a
 * placed plan (partition/mesh/mesh_edit.h), and the new plan ("manual")
 * with the description of what changed, made from the two plans.
 */
#ifndef PB_PARTITION_EDIT_PART_PLAN_EDIT_H
#define PB_PARTITION_EDIT_PART_PLAN_EDIT_H

#include <stddef.h>

#include "hw.h"
#include "model/graph.h"
#include "partition/chain/chain_problem.h"
#include "partition/chain/chain_rules.h"
#include "plan.h"

typedef struct pb_part_plan_edit {
	const pb_graph *g;
	const pb_plan *old; /* the plan edited (not owned) */
	pb_part_problem *P;
	int *ac;  /* the plan's state, edited */
	int *ac0; /* the state before the edit */
} pb_part_plan_edit;

typedef enum {
	PB_PART_PLAN_ACTION,   /* x: the action number */
	PB_PART_PLAN_BOUNDARY, /* x: group, y: layers (> 0 grows it) */
	PB_PART_PLAN_MERGE,    /* x: group */
	PB_PART_PLAN_SPLIT     /* x: group */
} pb_part_plan_edit_kind;

/* The problem of plan (a "partition" plan of g) on hw's many-core under
 * rules (may be NULL), and its state; errors are prefixed with name. */
int pb_part_plan_edit_begin(const pb_graph *g, const pb_hw *hw, const pb_plan *plan,
                            const pb_part_rules *rules, const char *name, pb_part_plan_edit *e,
                            pb_error *err);
void pb_part_plan_edit_free(pb_part_plan_edit *e);

/* The old plan's optimum if it was made for the same layout, else NAN. */
double pb_part_plan_edit_optimum(const pb_part_plan_edit *e);

/* One edit (kind, x, y) of the plan: *out = the new plan ("manual"; placed
 * again and priced by the routed model on a placed plan, where *optimum
 * becomes NAN, else carrying *optimum), what = the groups that differ and
 * the figures before -> after. A refused edit (PB_EUSAGE) says why and
 * "plan unchanged"; errors are prefixed with name. */
int pb_part_plan_edit_apply(pb_part_plan_edit *e, pb_part_plan_edit_kind kind, int x, int y,
                            const char *name, double *optimum, pb_plan **out, char *what,
                            size_t len, pb_error *err);

/* move-core: the core (row, col) of a placed plan joins the neighbouring
 * group g (partition/mesh/mesh_edit.h); *out and what as above. */
int pb_part_plan_edit_move_core(pb_part_plan_edit *e, int row, int col, int g, pb_plan **out,
                                char *what, size_t len, pb_error *err);

#endif
