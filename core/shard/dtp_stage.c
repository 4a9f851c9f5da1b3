/*
 * shard/dtp_stage.c — one pipeline chunk sharded on its device group, and
 * the cache that solves every distinct chunk once (dtp_search.h).
 *
 * A chunk's content is the sequence of its operators' layer-class
 * representatives (layer_classes.h: a node of a middle block stands for the
 * node at the same offset of the run's second block), so two chunks holding
 * the same number of middle decoder blocks have the same content and the
 * same MILP. The key adds the scheme, the device group's shape and the
 * activation copies (they enter the memory row). The cache belongs to one
 * graph: a reload (another micro-batch size) starts a new one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shard/dtp_search.h"
#include "shard/layer_classes.h"
#include "shard/search.h"
#include "util/job.h"

typedef struct centry {
	uint64_t hash;
	int *seq, n;
	char scheme[48];
	int n_dev, nodes;
	double act;
	pb_dtp_chunk r;
} centry;

struct pb_dtp_cache {
	const pb_graph *g;
	pb_layer_classes lc;
	int have_lc;
	centry *e;
	int n, cap;
	long milps, hits;
	int *seq; /* scratch: g->n_nodes */
};

pb_dtp_cache *pb_dtp_cache_new(const pb_graph *g)
{
	pb_dtp_cache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->g = g;
	c->seq = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
	pb_error e = {0};
	c->have_lc = pb_layer_classes_find(g, &c->lc, &e) == PB_OK;
	if (!c->seq) {
		pb_dtp_cache_free(c);
		return NULL;
	}
	return c;
}

void pb_dtp_cache_free(pb_dtp_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++)
		free(c->e[i].seq);
	free(c->e);
	free(c->seq);
	if (c->have_lc)
		pb_layer_classes_free(&c->lc);
	free(c);
}

void pb_dtp_cache_stats(const pb_dtp_cache *c, long *milps, long *hits)
{
	*milps = c ? c->milps : 0;
	*hits = c ? c->hits : 0;
}

pb_cluster pb_dtp_sub_cluster(const pb_cluster *cl, int d)
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

/* The best scheme's plan of the masked nodes: time and memory parts. */
static int solve(const pb_graph *g, const pb_cluster *sub, const char *scheme,
                 const pb_shard_opts *so, pb_dtp_chunk *r, pb_error *err)
{
	pb_shard_search *s = NULL;
	pb_error e = {0};
	int rc = pb_shard_search_new(g, sub, so, scheme, 2, NULL, &s, &e);
	if (rc == PB_OK)
		rc = pb_shard_search_finish(s, &e);
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
		r->grad = pb_shard_grad_time(p, s->best_result.choice);
		if (r->grad > r->time)
			r->grad = r->time;
	} else if (rc == PB_OK) {
		snprintf(r->error, sizeof r->error, "%.150s",
		         s && s->n_rows > 0 && s->rows[0].error[0] ? s->rows[0].error
		                                                   : "no scheme solved");
	} else {
		snprintf(r->error, sizeof r->error, "%.150s", e.msg);
	}
	pb_shard_search_free(s);
	if (rc == PB_ENOMEM || rc == PB_ECANCEL) {
		*err = e;
		return rc;
	}
	return PB_OK;
}

int pb_dtp_chunk_solve(pb_dtp_cache *c, const pb_cluster *sub, const char *scheme,
                       const pb_shard_opts *so, const unsigned char *mask, double act_copies,
                       pb_dtp_chunk *r, pb_error *err)
{
	const pb_graph *g = c->g;
	const char *sch = scheme ? scheme : "-";
	int n = 0;
	uint64_t h = 0x51ed;
	for (int v = 0; v < g->n_nodes; v++) {
		if (!mask[v])
			continue;
		int k = c->have_lc ? c->lc.rep[v] : v;
		c->seq[n++] = k;
		h = mix(h, (uint64_t)k);
	}
	for (const char *p = sch; *p; p++)
		h = mix(h, (unsigned char)*p);
	h = mix(h, (uint64_t)sub->n_devices);
	for (int i = 0; i < c->n; i++) {
		centry *e = &c->e[i];
		if (e->hash == h && e->n == n && e->n_dev == sub->n_devices &&
		    e->nodes == sub->nodes && e->act == act_copies && !strcmp(e->scheme, sch) &&
		    !memcmp(e->seq, c->seq, (size_t)n * sizeof(int))) {
			*r = e->r;
			c->hits++;
			return PB_OK;
		}
	}
	pb_job_tick();
	pb_shard_opts o = *so;
	o.mask = mask;
	o.act_copies = act_copies;
	int rc = solve(g, sub, scheme, &o, r, err);
	c->milps++;
	if (rc)
		return rc;
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
	if (!e->seq)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	memcpy(e->seq, c->seq, (size_t)n * sizeof(int));
	e->hash = h;
	e->n = n;
	e->n_dev = sub->n_devices;
	e->nodes = sub->nodes;
	e->act = act_copies;
	snprintf(e->scheme, sizeof e->scheme, "%s", sch);
	e->r = *r;
	c->n++;
	return PB_OK;
}
