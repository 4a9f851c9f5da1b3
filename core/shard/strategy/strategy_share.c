/*
 * shard/strategy/strategy_share.c — the tables a middle block's nodes, groups and
 * edges share with their representative's while a strategy problem is built
 * (strategy_problem.h). What is compared is everything the table is computed
 * from, so a shared table is the one the full build would compute.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shard/strategy/strategy_share.h"
#include "util/job.h"

static int same_shape(const pb_tensor *a, const pb_tensor *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return 0;
	for (int k = 0; k < a->rank && k < PB_MAX_RANK; k++)
		if (a->dims[k] != b->dims[k])
			return 0;
	return 1;
}

static int same_double(double a, double b)
{
	return !memcmp(&a, &b, sizeof a);
}

int pb_strategy_share_node_alike(const pb_shard_problem *p, int v, int r)
{
	const pb_graph *g = p->g;
	const pb_node *a = &g->nodes[v], *b = &g->nodes[r];
	const pb_shard_node *sa = &p->nodes[v], *sb = &p->nodes[r];
	if (!sa->active || !sb->active || sb->same_as >= 0 || !sb->strat || strcmp(a->op, b->op) ||
	    a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs ||
	    sa->recomputed != sb->recomputed || sa->kept_full != sb->kept_full ||
	    sa->saved_out != sb->saved_out || sa->seqpar != sb->seqpar)
		return 0;
	if (!same_double(a->cost.flops, b->cost.flops) ||
	    !same_double(a->cost.in_bytes, b->cost.in_bytes) ||
	    !same_double(a->cost.out_bytes, b->cost.out_bytes) ||
	    !same_double(a->cost.param_bytes, b->cost.param_bytes))
		return 0;
	for (int i = 0; i < a->n_inputs; i++) {
		int ta = a->inputs[i], tb = b->inputs[i];
		if ((ta < 0) != (tb < 0))
			return 0;
		if (ta < 0)
			continue;
		if (p->tkind[ta] != p->tkind[tb] || !same_shape(&g->tensors[ta], &g->tensors[tb]))
			return 0;
		if (p->tkind[ta] == PB_TKIND_PARAM && p->param_owner &&
		    (p->param_owner[ta] == v) != (p->param_owner[tb] == r))
			return 0;
	}
	for (int j = 0; j < a->n_outputs; j++) {
		int ta = a->outputs[j], tb = b->outputs[j];
		if ((ta < 0) != (tb < 0))
			return 0;
		if (ta >= 0 && (!same_shape(&g->tensors[ta], &g->tensors[tb]) ||
		                g->tensors[ta].is_output != g->tensors[tb].is_output))
			return 0;
	}
	return 1;
}

static int root(const pb_shard_problem *p, int v)
{
	return p->nodes[v].same_as >= 0 ? p->nodes[v].same_as : v;
}

static int member_index(const pb_shard_group *gr, int v)
{
	for (int k = 0; k < gr->n_members; k++)
		if (gr->members[k] == v)
			return k;
	return -1;
}

int pb_strategy_share_group_twin(const pb_shard_problem *p, int G, const int *rep)
{
	const pb_graph *g = p->g;
	const pb_shard_group *a = &p->groups[G];
	int r = rep[a->leader];
	if (r == a->leader || !p->nodes[r].active)
		return -1;
	int H = p->nodes[r].group;
	if (H < 0 || H >= G)
		return -1;
	const pb_shard_group *b = &p->groups[H];
	if (b->leader != r || b->same_as >= 0 || b->n_members != a->n_members)
		return -1;
	for (int k = 0; k < a->n_members; k++) {
		int u = a->members[k], w = b->members[k];
		if (p->nodes[u].same_as < 0 || root(p, u) != root(p, w))
			return -1;
		/* the activation inputs come from the members at the same place */
		const pb_node *nu = &g->nodes[u], *nw = &g->nodes[w];
		for (int i = 0; i < nu->n_inputs && i < PB_SHARD_MAX_IN; i++) {
			int tu = nu->inputs[i], tw = nw->inputs[i];
			if (tu < 0 || p->tkind[tu] != PB_TKIND_ACT)
				continue;
			int pu = g->tensors[tu].producer, pw = g->tensors[tw].producer;
			if (k > 0 &&
			    (pu < 0 || pw < 0 || member_index(a, pu) != member_index(b, pw) ||
			     member_index(a, pu) < 0))
				return -1;
			if (k > 0) {
				int ju = -1, jw = -1;
				for (int j = 0; j < g->nodes[pu].n_outputs; j++) {
					if (g->nodes[pu].outputs[j] == tu && ju < 0)
						ju = j;
					if (g->nodes[pw].outputs[j] == tw && jw < 0)
						jw = j;
				}
				if (ju != jw)
					return -1;
			}
		}
	}
	return H;
}

void pb_strategy_share_edge_matrix(const pb_shard_problem *p, int t, double mult,
                                   signed char (*as)[PB_MESH_MAX_AXES], int na,
                                   signed char (*bs)[PB_MESH_MAX_AXES], int nb, double *c)
{
	const pb_tensor *tt = &p->g->tensors[t];
	for (int a = 0; a < na; a++)
		for (int b = 0; b < nb; b++)
			c[a * nb + b] =
			    pb_spec_reshard_cost_tensor(&p->mesh, tt, as[a], bs[b], NULL, NULL) *
			    mult;
}

static uint64_t edge_hash(const pb_shard_problem *p, const pb_shard_edge *ed)
{
	const pb_tensor *t = &p->g->tensors[ed->tensor];
	uint64_t h = 1469598103934665603ULL;
	h = (h ^ (uint64_t)(t->dtype + 7)) * 1099511628211ULL;
	h = (h ^ (uint64_t)(t->rank + 11)) * 1099511628211ULL;
	for (int k = 0; k < t->rank && k < PB_MAX_RANK; k++)
		h = (h ^ (uint64_t)t->dims[k]) * 1099511628211ULL;
	h = (h ^ (uint64_t)ed->na) * 1099511628211ULL;
	h = (h ^ (uint64_t)ed->nb) * 1099511628211ULL;
	const unsigned char *x = (const unsigned char *)ed->as;
	for (size_t k = 0; k < (size_t)ed->na * PB_MESH_MAX_AXES; k++)
		h = (h ^ x[k]) * 1099511628211ULL;
	x = (const unsigned char *)ed->bs;
	for (size_t k = 0; k < (size_t)ed->nb * PB_MESH_MAX_AXES; k++)
		h = (h ^ x[k]) * 1099511628211ULL;
	return h;
}

static int same_edge_matrix(const pb_shard_problem *p, const pb_shard_edge *x,
                            const pb_shard_edge *y)
{
	return x->na == y->na && x->nb == y->nb && x->mult == y->mult &&
	       same_shape(&p->g->tensors[x->tensor], &p->g->tensors[y->tensor]) &&
	       !memcmp(x->as, y->as, (size_t)x->na * PB_MESH_MAX_AXES) &&
	       !memcmp(x->bs, y->bs, (size_t)x->nb * PB_MESH_MAX_AXES);
}

int pb_strategy_share_edge_costs(pb_shard_problem *p, int share, pb_error *err)
{
	int cap = 1;
	while (share && cap < 2 * p->n_edges + 2)
		cap <<= 1;
	int *tab = share ? malloc((size_t)cap * sizeof *tab) : NULL;
	if (share && !tab)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	for (int k = 0; share && k < cap; k++)
		tab[k] = -1;
	int rc = PB_OK;
	for (int e = 0; e < p->n_edges && rc == PB_OK; e++) {
		pb_shard_edge *ed = &p->edges[e];
		if (share) {
			uint64_t h = edge_hash(p, ed);
			size_t k = (size_t)(h & (uint64_t)(cap - 1));
			for (; tab[k] >= 0; k = (k + 1) & (size_t)(cap - 1))
				if (same_edge_matrix(p, &p->edges[tab[k]], ed))
					break;
			if (tab[k] >= 0) {
				ed->cost = p->edges[tab[k]].cost;
				ed->cost_shared = 1;
				p->n_shared_edges++;
				continue;
			}
			tab[k] = e;
		}
		pb_job_tick();
		ed->cost = malloc(((size_t)ed->na * ed->nb + 1) * sizeof(double));
		if (!ed->cost) {
			rc = pb_err(err, PB_ENOMEM, "shard: out of memory");
			break;
		}
		pb_strategy_share_edge_matrix(p, ed->tensor, ed->mult, ed->as, ed->na, ed->bs,
		                              ed->nb, ed->cost);
	}
	free(tab);
	for (int e = 0; e < p->n_edges; e++) {
		free(p->edges[e].as);
		free(p->edges[e].bs);
		p->edges[e].as = p->edges[e].bs = NULL;
	}
	return rc;
}
