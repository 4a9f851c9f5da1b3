/*
 * shard/strategy/strategy_problem.c — building the strategy-selection problem of one scheme:
 * tensor classes, per-operator candidates and costs, shrinking into groups,
 * edges with resharding cost matrices; evaluation of a choice (problem.h).
 *
 * With repeated layers (opts.layers) a middle block's nodes, groups and edges
 * share their representative's tables (strategy_share.c) and the dominance
 * pruning is strategy_prune.c; edge cost matrices are filled after it.
 *
 * Invariants: groups are numbered by their leader's node id order; members of
 * a group are in topological order and every member's activation inputs come
 * from earlier members of the same group or from other groups; pick[s] of a
 * member is its strategy when the group takes strategy s.
 */
#include "shard/strategy/strategy_problem.h"

#include "shard/act_saved.h"
#include "shard/layer_classes.h"
#include "shard/layer_classes_copy.h"
#include "shard/strategy/strategy_prune.h"
#include "shard/strategy/strategy_share.h"
#include "util/job.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODE_STRATS 2048

const char *const pb_recompute_names[3] = {"none", "selective", "full"};

double pb_strategy_problem_train_param_factor(const pb_shard_opts *o, int elem, double r)
{
	if (r < 1)
		r = 1;
	double w = 1, gr = 1, st = 0;
	if (o->optimizer == PB_OPTIM_ADAM)
		st = (8.0 + (elem < 4 ? 4.0 : 0.0)) / (elem > 0 ? elem : 4);
	if (o->zero >= 1)
		st /= r;
	if (o->zero >= 2)
		gr /= r;
	if (o->zero >= 3)
		w /= r;
	return w + gr + st;
}

void pb_strategy_problem_opts_default(pb_shard_opts *o)
{
	memset(o, 0, sizeof *o);
	o->force_fraction = 0.7;
	o->chunk = 48;
}

static int is_key_op(const char *op)
{
	return !strcmp(op, "MatMul") || !strcmp(op, "Gemm") || !strcmp(op, "Conv") ||
	       !strcmp(op, "ConvTranspose") || !strcmp(op, "Einsum");
}

static int is_follower_op(const char *op)
{
	static const char *const f[] = {"Reshape",
	                                "Flatten",
	                                "Squeeze",
	                                "Unsqueeze",
	                                "Transpose",
	                                "Softmax",
	                                "LogSoftmax",
	                                "LayerNormalization",
	                                "BatchNormalization",
	                                "InstanceNormalization",
	                                "MaxPool",
	                                "AveragePool",
	                                "GlobalAveragePool",
	                                "GlobalMaxPool",
	                                "Slice",
	                                "Pad",
	                                "Resize",
	                                "LRN",
	                                NULL};
	if (pb_spec_is_elementwise(op))
		return 1;
	for (int i = 0; f[i]; i++)
		if (!strcmp(op, f[i]))
			return 1;
	return 0;
}

double pb_strategy_problem_node_flops(const pb_graph *g, const pb_node *n)
{
	if (n->cost.flops > 0)
		return n->cost.flops;
	const pb_tensor *o = n->n_outputs && n->outputs[0] >= 0 ? &g->tensors[n->outputs[0]] : NULL;
	double on = o ? (double)pb_tensor_numel(o) : 0;
	if (on < 0)
		on = 0;
	const pb_tensor *a =
	    n->n_inputs > 0 && n->inputs[0] >= 0 ? &g->tensors[n->inputs[0]] : NULL;
	const pb_tensor *b =
	    n->n_inputs > 1 && n->inputs[1] >= 0 ? &g->tensors[n->inputs[1]] : NULL;
	if (!strcmp(n->op, "MatMul") && a && a->rank >= 1 && a->dims[a->rank - 1] > 0)
		return 2.0 * on * (double)a->dims[a->rank - 1];
	if (!strcmp(n->op, "Gemm") && a && a->rank == 2) {
		int64_t k = pb_node_attr_int(n, "transA", 0) ? a->dims[0] : a->dims[1];
		return k > 0 ? 2.0 * on * (double)k : on;
	}
	if (!strcmp(n->op, "Conv") && b && b->rank >= 3) {
		double k = 1;
		for (int i = 1; i < b->rank; i++)
			k *= b->dims[i] > 0 ? (double)b->dims[i] : 1;
		return 2.0 * on * k;
	}
	if (!strncmp(n->op, "Reduce", 6) && a) {
		double an = (double)pb_tensor_numel(a);
		return an > 0 ? an : on;
	}
	return on;
}

static int add_edge(pb_shard_problem *p, const pb_shard_edge *e)
{
	if (p->n_edges == p->cap_edges) {
		int nc = p->cap_edges ? p->cap_edges * 2 : 64;
		pb_shard_edge *ne = realloc(p->edges, (size_t)nc * sizeof *ne);
		if (!ne)
			return -1;
		p->edges = ne;
		p->cap_edges = nc;
	}
	p->edges[p->n_edges] = *e;
	p->edges[p->n_edges++].twin = -1;
	return 0;
}

static void classify(pb_shard_problem *p)
{
	const pb_graph *g = p->g;
	for (int t = 0; t < g->n_tensors; t++) {
		const pb_tensor *tt = &g->tensors[t];
		p->tkind[t] = tt->is_input && !tt->is_initializer ? PB_TKIND_ACT : PB_TKIND_META;
	}
	for (int i = 0; i < g->n_nodes; i++) {
		const pb_node *n = &g->nodes[i];
		int dynamic = 0;
		for (int k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] >= 0 && p->tkind[n->inputs[k]] == PB_TKIND_ACT)
				dynamic = 1;
		if (!strcmp(n->op, "Shape") || !strcmp(n->op, "Size"))
			dynamic = 0;
		p->nodes[i].active = dynamic && (!p->opts.mask || p->opts.mask[i]);
		for (int k = 0; k < n->n_outputs; k++)
			if (n->outputs[k] >= 0)
				p->tkind[n->outputs[k]] = dynamic ? PB_TKIND_ACT : PB_TKIND_META;
	}
	/* Static float tensors consumed by active operators are parameters. */
	for (int t = 0; t < g->n_tensors; t++) {
		const pb_tensor *tt = &g->tensors[t];
		if (p->tkind[t] != PB_TKIND_META || !pb_dtype_is_float(tt->dtype))
			continue;
		for (int c = 0; c < tt->n_consumers; c++)
			if (p->nodes[tt->consumers[c]].active) {
				p->tkind[t] = PB_TKIND_PARAM;
				break;
			}
	}
	p->param_bytes = 0;
	for (int t = 0; t < g->n_tensors; t++)
		if (p->tkind[t] == PB_TKIND_PARAM)
			p->param_bytes += pb_tensor_bytes(&g->tensors[t]);
	if (!p->param_owner)
		return;
	/* a parameter used by several operators (tied embedding and head) is held
	 * once: by its first active consumer */
	for (int t = 0; t < g->n_tensors; t++) {
		p->param_owner[t] = -1;
		const pb_tensor *tt = &g->tensors[t];
		for (int c = 0; c < tt->n_consumers && p->tkind[t] == PB_TKIND_PARAM; c++) {
			int v = tt->consumers[c];
			if (p->nodes[v].active && (p->param_owner[t] < 0 || v < p->param_owner[t]))
				p->param_owner[t] = v;
		}
	}
}

/* Activation recomputation (opts.recompute, training): selective marks the
 * attention core (Korthikanti et al. 2022: QK^T, its scaling, softmax and
 * the product with V: batched MatMuls of two activations, Softmax, and
 * element-wise operators on their outputs); full marks every node of a
 * repeated block (layer_classes.h) and keeps only the blocks' last outputs,
 * plus the whole first block with an active node: one layer's activations
 * live while a layer is recomputed, once (not per micro-batch in flight:
 * they count with the weights, mem_param). Recomputed nodes run their
 * forward pass once more. */
double pb_strategy_problem_grad_sync(const pb_shard_opts *o, double b, int d, const pb_link *l,
                                     int *kinds, double *times, int *n)
{
	int k[2] = {PB_COLL_ALLREDUCE, PB_COLL_NONE}, nk = 1;
	if (o->zero == 1 || o->zero == 2) {
		k[0] = PB_COLL_REDUCESCATTER;
		k[1] = PB_COLL_ALLGATHER;
		nk = 2;
	}
	double total = 0;
	for (int i = 0; i < nk; i++) {
		/* the two phases of the ring all-reduce: its one start-up latency
		 * shared between them */
		double t =
		    pb_spec_coll_time(k[i], b, d, l) - (nk == 2 && d > 1 ? l->latency / 2 : 0);
		total += t;
		if (kinds)
			kinds[i] = k[i];
		if (times)
			times[i] = t;
	}
	if (n)
		*n = nk;
	return total;
}

int pb_strategy_problem_trainable(const pb_shard_problem *p, int t)
{
	return t >= 0 && p->tkind[t] == PB_TKIND_PARAM && pb_tensor_numel(&p->g->tensors[t]) >= 2;
}

double pb_strategy_problem_comm_mult(const pb_shard_problem *p, int cons)
{
	return p->comm_mult + (p->opts.train && p->nodes[cons].recomputed ? 1.0 : 0.0);
}

static int need_full(const pb_shard_opts *o)
{
	return o->train && o->recompute != PB_RECOMP_NONE && o->recompute != PB_RECOMP_SELECTIVE;
}

/* lc: the repeated layers (needed for full recomputation) */
static void mark_recompute(pb_shard_problem *p, const pb_layer_classes *lc)
{
	const pb_graph *g = p->g;
	if (!p->opts.train || p->opts.recompute == PB_RECOMP_NONE)
		return;
	if (p->opts.recompute == PB_RECOMP_SELECTIVE) {
		for (int i = 0; i < g->n_nodes; i++) {
			const pb_node *n = &g->nodes[i];
			pb_shard_node *sn = &p->nodes[i];
			if (!sn->active)
				continue;
			int acts = 0, from_core = 1;
			for (int k = 0; k < n->n_inputs; k++) {
				int t = n->inputs[k];
				if (t < 0 || p->tkind[t] != PB_TKIND_ACT)
					continue;
				acts++;
				int pr = g->tensors[t].producer;
				if (pr < 0 || !p->nodes[pr].recomputed)
					from_core = 0;
			}
			if (!strcmp(n->op, "Softmax") || (!strcmp(n->op, "MatMul") && acts == 2))
				sn->recomputed = 1;
			else if (acts == 1 && from_core && pb_spec_is_elementwise(n->op))
				sn->recomputed = 1;
		}
		return;
	}
	/* the working block: the first block with an active node (a pipeline
	 * stage's first layer, block 0 of the whole model) */
	int w0 = -1;
	for (int i = 0; i < g->n_nodes && w0 < 0; i++)
		if (p->nodes[i].active && lc->block[i] >= 0)
			w0 = i;
	for (int i = 0, inw = w0 >= 0; i < g->n_nodes; i++) {
		if (inw && i > w0 && lc->block[i] >= 0 && lc->block[i] != lc->block[w0])
			inw = 0;
		if (!p->nodes[i].active || lc->block[i] < 0)
			continue;
		p->nodes[i].recomputed = 1;
		p->nodes[i].kept_full = lc->block_end[i] ? 1 : (inw && i >= w0 ? 2 : 0);
	}
}

void pb_strategy_problem_dynamic_nodes(const pb_graph *g, unsigned char *active)
{
	pb_shard_problem tmp;
	memset(&tmp, 0, sizeof tmp);
	tmp.g = g;
	tmp.tkind = calloc((size_t)g->n_tensors + 1, 1);
	tmp.nodes = calloc((size_t)g->n_nodes + 1, sizeof *tmp.nodes);
	if (tmp.tkind && tmp.nodes) {
		classify(&tmp);
		for (int i = 0; i < g->n_nodes; i++)
			active[i] = (unsigned char)tmp.nodes[i].active;
	} else {
		memset(active, 1, (size_t)g->n_nodes);
	}
	free(tmp.tkind);
	free(tmp.nodes);
}

static int is_param_weight(const pb_shard_problem *p, int tid)
{
	const pb_tensor *t = &p->g->tensors[tid];
	return p->tkind[tid] == PB_TKIND_PARAM && t->rank >= 2 && pb_tensor_numel(t) >= 2;
}

/* Output spec with partial axes reduced (model outputs must be complete). */
static double output_reduce_cost(const pb_mesh *m, const pb_tensor *t, const signed char *spec)
{
	signed char to[PB_MESH_MAX_AXES];
	int any = 0;
	for (int a = 0; a < PB_MESH_MAX_AXES; a++) {
		to[a] = spec[a] == PB_SPEC_P ? PB_SPEC_R : spec[a];
		any |= spec[a] == PB_SPEC_P;
	}
	return any ? pb_spec_reshard_cost_tensor(m, t, spec, to, NULL, NULL) : 0;
}

/* One device's time for the whole node: its FLOPs at the cluster's rate, or
 * when the layout gives the device memory bandwidth the longer of that and
 * its bytes (activations in and out, weights) at that bandwidth: the
 * roofline model (Williams, Waterman, Patterson, CACM 52(4), 2009), so
 * element-wise operators, softmax and normalisations cost their memory
 * traffic. Operators that only relabel a tensor move no bytes. */
double pb_strategy_problem_node_time(const pb_cluster *cl, const pb_node *n, double fl)
{
	double t = fl / cl->flops;
	static const char *const view[] = {"Reshape",   "Flatten",  "Squeeze",
	                                   "Unsqueeze", "Identity", "Shape"};
	if (cl->mem_bw <= 0)
		return t;
	for (size_t i = 0; i < sizeof view / sizeof *view; i++)
		if (!strcmp(n->op, view[i]))
			return t;
	const pb_cost *c = &n->cost;
	double by = (isfinite(c->in_bytes) ? c->in_bytes : 0) +
	            (isfinite(c->out_bytes) ? c->out_bytes : 0) +
	            (isfinite(c->param_bytes) ? c->param_bytes : 0);
	double tm = by / cl->mem_bw;
	return tm > t ? tm : t;
}

static double node_time(const pb_shard_problem *p, const pb_node *n, double fl)
{
	return pb_strategy_problem_node_time(&p->cl, n, fl);
}

/* Bytes per device output j of node nid holds under strategy st (0: not
 * kept); *once: held once, with the weights (the working block of full
 * recomputation, alive while one layer is recomputed, not once per
 * micro-batch in flight). Training keeps what the backward pass needs
 * (act_saved.h), the boundaries of full recomputation's blocks, and with
 * seqpar (sequence parallelism) an eligible operator's replicated output
 * split over its replicated axes. Inference: every output. */
static double out_held(const pb_shard_problem *p, int nid, const pb_strat *st, int j, int seqpar,
                       int *once)
{
	const pb_graph *g = p->g;
	const pb_shard_node *sn = &p->nodes[nid];
	const pb_mesh *m = &p->mesh;
	int t = g->nodes[nid].outputs[j], full = p->opts.recompute == PB_RECOMP_FULL;
	*once = 0;
	int keep = !sn->recomputed || (full && sn->kept_full);
	if (p->opts.train)
		keep = keep && ((sn->saved_out >> j & 1) || (full && sn->kept_full == 1));
	if (!keep || t < 0)
		return 0;
	*once = sn->recomputed && full && sn->kept_full == 2;
	const pb_tensor *tt = &g->tensors[t];
	double by = pb_tensor_bytes(tt) * pb_spec_pad_factor(tt, st->out[j], m) /
	            pb_spec_shrink(st->out[j], m);
	if (p->opts.train && seqpar && sn->seqpar)
		for (int a = 0; a < m->n_axes; a++)
			if (st->out[j][a] == PB_SPEC_R)
				by /= m->size[a];
	return by;
}

void pb_strategy_problem_seq_parallel_saved(const pb_shard_problem *p, const int *choice,
                                            double *act, double *once)
{
	*act = *once = 0;
	if (!p->opts.train || p->opts.seq_parallel == PB_SEQPAR_OFF)
		return;
	for (int v = 0; v < p->g->n_nodes; v++) {
		int k = pb_strategy_problem_node_strategy(p, choice, v);
		if (k < 0 || !p->nodes[v].seqpar)
			continue;
		const pb_strat *st = &p->nodes[v].strat[k];
		for (int j = 0; j < p->g->nodes[v].n_outputs && j < PB_SHARD_MAX_OUT; j++) {
			int o1, o0;
			double d = out_held(p, v, st, j, 0, &o0) - out_held(p, v, st, j, 1, &o1);
			*(o0 ? once : act) += d;
		}
	}
}

/* Node v takes node r's tables (pb_strategy_share_node_alike holds). */
static void share_node(pb_shard_problem *p, int v, int r)
{
	pb_shard_node *a = &p->nodes[v];
	const pb_shard_node *b = &p->nodes[r];
	a->same_as = r;
	a->dyn_in = b->dyn_in;
	a->n_strat = b->n_strat;
	a->strat = b->strat;
	a->cost = b->cost;
	a->flops_part = b->flops_part;
	a->mem_param = b->mem_param;
	a->mem_act = b->mem_act;
}

static int build_node(pb_shard_problem *p, int nid, pb_strat1 *menu_buf, pb_error *err)
{
	const pb_graph *g = p->g;
	const pb_node *n = &g->nodes[nid];
	pb_shard_node *sn = &p->nodes[nid];
	const pb_mesh *m = &p->mesh;
	unsigned dyn = 0;
	for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++)
		if (n->inputs[i] >= 0 && p->tkind[n->inputs[i]] == PB_TKIND_ACT)
			dyn |= 1u << i;
	sn->dyn_in = dyn;
	int nm = pb_spec_menu(g, nid, dyn, menu_buf, 64);
	pb_strat *all = malloc(MAX_NODE_STRATS * sizeof *all);
	if (!all)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	int ns = pb_spec_combine(g, nid, m, menu_buf, nm, p->opts.pad, all, MAX_NODE_STRATS);
	if (ns == 0) { /* cannot happen: replicate is always valid; keep it safe */
		pb_strat1 rep = menu_buf[0];
		ns = pb_spec_combine(g, nid, m, &rep, 1, 0, all, 1);
	}
	if (p->forced) {
		int w = 0;
		for (int s = 0; s < ns; s++) {
			int ok = 1;
			for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++)
				if (n->inputs[i] >= 0 && is_param_weight(p, n->inputs[i]) &&
				    pb_spec_shrink(all[s].in[i], m) <= 1)
					ok = 0;
			if (ok)
				all[w++] = all[s];
		}
		if (w > 0)
			ns = w;
	}
	if (p->opts.filters)
		ns = pb_rules_filter(p->opts.filters, g, nid, all, ns, m);
	if (p->opts.opt_level >= 1 && p->opts.rules)
		ns = pb_rules_filter(p->opts.rules, g, nid, all, ns, m);
	sn->n_strat = ns;
	sn->strat = malloc((size_t)ns * sizeof *all);
	if (!sn->strat) {
		free(all);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	memcpy(sn->strat, all, (size_t)ns * sizeof *all);
	free(all);
	sn->cost = calloc((size_t)ns, sizeof(double));
	sn->flops_part = calloc((size_t)ns, sizeof(double));
	sn->mem_param = calloc((size_t)ns, sizeof(double));
	sn->mem_act = calloc((size_t)ns, sizeof(double));
	if (!sn->cost || !sn->flops_part || !sn->mem_param || !sn->mem_act)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	double fl = pb_strategy_problem_node_flops(g, n);
	double t1 = node_time(p, n, fl);
	double cmult = p->compute_mult + (p->opts.train && sn->recomputed ? 1.0 : 0.0);
	for (int s = 0; s < ns; s++) {
		const pb_strat *st = &sn->strat[s];
		double comp = t1 / st->share * st->pad * cmult;
		/* sequence parallelism runs a replicated layer norm, residual add
		 * or element-wise operator on its 1/n of the sequence on each of
		 * the n devices it is replicated over (Korthikanti et al. 2022,
		 * section 4.2.2): its work divided as its stored output is
		 * (out_held). Only under --seq-parallel on: under auto the MILP
		 * is solved before the option is settled (memory_options.h), so
		 * its times stay those without it (conservative when it is
		 * turned on). */
		if (p->opts.train && p->opts.seq_parallel == PB_SEQPAR_ON && sn->seqpar)
			for (int a = 0; a < m->n_axes; a++)
				if (n->n_outputs > 0 && st->out[0][a] == PB_SPEC_R)
					comp /= m->size[a];
		double c = comp;
		double mp = 0, ma = 0;
		for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++) {
			int t = n->inputs[i];
			if (t < 0 || p->tkind[t] != PB_TKIND_PARAM ||
			    (p->param_owner && p->param_owner[t] != nid))
				continue;
			double by = pb_tensor_bytes(&g->tensors[t]) *
			            pb_spec_pad_factor(&g->tensors[t], st->in[i], m);
			double local = by / pb_spec_shrink(st->in[i], m);
			double reps = 1; /* replicas of this shard: the replicated axes */
			for (int a = 0; a < m->n_axes; a++)
				if (st->in[i][a] == PB_SPEC_R)
					reps *= m->size[a];
			if (!p->opts.train || !pb_strategy_problem_trainable(p, t))
				mp += local; /* held, no gradient nor optimizer state */
			else if (p->opts.optimizer == PB_OPTIM_NONE && p->opts.zero == 0)
				mp += 2 * local; /* weights and gradients */
			else
				mp +=
				    local * pb_strategy_problem_train_param_factor(
				                &p->opts, pb_dtype_size(g->tensors[t].dtype), reps);
			if (p->opts.train && pb_strategy_problem_trainable(p, t))
				for (int a = 0; a < m->n_axes; a++) {
					if (st->in[i][a] != PB_SPEC_R)
						continue;
					double b = by;
					for (int j = 0; j < m->n_axes; j++)
						if (j != a && st->in[i][j] >= 0)
							b /= m->size[j];
					c += pb_strategy_problem_grad_sync(
					    &p->opts, b, m->size[a], &m->link[a], NULL, NULL, NULL);
					/* ZeRO-3 gathers the weights before use: one more
					 * all-gather (1.5x the all-reduce volume) */
					if (p->opts.zero >= 3)
						c += pb_spec_coll_time(PB_COLL_ALLGATHER, b,
						                       m->size[a], &m->link[a]);
				}
		}
		for (int j = 0; j < n->n_outputs && j < PB_SHARD_MAX_OUT; j++) {
			int t = n->outputs[j];
			if (t < 0)
				continue;
			int once;
			double held = out_held(p, nid, st, j, p->opts.seq_parallel, &once);
			if (once)
				mp += held;
			else
				ma += held;
			if (g->tensors[t].is_output)
				c += output_reduce_cost(m, &g->tensors[t], st->out[j]);
		}
		sn->cost[s] = c;
		sn->flops_part[s] = comp;
		sn->mem_param[s] = mp;
		sn->mem_act[s] = ma;
	}
	return PB_OK;
}

/* Output slot of node p that produces tensor t. */
static int out_slot(const pb_node *n, int t)
{
	for (int j = 0; j < n->n_outputs && j < PB_SHARD_MAX_OUT; j++)
		if (n->outputs[j] == t)
			return j;
	return -1;
}

static int in_slot(const pb_node *n, int t)
{
	for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++)
		if (n->inputs[i] == t)
			return i;
	return -1;
}

static void form_groups(pb_shard_problem *p)
{
	const pb_graph *g = p->g;
	int lvl = p->opts.opt_level;
	for (int i = 0; i < g->n_nodes; i++) {
		pb_shard_node *sn = &p->nodes[i];
		sn->group = -1;
		if (!sn->active)
			continue;
		sn->group = i;
		if (p->opts.no_shrink)
			continue;
		const pb_node *n = &g->nodes[i];
		int src_group = -1, src_node = -1, same_group = 1, same_node = 1, n_act = 0;
		for (int k = 0; k < n->n_inputs && k < PB_SHARD_MAX_IN; k++) {
			int t = n->inputs[k];
			if (t < 0 || p->tkind[t] != PB_TKIND_ACT)
				continue;
			int pr = g->tensors[t].producer;
			if (pr < 0 || !p->nodes[pr].active || out_slot(&g->nodes[pr], t) < 0) {
				same_group = same_node = 0;
				break;
			}
			n_act++;
			if (src_node < 0)
				src_node = pr;
			else if (src_node != pr)
				same_node = 0;
			int gr = p->nodes[pr].group;
			if (src_group < 0)
				src_group = gr;
			else if (src_group != gr)
				same_group = 0;
		}
		if (n_act == 0 || n->n_inputs > PB_SHARD_MAX_IN)
			continue;
		int key = is_key_op(n->op);
		if (same_node && is_follower_op(n->op))
			sn->group = p->nodes[src_node].group;
		else if (lvl >= 2 && same_group && !key)
			sn->group = src_group;
	}
}

/* rep: per node its representative (layer_classes.h) when a middle block's
 * groups may share their representative's tables, else NULL */
static int build_groups(pb_shard_problem *p, const int *rep, pb_error *err)
{
	const pb_graph *g = p->g;
	const pb_mesh *m = &p->mesh;
	int *gid = malloc((size_t)(g->n_nodes + 1) * sizeof *gid);
	if (!gid)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	int ng = 0;
	for (int i = 0; i < g->n_nodes; i++)
		gid[i] = p->nodes[i].active && p->nodes[i].group == i ? ng++ : -1;
	p->groups = calloc((size_t)(ng ? ng : 1), sizeof *p->groups);
	if (!p->groups) {
		free(gid);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	p->n_groups = ng;
	for (int i = 0; i < g->n_nodes; i++) {
		if (!p->nodes[i].active)
			continue;
		int G = gid[p->nodes[i].group];
		p->nodes[i].group = G;
		pb_shard_group *gr = &p->groups[G];
		if (gr->n_members == 0) {
			gr->leader = i;
			gr->members = malloc(sizeof(int));
		} else {
			gr->members =
			    realloc(gr->members, (size_t)(gr->n_members + 1) * sizeof(int));
		}
		gr->members[gr->n_members++] = i;
	}
	free(gid);
	for (int G = 0; G < ng; G++) {
		pb_job_tick(); /* run as a workbench job: the screen stays live */
		pb_shard_group *gr = &p->groups[G];
		gr->tie = -1;
		gr->fixed = -1;
		gr->same_as = -1;
		int S = p->nodes[gr->leader].n_strat;
		gr->n_strat = S;
		int H = rep ? pb_strategy_share_group_twin(p, G, rep) : -1;
		if (H >= 0) {
			const pb_shard_group *hr = &p->groups[H];
			gr->same_as = H;
			gr->cost = hr->cost;
			gr->mem_param = hr->mem_param;
			gr->mem_act = hr->mem_act;
			for (int k = 0; k < gr->n_members; k++) {
				pb_shard_node *sn = &p->nodes[gr->members[k]];
				sn->pick = p->nodes[hr->members[k]].pick;
				sn->pick_shared = 1;
			}
			p->n_shared_groups++;
			continue;
		}
		gr->cost = calloc((size_t)S, sizeof(double));
		gr->mem_param = calloc((size_t)S, sizeof(double));
		gr->mem_act = calloc((size_t)S, sizeof(double));
		for (int k = 0; k < gr->n_members; k++) {
			pb_shard_node *sn = &p->nodes[gr->members[k]];
			sn->pick = malloc((size_t)S * sizeof(int));
		}
		for (int s = 0; s < S; s++) {
			for (int k = 0; k < gr->n_members; k++) {
				int v = gr->members[k];
				pb_shard_node *sv = &p->nodes[v];
				const pb_node *nv = &g->nodes[v];
				int best = 0;
				double bestc = INFINITY;
				if (k == 0) {
					best = s;
					bestc = sv->cost[s];
				} else {
					/* Follow exactly when a strategy takes the producers' specs
					 * as they are (no conversion); otherwise the cheapest
					 * conversion + work. */
					int best_exact = -1;
					double bestc_exact = INFINITY;
					for (int t = 0; t < sv->n_strat; t++) {
						double c = sv->cost[t];
						int exact = 1;
						for (int i = 0;
						     i < nv->n_inputs && i < PB_SHARD_MAX_IN; i++) {
							int tt = nv->inputs[i];
							if (tt < 0 || p->tkind[tt] != PB_TKIND_ACT)
								continue;
							int pr = g->tensors[tt].producer;
							const pb_shard_node *sp = &p->nodes[pr];
							int j = out_slot(&g->nodes[pr], tt);
							const signed char *from =
							    sp->strat[sp->pick[s]].out[j];
							const signed char *to = sv->strat[t].in[i];
							if (memcmp(from, to, (size_t)m->n_axes))
								exact = 0;
							c += pb_spec_reshard_cost_tensor(
							         m, &g->tensors[tt], from, to, NULL,
							         NULL) *
							     pb_strategy_problem_comm_mult(p, v);
						}
						if (exact &&
						    (c < bestc_exact - 1e-15 ||
						     (c <= bestc_exact + 1e-15 && best_exact >= 0 &&
						      sv->strat[t].share >
						          sv->strat[best_exact].share))) {
							bestc_exact = c;
							best_exact = t;
						}
						if (c < bestc - 1e-15 ||
						    (c <= bestc + 1e-15 &&
						     sv->strat[t].share > sv->strat[best].share)) {
							bestc = c;
							best = t;
						}
					}
					if (best_exact >= 0) {
						best = best_exact;
						bestc = bestc_exact;
					}
				}
				sv->pick[s] = best;
				gr->cost[s] += bestc;
				gr->mem_param[s] += sv->mem_param[best];
				gr->mem_act[s] += sv->mem_act[best];
			}
		}
	}
	return PB_OK;
}

static int spec_index(signed char (*specs)[PB_MESH_MAX_AXES], int *n, const signed char *s)
{
	for (int i = 0; i < *n; i++)
		if (memcmp(specs[i], s, PB_MESH_MAX_AXES) == 0)
			return i;
	memcpy(specs[*n], s, PB_MESH_MAX_AXES);
	return (*n)++;
}

/* Frees a candidate edge's arrays; PB_ENOMEM when err is given. */
static int edge_fail(pb_shard_edge *e, pb_error *err)
{
	free(e->a_of);
	free(e->b_of);
	free(e->as);
	free(e->bs);
	return err ? pb_err(err, PB_ENOMEM, "shard: out of memory") : PB_OK;
}

/* 1 when two edges of one tensor (same specs a) have equal cost matrices,
 * -1 out of memory. */
static int same_costs(const pb_shard_problem *p, const pb_shard_edge *f, const pb_shard_edge *e)
{
	if (f->mult != e->mult)
		return 0;
	if (!memcmp(f->bs, e->bs, (size_t)e->nb * PB_MESH_MAX_AXES))
		return 1;
	size_t n = (size_t)e->na * e->nb + 1;
	double *cf = malloc(n * sizeof *cf), *ce = malloc(n * sizeof *ce);
	int same = -1;
	if (cf && ce) {
		pb_strategy_share_edge_matrix(p, f->tensor, f->mult, f->as, f->na, f->bs, f->nb,
		                              cf);
		pb_strategy_share_edge_matrix(p, e->tensor, e->mult, e->as, e->na, e->bs, e->nb,
		                              ce);
		same = !memcmp(cf, ce, (n - 1) * sizeof *cf);
	}
	free(cf);
	free(ce);
	return same;
}

static int build_edges(pb_shard_problem *p, pb_error *err)
{
	const pb_graph *g = p->g;
	for (int c = 0; c < g->n_nodes; c++) {
		const pb_shard_node *sc = &p->nodes[c];
		if (!sc->active)
			continue;
		pb_job_tick();
		const pb_node *nc = &g->nodes[c];
		for (int i = 0; i < nc->n_inputs && i < PB_SHARD_MAX_IN; i++) {
			int t = nc->inputs[i];
			/* a parameter used by several operators (a tied embedding) is
			 * stored in its owner's layout: another user whose layout
			 * differs pays the resharding (and, training, its gradient's
			 * way back), as an edge from the owner */
			int tied = t >= 0 && p->tkind[t] == PB_TKIND_PARAM && p->param_owner &&
			           p->param_owner[t] >= 0 && p->param_owner[t] != c;
			if (t < 0 || (p->tkind[t] != PB_TKIND_ACT && !tied))
				continue;
			int pr = tied ? p->param_owner[t] : g->tensors[t].producer;
			if (pr < 0 || !p->nodes[pr].active)
				continue;
			const pb_shard_node *sp = &p->nodes[pr];
			if (sp->group == sc->group)
				continue;
			int j = tied ? in_slot(&g->nodes[pr], t) : out_slot(&g->nodes[pr], t);
			if (j < 0)
				continue;
			const pb_shard_group *GF = &p->groups[sp->group],
			                     *GT = &p->groups[sc->group];
			pb_shard_edge e = {0};
			e.from = sp->group;
			e.to = sc->group;
			e.prod = pr;
			e.cons = c;
			e.tensor = t;
			e.slot = i;
			e.bytes = pb_tensor_bytes(&g->tensors[t]);
			e.mult = pb_strategy_problem_comm_mult(p, c);
			e.a_of = malloc((size_t)GF->n_strat * sizeof(int));
			e.b_of = malloc((size_t)GT->n_strat * sizeof(int));
			signed char(*as)[PB_MESH_MAX_AXES] =
			    calloc((size_t)GF->n_strat, PB_MESH_MAX_AXES);
			signed char(*bs)[PB_MESH_MAX_AXES] =
			    calloc((size_t)GT->n_strat, PB_MESH_MAX_AXES);
			if (!e.a_of || !e.b_of || !as || !bs) {
				free(e.a_of);
				free(e.b_of);
				free(as);
				free(bs);
				return pb_err(err, PB_ENOMEM, "shard: out of memory");
			}
			for (int s = 0; s < GF->n_strat; s++) {
				signed char sp_[PB_MESH_MAX_AXES];
				memset(sp_, PB_SPEC_R, sizeof sp_);
				const pb_strat *sa = &sp->strat[sp->pick[s]];
				memcpy(sp_, tied ? sa->in[j] : sa->out[j], (size_t)p->mesh.n_axes);
				e.a_of[s] = spec_index(as, &e.na, sp_);
			}
			for (int s = 0; s < GT->n_strat; s++) {
				signed char sp_[PB_MESH_MAX_AXES];
				memset(sp_, PB_SPEC_R, sizeof sp_);
				memcpy(sp_, sc->strat[sc->pick[s]].in[i], (size_t)p->mesh.n_axes);
				e.b_of[s] = spec_index(bs, &e.nb, sp_);
			}
			/* the cost matrix comes after the pruning (pb_strategy_share_edge_costs) */
			e.as = as;
			e.bs = bs;
			/* Two consumers in one group needing the same layout of one tensor
			 * share one conversion. */
			int dup = 0;
			for (int k = p->n_edges - 1; k >= 0 && k >= p->n_edges - 8 && !dup; k--) {
				const pb_shard_edge *f = &p->edges[k];
				if (f->from == e.from && f->to == e.to && f->tensor == e.tensor &&
				    f->nb == e.nb && f->na == e.na &&
				    memcmp(f->b_of, e.b_of, (size_t)GT->n_strat * sizeof(int)) == 0)
					dup = same_costs(p, f, &e);
			}
			if (dup < 0)
				return edge_fail(&e, err);
			if (dup) {
				edge_fail(&e, NULL);
				continue;
			}
			if (add_edge(p, &e))
				return edge_fail(&e, err);
		}
	}
	return PB_OK;
}

static void tie_groups(pb_shard_problem *p)
{
	const pb_graph *g = p->g;
	for (int G = 0; G < p->n_groups; G++) {
		pb_job_tick();
		pb_shard_group *a = &p->groups[G];
		for (int H = 0; H < G; H++) {
			const pb_shard_group *b = &p->groups[H];
			if (b->tie >= 0 || b->n_strat != a->n_strat || b->n_members != a->n_members)
				continue;
			int same = 1;
			for (int k = 0; k < a->n_members && same; k++)
				same =
				    !strcmp(g->nodes[a->members[k]].op, g->nodes[b->members[k]].op);
			for (int s = 0; s < a->n_strat && same; s++)
				same = fabs(a->cost[s] - b->cost[s]) <=
				           1e-9 * fabs(b->cost[s]) + 1e-15 &&
				       fabs(a->mem_param[s] - b->mem_param[s]) < 0.5;
			if (same) {
				a->tie = H;
				break;
			}
		}
	}
}

/* Same strategies, costs and memory (a tie must not change the problem). */
static int groups_alike(const pb_shard_problem *p, const pb_shard_group *a, const pb_shard_group *b,
                        const int *rep)
{
	if (a->n_strat != b->n_strat || a->n_members != b->n_members)
		return 0;
	for (int k = 0; k < a->n_members; k++)
		if (rep[a->members[k]] != rep[b->members[k]])
			return 0;
	for (int s = 0; s < a->n_strat; s++) {
		if (fabs(a->cost[s] - b->cost[s]) > 1e-9 * fabs(b->cost[s]) + 1e-15 ||
		    fabs(a->mem_param[s] - b->mem_param[s]) > 0.5 ||
		    fabs(a->mem_act[s] - b->mem_act[s]) > 0.5)
			return 0;
		for (int k = 0; k < a->n_members; k++)
			if (p->nodes[a->members[k]].pick[s] != p->nodes[b->members[k]].pick[s])
				return 0;
	}
	return 1;
}

static int tie_of(const pb_shard_problem *p, int G)
{
	return p->groups[G].tie >= 0 ? p->groups[G].tie : G;
}

/* Repeated layers (opts.layers): a group of block j >= 1 is tied to the group
 * at the same offset of the first block when both are alike; then edges
 * between the same tied groups with the same spec maps share their y
 * columns (twin). Both are exact for the tied problem: y of such edges is
 * the same product of the same x's in every integer solution. */
/* A pipeline chunk (opts.mask) holds blocks jf..jl of a run: its first and
 * last block meet the chunk's edges, so the middle class is jf+1..jl-1 with
 * block jf+1 its representative (the whole graph: 0..count-1, block 1). */
static int rep_in_mask(const pb_shard_problem *p, pb_layer_classes *lc, pb_error *err)
{
	int n = p->g->n_nodes;
	int *map = p->opts.mask ? malloc(((size_t)n + 1) * sizeof(int)) : NULL;
	if (!map)
		return p->opts.mask ? pb_err(err, PB_ENOMEM, "shard: out of memory") : PB_OK;
	for (int k = 0; k < lc->n_runs; k++) {
		int a = lc->runs[k].start, b = k + 1 < lc->n_runs ? lc->runs[k + 1].start : n;
		int jf = n, jl = -1;
		for (int v = a; v < b; v++)
			if (lc->block[v] >= 0 && p->nodes[v].active) {
				jf = lc->block[v] < jf ? lc->block[v] : jf;
				jl = lc->block[v] > jl ? lc->block[v] : jl;
			}
		for (int v = a; v < b; v++)
			if (lc->block[v] == jf + 1)
				map[lc->rep[v]] = v;
		for (int v = a; v < b; v++) {
			int j = lc->block[v];
			if (j >= 0)
				lc->rep[v] = j >= jf + 2 && j <= jl - 1 ? map[lc->rep[v]] : v;
		}
	}
	free(map);
	return PB_OK;
}

/* lc: after rep_in_mask */
static int tie_layers(pb_shard_problem *p, const pb_layer_classes *lc, pb_error *err)
{
	p->n_layer_runs = lc->n_runs;
	for (int r = 0; r < lc->n_runs; r++)
		p->layer_blocks += lc->runs[r].count;
	for (int G = 0; G < p->n_groups; G++) {
		pb_shard_group *a = &p->groups[G];
		int v = lc->rep[a->leader];
		if (v == a->leader || a->tie >= 0 || !p->nodes[v].active)
			continue;
		int H = p->nodes[v].group;
		if (H < 0 || p->groups[H].leader != v || p->groups[H].tie >= 0 ||
		    !groups_alike(p, a, &p->groups[H], lc->rep))
			continue;
		a->tie = H;
		p->layer_tied++;
	}
	/* twins: hash on (tied from, tied to, na, nb, a_of, b_of) */
	int cap = 1;
	while (cap < 2 * p->n_edges + 2)
		cap <<= 1;
	int *tab = malloc((size_t)cap * sizeof *tab);
	if (!tab)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	for (int k = 0; k < cap; k++)
		tab[k] = -1;
	for (int e = 0; e < p->n_edges; e++) {
		pb_shard_edge *ed = &p->edges[e];
		int F = tie_of(p, ed->from), T = tie_of(p, ed->to);
		int SF = p->groups[ed->from].n_strat, ST = p->groups[ed->to].n_strat;
		uint64_t h = (uint64_t)F * 1000003u ^ (uint64_t)T * 7919u ^
		             (uint64_t)ed->na * 131u ^ (uint64_t)ed->nb;
		for (int s = 0; s < SF; s++)
			h = h * 31 + (uint64_t)ed->a_of[s];
		for (int t = 0; t < ST; t++)
			h = h * 37 + (uint64_t)ed->b_of[t];
		for (size_t k = (size_t)(h & (uint64_t)(cap - 1));;
		     k = (k + 1) & (size_t)(cap - 1)) {
			int o = tab[k];
			if (o < 0) {
				tab[k] = e;
				break;
			}
			const pb_shard_edge *eo = &p->edges[o];
			if (tie_of(p, eo->from) == F && tie_of(p, eo->to) == T &&
			    eo->na == ed->na && eo->nb == ed->nb &&
			    !memcmp(eo->a_of, ed->a_of, (size_t)SF * sizeof(int)) &&
			    !memcmp(eo->b_of, ed->b_of, (size_t)ST * sizeof(int))) {
				ed->twin = o;
				break;
			}
		}
	}
	free(tab);
	return PB_OK;
}

int pb_strategy_problem_build(const pb_graph *g, const pb_cluster *c, const pb_mesh *m,
                              const pb_shard_opts *o, pb_shard_problem **out, pb_error *err)
{
	*out = NULL;
	pb_shard_problem *p = calloc(1, sizeof *p);
	if (!p)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	p->g = g;
	p->mesh = *m;
	p->cl = *c;
	p->cl.name = NULL;
	p->opts = *o;
	if (p->opts.chunk <= 0)
		p->opts.chunk = 48;
	p->compute_mult = o->train ? 3.0 : 1.0;
	p->comm_mult = o->train ? 2.0 : 1.0;
	p->act_mult = o->act_copies > 0 ? o->act_copies : 1.0;
	p->tkind = calloc((size_t)(g->n_tensors + 1), 1);
	p->param_owner = malloc((size_t)(g->n_tensors + 1) * sizeof *p->param_owner);
	p->nodes = calloc((size_t)(g->n_nodes + 1), sizeof *p->nodes);
	pb_strat1 *menu = malloc(64 * sizeof *menu);
	if (!p->tkind || !p->param_owner || !p->nodes || !menu) {
		free(menu);
		pb_strategy_problem_free(p);
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	}
	classify(p);
	p->forced = p->param_bytes > o->force_fraction * c->memory;
	for (int i = 0; i < g->n_nodes; i++)
		p->nodes[i].same_as = -1;
	/* the repeated layers: full recomputation's blocks, the ties, and the
	 * tables a middle block shares with its representative */
	pb_layer_classes lc;
	int have_lc = 0, rc = PB_OK;
	if (o->layers || need_full(o)) {
		rc = o->classes ? pb_layer_classes_copy(o->classes, &lc, err)
		                : pb_layer_classes_find(g, &lc, err);
		have_lc = rc == PB_OK;
	}
	if (rc == PB_OK)
		mark_recompute(p, have_lc ? &lc : NULL);
	for (int i = 0; i < g->n_nodes && o->train; i++)
		if (p->nodes[i].active) {
			p->nodes[i].saved_out = pb_act_saved_outputs(g, p->tkind, i);
			p->nodes[i].seqpar =
			    (unsigned char)pb_act_saved_seq_parallel_op(g, p->tkind, i);
		}
	if (rc == PB_OK && o->layers)
		rc = rep_in_mask(p, &lc, err);
	const int *rep = rc == PB_OK && o->layers && !o->no_share && !o->filters &&
	                         !(o->opt_level >= 1 && o->rules)
	                     ? lc.rep
	                     : NULL;
	for (int i = 0; i < g->n_nodes && rc == PB_OK; i++)
		if (p->nodes[i].active) {
			pb_job_tick();
			if (rep && rep[i] != i && pb_strategy_share_node_alike(p, i, rep[i])) {
				share_node(p, i, rep[i]);
				p->n_shared_nodes++;
			} else {
				rc = build_node(p, i, menu, err);
			}
			p->n_active++;
			p->n_node_strats += p->nodes[i].n_strat;
		}
	free(menu);
	if (rc == PB_OK) {
		form_groups(p);
		rc = build_groups(p, rep, err);
	}
	if (rc == PB_OK)
		rc = build_edges(p, err);
	if (rc == PB_OK)
		rc = pb_strategy_prune_dominated(p, err);
	if (rc == PB_OK)
		rc = pb_strategy_share_edge_costs(p, rep != NULL, err);
	if (rc == PB_OK && o->tie_blocks)
		tie_groups(p);
	if (rc == PB_OK && o->layers)
		rc = tie_layers(p, &lc, err);
	if (have_lc)
		pb_layer_classes_free(&lc);
	if (rc) {
		pb_strategy_problem_free(p);
		return rc;
	}
	*out = p;
	return PB_OK;
}

void pb_strategy_problem_free(pb_shard_problem *p)
{
	if (!p)
		return;
	for (int i = 0; p->nodes && i < p->g->n_nodes; i++) {
		pb_shard_node *n = &p->nodes[i];
		if (n->same_as < 0) {
			free(n->strat);
			free(n->cost);
			free(n->flops_part);
			free(n->mem_param);
			free(n->mem_act);
		}
		if (!n->pick_shared)
			free(n->pick);
	}
	for (int G = 0; G < p->n_groups; G++) {
		free(p->groups[G].members);
		if (p->groups[G].same_as < 0) {
			free(p->groups[G].cost);
			free(p->groups[G].mem_param);
			free(p->groups[G].mem_act);
		}
	}
	for (int e = 0; e < p->n_edges; e++) {
		free(p->edges[e].a_of);
		free(p->edges[e].b_of);
		free(p->edges[e].as);
		free(p->edges[e].bs);
		if (!p->edges[e].cost_shared)
			free(p->edges[e].cost);
	}
	free(p->edges);
	free(p->groups);
	free(p->nodes);
	free(p->tkind);
	free(p->param_owner);
	free(p);
}

int pb_strategy_problem_node_strategy(const pb_shard_problem *p, const int *choice, int nid)
{
	const pb_shard_node *n = &p->nodes[nid];
	if (!n->active || n->group < 0)
		return -1;
	return n->pick[choice[n->group]];
}

void pb_strategy_problem_evaluate(const pb_shard_problem *p, const int *choice, pb_shard_result *r)
{
	double cost = 0, comp = 0, mp = 0, ma = 0, peak = 0;
	for (int G = 0; G < p->n_groups; G++) {
		const pb_shard_group *gr = &p->groups[G];
		int s = choice[G];
		cost += gr->cost[s];
		mp += gr->mem_param[s];
		ma += gr->mem_act[s];
		if (gr->mem_act[s] > peak)
			peak = gr->mem_act[s];
		for (int k = 0; k < gr->n_members; k++) {
			const pb_shard_node *sn = &p->nodes[gr->members[k]];
			comp += sn->flops_part[sn->pick[s]];
		}
	}
	for (int e = 0; e < p->n_edges; e++) {
		const pb_shard_edge *ed = &p->edges[e];
		cost += ed->cost[ed->a_of[choice[ed->from]] * ed->nb + ed->b_of[choice[ed->to]]];
	}
	r->objective = cost;
	r->compute = comp;
	r->comm = cost - comp > 0 ? cost - comp : 0;
	r->memory = mp + (p->opts.train ? p->act_mult * ma : 2 * peak);
	r->feasible = r->memory <= p->cl.memory * (1 + 1e-9);
}

double pb_strategy_problem_min_memory(const pb_shard_problem *p)
{
	double mp = 0, peak = 0;
	if (p->opts.train) { /* per class of tied groups (one strategy), its least */
		long *off = malloc(((size_t)p->n_groups + 1) * sizeof *off);
		long n = 0;
		for (int G = 0; off && G < p->n_groups; G++) {
			off[G] = n;
			n += p->groups[G].tie < 0 ? p->groups[G].n_strat : 0;
		}
		double *acc = off ? calloc((size_t)n + 1, sizeof *acc) : NULL;
		if (!acc) {
			free(off);
			return 0; /* out of memory: the bound of no use */
		}
		for (int G = 0; G < p->n_groups; G++) {
			const pb_shard_group *gr = &p->groups[G];
			long o = off[gr->tie >= 0 ? gr->tie : G];
			for (int s = 0; s < gr->n_strat; s++)
				acc[o + s] += gr->mem_param[s] + p->act_mult * gr->mem_act[s];
		}
		for (int G = 0; G < p->n_groups; G++) {
			const pb_shard_group *gr = &p->groups[G];
			double b = INFINITY;
			for (int s = 0; gr->tie < 0 && s < gr->n_strat; s++)
				if (acc[off[G] + s] < b)
					b = acc[off[G] + s];
			if (gr->tie < 0 && gr->n_strat > 0)
				mp += b;
		}
		free(acc);
		free(off);
		return mp;
	}
	for (int G = 0; G < p->n_groups; G++) {
		const pb_shard_group *gr = &p->groups[G];
		double bp = INFINITY, ba = INFINITY;
		for (int s = 0; s < gr->n_strat; s++) {
			if (gr->mem_param[s] < bp)
				bp = gr->mem_param[s];
			if (gr->mem_act[s] < ba)
				ba = gr->mem_act[s];
		}
		if (gr->n_strat > 0) {
			mp += bp;
			if (ba > peak)
				peak = ba;
		}
	}
	return mp + 2 * peak;
}

int pb_strategy_problem_costlier(const pb_shard_problem *a, const pb_shard_problem *b)
{
	if (a->n_groups != b->n_groups || a->n_edges != b->n_edges)
		return 0;
	for (int G = 0; G < a->n_groups; G++) {
		const pb_shard_group *x = &a->groups[G], *y = &b->groups[G];
		if (x->n_strat != y->n_strat || x->n_members != y->n_members || x->tie != y->tie ||
		    x->fixed != y->fixed)
			return 0;
		for (int k = 0; k < x->n_members; k++) {
			if (x->members[k] != y->members[k] ||
			    memcmp(a->nodes[x->members[k]].pick, b->nodes[y->members[k]].pick,
			           (size_t)x->n_strat * sizeof(int)))
				return 0;
		}
		for (int s = 0; s < x->n_strat; s++)
			if (!(y->cost[s] >= x->cost[s]))
				return 0;
	}
	for (int e = 0; e < a->n_edges; e++) {
		const pb_shard_edge *x = &a->edges[e], *y = &b->edges[e];
		if (x->from != y->from || x->to != y->to || x->na != y->na || x->nb != y->nb ||
		    x->twin != y->twin ||
		    memcmp(x->a_of, y->a_of, (size_t)a->groups[x->from].n_strat * sizeof(int)) ||
		    memcmp(x->b_of, y->b_of, (size_t)a->groups[x->to].n_strat * sizeof(int)))
			return 0;
		for (int k = 0; k < x->na * x->nb; k++)
			if (!(y->cost[k] >= x->cost[k]))
				return 0;
	}
	return 1;
}

void pb_strategy_problem_result_free(pb_shard_result *r)
{
	if (r) {
		free(r->choice);
		r->choice = NULL;
	}
}
