/*
 * shard/dtp/dtp_stage.c — one pipeline chunk sharded on its device group, and
 * the cache that solves every distinct chunk once (dtp_stage.h).
 *
 * A chunk's content is the sequence of its operators' layer-class
 * representatives (layer_classes.h: a node of a middle block stands for the
 * node at the same offset of the run's second block), so two chunks holding
 * the same number of middle decoder blocks have the same content and the
 * same MILP. The key adds the scheme, the device group's shape and the
 * activation copies (they enter the memory row). The cache belongs to one
 * graph: a reload (another micro-batch size) starts a new one. A solve cut
 * by the caller's cutoff is kept with it: no plan with as many copies or more
 * beats a cutoff as low or lower.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shard/dtp/dtp_stage.h"
#include "shard/grad_overlap.h"
#include "shard/pipeline/pipeline_p2p.h"
#include "shard/strategy/dist_opt.h"
#include "shard/layer_classes.h"
#include "shard/search/search.h"
#include "shard/search/search_report.h"
#include "shard/strategy/strategy_grad.h"
#include "shard/strategy/strategy_milp.h"
#include "util/job.h"

typedef struct centry {
	uint64_t hash;
	int *seq, n;
	int *node;   /* keep_ops: the chunk's nodes in order (ops refer to them) */
	json_t *ops; /* keep_ops: the plan's operators (search_report.c "ops") */
	char scheme[48];
	int n_dev, nodes;
	double act;
	double cutoff, cutoff_grad; /* r.cut: the cutoff it was cut by */
	pb_dtp_chunk r;
} centry;

struct pb_dtp_cache {
	const pb_graph *g;
	pb_layer_classes lc;
	int have_lc;
	centry *e;
	int n, cap;
	long milps, hits;
	int keep_ops;
	int *seq, *node; /* scratch: g->n_nodes */
};

pb_dtp_cache *pb_dtp_stage_cache_new(const pb_graph *g)
{
	pb_dtp_cache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->g = g;
	c->seq = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
	c->node = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
	pb_error e = {0};
	c->have_lc = pb_layer_classes_find(g, &c->lc, &e) == PB_OK;
	if (!c->seq || !c->node) {
		pb_dtp_stage_cache_free(c);
		return NULL;
	}
	return c;
}

void pb_dtp_stage_cache_free(pb_dtp_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++) {
		free(c->e[i].seq);
		free(c->e[i].node);
		json_decref(c->e[i].ops);
	}
	free(c->e);
	free(c->seq);
	free(c->node);
	if (c->have_lc)
		pb_layer_classes_free(&c->lc);
	free(c);
}

void pb_dtp_stage_cache_keep_ops(pb_dtp_cache *c)
{
	c->keep_ops = 1;
}

void pb_dtp_stage_cache_by_node(pb_dtp_cache *c)
{
	if (c->have_lc)
		pb_layer_classes_free(&c->lc);
	c->have_lc = 0;
}

void pb_dtp_stage_cache_stats(const pb_dtp_cache *c, long *milps, long *hits)
{
	*milps = c ? c->milps : 0;
	*hits = c ? c->hits : 0;
}

pb_cluster pb_dtp_stage_sub_cluster(const pb_cluster *cl, int d)
{
	pb_cluster sub = *cl;
	sub.nodes = d >= cl->devices_per_node ? d / cl->devices_per_node : 1;
	sub.devices_per_node = d >= cl->devices_per_node ? cl->devices_per_node : d;
	sub.n_devices = d;
	return sub;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

/* The best scheme's plan of the masked nodes: time and memory parts (and
 * with ops its operators' specs and the recomputation chosen). */
static int solve(const pb_graph *g, const pb_cluster *sub, const char *scheme,
                 const pb_shard_opts *so, pb_dtp_chunk *r, json_t **ops, pb_error *err)
{
	pb_shard_search *s = NULL;
	pb_error e = {0};
	long limited0 = pb_strategy_milp_node_limited();
	int rc = pb_search_rows_new(g, sub, so, scheme, 2, NULL, &s, &e);
	if (rc == PB_OK)
		rc = pb_search_finish(s, &e);
	memset(r, 0, sizeof *r);
	if (rc == PB_OK && s->best >= 0 && s->best_problem) {
		const pb_shard_row *b = &s->rows[s->best];
		const pb_shard_problem *p = s->best_problem;
		r->ok = 1;
		r->time = b->step_time;
		for (int G = 0; G < p->n_groups; G++) {
			int ch = s->best_result.choice[G];
			r->mem_param += p->groups[G].mem_param[ch];
			r->mem_act += p->groups[G].mem_act[ch];
		}
		r->feasible = b->feasible;
		r->grad = pb_strategy_grad_time(p, s->best_result.choice);
		r->grad_bytes = pb_strategy_grad_bytes(p, s->best_result.choice);
		r->optim_saved = pb_dist_opt_saved(p, s->best_result.choice);
		pb_strategy_problem_seq_parallel_saved(p, s->best_result.choice, &r->sp_act,
		                                       &r->sp_once);
		if (r->grad > r->time)
			r->grad = r->time;
		r->recompute = b->recompute % 3;
		/* no solve stopped at the node limit: every recomputation choice
		 * optimal or within the gap, so the plan is */
		r->proven = pb_strategy_milp_node_limited() == limited0;
		if (ops) {
			json_t *rep = pb_search_report(s);
			*ops = json_incref(json_object_get(rep, "ops"));
			json_decref(rep);
		}
	} else if (rc == PB_OK) {
		snprintf(r->error, sizeof r->error, "%.150s",
		         s && s->n_rows > 0 && s->rows[0].error[0] ? s->rows[0].error
		                                                   : "no scheme solved");
	} else {
		snprintf(r->error, sizeof r->error, "%.150s", e.msg);
	}
	if (!r->ok) /* the one scheme's row: cut by so->cutoff */
		r->cut = s && s->n_rows == 1 && s->rows[0].cut;
	pb_search_rows_free(s);
	if (rc == PB_ENOMEM || rc == PB_ECANCEL) {
		*err = e;
		return rc;
	}
	return PB_OK;
}

/* A cache answer's operators for this chunk: the entry's k-th node is the
 * chunk's k-th (same content, node order), so ids and names are moved. */
static int map_ops(const pb_dtp_cache *c, const centry *e, pb_dtp_chunk *r, pb_error *err)
{
	json_t *ops = json_deep_copy(e->ops);
	if (!ops)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	int k = 0;
	size_t i;
	json_t *op;
	json_array_foreach(ops, i, op)
	{
		int id = (int)json_integer_value(json_object_get(op, "id"));
		while (k < e->n && e->node[k] < id)
			k++;
		if (k >= e->n || e->node[k] != id)
			continue;
		int v = c->node[k];
		json_object_set_new(op, "id", json_integer(v));
		json_object_set_new(op, "name", json_string(c->g->nodes[v].name));
		json_object_del(op, "group"); /* the other chunk's MILP group */
	}
	r->ops = ops;
	return PB_OK;
}

int pb_dtp_stage_chunk_solve(pb_dtp_cache *c, const pb_cluster *sub, const char *scheme,
                             const pb_shard_opts *so, const unsigned char *mask, double act_copies,
                             pb_dtp_chunk *r, pb_error *err)
{
	const pb_graph *g = c->g;
	const char *sch = scheme ? scheme : "-";
	int n = 0;
	uint64_t h = 0x51ed;
	r->ops = NULL;
	for (int v = 0; v < g->n_nodes; v++) {
		if (!mask[v])
			continue;
		int k = c->have_lc ? c->lc.rep[v] : v;
		c->node[n] = v;
		c->seq[n++] = k;
		h = mix(h, (uint64_t)k);
	}
	for (const char *p = sch; *p; p++)
		h = mix(h, (unsigned char)*p);
	h = mix(h, (uint64_t)sub->n_devices);
	/* the same chunk solved for these copies; else the fitting plan solved
	 * for the fewest more copies: it fits these too, and the optimum here is
	 * no slower, so a stage holding fewer micro-batches than another of the
	 * same content never sets the slowest group (the step time stays) */
	int more = -1;
	for (int i = 0; i < c->n; i++) {
		centry *e = &c->e[i];
		if (e->hash != h || e->n != n || e->n_dev != sub->n_devices ||
		    e->nodes != sub->nodes || strcmp(e->scheme, sch) ||
		    memcmp(e->seq, c->seq, (size_t)n * sizeof(int)))
			continue;
		if (e->r.cut) { /* as many copies or fewer, a cutoff as high or higher */
			if (e->act <= act_copies && so->cutoff > 0 && so->cutoff <= e->cutoff &&
			    so->cutoff_grad <= e->cutoff_grad) {
				more = i;
				break;
			}
			continue;
		}
		if (e->act == act_copies) {
			more = i;
			break;
		}
		if (e->act > act_copies && e->r.ok && e->r.feasible &&
		    (more < 0 || e->act < c->e[more].act))
			more = i;
	}
	if (more >= 0) {
		centry *e = &c->e[more];
		*r = e->r;
		c->hits++;
		return c->keep_ops && e->ops ? map_ops(c, e, r, err) : PB_OK;
	}
	pb_job_tick();
	pb_shard_opts o = *so;
	o.mask = mask;
	o.act_copies = act_copies;
	o.classes = c->have_lc ? &c->lc : NULL; /* found once per graph */
	json_t *ops = NULL;
	int rc = solve(g, sub, scheme, &o, r, c->keep_ops ? &ops : NULL, err);
	c->milps++;
	if (rc)
		return rc;
	r->ops = ops ? json_incref(ops) : NULL;
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 32;
		centry *ne = realloc(c->e, (size_t)cap * sizeof *ne);
		if (!ne)
			return pb_err(err, PB_ENOMEM, "shard: out of memory");
		c->e = ne;
		c->cap = cap;
	}
	centry *e = &c->e[c->n];
	e->seq = malloc(((size_t)n + 1) * sizeof(int));
	e->node = ops ? malloc(((size_t)n + 1) * sizeof(int)) : NULL;
	e->ops = ops;
	if (!e->seq || (ops && !e->node)) {
		free(e->seq);
		free(e->node);
		json_decref(ops);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	memcpy(e->seq, c->seq, (size_t)n * sizeof(int));
	if (ops)
		memcpy(e->node, c->node, (size_t)n * sizeof(int));
	e->hash = h;
	e->n = n;
	e->n_dev = sub->n_devices;
	e->nodes = sub->nodes;
	e->act = act_copies;
	e->cutoff = so->cutoff;
	e->cutoff_grad = so->cutoff_grad;
	snprintf(e->scheme, sizeof e->scheme, "%s", sch);
	e->r = *r;
	c->n++;
	return PB_OK;
}

void pb_dtp_stage_step_time(pb_dtp_config *c, const pb_cluster *cl, const pb_shard_opts *so)
{
	int p = c->pp, m = c->m, V = c->sched == PB_SCHED_1F1B ? 1 : c->v;
	/* the forward pass's share of a micro-batch: 1/4 under full
	 * recomputation (and auto, which may choose it: the smaller share hides
	 * less), else 1/3 */
	double fwd =
	    1 - pb_grad_overlap_backward_share(so->train && so->recompute != PB_RECOMP_NONE &&
	                                       so->recompute != PB_RECOMP_SELECTIVE);
	c->step_time = pb_pipeline_p2p_step(cl->p2p_overlap, m, p, V, c->slowest, c->p2p, fwd,
	                                    &c->p2p_exposed) +
	               c->grad_exposed;
	c->bubble =
	    V == 1 ? (double)(p - 1) / (m + p - 1) : (double)(p - 1) / ((double)V * m + p - 1);
}
