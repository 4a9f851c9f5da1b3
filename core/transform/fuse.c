/*
 * fuse.c — the fusion loop and the new graph (fuse.h).
 *
 * Algorithm, per parallel branch group (groups in discovery order):
 *  1. every sub-branch keeps only its fusable nodes (rules);
 *  2. round: the first not-yet-considered node of each sub-branch forms the
 *     front (n nodes from n sub-branches); stop when n < 2;
 *  3. the front is sorted by per-element work and cut greedily into disjoint
 *     combinations: a node joins the open combination while that raises the
 *     combination's gain (sum of solo times - fused time), keeps it acyclic
 *     and stays under max_members; otherwise it opens the next one (so m
 *     combinations of >= 2 nodes, 2m <= n, as the method states);
 *  4. combinations are fused best gain first while the gain exceeds
 *     min_gain; before each fusion a search in the contracted graph proves
 *     that no member reaches another (which would close a cycle); at the end
 *     igraph_is_dag confirms that the contracted graph is acyclic;
 *  5. every front node is consumed (fused or given up); repeat from 2.
 * Classes are kept as linked lists over original node ids (cls[v] = class
 * representative). The search is bounded by a topological order of the
 * contracted graph (ord, kept by a Pearce-Kelly style reordering at each
 * fusion): a class placed after every set member cannot reach one, so a
 * search visits only the set's window, not everything downstream. The
 * output graph is built with pb_builder: one node per
 * class, a fused node takes the union of its members' inputs and outputs,
 * the sum of their costs, op "Fused", and lists its members.
 */
#include "transform/fuse.h"
#include "load.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transform/folded.h"
#include "transform/quotient.h"
#include "util/job.h"

void pb_fuse_opts_default(pb_fuse_opts *o)
{
	memset(o, 0, sizeof *o);
	pb_fuse_model_default(&o->model);
	o->verify_dag = 1;
}

typedef struct fstate {
	const pb_graph *g;
	const pb_fuse_model *m;
	int n;
	int *cls;    /* node -> class representative */
	int *next;   /* next member of the same class, -1 at the end */
	int *stamp;  /* BFS visit marks */
	int *in_set; /* candidate set marks */
	int cur_stamp;
	int *queue;
	double *solo; /* solo time per node */
	/* A topological order of the contracted graph: ord[head] for each class
	 * (edges run from lower to higher ord), kept by reorder_for_merge. */
	int *ord;
	int *fwd, *bwd; /* scratch: classes after / before a set, in its window */
	long long *keys;
} fstate;

/* Collects into out[] the class heads reachable from the classes of set[]
 * (dir > 0: forward along succs, keeping ord < ub; dir < 0: backward along
 * preds, keeping ord > lb), excluding the set's own classes. */
static int collect(fstate *s, const int *set, int k, int dir, int lb, int ub, int *out)
{
	int mark = ++s->cur_stamp, m = 0;
	for (int i = 0; i < k; i++)
		s->stamp[s->cls[set[i]]] = mark;
	for (int i = -k; i < m; i++) {
		int h = i < 0 ? s->cls[set[i + k]] : out[i];
		for (int y = h; y >= 0; y = s->next[y]) {
			const pb_node *nd = &s->g->nodes[y];
			int nn = dir > 0 ? nd->n_succs : nd->n_preds;
			const int *nb = dir > 0 ? nd->succs : nd->preds;
			for (int j = 0; j < nn; j++) {
				int c = s->cls[nb[j]];
				if (s->stamp[c] == mark ||
				    (dir > 0 ? s->ord[c] >= ub : s->ord[c] <= lb))
					continue;
				s->stamp[c] = mark;
				out[m++] = c;
			}
		}
	}
	return m;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* Sorts heads[0..m) by ord (via s->keys). */
static void sort_by_ord(fstate *s, int *heads, int m)
{
	for (int i = 0; i < m; i++)
		s->keys[i] = ((long long)s->ord[heads[i]] << 32) | (unsigned)heads[i];
	qsort(s->keys, (size_t)m, sizeof *s->keys, cmp_ll);
	for (int i = 0; i < m; i++)
		heads[i] = (int)(s->keys[i] & 0xffffffffLL);
}

/* Before the classes of set[] (no member reaching another) become one, moves
 * the order as Pearce and Kelly's dynamic topological sort does on an edge
 * insertion: in the window [lb, ub] of the set's positions, the set's
 * ancestors B take the lowest positions of the pool (B, set, descendants F),
 * F the highest, the new class one in between; every other class keeps its
 * position. Returns the new class's position. Cost: the window's size. */
static int reorder_for_merge(fstate *s, const int *set, int k)
{
	int lb = s->ord[s->cls[set[0]]], ub = lb;
	for (int i = 1; i < k; i++) {
		int o = s->ord[s->cls[set[i]]];
		lb = o < lb ? o : lb;
		ub = o > ub ? o : ub;
	}
	int nf = collect(s, set, k, 1, lb, ub, s->fwd);
	int nbk = collect(s, set, k, -1, lb, ub, s->bwd);
	int np = 0;
	long long *pool = s->keys;
	sort_by_ord(s, s->fwd, nf);
	sort_by_ord(s, s->bwd, nbk);
	/* The pool of positions, sorted (keys is free again). */
	for (int i = 0; i < nbk; i++)
		pool[np++] = s->ord[s->bwd[i]];
	for (int i = 0; i < k; i++) {
		int h = s->cls[set[i]], dup = 0;
		for (int j = 0; j < i; j++)
			dup |= s->cls[set[j]] == h;
		if (!dup)
			pool[np++] = s->ord[h];
	}
	for (int i = 0; i < nf; i++)
		pool[np++] = s->ord[s->fwd[i]];
	qsort(pool, (size_t)np, sizeof *pool, cmp_ll);
	for (int i = 0; i < nbk; i++)
		s->ord[s->bwd[i]] = (int)pool[i];
	for (int i = 0; i < nf; i++)
		s->ord[s->fwd[i]] = (int)pool[np - nf + i];
	return (int)pool[nbk];
}

/* 1 if fusing the set would close a cycle: some member reaches another one
 * in the contracted graph. */
static int would_cycle(fstate *s, const int *set, int k)
{
	int mark = ++s->cur_stamp;
	int qh = 0, qt = 0, ub = s->ord ? 0 : INT_MAX; /* no order: unbounded search */
	for (int i = 0; i < k; i++) {
		int o = s->ord ? s->ord[s->cls[set[i]]] : 0;
		ub = o > ub ? o : ub;
		for (int y = s->cls[set[i]]; y >= 0; y = s->next[y])
			s->in_set[y] = mark;
	}
	for (int i = 0; i < k; i++)
		for (int y = s->cls[set[i]]; y >= 0; y = s->next[y]) {
			const pb_node *nd = &s->g->nodes[y];
			for (int j = 0; j < nd->n_succs; j++) {
				int z = nd->succs[j];
				if (s->in_set[z] == mark)
					return 1;
				/* A class placed after every set member reaches none. */
				if (s->stamp[z] != mark && (!s->ord || s->ord[s->cls[z]] < ub)) {
					s->stamp[z] = mark;
					s->queue[qt++] = z;
				}
			}
		}
	while (qh < qt) {
		int x = s->queue[qh++];
		/* The whole class of x is one vertex of the contracted graph. */
		for (int y = s->cls[x]; y >= 0; y = s->next[y]) {
			if (y != x) {
				if (s->stamp[y] == mark)
					continue;
				s->stamp[y] = mark;
			}
			const pb_node *nd = &s->g->nodes[y];
			for (int j = 0; j < nd->n_succs; j++) {
				int z = nd->succs[j];
				if (s->in_set[z] == mark)
					return 1;
				/* A class placed after every set member reaches none. */
				if (s->stamp[z] != mark && (!s->ord || s->ord[s->cls[z]] < ub)) {
					s->stamp[z] = mark;
					s->queue[qt++] = z;
				}
			}
		}
	}
	return 0;
}

static double gain_of(fstate *s, const int *set, int k)
{
	if (k < 2)
		return 0;
	double solo = 0;
	for (int i = 0; i < k; i++)
		solo += s->solo[set[i]];
	return solo - pb_fuse_set_time(s->m, s->g, set, k);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Merges the singleton classes of set[] into one class whose representative
 * (list head) is the smallest id; members are linked in ascending order. */
static void merge(fstate *s, int *set, int k)
{
	qsort(set, (size_t)k, sizeof *set, cmp_int);
	for (int i = 0; i < k; i++) {
		s->cls[set[i]] = set[0];
		s->next[set[i]] = i + 1 < k ? set[i + 1] : -1;
	}
}

typedef struct front_item {
	int node;
	double per_elem;
} front_item;

static int cmp_front(const void *a, const void *b)
{
	const front_item *x = a, *y = b;
	if (x->per_elem != y->per_elem)
		return x->per_elem < y->per_elem ? -1 : 1;
	return x->node - y->node;
}

typedef struct combo {
	int first, k; /* range in the combo node buffer */
	double gain;
} combo;

static int cmp_combo(const void *a, const void *b)
{
	const combo *x = a, *y = b;
	if (x->gain != y->gain)
		return x->gain > y->gain ? -1 : 1;
	return x->first - y->first;
}

static double per_elem_work(const pb_graph *g, int v)
{
	/* Same convention as the model: work per output element. */
	int one = v;
	pb_fuse_model unit = {0, 1e300, 1, 1e300, 0, 2};
	return pb_fuse_set_time(&unit, g, &one, 1);
}

/* Runs the rounds of one group. Returns PB_OK or an error. */
static int fuse_group(fstate *s, pb_fuse_result *r, int gi, const pb_fuse_opts *o, pb_error *err)
{
	const pb_branch_group *gr = &r->groups->groups[gi];
	int nb = gr->n_branches;
	int *pos = calloc((size_t)nb, sizeof *pos);
	front_item *front = malloc((size_t)nb * sizeof *front);
	int *buf = malloc((size_t)nb * sizeof *buf);
	combo *combos = malloc((size_t)nb * sizeof *combos);
	int *trial = malloc((size_t)(nb + 1) * sizeof *trial);
	int rc = PB_OK;
	if (!pos || !front || !buf || !combos || !trial) {
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory while fusing", s->g->path);
		goto out;
	}
	/* Candidates: fusable nodes of groups with >= 2 fusable sub-branches. */
	int with_fusable = 0, n_fusable = 0;
	for (int b = 0; b < nb; b++) {
		int c = 0;
		for (int i = gr->start[b]; i < gr->start[b + 1]; i++)
			c += r->fusable[gr->nodes[i]];
		with_fusable += c > 0;
		n_fusable += c;
	}
	if (with_fusable >= 2)
		r->candidates += n_fusable;
	for (;;) {
		int nf = 0;
		for (int b = 0; b < nb; b++) {
			int i = gr->start[b] + pos[b];
			while (i < gr->start[b + 1] && !r->fusable[gr->nodes[i]]) {
				i++;
				pos[b]++;
			}
			if (i < gr->start[b + 1]) {
				front[nf].node = gr->nodes[i];
				front[nf].per_elem = per_elem_work(s->g, gr->nodes[i]);
				nf++;
				pos[b]++;
			}
		}
		if (nf < 2)
			break;
		qsort(front, (size_t)nf, sizeof *front, cmp_front);
		/* Greedy cut into combinations. */
		int nc = 0, used = 0;
		int open_first = 0, open_k = 0;
		double open_gain = 0;
		for (int i = 0; i <= nf; i++) {
			if (i < nf && open_k > 0 && open_k < s->m->max_members) {
				memcpy(trial, buf + open_first, (size_t)open_k * sizeof *trial);
				trial[open_k] = front[i].node;
				double gn = gain_of(s, trial, open_k + 1);
				if (gn > open_gain && gn > 0) {
					if (!would_cycle(s, trial, open_k + 1)) {
						buf[used++] = front[i].node;
						open_k++;
						open_gain = gn;
						continue;
					}
					r->rejected_cycle++;
				}
			}
			/* Close the open combination. */
			if (open_k >= 2 && open_gain > s->m->min_gain) {
				combos[nc].first = open_first;
				combos[nc].k = open_k;
				combos[nc].gain = open_gain;
				nc++;
			}
			if (i == nf)
				break;
			open_first = used;
			buf[used++] = front[i].node;
			open_k = 1;
			open_gain = 0;
		}
		qsort(combos, (size_t)nc, sizeof *combos, cmp_combo);
		for (int c = 0; c < nc; c++) {
			int *set = buf + combos[c].first;
			int k = combos[c].k;
			/* Earlier fusions of this round may have created new paths. */
			if (c > 0 && would_cycle(s, set, k)) {
				r->rejected_cycle++;
				continue;
			}
			int pos = reorder_for_merge(s, set, k);
			merge(s, set, k);
			s->ord[s->cls[set[0]]] = pos;
			int fi = r->n_fusions++;
			r->fusion_group[fi] = gi;
			r->fusion_size[fi] = k;
			for (int i = 0; i < k; i++)
				r->fusion_of[set[i]] = fi;
			r->nodes_fused += k;
			r->fused_per_kind[gr->kind] += k;
		}
	}
out:
	free(pos);
	free(front);
	free(buf);
	free(combos);
	free(trial);
	return rc;
}

static char *join_ops(const pb_graph *g, const int *members, int k)
{
	size_t len = 1;
	for (int i = 0; i < k; i++)
		len += strlen(g->nodes[members[i]].op) + 1;
	char *s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (int i = 0; i < k; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, g->nodes[members[i]].op);
	}
	return s;
}

/* Builds the new graph: one node per class, in the order of class heads. */
static int build_graph(const pb_graph *g, fstate *s, pb_fuse_result *r, pb_error *err)
{
	pb_builder *b = pb_builder_new(g->path, "fused");
	if (!b)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	for (int t = 0; t < g->n_tensors; t++) {
		const pb_tensor *tt = &g->tensors[t];
		int id = pb_builder_tensor(b, tt->name);
		pb_builder_set_shape(b, id, tt->dtype, tt->rank, tt->dims, tt->dim_params);
		if (tt->is_initializer)
			pb_builder_initializer(b, id, tt->external_data);
		if (tt->value)
			pb_builder_value(b, id, pb_value_copy(tt->value));
	}
	for (int i = 0; i < g->n_inputs; i++)
		pb_builder_input(b, g->inputs[i]);
	for (int i = 0; i < g->n_outputs; i++)
		pb_builder_output(b, g->outputs[i]);
	for (int i = 0; i < g->n_opsets; i++)
		pb_builder_opset(b, g->opsets[i].domain, g->opsets[i].version);
	if (g->name)
		pb_builder_name(b, g->name);

	int n = g->n_nodes;
	int *members = malloc((size_t)(n + 1) * sizeof *members);
	const char **names = malloc((size_t)(n + 1) * sizeof *names);
	const char **ins = malloc((size_t)(1 + g->n_tensors) * sizeof *ins);
	const char **outs = malloc((size_t)(1 + g->n_tensors) * sizeof *outs);
	int *fo_class = malloc((size_t)(n + 1) * sizeof *fo_class); /* file order -> head */
	int *seen = calloc((size_t)g->n_tensors + 1, sizeof *seen);
	if (!members || !names || !ins || !outs || !fo_class || !seen) {
		free(members);
		free(names);
		free(ins);
		free(outs);
		free(fo_class);
		free(seen);
		pb_builder_free(b);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", g->path);
	}
	int n_new = 0, fused_k = 0, mark = 0;
	for (int v = 0; v < n; v++) {
		if (s->cls[v] != v)
			continue;
		int k = 0;
		for (int y = v; y >= 0; y = s->next[y])
			members[k++] = y;
		int ni = 0, no = 0;
		mark++;
		for (int i = 0; i < k; i++) {
			const pb_node *nd = &g->nodes[members[i]];
			for (int j = 0; j < nd->n_inputs; j++) {
				int t = nd->inputs[j];
				if (k > 1 && (t < 0 || seen[t] == mark))
					continue;
				if (t >= 0)
					seen[t] = mark;
				ins[ni++] = t >= 0 ? g->tensors[t].name : "";
			}
			for (int j = 0; j < nd->n_outputs; j++) {
				int t = nd->outputs[j];
				if (k > 1 && t < 0)
					continue;
				outs[no++] = t >= 0 ? g->tensors[t].name : "";
			}
		}
		const pb_node *h = &g->nodes[v];
		int nid;
		pb_cost c = {0, 0, 0, 0, 0, 0};
		for (int i = 0; i < k; i++) {
			const pb_cost *mc = &g->nodes[members[i]].cost;
			c.macs += mc->macs;
			c.flops += mc->flops;
			c.params += mc->params;
			c.param_bytes += mc->param_bytes;
			c.out_bytes += mc->out_bytes;
			c.in_bytes += mc->in_bytes;
		}
		if (k == 1) {
			nid = pb_builder_node(b, h->name, h->op, h->domain, ins, ni, outs, no);
			for (int a = 0; a < h->n_attrs; a++)
				pb_builder_attr(b, nid, &h->attrs[a]);
			/* a node fused in an earlier pass keeps its members */
			if (h->n_members > 0)
				pb_builder_node_members(b, nid, h->members,
				                        (const char *const *)h->member_names,
				                        h->n_members);
		} else {
			char name[64];
			int suffix = 0;
			do {
				if (suffix)
					snprintf(name, sizeof name, "fused_%d_%d", fused_k, suffix);
				else
					snprintf(name, sizeof name, "fused_%d", fused_k);
				suffix++;
			} while (pb_graph_find_node(g, name) >= 0);
			fused_k++;
			nid = pb_builder_node(b, name, "Fused", "", ins, ni, outs, no);
			for (int i = 0; i < k; i++)
				names[i] = g->nodes[members[i]].name;
			pb_builder_node_members(b, nid, members, names, k);
			char *ops = join_ops(g, members, k);
			pb_attr at = {0};
			at.name = "fused_ops";
			at.type = PB_ATTR_STRING;
			at.s = ops ? ops : "";
			pb_builder_attr(b, nid, &at);
			free(ops);
		}
		pb_builder_node_cost(b, nid, &c);
		fo_class[nid] = v;
		n_new++;
	}
	free(names);
	free(ins);
	free(outs);
	free(seen);
	pb_graph *out = NULL;
	pb_load_opts lo = {NULL, 0, 1};
	int rc = pb_graph_build(b, &lo, &out, err);
	if (rc) {
		free(members);
		free(fo_class);
		pb_err_prefix(err, "building the fused graph");
		return rc;
	}
	/* Map original nodes to new ids; shape_known = all members known. */
	int *head_new = members; /* reuse: class head -> new id */
	for (int i = 0; i < out->n_nodes; i++)
		head_new[fo_class[out->nodes[i].file_order]] = i;
	out->n_unknown_shapes = 0;
	for (int i = 0; i < out->n_nodes; i++)
		out->nodes[i].shape_known = 1;
	for (int v = 0; v < n; v++) {
		int ni = head_new[s->cls[v]];
		r->class_of[v] = ni;
		if (!g->nodes[v].shape_known)
			out->nodes[ni].shape_known = 0;
	}
	for (int i = 0; i < out->n_nodes; i++)
		if (!out->nodes[i].shape_known)
			out->n_unknown_shapes++;
	free(members);
	free(fo_class);
	r->fused = out;
	return PB_OK;
}

int pb_fuse_run(const pb_graph *g, const pb_fuse_opts *o, pb_fuse_result **out, pb_error *err)
{
	*out = NULL;
	pb_fuse_rules defaults;
	const pb_fuse_rules *rules = o->rules;
	if (!rules) {
		pb_fuse_rules_default(&defaults);
		rules = &defaults;
	}
	int n = g->n_nodes;
	size_t sz = (size_t)(n + 1);
	pb_fuse_result *r = calloc(1, sizeof *r);
	fstate s = {g, &o->model, n};
	if (r) {
		r->class_of = malloc(sz * sizeof *r->class_of);
		r->fusion_of = malloc(sz * sizeof *r->fusion_of);
		r->fusion_group = malloc(sz * sizeof *r->fusion_group);
		r->fusion_size = malloc(sz * sizeof *r->fusion_size);
		r->fusable = malloc(sz);
		r->folded = calloc(sz, 1);
	}
	s.cls = malloc(sz * sizeof *s.cls);
	s.next = malloc(sz * sizeof *s.next);
	s.stamp = calloc(sz, sizeof *s.stamp);
	s.in_set = calloc(sz, sizeof *s.in_set);
	s.queue = malloc(sz * sizeof *s.queue);
	s.solo = malloc(sz * sizeof *s.solo);
	s.ord = malloc(sz * sizeof *s.ord);
	s.fwd = malloc(sz * sizeof *s.fwd);
	s.bwd = malloc(sz * sizeof *s.bwd);
	s.keys = malloc(2 * sz * sizeof *s.keys);
	int rc = PB_OK;
	if (!r || !r->class_of || !r->fusion_of || !r->fusion_group || !r->fusion_size ||
	    !r->fusable || !r->folded || !s.cls || !s.next || !s.stamp || !s.in_set || !s.queue ||
	    !s.solo || !s.ord || !s.fwd || !s.bwd || !s.keys) {
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory while fusing", g->path);
		goto done;
	}
	if (o->model.lanes <= 0 || o->model.lane_flops <= 0 || o->model.bandwidth <= 0 ||
	    o->model.max_members < 2) {
		rc = pb_err(err, PB_EUSAGE,
		            "fusion model: lanes, lane_flops and bandwidth must be > 0 and "
		            "max_members >= 2");
		goto done;
	}
	if (!o->keep_constants)
		r->n_folded = pb_transform_folded(g, r->folded);
	for (int v = 0; v < n; v++) {
		r->fusable[v] =
		    (unsigned char)(!r->folded[v] && pb_fuse_rules_fusable(rules, g, v));
		r->fusion_of[v] = -1;
		s.cls[v] = v;
		s.next[v] = -1;
		s.ord[v] = v; /* node ids are topological (model/graph.h) */
		s.solo[v] = r->folded[v] ? 0 : pb_fuse_node_time(&o->model, g, v);
		r->time_before += s.solo[v];
	}
	r->launches_before = n - r->n_folded;
	pb_job_tick();
	rc =
	    pb_branch_extract(g, r->fusable, o->keep_constants ? NULL : r->folded, &r->groups, err);
	if (rc)
		goto done;
	for (int gi = 0; gi < r->groups->n; gi++) {
		const pb_branch_group *gr = &r->groups->groups[gi];
		for (int i = 0; i < gr->start[gr->n_branches]; i++)
			r->nonfusable_removed += !r->fusable[gr->nodes[i]];
	}
	for (int gi = 0; gi < r->groups->n && rc == PB_OK; gi++, pb_job_tick())
		rc = fuse_group(&s, r, gi, o, err);
	if (rc == PB_OK && o->verify_dag && r->n_fusions > 0) {
		/* would_cycle proved each fusion safe; igraph confirms the final
		 * contracted graph once (one O(V + E) check, not one per fusion). */
		int dag = 0;
		rc = pb_quotient_is_dag(g, s.cls, 0, &dag, err);
		r->dag_checks++;
		if (rc == PB_OK && !dag)
			rc = pb_err(err, PB_EINTERNAL,
			            "%s: the %d fusions made the graph cyclic (igraph_is_dag)",
			            g->path, r->n_fusions);
	}
	if (rc)
		goto done;
	/* Modelled time after: one kernel per class. */
	int *set = s.queue;
	for (int v = 0; v < n; v++) {
		if (s.cls[v] != v || r->folded[v])
			continue;
		int k = 0;
		for (int y = v; y >= 0; y = s.next[y])
			set[k++] = y;
		r->time_after += pb_fuse_set_time(&o->model, g, set, k);
		r->launches_after++;
	}
	rc = build_graph(g, &s, r, err);
done:
	free(s.cls);
	free(s.next);
	free(s.stamp);
	free(s.in_set);
	free(s.queue);
	free(s.solo);
	free(s.ord);
	free(s.fwd);
	free(s.bwd);
	free(s.keys);
	if (rc) {
		pb_fuse_result_free(r);
		return rc;
	}
	*out = r;
	return PB_OK;
}

void pb_fuse_result_free(pb_fuse_result *r)
{
	if (!r)
		return;
	pb_graph_free(r->fused);
	free(r->class_of);
	free(r->fusion_of);
	free(r->fusion_group);
	free(r->fusion_size);
	free(r->fusable);
	free(r->folded);
	pb_branch_set_free(r->groups);
	free(r);
}
