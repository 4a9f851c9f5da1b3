/*
 * map_edit.c — hand edits of a "map" plan (map.h, issue 18.1): move a node,
 * or the whole aggregate (region) holding it, to another backend.
 *
 * Every node keeps the backend the plan gives it (pb_map_opts.force) except
 * the moved ones, and the mapping is redone from there: aggregation,
 * buffers and the pipelined model. So the method's requirements hold by
 * construction: aggregates never span another backend's node and never
 * close a cycle (the aggregation refuses such merges; igraph checks the
 * aggregate graph), and the cost before/after is the same model's.
 * Refused: a plan of another kind or of another layout, a load-time
 * constant (it runs on no backend), a backend that does not support one of
 * the moved nodes' ops, a move that changes nothing, a move of a node that
 * a Lua `backend` rule puts on another backend when the plan obeys it (the
 * solvers obey the rules; a hand edit may not silently break one). The
 * message compares the two mappings: the nodes whose backend changed and
 * the aggregate count before -> after.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transform/map.h"

/* The plan's backend per node, checked against the layout. */
static int plan_backends(const pb_graph *g, const pb_hetero *h, const pb_plan *p, int *nb_of,
                         pb_error *err)
{
	if (!p || strcmp(p->kind, "map") != 0 || p->n_nodes != g->n_nodes)
		return pb_err(err, PB_EUSAGE, "the current plan is %s%s%s; run 'map' first",
		              p ? "a '" : "absent", p ? p->kind : "", p ? "' plan" : "");
	const json_t *names = json_object_get(p->detail, "backends");
	const json_t *nb = json_object_get(p->detail, "node_backend");
	if (!json_is_array(names) || !json_is_array(nb) ||
	    json_array_size(nb) != (size_t)g->n_nodes)
		return pb_err(err, PB_EINPUT,
		              "the map plan has no node_backend list (a damaged plan)");
	int same = json_array_size(names) == (size_t)h->n;
	for (int b = 0; same && b < h->n; b++) {
		const char *s = json_string_value(json_array_get(names, (size_t)b));
		same = s && strcmp(s, h->b[b].name) == 0;
	}
	if (!same)
		return pb_err(err, PB_EUSAGE,
		              "the map plan was made for other backends than those of %s (load the "
		              "plan's layout)",
		              h->path);
	for (int v = 0; v < g->n_nodes; v++) {
		json_int_t b = json_integer_value(json_array_get(nb, (size_t)v));
		nb_of[v] = b >= 0 && b < h->n ? (int)b : -1;
	}
	return PB_OK;
}

/* "moved 'a' gpu -> cpu, 'b' gpu -> cpu (2 nodes); 5 -> 6 aggregates"
 * from the backend per node before (was) and the new mapping r. */
static void describe(const pb_graph *g, const pb_hetero *h, const int *was, int n_agg_was,
                     const pb_map_result *r, char *buf, size_t len)
{
	size_t at = 0;
	int moved = 0;
	if (len)
		buf[0] = '\0';
	for (int v = 0; v < g->n_nodes; v++) {
		if (was[v] == r->backend[v])
			continue;
		if (moved++ < 4 && at < len)
			at += (size_t)snprintf(
			    buf + at, len - at, "%s'%s' %s -> %s", moved > 1 ? ", " : "moved ",
			    g->nodes[v].name, was[v] >= 0 ? h->b[was[v]].name : "none",
			    r->backend[v] >= 0 ? h->b[r->backend[v]].name : "none");
	}
	if (at < len)
		snprintf(buf + at, len - at, "%s (%d node%s); %d -> %d aggregates",
		         moved > 4 ? ", ..." : "", moved, moved == 1 ? "" : "s", n_agg_was,
		         r->n_agg);
}

int pb_map_edit(const pb_graph *g, const pb_hetero *h, const pb_plan *old, int node, int b,
                int region, const int *rule_backend, const char *const *rule_name,
                pb_map_result **out, char *what, size_t what_len, pb_error *err)
{
	*out = NULL;
	int n = g->n_nodes;
	if (node < 0 || node >= n)
		return pb_err(err, PB_EUSAGE, "no such node");
	if (b < 0 || b >= h->n)
		return pb_err(err, PB_EUSAGE, "no such backend in %s", h->path);
	int *force = malloc(2 * ((size_t)n + 1) * sizeof *force),
	    *was = force ? force + n + 1 : NULL;
	if (!force)
		return pb_err(err, PB_ENOMEM, "out of memory");
	int rc = plan_backends(g, h, old, force, err);
	if (rc == PB_OK)
		memcpy(was, force, (size_t)n * sizeof *was);
	const pb_node *nd = &g->nodes[node];
	if (rc == PB_OK && force[node] < 0)
		rc = pb_err(err, PB_EUSAGE,
		            "node '%s' (%s) is a load-time constant: it runs on no backend",
		            nd->name, nd->op);
	int moved = 0;
	for (int v = 0; rc == PB_OK && v < n; v++) {
		int in = v == node ||
		         (region && old->group[v] >= 0 && old->group[v] == old->group[node]);
		if (!in)
			continue;
		double speed;
		int rb = rule_backend ? rule_backend[v] : -1;
		if (rb >= 0 && rb != b && force[v] == rb)
			rc = pb_err(
			    err, PB_EUSAGE,
			    "moving node '%s' (%s) to %s breaks Lua rule '%s' (backend=%s); plan "
			    "unchanged",
			    g->nodes[v].name, g->nodes[v].op, h->b[b].name,
			    rule_name && rule_name[v] ? rule_name[v] : "?", h->b[rb].name);
		else if (pb_hetero_support(h, b, g->nodes[v].op, &speed) <= 0)
			rc = pb_err(
			    err, PB_EUSAGE,
			    "backend %s does not support op %s of node '%s' (%s); plan unchanged",
			    h->b[b].name, g->nodes[v].op, g->nodes[v].name, h->path);
		else if (force[v] != b) {
			force[v] = b;
			moved++;
		}
	}
	if (rc == PB_OK && moved == 0)
		rc = pb_err(err, PB_EUSAGE, "node '%s'%s already runs on %s; plan unchanged",
		            nd->name, region ? " and its aggregate" : "", h->b[b].name);
	if (rc == PB_OK) {
		/* A plan made with --keep-constants maps every node. */
		int keep = 1;
		for (int v = 0; v < n && keep; v++)
			keep = force[v] >= 0;
		pb_map_opts o = {(int)pb_plan_metric(old, "buffers", 2),
		                 (int)pb_plan_metric(old, "stream", 16), keep, force, 0};
		if (o.buffers < 1)
			o.buffers = 2;
		if (o.stream < 1)
			o.stream = 16;
		rc = pb_map_run(g, h, &o, out, err);
	}
	if (rc == PB_OK)
		describe(g, h, was, old->n_groups, *out, what, what_len);
	free(force);
	return rc;
}
