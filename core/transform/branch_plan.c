/*
 * branch_plan.c — the parallel branch groups as a plan (fuse.h), for
 * `export --color-by branch` (issue 18.3).
 *
 * Kind "branch": group per node = its branch group (branch.h; -1 outside
 * every group), one plan group per branch group labelled with its kind,
 * sub-branch count and how many of its nodes the fusion took. A node is in
 * at most one branch group, so the groups are disjoint and each one can be
 * drawn as a Graphviz cluster. detail:
 *   kinds          the kind names, in the method's order;
 *   group_kind     per plan group, index into kinds;
 *   kind_groups    per kind, number of groups;
 *   kind_fused     per kind, nodes fused into kernels;
 *   node_fused     per node, 1 when the fusion put it into a kernel.
 * The renderer reads only these (it needs no transform header).
 */
#include <stdio.h>
#include <stdlib.h>

#include "transform/fuse.h"

pb_plan *pb_branch_plan(const pb_graph *g, const pb_fuse_result *r, const pb_fuse_opts *o)
{
	const pb_branch_set *bs = r->groups;
	pb_plan *p = pb_plan_new("branch", "branch-groups", g->n_nodes);
	int *fused = calloc((size_t)bs->n + 1, sizeof *fused);
	if (!p || !fused) {
		free(fused);
		pb_plan_free(p);
		return NULL;
	}
	json_t *node_fused = json_array();
	for (int v = 0; v < g->n_nodes; v++) {
		int gi = v < bs->n_nodes ? bs->group_of[v] : -1;
		p->group[v] = gi;
		int f = r->fusion_of[v] >= 0;
		if (f && gi >= 0)
			fused[gi]++;
		json_array_append_new(node_fused, json_integer(f));
	}
	json_t *kinds = json_array(), *gk = json_array(), *kg = json_array(), *kf = json_array();
	for (int k = 0; k < PB_BRANCH_NKINDS; k++) {
		json_array_append_new(kinds, json_string(pb_branch_kind_name(k)));
		json_array_append_new(kg, json_integer(bs->per_kind[k]));
		json_array_append_new(kf, json_integer(r->fused_per_kind[k]));
	}
	for (int gi = 0; gi < bs->n; gi++) {
		const pb_branch_group *gr = &bs->groups[gi];
		int n = gr->start[gr->n_branches];
		char label[128];
		if (fused[gi])
			snprintf(label, sizeof label,
			         "%s #%d: %d sub-branches, %d of %d nodes fused",
			         pb_branch_kind_name(gr->kind), gi, gr->n_branches, fused[gi], n);
		else
			snprintf(label, sizeof label, "%s #%d: %d sub-branches, not fused",
			         pb_branch_kind_name(gr->kind), gi, gr->n_branches);
		pb_plan_group pg = {0};
		pg.label = label;
		pg.first_unit = -1;
		pg.n_units = gr->n_branches;
		pg.first_node = -1;
		pg.last_node = -1;
		for (int i = 0; i < n; i++) {
			int v = gr->nodes[i];
			pg.time += pb_fuse_node_time(&o->model, g, v);
			pg.macs += g->nodes[v].cost.macs;
			pg.storage += g->nodes[v].cost.out_bytes;
		}
		pg.compute = pg.time;
		pb_plan_add_group(p, &pg);
		json_array_append_new(gk, json_integer(gr->kind));
	}
	free(fused);
	json_object_set_new(p->detail, "kinds", kinds);
	json_object_set_new(p->detail, "group_kind", gk);
	json_object_set_new(p->detail, "kind_groups", kg);
	json_object_set_new(p->detail, "kind_fused", kf);
	json_object_set_new(p->detail, "node_fused", node_fused);
	pb_plan_set_metric(p, "groups", bs->n);
	pb_plan_set_metric(p, "nodes_fused", r->nodes_fused);
	pb_plan_set_metric(p, "launches_before", r->launches_before);
	pb_plan_set_metric(p, "launches_after", r->launches_after);
	return p;
}
