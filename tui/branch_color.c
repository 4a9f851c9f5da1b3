/*
 * branch_color.c — the "branch" colour mode (`view color branch`, key c):
 * every node takes the colour of the kind of its parallel-branch group, the
 * nodes fusion would fuse are bold and marked '+', the status line names
 * the kinds with their group counts.
 *
 * The groups come from cmds/branch_of.h (the same "branch" plan `export
 * --color-by branch` draws: the session's fusion rules and the layout's
 * fusion model). The loop computes them (tui_branch_refresh) when the mode
 * is on and the graph or the layout changed, and keeps them with their
 * legend; drawing only reads what was kept.
 */
#include <stdlib.h>
#include <string.h>

#include "branch_color.h"
#include "cmds/branch_of.h"
#include "view.h"

int tui_branch_mode(const tui_app *a)
{
	return a->s->view.color == PB_VIEW_BY_BRANCH;
}

void tui_branch_free(tui_app *a)
{
	pb_plan_free(a->branch.plan);
	memset(&a->branch, 0, sizeof a->branch);
}

static void make_legend(tui_branch *b)
{
	char *buf = b->legend;
	size_t n = sizeof b->legend, used = 0;
	if (!b->plan) {
		snprintf(buf, n, "%s", b->err);
		return;
	}
	const json_t *d = b->plan->detail;
	const json_t *kinds = json_object_get(d, "kinds"), *kg = json_object_get(d, "kind_groups");
	buf[0] = 0;
	for (size_t k = 0; k < json_array_size(kinds) && used < n; k++) {
		int r = snprintf(buf + used, n - used, "%s%s %lld", k ? " " : "",
		                 json_string_value(json_array_get(kinds, k)),
		                 (long long)json_integer_value(json_array_get(kg, k)));
		if (r < 0)
			break;
		used += (size_t)r;
	}
	if (used < n)
		snprintf(buf + used, n - used, ", +fused");
}

int tui_branch_refresh(tui_app *a)
{
	const pb_graph *g = a->s->graph;
	tui_branch *b = &a->branch;
	if (!g || !tui_branch_mode(a))
		return 0;
	if (b->graph == g && b->hw == a->s->hw && b->n_nodes == g->n_nodes)
		return 0;
	tui_branch_free(a);
	b->graph = g;
	b->hw = a->s->hw;
	b->n_nodes = g->n_nodes;
	pb_error err = {0};
	if (pb_branch_plan_of(a->s, &b->plan, &err) != PB_OK) {
		snprintf(b->err, sizeof b->err, "no branch groups: %s", err.msg);
		pb_plan_free(b->plan);
		b->plan = NULL;
	} else if (b->plan->n_nodes != g->n_nodes) {
		snprintf(b->err, sizeof b->err, "no branch groups: plan of another graph");
		pb_plan_free(b->plan);
		b->plan = NULL;
	}
	make_legend(b);
	return PB_REDRAW_ALL;
}

/* The kept groups, when they are of the graph on screen. */
static const pb_plan *kept(const tui_app *a)
{
	const tui_branch *b = &a->branch;
	return b->plan && b->graph == a->s->graph && b->hw == a->s->hw ? b->plan : NULL;
}

int tui_branch_kind(const tui_app *a, int node, int *fused)
{
	*fused = 0;
	const pb_plan *p = kept(a);
	if (!p || node < 0 || node >= p->n_nodes)
		return -1;
	const json_t *d = p->detail;
	*fused =
	    json_integer_value(json_array_get(json_object_get(d, "node_fused"), (size_t)node)) != 0;
	int gi = p->group[node];
	if (gi < 0)
		return -1;
	const json_t *k = json_array_get(json_object_get(d, "group_kind"), (size_t)gi);
	return json_is_integer(k) ? (int)json_integer_value(k) : -1;
}

const char *tui_branch_kind_name(const tui_app *a, int kind)
{
	const pb_plan *p = kept(a);
	const json_t *k =
	    p ? json_array_get(json_object_get(p->detail, "kinds"), (size_t)kind) : NULL;
	return json_is_string(k) ? json_string_value(k) : "?";
}

const char *tui_branch_legend(const tui_app *a)
{
	const tui_branch *b = &a->branch;
	if (!a->s->graph)
		return "no graph";
	if (b->graph != a->s->graph || b->hw != a->s->hw)
		return "computing...";
	return b->legend;
}
