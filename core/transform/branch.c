/*
 * branch.c — extraction of parallel branch groups (branch.h).
 *
 * Algorithm (one pass per kind, every pass O(V + E) except local):
 *  - chain_down(s): from s while the node has exactly one predecessor, take
 *    it; continue into its successor while the link is fork- and join-free.
 *    A join (several predecessors) ends the chain before it, a fork (several
 *    successors) ends it after it. chain_up is the mirror image.
 *  - parent: for each fork p, chain_down from every successor; child: for
 *    each join c, chain_up from every predecessor; source/sink: chain_down
 *    from every node without predecessors / chain_up from every node without
 *    successors, all into one group.
 *  - local: for each fusable node v still in no group (topological order),
 *    its siblings (successors of its parents and predecessors of its
 *    children) that are fusable, free, and independent of v and of each
 *    other (bit-set closure, reach.h) form one-node sub-branches.
 * Independence of the chain kinds needs no search: every node of a downward
 * chain has its chain predecessor as only parent, so nothing outside the
 * chain reaches it except through the group's root; upward chains mirror it.
 * Invariant: group_of[] holds each node in at most one group.
 */
#include "transform/branch.h"

#include <stdlib.h>
#include <string.h>

#include "transform/reach.h"

static const char *const kind_names[PB_BRANCH_NKINDS] = {"parent_child", "parent", "child",
                                                         "source",       "sink",   "local"};

const char *pb_branch_kind_name(int kind)
{
	return (kind >= 0 && kind < PB_BRANCH_NKINDS) ? kind_names[kind] : "?";
}

/* A growable list of ints. */
typedef struct ivec {
	int *a;
	int n, cap;
} ivec;

static int ivec_push(ivec *v, int x)
{
	if (v->n == v->cap) {
		int nc = v->cap ? v->cap * 2 : 16;
		int *na = realloc(v->a, (size_t)nc * sizeof *na);
		if (!na)
			return -1;
		v->a = na;
		v->cap = nc;
	}
	v->a[v->n++] = x;
	return 0;
}

/* Group under construction: sub-branches as consecutive runs in nodes. */
typedef struct draft {
	ivec nodes, start;
} draft;

typedef struct ctx {
	const pb_graph *g;
	pb_branch_set *set;
	int cap_groups;
	int oom;
	const unsigned char *skip; /* folded nodes: not part of the structure */
	int *np, *ns;              /* predecessors / successors that are not skipped */
	int *p1, *s1;              /* the single such predecessor / successor, or -1 */
} ctx;

static int skipped(const ctx *c, int v)
{
	return c->skip && c->skip[v];
}

static void draft_reset(draft *d)
{
	d->nodes.n = 0;
	d->start.n = 0;
}

static void draft_free(draft *d)
{
	free(d->nodes.a);
	free(d->start.a);
}

/* Appends a branch (already filtered) if non-empty. */
static void draft_branch(ctx *c, draft *d, const int *nodes, int n)
{
	if (n <= 0)
		return;
	if (d->start.n == 0 && ivec_push(&d->start, 0))
		c->oom = 1;
	for (int i = 0; i < n; i++)
		if (ivec_push(&d->nodes, nodes[i]))
			c->oom = 1;
	if (ivec_push(&d->start, d->nodes.n))
		c->oom = 1;
}

static int draft_branches(const draft *d)
{
	return d->start.n ? d->start.n - 1 : 0;
}

/* Commits the draft as a group when it has >= 2 branches; claims its nodes. */
static void draft_commit(ctx *c, draft *d, int kind, int anchor)
{
	int nb = draft_branches(d);
	if (nb < 2 || c->oom)
		return;
	pb_branch_set *s = c->set;
	if (s->n == c->cap_groups) {
		int nc = c->cap_groups ? c->cap_groups * 2 : 32;
		pb_branch_group *ng = realloc(s->groups, (size_t)nc * sizeof *ng);
		if (!ng) {
			c->oom = 1;
			return;
		}
		s->groups = ng;
		c->cap_groups = nc;
	}
	pb_branch_group *gr = &s->groups[s->n];
	gr->kind = kind;
	gr->anchor = anchor;
	gr->n_branches = nb;
	gr->start = malloc((size_t)(nb + 1) * sizeof *gr->start);
	gr->nodes = malloc((size_t)(d->nodes.n + 1) * sizeof *gr->nodes);
	if (!gr->start || !gr->nodes) {
		free(gr->start);
		free(gr->nodes);
		c->oom = 1;
		return;
	}
	memcpy(gr->start, d->start.a, (size_t)(nb + 1) * sizeof *gr->start);
	memcpy(gr->nodes, d->nodes.a, (size_t)d->nodes.n * sizeof *gr->nodes);
	for (int i = 0; i < d->nodes.n; i++)
		s->group_of[d->nodes.a[i]] = s->n;
	s->per_kind[kind]++;
	s->n++;
}

/* Downward chain from s (s itself must have <= 1 predecessor). */
static void chain_down(const ctx *c, int s, ivec *out)
{
	out->n = 0;
	int cur = s;
	while (cur >= 0 && !skipped(c, cur) && c->np[cur] <= 1) {
		if (ivec_push(out, cur))
			return;
		if (c->ns[cur] != 1)
			break;
		int nx = c->s1[cur];
		if (c->np[nx] != 1)
			break;
		cur = nx;
	}
}

/* Upward chain from q (q must have <= 1 successor), in execution order. */
static void chain_up(const ctx *c, int q, ivec *out)
{
	out->n = 0;
	int cur = q;
	while (cur >= 0 && !skipped(c, cur) && c->ns[cur] <= 1) {
		if (ivec_push(out, cur))
			return;
		if (c->np[cur] != 1)
			break;
		int pv = c->p1[cur];
		if (c->ns[pv] != 1)
			break;
		cur = pv;
	}
	for (int i = 0, j = out->n - 1; i < j; i++, j--) {
		int t = out->a[i];
		out->a[i] = out->a[j];
		out->a[j] = t;
	}
}

/* Drops nodes already in a group; keeps order. */
static void filter_free(const pb_branch_set *s, ivec *v)
{
	int k = 0;
	for (int i = 0; i < v->n; i++)
		if (s->group_of[v->a[i]] < 0)
			v->a[k++] = v->a[i];
	v->n = k;
}

/* parent / parent_child groups from every fork. */
static void search_parents(ctx *c, draft *d, ivec *ch)
{
	const pb_graph *g = c->g;
	for (int p = 0; p < g->n_nodes && !c->oom; p++) {
		const pb_node *pn = &g->nodes[p];
		if (skipped(c, p) || c->ns[p] < 2)
			continue;
		draft_reset(d);
		int all_long = 1, n_br = 0;
		/* For parent_child: count branches ending in each child. */
		int shared_end = 0;
		int *ends = malloc((size_t)pn->n_succs * sizeof *ends);
		if (!ends) {
			c->oom = 1;
			return;
		}
		for (int k = 0; k < pn->n_succs; k++) {
			if (skipped(c, pn->succs[k]))
				continue;
			chain_down(c, pn->succs[k], ch);
			filter_free(c->set, ch);
			if (ch->n == 0)
				continue;
			int last = ch->a[ch->n - 1];
			ends[n_br] = c->ns[last] == 1 ? c->s1[last] : -1;
			for (int j = 0; j < n_br; j++)
				if (ends[j] >= 0 && ends[j] == ends[n_br])
					shared_end = 1;
			n_br++;
			if (ch->n < 2)
				all_long = 0;
			draft_branch(c, d, ch->a, ch->n);
		}
		free(ends);
		draft_commit(
		    c, d, (all_long && shared_end) ? PB_BRANCH_PARENT_CHILD : PB_BRANCH_PARENT, p);
	}
}

static void search_children(ctx *c, draft *d, ivec *ch)
{
	const pb_graph *g = c->g;
	for (int q = 0; q < g->n_nodes && !c->oom; q++) {
		const pb_node *qn = &g->nodes[q];
		if (skipped(c, q) || c->np[q] < 2)
			continue;
		draft_reset(d);
		for (int k = 0; k < qn->n_preds; k++) {
			if (skipped(c, qn->preds[k]))
				continue;
			chain_up(c, qn->preds[k], ch);
			filter_free(c->set, ch);
			draft_branch(c, d, ch->a, ch->n);
		}
		draft_commit(c, d, PB_BRANCH_CHILD, q);
	}
}

static void search_ends(ctx *c, draft *d, ivec *ch, int sources)
{
	const pb_graph *g = c->g;
	draft_reset(d);
	for (int v = 0; v < g->n_nodes && !c->oom; v++) {
		if (skipped(c, v) || (sources ? c->np[v] != 0 : c->ns[v] != 0))
			continue;
		if (sources)
			chain_down(c, v, ch);
		else
			chain_up(c, v, ch);
		filter_free(c->set, ch);
		draft_branch(c, d, ch->a, ch->n);
	}
	draft_commit(c, d, sources ? PB_BRANCH_SOURCE : PB_BRANCH_SINK, -1);
}

/* Adds u as a one-node branch if free, fusable and independent of all so far. */
static void local_try(ctx *c, draft *d, pb_reach *r, const unsigned char *fusable, int u)
{
	if (c->set->group_of[u] >= 0 || (fusable && !fusable[u]) || skipped(c, u))
		return;
	for (int i = 0; i < d->nodes.n; i++)
		if (!pb_reach_independent(r, d->nodes.a[i], u))
			return;
	draft_branch(c, d, &u, 1);
}

static void search_local(ctx *c, draft *d, const unsigned char *fusable)
{
	const pb_graph *g = c->g;
	pb_reach *r = pb_reach_new(g, PB_REACH_MAX_BITSET);
	if (!r) {
		c->oom = 1;
		return;
	}
	for (int v = 0; v < g->n_nodes && !c->oom; v++) {
		if (c->set->group_of[v] >= 0 || (fusable && !fusable[v]) || skipped(c, v))
			continue;
		const pb_node *nd = &g->nodes[v];
		draft_reset(d);
		draft_branch(c, d, &v, 1);
		for (int k = 0; k < nd->n_preds; k++) {
			if (skipped(c, nd->preds[k]))
				continue;
			const pb_node *pn = &g->nodes[nd->preds[k]];
			for (int j = 0; j < pn->n_succs; j++)
				local_try(c, d, r, fusable, pn->succs[j]);
		}
		for (int k = 0; k < nd->n_succs; k++) {
			const pb_node *sn = &g->nodes[nd->succs[k]];
			for (int j = 0; j < sn->n_preds; j++)
				local_try(c, d, r, fusable, sn->preds[j]);
		}
		draft_commit(c, d, PB_BRANCH_LOCAL, v);
	}
	pb_reach_free(r);
}

int pb_branch_extract(const pb_graph *g, const unsigned char *fusable, const unsigned char *skip,
                      pb_branch_set **out, pb_error *err)
{
	*out = NULL;
	pb_branch_set *s = calloc(1, sizeof *s);
	if (!s)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	s->n_nodes = g->n_nodes;
	s->group_of = malloc((size_t)(g->n_nodes + 1) * sizeof *s->group_of);
	if (!s->group_of) {
		free(s);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	}
	for (int i = 0; i < g->n_nodes; i++)
		s->group_of[i] = -1;
	ctx c = {g, s, 0, 0, skip, NULL, NULL, NULL, NULL};
	size_t sz = (size_t)g->n_nodes + 1;
	c.np = calloc(sz, sizeof *c.np);
	c.ns = calloc(sz, sizeof *c.ns);
	c.p1 = malloc(sz * sizeof *c.p1);
	c.s1 = malloc(sz * sizeof *c.s1);
	if (!c.np || !c.ns || !c.p1 || !c.s1) {
		c.oom = 1;
	} else {
		for (int v = 0; v < g->n_nodes; v++) {
			const pb_node *nd = &g->nodes[v];
			c.p1[v] = c.s1[v] = -1;
			for (int k = 0; k < nd->n_preds; k++)
				if (!skipped(&c, nd->preds[k])) {
					c.np[v]++;
					c.p1[v] = nd->preds[k];
				}
			for (int k = 0; k < nd->n_succs; k++)
				if (!skipped(&c, nd->succs[k])) {
					c.ns[v]++;
					c.s1[v] = nd->succs[k];
				}
		}
	}
	draft d = {{0}, {0}};
	ivec ch = {0};
	if (c.oom)
		goto done;
	search_parents(&c, &d, &ch);
	search_children(&c, &d, &ch);
	search_ends(&c, &d, &ch, 1);
	search_ends(&c, &d, &ch, 0);
	search_local(&c, &d, fusable);
done:
	free(c.np);
	free(c.ns);
	free(c.p1);
	free(c.s1);
	draft_free(&d);
	free(ch.a);
	if (c.oom) {
		pb_branch_set_free(s);
		return pb_err(err, PB_ENOMEM, "%s: out of memory while searching branch groups",
		              g->path);
	}
	*out = s;
	return PB_OK;
}

void pb_branch_set_free(pb_branch_set *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		free(s->groups[i].start);
		free(s->groups[i].nodes);
	}
	free(s->groups);
	free(s->group_of);
	free(s);
}
