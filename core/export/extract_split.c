/*
 * export/extract_split.c — a plan's groups as parts in execution order, with
 * the tensors crossing between them (see extract.h).
 *
 * 1. Constant nodes (pb_graph_constant_nodes: Constant, the Identity copies
 *    of weights, shape math on constants), whatever group the plan gives
 *    them, and unassigned nodes (group -1) are copied into every part that
 *    consumes its output, directly or through other unassigned nodes (need[]
 *    below, one pass in reverse topological order). One that feeds a model
 *    output also goes to the last part.
 * 2. The groups' dependency graph (assigned producer -> the part of a
 *    consumer, through copied nodes too) is sorted with Kahn's algorithm,
 *    ties broken by the smallest node id of the group, so parts come in the
 *    order the model runs them. A circle means the plan cannot run as a
 *    chain of parts: an error naming two groups on it.
 * 3. A part's inputs are the tensors its nodes read that it does not produce
 *    (initializers excepted: parts carry their own); its outputs are the
 *    tensors of its assigned nodes that another part reads or that are model
 *    outputs.
 */
#include "export/extract.h"

#include <stdlib.h>
#include <string.h>

static int plan_has_parts(const char *kind)
{
	return kind && (strcmp(kind, "partition") == 0 || strcmp(kind, "pipeline") == 0 ||
	                strcmp(kind, "map") == 0);
}

void pb_extract_split_free(pb_extract_split_t *s)
{
	if (!s)
		return;
	for (int k = 0; k < s->n_parts; k++) {
		free(s->parts[k].nodes);
		free(s->parts[k].inputs);
		free(s->parts[k].input_from);
		free(s->parts[k].outputs);
	}
	free(s->parts);
	free(s);
}

typedef struct split_ctx {
	const pb_graph *g;
	const pb_plan *plan;
	int ng;              /* groups + 1 (the last slot: "the last part") */
	unsigned char *need; /* n_nodes x ng: unassigned node copied into group */
	unsigned char *dep;  /* ng x ng: group a runs before group b */
	int *order;          /* groups in execution order */
	int n_order;
	int *part_of;            /* group -> part index, -1 unused */
	unsigned char *constant; /* pb_graph_constant_nodes */
} split_ctx;

#define NEED(c, v, k) ((c)->need[(size_t)(v) * (c)->ng + (k)])
#define DEP(c, a, b) ((c)->dep[(size_t)(a) * (c)->ng + (b)])

static int group_of(const split_ctx *c, int v)
{
	int gr = c->plan->group[v];
	if (c->constant[v])
		return -1; /* constants are copied to where they are read */
	return gr >= 0 && gr < c->plan->n_groups ? gr : -1;
}

/* need[] of every unassigned node, reverse topological order. */
static void compute_need(split_ctx *c)
{
	const pb_graph *g = c->g;
	int last = c->ng - 1;
	for (int v = g->n_nodes - 1; v >= 0; v--) {
		if (group_of(c, v) >= 0)
			continue;
		const pb_node *n = &g->nodes[v];
		int any = 0;
		for (int i = 0; i < n->n_succs; i++) {
			int s = n->succs[i], gs = group_of(c, s);
			if (gs >= 0) {
				NEED(c, v, gs) = 1;
				any = 1;
			} else {
				for (int k = 0; k < c->ng; k++)
					if (NEED(c, s, k)) {
						NEED(c, v, k) = 1;
						any = 1;
					}
			}
		}
		for (int i = 0; i < n->n_outputs; i++)
			if (n->outputs[i] >= 0 && g->tensors[n->outputs[i]].is_output)
				NEED(c, v, last) = any = 1;
		(void)any; /* a dead node (no consumer, no model output) goes nowhere */
	}
}

/* Group dependencies: the producer's group runs before each consumer's. */
static void compute_deps(split_ctx *c)
{
	const pb_graph *g = c->g;
	for (int u = 0; u < g->n_nodes; u++) {
		int gu = group_of(c, u);
		if (gu < 0)
			continue;
		const pb_node *n = &g->nodes[u];
		for (int i = 0; i < n->n_succs; i++) {
			int s = n->succs[i], gs = group_of(c, s);
			if (gs >= 0) {
				if (gs != gu)
					DEP(c, gu, gs) = 1;
			} else {
				for (int k = 0; k < c->ng - 1; k++)
					if (NEED(c, s, k) && k != gu)
						DEP(c, gu, k) = 1;
			}
		}
	}
}

static int sort_groups(split_ctx *c, const int *used, const int *first_node, const char *src,
                       pb_error *err)
{
	int ng = c->ng - 1, n_used = 0;
	int *indeg = calloc((size_t)ng + 1, sizeof *indeg);
	char *done = calloc((size_t)ng + 1, 1);
	if (!indeg || !done) {
		free(indeg);
		free(done);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", src);
	}
	for (int a = 0; a < ng; a++)
		for (int b = 0; b < ng; b++)
			if (used[a] && used[b] && DEP(c, a, b))
				indeg[b]++;
	for (int a = 0; a < ng; a++)
		n_used += used[a];
	c->n_order = 0;
	while (c->n_order < n_used) {
		int best = -1;
		for (int a = 0; a < ng; a++)
			if (used[a] && !done[a] && indeg[a] == 0 &&
			    (best < 0 || first_node[a] < first_node[best]))
				best = a;
		if (best < 0)
			break;
		done[best] = 1;
		c->order[c->n_order++] = best;
		for (int b = 0; b < ng; b++)
			if (used[b] && DEP(c, best, b))
				indeg[b]--;
	}
	int rc = PB_OK;
	if (c->n_order < n_used) {
		/* name two groups on a circle: a blocked group and one it waits for */
		int a = -1, b = -1;
		for (int x = 0; x < ng && a < 0; x++)
			if (used[x] && !done[x])
				for (int y = 0; y < ng; y++)
					if (used[y] && !done[y] && DEP(c, y, x)) {
						a = y;
						b = x;
						break;
					}
		const pb_plan_group *ga = &c->plan->groups[a < 0 ? 0 : a];
		const pb_plan_group *gb = &c->plan->groups[b < 0 ? 0 : b];
		rc = pb_err(
		    err, PB_EINPUT,
		    "%s: the plan's groups depend on each other in a circle ('%s' feeds "
		    "'%s' and, through other groups, back): it cannot run as a chain of parts",
		    src, ga->label ? ga->label : "?", gb->label ? gb->label : "?");
	}
	free(indeg);
	free(done);
	return rc;
}

static int push(int **arr, int *n, int *cap, int v)
{
	if (*n == *cap) {
		int nc = *cap ? 2 * *cap : 8;
		int *a = realloc(*arr, (size_t)nc * sizeof *a);
		if (!a)
			return -1;
		*arr = a;
		*cap = nc;
	}
	(*arr)[(*n)++] = v;
	return 0;
}

/* Nodes, inputs and outputs of part k (group gr). stamp[] is n_tensors
 * scratch; in_part[] is n_nodes scratch. */
static int fill_part(split_ctx *c, int k, int gr, pb_extract_part *p, int *stamp,
                     unsigned char *in_part)
{
	const pb_graph *g = c->g;
	int cap = 0, icap = 0, fcap = 0, nf = 0;
	int is_last = k == c->n_order - 1;
	p->group = gr;
	memset(in_part, 0, (size_t)g->n_nodes);
	for (int v = 0; v < g->n_nodes; v++) {
		int gv = group_of(c, v);
		int here =
		    gv == gr || (gv < 0 && (NEED(c, v, gr) || (is_last && NEED(c, v, c->ng - 1))));
		if (!here)
			continue;
		in_part[v] = 1;
		if (push(&p->nodes, &p->n_nodes, &cap, v))
			return -1;
		p->n_copied += gv < 0;
	}
	for (int i = 0; i < p->n_nodes; i++) {
		const pb_node *n = &g->nodes[p->nodes[i]];
		for (int j = 0; j < n->n_inputs; j++) {
			int t = n->inputs[j];
			if (t < 0 || stamp[t] == k + 1)
				continue;
			const pb_tensor *ten = &g->tensors[t];
			if (ten->producer >= 0 && in_part[ten->producer])
				continue;
			if (ten->producer < 0 && ten->is_initializer && !ten->is_input)
				continue;
			stamp[t] = k + 1;
			int pg = ten->producer >= 0 ? group_of(c, ten->producer) : -1;
			int from = pg >= 0 ? c->part_of[pg] : -1;
			if (push(&p->inputs, &p->n_inputs, &icap, t) ||
			    push(&p->input_from, &nf, &fcap, from))
				return -1;
		}
	}
	return 0;
}

static int fill_outputs(split_ctx *c, pb_extract_split_t *s)
{
	const pb_graph *g = c->g;
	/* a tensor is an output of its producer's part when a part reads it or the
	 * model outputs it */
	unsigned char *wanted = calloc((size_t)g->n_tensors + 1, 1);
	int *caps = calloc((size_t)s->n_parts + 1, sizeof *caps);
	if (!wanted || !caps) {
		free(wanted);
		free(caps);
		return -1;
	}
	for (int k = 0; k < s->n_parts; k++)
		for (int i = 0; i < s->parts[k].n_inputs; i++)
			wanted[s->parts[k].inputs[i]] = 1;
	for (int i = 0; i < g->n_outputs; i++)
		wanted[g->outputs[i]] = 1;
	int rc = 0;
	for (int k = 0; k < s->n_parts && !rc; k++) {
		pb_extract_part *p = &s->parts[k];
		int is_last = k == s->n_parts - 1;
		for (int i = 0; i < p->n_nodes && !rc; i++) {
			int v = p->nodes[i];
			int assigned = group_of(c, v) >= 0;
			const pb_node *n = &g->nodes[v];
			for (int j = 0; j < n->n_outputs && !rc; j++) {
				int t = n->outputs[j];
				if (t < 0 || !wanted[t])
					continue;
				/* a copied node's tensor is read locally; only a model output
				 * leaves, once, from the last part */
				if (!assigned && !(is_last && g->tensors[t].is_output))
					continue;
				rc = push(&p->outputs, &p->n_outputs, &caps[k], t);
			}
		}
	}
	free(wanted);
	free(caps);
	return rc;
}

int pb_extract_split(const pb_graph *g, const pb_plan *plan, const char *src,
                     pb_extract_split_t **out, pb_error *err)
{
	*out = NULL;
	if (!plan_has_parts(plan->kind))
		return pb_err(err, PB_EINPUT,
		              "%s: a %s plan has no parts to extract (extract takes partition, "
		              "pipeline and map plans)",
		              src, plan->kind ? plan->kind : "(kindless)");
	if (plan->n_nodes != g->n_nodes)
		return pb_err(err, PB_EINPUT, "%s: the plan has %d nodes, the model %s has %d", src,
		              plan->n_nodes, g->path ? g->path : "", g->n_nodes);
	split_ctx c = {g, plan, plan->n_groups + 1};
	int ng = plan->n_groups;
	int *used = calloc((size_t)ng + 1, sizeof *used);
	int *first = calloc((size_t)ng + 1, sizeof *first);
	c.need = calloc((size_t)g->n_nodes * c.ng + 1, 1);
	c.dep = calloc((size_t)c.ng * c.ng, 1);
	c.order = calloc((size_t)ng + 1, sizeof *c.order);
	c.part_of = malloc(((size_t)ng + 1) * sizeof *c.part_of);
	int *stamp = calloc((size_t)g->n_tensors + 1, sizeof *stamp);
	unsigned char *in_part = malloc((size_t)g->n_nodes + 1);
	pb_extract_split_t *s = calloc(1, sizeof *s);
	c.constant = pb_graph_constant_nodes(g);
	int rc = PB_OK;
	if (!c.constant || !used || !first || !c.need || !c.dep || !c.order || !c.part_of ||
	    !stamp || !in_part || !s) {
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory", src);
		goto done;
	}
	for (int v = g->n_nodes - 1; v >= 0; v--) {
		int gr = group_of(&c, v);
		if (gr >= 0) {
			used[gr] = 1;
			first[gr] = v;
		}
	}
	int n_used = 0;
	for (int a = 0; a < ng; a++)
		n_used += used[a];
	if (n_used == 0) {
		rc = pb_err(err, PB_EINPUT,
		            "%s: the %s plan assigns no computing node to a group: no parts", src,
		            plan->kind);
		goto done;
	}
	compute_need(&c);
	compute_deps(&c);
	if ((rc = sort_groups(&c, used, first, src, err)) != PB_OK)
		goto done;
	for (int a = 0; a <= ng; a++)
		c.part_of[a] = -1;
	for (int k = 0; k < c.n_order; k++)
		c.part_of[c.order[k]] = k;
	s->parts = calloc((size_t)c.n_order, sizeof *s->parts);
	if (!s->parts) {
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory", src);
		goto done;
	}
	s->n_parts = c.n_order;
	for (int k = 0; k < c.n_order && !rc; k++)
		if (fill_part(&c, k, c.order[k], &s->parts[k], stamp, in_part))
			rc = pb_err(err, PB_ENOMEM, "%s: out of memory", src);
	if (!rc && fill_outputs(&c, s))
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory", src);
done:
	free(used);
	free(first);
	free(c.need);
	free(c.dep);
	free(c.order);
	free(c.part_of);
	free(stamp);
	free(in_part);
	free(c.constant);
	if (rc)
		pb_extract_split_free(s);
	else
		*out = s;
	return rc;
}
