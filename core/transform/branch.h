/*
 * branch.h — parallel branch groups of a computation graph.
 *
 * A sub-branch is a chain without forks: consecutive nodes where each inner
 * link u -> v has u with exactly one successor and v with exactly one
 * predecessor. A parallel branch group is a set of >= 2 sub-branches with no
 * dependency between them, so that fusing nodes taken from different
 * sub-branches (at most one per sub-branch) never creates a cycle.
 *
 * The kinds follow the node-fusion method (seed 004):
 *   parent_child  sub-branches hang from one common parent, at least two end
 *                 in the same child, and every sub-branch has >= 2 nodes;
 *   parent        searched downward from a common parent until a node that
 *                 is a common parent (fork) or a common child (join);
 *   child         searched upward from a common child, symmetric;
 *   source        first nodes have no parent, searched downward;
 *   sink          last nodes have no child, searched upward;
 *   local         made by simplifying the local structure around a fusable
 *                 node that no other group contains: its siblings (nodes
 *                 sharing a parent or a child with it) that are independent
 *                 of it become one-node sub-branches.
 * Each node belongs to at most one group: kinds are searched in the order
 * above and a later search drops nodes an earlier group already holds.
 */
#ifndef PB_TRANSFORM_BRANCH_H
#define PB_TRANSFORM_BRANCH_H

#include "model/graph.h"

enum {
	PB_BRANCH_PARENT_CHILD = 0,
	PB_BRANCH_PARENT,
	PB_BRANCH_CHILD,
	PB_BRANCH_SOURCE,
	PB_BRANCH_SINK,
	PB_BRANCH_LOCAL,
	PB_BRANCH_NKINDS
};

const char *pb_branch_kind_name(int kind);

typedef struct pb_branch_group {
	int kind;
	int anchor; /* common parent / child / target node, -1 for source and sink */
	int n_branches;
	int *start; /* n_branches + 1 offsets into nodes */
	int *nodes; /* node ids; each sub-branch in execution order */
} pb_branch_group;

typedef struct pb_branch_set {
	int n;
	pb_branch_group *groups;
	int per_kind[PB_BRANCH_NKINDS];
	int *group_of; /* node -> group index or -1 (n_nodes entries) */
	int n_nodes;
} pb_branch_set;

/* Finds every group. fusable (n_nodes flags, may be NULL = all fusable) is
 * only used by the local kind, whose target must be fusable. skip (may be
 * NULL) marks nodes that are not part of the structure at all (folded
 * constants, folded.h): they join no group and do not count as parents or
 * children. */
int pb_branch_extract(const pb_graph *g, const unsigned char *fusable, const unsigned char *skip,
                      pb_branch_set **out, pb_error *err);
void pb_branch_set_free(pb_branch_set *s);

#endif
