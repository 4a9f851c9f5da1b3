/*
 * branch_color.c — the "branch" colour mode (`view color branch`, key c):
 * every node takes the colour of the kind of its parallel-branch group, the
 * nodes fusion would fuse are bold and marked '+', the status line names
 * the kinds with their group counts.
 *
 * The groups come from cmds/branch_of.h (the same "branch" plan `export
 * --color-by branch` draws: the session's fusion rules and the layout's
 * fusion model). They are computed when the mode is first drawn and kept
 * until the graph or the layout changes.
 */
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cmds/branch_of.h"
#include "view.h"

struct tui_branch {
	const pb_graph *graph; /* what it was computed for */
	const pb_hw *hw;
	int n_nodes;
	pb_plan *plan; /* NULL when it failed (why in err) */
	char err[160];
};

int tui_branch_mode(const tui_app *a)
{
	char mode[16];
	pb_view_get(a->s->view, "color", "group", mode, sizeof mode);
	return strcmp(mode, "branch") == 0;
}

void tui_branch_free(tui_app *a)
{
	if (!a->branch)
		return;
	pb_plan_free(a->branch->plan);
	free(a->branch);
	a->branch = NULL;
}

/* The branch plan of the current graph, computed on first use. */
static struct tui_branch *branches(tui_app *a)
{
	const pb_graph *g = a->s->graph;
	if (!g)
		return NULL;
	struct tui_branch *b = a->branch;
	if (b && b->graph == g && b->hw == a->s->hw && b->n_nodes == g->n_nodes)
		return b;
	tui_branch_free(a);
	b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
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
	a->branch = b;
	return b;
}

int tui_branch_kind(tui_app *a, int node, int *fused)
{
	*fused = 0;
	struct tui_branch *b = branches(a);
	if (!b || !b->plan || node < 0 || node >= b->plan->n_nodes)
		return -1;
	const json_t *d = b->plan->detail;
	*fused =
	    json_integer_value(json_array_get(json_object_get(d, "node_fused"), (size_t)node)) != 0;
	int gi = b->plan->group[node];
	if (gi < 0)
		return -1;
	const json_t *k = json_array_get(json_object_get(d, "group_kind"), (size_t)gi);
	return json_is_integer(k) ? (int)json_integer_value(k) : -1;
}

const char *tui_branch_kind_name(tui_app *a, int kind)
{
	struct tui_branch *b = branches(a);
	const json_t *k =
	    b && b->plan ? json_array_get(json_object_get(b->plan->detail, "kinds"), (size_t)kind)
	                 : NULL;
	return json_is_string(k) ? json_string_value(k) : "?";
}

void tui_branch_legend(tui_app *a, char *buf, size_t n)
{
	struct tui_branch *b = branches(a);
	if (!b) {
		snprintf(buf, n, "no graph");
		return;
	}
	if (!b->plan) {
		snprintf(buf, n, "%s", b->err);
		return;
	}
	const json_t *d = b->plan->detail;
	const json_t *kinds = json_object_get(d, "kinds"), *kg = json_object_get(d, "kind_groups");
	size_t used = 0;
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
