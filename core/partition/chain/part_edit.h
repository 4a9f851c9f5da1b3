/*
 * partition/chain/part_edit.h — hand edits of a many-core partition state
 * (chain_problem.h): a state in, a new state or a refusal with the reason out.
 *
 * Every edit works on the group list of the state (cores and layers per
 * group, in chain order), which determines the state one to one:
 *   merge G      groups G and G+1 become one group with the cores and the
 *                layers of both (the group count drops by exactly one);
 *   split G      group G's cores in two halves, its layers cut where the
 *                larger MACs per core of the two halves is smallest;
 *   boundary G D D > 0: the first D layers of group G+1 join G; D < 0: the
 *                last -D layers of G join G+1 (cores stay);
 *   action K     the method's action K (env.h).
 * Cores and layers are conserved by construction. An edit that would break
 * a Lua rule (chain_rules.h) that the state before it obeyed is refused,
 * naming the rule and the node. The message of an edit is made from the two
 * states (pb_part_edit_describe), never from the request.
 */
#ifndef PB_PARTITION_PART_EDIT_H
#define PB_PARTITION_PART_EDIT_H

#include <stddef.h>

#include "model/graph.h"
#include "partition/chain/chain_problem.h"

/* Each takes the state ac (P->n entries) and writes the edited state to out
 * (P->n entries, may not alias ac). g (may be NULL) names nodes in refusals.
 * PB_EUSAGE with the reason when refused (out is then undefined). */
int pb_part_edit_merge(pb_part_problem *P, const pb_graph *g, const int *ac, int G, int *out,
                       pb_error *err);
int pb_part_edit_split(pb_part_problem *P, const pb_graph *g, const int *ac, int G, int *out,
                       pb_error *err);
int pb_part_edit_boundary(pb_part_problem *P, const pb_graph *g, const int *ac, int G, int delta,
                          int *out, pb_error *err);
int pb_part_edit_action(pb_part_problem *P, const pb_graph *g, const int *ac, int action, int *out,
                        pb_error *err);

/* The first Lua rule of P that `after` breaks and `before` obeyed: 1 with
 * "rule 'NAME' (EFFECT): ..." in msg, else 0. */
int pb_part_edit_rule_broken(pb_part_problem *P, const pb_graph *g, const int *before,
                             const int *after, char *msg, size_t len);

/* What changed from state `before` to `after`, from the two states alone:
 * "groups 2-3 [cores 2-2 layers 6-8, cores 3-3 layers 9-11] -> group 2
 * [cores 2-3 layers 6-11]; 16 -> 15 groups; max(t) 1.2 ms -> 1.4 ms". */
void pb_part_edit_describe(pb_part_problem *P, const int *before, const int *after, char *buf,
                           size_t len);
/* The same with the two plans' times given and named (a placed plan's
 * "placed max(t)" from the routed model, mesh_edit.h). */
void pb_part_edit_describe_times(pb_part_problem *P, const int *before, const int *after,
                                 const char *what, double t_before, double t_after, char *buf,
                                 size_t len);

#endif
