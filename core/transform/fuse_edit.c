/*
 * fuse_edit.c — hand edits of a "fuse" plan (fuse.h, issue 18.1): take a
 * node out of its fusion group, or put it into another node's group (a new
 * group when that node is unfused).
 *
 * Validation, as the fusion method requires: the node launches a kernel
 * (not a load-time constant), the session's rules let it be fused (a
 * non-fusable node is refused, naming the rule to change), no path joins it
 * to any member of the group (only parallel nodes share a kernel), and the
 * graph with every fusion contracted stays acyclic (igraph, quotient.h): two
 * groups could otherwise wait on each other. A refused edit leaves the plan
 * as it was and says why.
 *
 * The message comes from the two plans: the node's group members before
 * and after, and the kernel launches.
 *
 * Re-evaluation: the modelled serial kernel time of the whole plan under
 * the fusion cost model (pb_fuse_set_time per kernel, a node alone is a
 * kernel of one), before and after the edit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transform/folded.h"
#include "transform/fuse.h"
#include "transform/quotient.h"
#include "transform/reach.h"

/* Modelled serial time and kernel launches of grouping grp (-1 = alone). */
static void evaluate(const pb_graph *g, const pb_fuse_model *m, const int *grp, int n_groups,
                     const unsigned char *folded, int *members, double *time, int *launches)
{
	double t = 0;
	int k = 0;
	for (int v = 0; v < g->n_nodes; v++)
		if (!folded[v] && grp[v] < 0) {
			t += pb_fuse_node_time(m, g, v);
			k++;
		}
	for (int gi = 0; gi < n_groups; gi++) {
		int n = 0;
		for (int v = 0; v < g->n_nodes; v++)
			if (grp[v] == gi)
				members[n++] = v;
		if (n > 0) {
			t += pb_fuse_set_time(m, g, members, n);
			k++;
		}
	}
	*time = t;
	*launches = k;
}

/* Renumbers the groups of grp densely, in the order of their old index;
 * a group left with one member dissolves. map[old] = new or -1. */
static int renumber(const pb_graph *g, int *grp, int n_groups, int *map, int *count)
{
	for (int gi = 0; gi < n_groups; gi++)
		count[gi] = 0;
	for (int v = 0; v < g->n_nodes; v++)
		if (grp[v] >= 0)
			count[grp[v]]++;
	int k = 0;
	for (int gi = 0; gi < n_groups; gi++)
		map[gi] = count[gi] >= 2 ? k++ : -1;
	for (int v = 0; v < g->n_nodes; v++)
		if (grp[v] >= 0)
			grp[v] = map[grp[v]];
	return k;
}

/* "[a, b, c]" (the first members) or "alone": node's group in plan p. */
static void members_of(const pb_graph *g, const pb_plan *p, int node, char *buf, size_t len)
{
	int gi = p->group[node], k = 0;
	size_t at = 0;
	if (gi < 0) {
		snprintf(buf, len, "alone");
		return;
	}
	for (int v = 0; v < p->n_nodes; v++) {
		if (p->group[v] != gi)
			continue;
		if (k++ < 4 && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", k > 1 ? ", " : "[",
			                       g->nodes[v].name);
	}
	if (at < len)
		snprintf(buf + at, len - at, "%s]", k > 4 ? ", ..." : "");
}

/* What the edit did, from the two plans: the verb from the node's group
 * before and after, its group's members both times, the launches. */
static void describe(const pb_graph *g, const pb_plan *old, const pb_plan *p, int node, int with,
                     pb_fuse_edit_result *res)
{
	char b[160], a[160];
	members_of(g, old, node, b, sizeof b);
	members_of(g, p, node, a, sizeof a);
	const char *nn = g->nodes[node].name;
	/* the node it was asked to join, when the plan shows them together */
	int other =
	    with >= 0 && p->group[node] >= 0 && p->group[with] == p->group[node] ? with : -1;
	for (int v = 0; v < p->n_nodes && other < 0 && p->group[node] >= 0; v++)
		if (v != node && p->group[v] == p->group[node])
			other = v;
	char verb[160];
	if (other >= 0)
		snprintf(verb, sizeof verb, "put '%s' into the fusion group of '%s'", nn,
		         g->nodes[other].name);
	else
		snprintf(verb, sizeof verb, "took '%s' out of its fusion group", nn);
	snprintf(res->what, sizeof res->what, "%s: %s -> %s; %d -> %d kernels", verb, b, a,
	         res->launches_before, res->launches_after);
}

int pb_fuse_edit(const pb_graph *g, const pb_plan *old, const pb_fuse_rules *rules,
                 const pb_fuse_model *m, int node, int with, pb_fuse_edit_result *res,
                 pb_error *err)
{
	memset(res, 0, sizeof *res);
	int n = g->n_nodes;
	if (!old || strcmp(old->kind, "fuse") != 0 || old->n_nodes != n)
		return pb_err(err, PB_EUSAGE, "the current plan is %s%s%s; run 'fuse' first",
		              old ? "a '" : "absent", old ? old->kind : "", old ? "' plan" : "");
	if (node < 0 || node >= n || with >= n || with == node)
		return pb_err(err, PB_EUSAGE, "no such node (or a node fused with itself)");
	size_t sz = (size_t)n + 1;
	int ng = old->n_groups;
	for (int v = 0; v < n; v++)
		if (old->group[v] + 1 > ng)
			ng = old->group[v] + 1;
	int *grp = malloc(sz * sizeof *grp), *members = malloc(sz * sizeof *members);
	int *map = malloc(((size_t)ng + 2) * sizeof *map),
	    *count = malloc(((size_t)ng + 2) * sizeof *count);
	unsigned char *folded = calloc(sz, 1);
	int rc = PB_OK;
	if (!grp || !members || !map || !count || !folded) {
		rc = pb_err(err, PB_ENOMEM, "out of memory");
		goto out;
	}
	memcpy(grp, old->group, (size_t)n * sizeof *grp);
	pb_transform_folded(g, folded);
	const char *nn = g->nodes[node].name;
	evaluate(g, m, grp, ng, folded, members, &res->time_before, &res->launches_before);
	if (folded[node]) {
		rc = pb_err(err, PB_EUSAGE,
		            "node '%s' (%s) is a load-time constant: it launches no kernel", nn,
		            g->nodes[node].op);
		goto out;
	}
	if (with < 0) { /* take it out */
		if (grp[node] < 0) {
			rc = pb_err(err, PB_EUSAGE, "node '%s' is in no fusion group", nn);
			goto out;
		}
		grp[node] = -1;
	} else {
		const char *wn = g->nodes[with].name;
		if (folded[with]) {
			rc = pb_err(err, PB_EUSAGE,
			            "node '%s' (%s) is a load-time constant: it launches no kernel",
			            wn, g->nodes[with].op);
			goto out;
		}
		if (grp[with] >= 0 && grp[with] == grp[node]) {
			rc = pb_err(err, PB_EUSAGE, "'%s' and '%s' are already in one fusion group",
			            nn, wn);
			goto out;
		}
		const int check[2] = {node, with};
		for (int i = 0; i < 2; i++)
			if (!pb_fuse_rules_fusable(rules, g, check[i])) {
				rc = pb_err(
				    err, PB_EUSAGE,
				    "node '%s' (op %s) is not fusable under the current rules "
				    "(fuse --fusable %s, or a Lua fusable rule)",
				    g->nodes[check[i]].name, g->nodes[check[i]].op,
				    g->nodes[check[i]].op);
				goto out;
			}
		int target = grp[with] >= 0 ? grp[with] : ng; /* a new group */
		if (target == ng)
			grp[with] = ng;
		grp[node] = target;
		pb_reach *rr = pb_reach_new(g, PB_REACH_MAX_BITSET);
		if (!rr) {
			rc = pb_err(err, PB_ENOMEM, "out of memory");
			goto out;
		}
		for (int v = 0; v < n && rc == PB_OK; v++)
			if (v != node && grp[v] == target && !pb_reach_independent(rr, node, v))
				rc = pb_err(
				    err, PB_EUSAGE,
				    "'%s' and '%s' are not parallel (a path joins them): only "
				    "nodes with no path between them share a kernel",
				    nn, g->nodes[v].name);
		pb_reach_free(rr);
		if (rc)
			goto out;
		ng = target == ng ? ng + 1 : ng;
	}
	/* Acyclic with every fusion contracted (a node alone is its own class). */
	{
		int *cls = malloc(sz * sizeof *cls), *rep = malloc(((size_t)ng + 1) * sizeof *rep);
		int dag = 1;
		if (!cls || !rep) {
			free(cls);
			free(rep);
			rc = pb_err(err, PB_ENOMEM, "out of memory");
			goto out;
		}
		for (int gi = 0; gi < ng; gi++)
			rep[gi] = -1;
		for (int v = 0; v < n; v++) {
			if (grp[v] < 0) {
				cls[v] = v;
			} else {
				if (rep[grp[v]] < 0)
					rep[grp[v]] = v; /* the group's first member names it */
				cls[v] = rep[grp[v]];
			}
		}
		rc = pb_quotient_is_dag(g, cls, 0, &dag, err);
		free(cls);
		free(rep);
		if (rc == PB_OK && !dag)
			rc =
			    pb_err(err, PB_EUSAGE,
			           "putting '%s' there would make fusion groups wait on each other "
			           "(the contracted graph has a cycle)",
			           nn);
		if (rc)
			goto out;
	}
	int k = renumber(g, grp, ng, map, count);
	pb_plan *p = pb_plan_new("fuse", "manual", n);
	if (!p) {
		rc = pb_err(err, PB_ENOMEM, "out of memory");
		goto out;
	}
	memcpy(p->group, grp, (size_t)n * sizeof *grp);
	for (int gi = 0; gi < k; gi++) {
		int cnt = 0;
		for (int v = 0; v < n; v++)
			if (grp[v] == gi)
				members[cnt++] = v;
		int oldg = -1;
		for (int o = 0; o < ng && oldg < 0; o++)
			if (map[o] == gi)
				oldg = o;
		char label[128];
		if (oldg >= 0 && oldg < old->n_groups && old->groups[oldg].label &&
		    old->groups[oldg].label[0])
			snprintf(label, sizeof label, "%s", old->groups[oldg].label);
		else
			snprintf(label, sizeof label, "manual fusion of '%s'",
			         g->nodes[members[0]].name);
		pb_plan_group pg = {0};
		pg.label = label;
		pg.first_unit = -1;
		pg.n_units = cnt;
		pg.time = pb_fuse_set_time(m, g, members, cnt);
		pg.compute = pg.time;
		for (int i = 0; i < cnt; i++) {
			pg.macs += g->nodes[members[i]].cost.macs;
			pg.storage += g->nodes[members[i]].cost.out_bytes;
		}
		pg.first_node = members[0];
		pg.last_node = members[cnt - 1];
		pb_plan_add_group(p, &pg);
	}
	evaluate(g, m, grp, k, folded, members, &res->time_after, &res->launches_after);
	json_decref(p->detail);
	p->detail = json_deep_copy(old->detail);
	if (!p->detail)
		p->detail = json_object();
	for (int i = 0; i < old->n_metrics; i++)
		pb_plan_set_metric(p, old->metric_names[i], old->metric_values[i]);
	int fused = 0;
	for (int v = 0; v < n; v++)
		fused += grp[v] >= 0;
	pb_plan_set_metric(p, "launches_after", res->launches_after);
	pb_plan_set_metric(p, "time_after", res->time_after);
	pb_plan_set_metric(p, "nodes_fused", fused);
	res->plan = p;
	describe(g, old, p, node, with, res);
out:
	free(grp);
	free(members);
	free(map);
	free(count);
	free(folded);
	return rc;
}
