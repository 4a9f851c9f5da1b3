/*
 * fuse_report.c — the fusion report (JSON) and the "fuse" plan (fuse.h).
 *
 * The plan lives on the ORIGINAL graph (group per node = fusion index) so the
 * TUI and SVG can colour what would be fused without switching graphs; the
 * fused graph itself is pb_fuse_result.fused.
 */
#include "transform/fuse.h"
#include "util/proof_label.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *kinds_json(const int *per_kind)
{
	json_t *o = json_object();
	for (int k = 0; k < PB_BRANCH_NKINDS; k++)
		json_object_set_new(o, pb_branch_kind_name(k), json_integer(per_kind[k]));
	return o;
}

static json_t *model_json(const pb_fuse_model *m)
{
	json_t *o = json_object();
	json_object_set_new(o, "launch", json_real(m->launch));
	json_object_set_new(o, "lanes", json_real(m->lanes));
	json_object_set_new(o, "lane_flops", json_real(m->lane_flops));
	json_object_set_new(o, "bandwidth", json_real(m->bandwidth));
	json_object_set_new(o, "min_gain", json_real(m->min_gain));
	json_object_set_new(o, "max_members", json_integer(m->max_members));
	return o;
}

/* Members of every fusion, in ascending node id. */
static int *fusion_members(const pb_graph *g, const pb_fuse_result *r, int **start_out)
{
	int *start = calloc((size_t)r->n_fusions + 2, sizeof *start);
	int *list = malloc(((size_t)g->n_nodes + 1) * sizeof *list);
	int *fill = calloc((size_t)r->n_fusions + 1, sizeof *fill);
	if (!start || !list || !fill) {
		free(start);
		free(list);
		free(fill);
		return NULL;
	}
	for (int v = 0; v < g->n_nodes; v++)
		if (r->fusion_of[v] >= 0)
			start[r->fusion_of[v] + 1]++;
	for (int f = 0; f < r->n_fusions; f++)
		start[f + 1] += start[f];
	for (int v = 0; v < g->n_nodes; v++) {
		int f = r->fusion_of[v];
		if (f >= 0)
			list[start[f] + fill[f]++] = v;
	}
	free(fill);
	*start_out = start;
	return list;
}

void pb_fuse_label(const pb_graph *g, const pb_fuse_result *r, const pb_fuse_opts *o, pb_label *L)
{
	pb_label_init(L, r->time_after);
	pb_label_restrict(L, "greedy fusion within branch groups");
	unsigned char *in_f = calloc((size_t)g->n_nodes + 1, 1);
	if (!in_f)
		return;
	for (int gi = 0; r->groups && gi < r->groups->n; gi++) {
		const pb_branch_group *gr = &r->groups->groups[gi];
		for (int i = 0; i < gr->start[gr->n_branches]; i++)
			if (r->fusable[gr->nodes[i]])
				in_f[gr->nodes[i]] = 1;
	}
	double lb = 0, comp = 0, mem = 0;
	long nf = 0;
	for (int v = 0; v < g->n_nodes; v++) {
		if (r->folded[v])
			continue;
		if (!in_f[v]) {
			lb += pb_fuse_node_time(&o->model, g, v);
			continue;
		}
		double c, m;
		pb_fuse_node_parts(&o->model, g, v, &c, &m);
		comp += c;
		mem += m;
		nf++;
	}
	free(in_f);
	if (nf > 0)
		lb += o->model.launch * ceil((double)nf / o->model.max_members) + fmax(comp, mem);
	pb_label_bound(L, lb);
}

json_t *pb_fuse_report_json(const pb_graph *g, const pb_fuse_result *r, const pb_fuse_opts *o)
{
	json_t *j = json_object();
	json_object_set_new(j, "model", json_string(g->path ? g->path : ""));
	json_object_set_new(j, "nodes", json_integer(g->n_nodes));
	json_t *gr = json_object();
	json_object_set_new(gr, "total", json_integer(r->groups->n));
	json_object_set_new(gr, "per_kind", kinds_json(r->groups->per_kind));
	json_object_set_new(j, "groups", gr);
	json_object_set_new(j, "folded_constants", json_integer(r->n_folded));
	json_object_set_new(j, "nonfusable_removed", json_integer(r->nonfusable_removed));
	json_object_set_new(j, "candidates", json_integer(r->candidates));
	json_object_set_new(j, "nodes_fused", json_integer(r->nodes_fused));
	json_object_set_new(j, "fused_nodes", json_integer(r->n_fusions));
	json_object_set_new(j, "nodes_fused_per_kind", kinds_json(r->fused_per_kind));
	json_object_set_new(j, "launches_before", json_integer(r->launches_before));
	json_object_set_new(j, "launches_after", json_integer(r->launches_after));
	json_object_set_new(j, "time_before", json_real(r->time_before));
	json_object_set_new(j, "time_after", json_real(r->time_after));
	pb_label L; /* of time_after */
	pb_fuse_label(g, r, o, &L);
	pb_label_json(j, &L);
	json_object_set_new(j, "speedup",
	                    json_real(r->time_after > 0 ? r->time_before / r->time_after : 1));
	json_object_set_new(j, "dag_checks", json_integer(r->dag_checks));
	json_object_set_new(j, "rejected_for_cycle", json_integer(r->rejected_cycle));
	json_object_set_new(j, "cost_model", model_json(&o->model));
	json_t *nf = json_array();
	const pb_fuse_rules *rules = o->rules;
	pb_fuse_rules defaults;
	if (!rules) {
		pb_fuse_rules_default(&defaults);
		rules = &defaults;
	}
	for (int i = 0; i < rules->n; i++)
		if (!rules->r[i].fusable && !rules->r[i].by_name)
			json_array_append_new(nf, json_string(rules->r[i].key));
	json_object_set_new(j, "nonfusable_ops", nf);

	pb_fuse_baseline xb;
	pb_error e = {0};
	if (pb_fuse_xla_baseline(g, o, &xb, &e) == PB_OK) {
		json_t *x = json_object();
		json_object_set_new(x, "sets", json_integer(xb.sets));
		json_object_set_new(x, "candidates", json_integer(xb.candidates));
		json_object_set_new(x, "nodes_fused", json_integer(xb.fused));
		json_object_set_new(x, "launches_after", json_integer(xb.launches_after));
		json_object_set_new(x, "time_after", json_real(xb.time_after));
		json_object_set_new(j, "xla_baseline", x);
	}

	json_t *gl = json_array();
	for (int gi = 0; gi < r->groups->n; gi++) {
		const pb_branch_group *bg = &r->groups->groups[gi];
		json_t *o2 = json_object();
		json_object_set_new(o2, "kind", json_string(pb_branch_kind_name(bg->kind)));
		json_object_set_new(o2, "anchor",
		                    bg->anchor >= 0 ? json_string(g->nodes[bg->anchor].name)
		                                    : json_null());
		json_t *brs = json_array();
		for (int b = 0; b < bg->n_branches; b++) {
			json_t *br = json_array();
			for (int i = bg->start[b]; i < bg->start[b + 1]; i++)
				json_array_append_new(br, json_string(g->nodes[bg->nodes[i]].name));
			json_array_append_new(brs, br);
		}
		json_object_set_new(o2, "branches", brs);
		json_array_append_new(gl, o2);
	}
	json_object_set_new(j, "group_list", gl);

	json_t *fl = json_array();
	int *start = NULL;
	int *list = fusion_members(g, r, &start);
	for (int f = 0; list && f < r->n_fusions; f++) {
		json_t *o2 = json_object();
		int first = list[start[f]];
		if (r->fused)
			json_object_set_new(o2, "name",
			                    json_string(r->fused->nodes[r->class_of[first]].name));
		int gi = r->fusion_group[f];
		json_object_set_new(o2, "group", json_integer(gi));
		json_object_set_new(o2, "kind",
		                    json_string(pb_branch_kind_name(r->groups->groups[gi].kind)));
		json_t *mem = json_array(), *ops = json_array();
		for (int i = start[f]; i < start[f + 1]; i++) {
			json_array_append_new(mem, json_string(g->nodes[list[i]].name));
			json_array_append_new(ops, json_string(g->nodes[list[i]].op));
		}
		json_object_set_new(o2, "members", mem);
		json_object_set_new(o2, "ops", ops);
		json_object_set_new(o2, "occupancy",
		                    json_real(pb_fuse_set_occupancy(&o->model, g, list + start[f],
		                                                    start[f + 1] - start[f])));
		json_array_append_new(fl, o2);
	}
	free(start);
	free(list);
	json_object_set_new(j, "fusions", fl);
	return j;
}

pb_plan *pb_fuse_plan(const pb_graph *g, const pb_fuse_result *r, const pb_fuse_opts *o)
{
	pb_plan *p = pb_plan_new("fuse", "branch-groups", g->n_nodes);
	if (!p)
		return NULL;
	int *start = NULL;
	int *list = fusion_members(g, r, &start);
	if (!list) {
		pb_plan_free(p);
		return NULL;
	}
	for (int v = 0; v < g->n_nodes; v++)
		p->group[v] = r->fusion_of[v];
	for (int f = 0; f < r->n_fusions; f++) {
		const int *m = list + start[f];
		int k = start[f + 1] - start[f];
		char label[96];
		int gi = r->fusion_group[f];
		snprintf(label, sizeof label, "%s (%s)",
		         r->fused ? r->fused->nodes[r->class_of[m[0]]].name : "fused",
		         pb_branch_kind_name(r->groups->groups[gi].kind));
		pb_plan_group pg = {0};
		pg.label = label;
		pg.first_unit = -1;
		pg.n_units = k;
		pg.time = pb_fuse_set_time(&o->model, g, m, k);
		pg.compute = pg.time;
		for (int i = 0; i < k; i++) {
			pg.macs += g->nodes[m[i]].cost.macs;
			pg.storage += g->nodes[m[i]].cost.out_bytes;
		}
		pg.first_node = m[0];
		pg.last_node = m[k - 1];
		pb_plan_add_group(p, &pg);
	}
	free(start);
	free(list);
	pb_label L; /* first: the listing's tail stays the figures of the fusion */
	pb_fuse_label(g, r, o, &L);
	pb_plan_set_label(p, &L);
	pb_plan_set_metric(p, "launches_before", r->launches_before);
	pb_plan_set_metric(p, "launches_after", r->launches_after);
	pb_plan_set_metric(p, "time_before", r->time_before);
	pb_plan_set_metric(p, "time_after", r->time_after);
	pb_plan_set_metric(p, "nodes_fused", r->nodes_fused);
	pb_plan_set_metric(p, "candidates", r->candidates);
	pb_plan_set_metric(p, "groups", r->groups->n);
	json_object_set_new(p->detail, "groups_per_kind", kinds_json(r->groups->per_kind));
	return p;
}
