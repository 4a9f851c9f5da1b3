/*
 * shard/search/search_report.c — the plan, the report and the task lists of a
 * strategy search (search_report.h).
 *
 * Plan mapping (what the TUI/SVG read): group[node] is the node's strategy
 * class — replicated, data-parallel (every axis splits dim 0 of the output),
 * tensor-parallel (no axis splits dim 0) or hybrid — with the time, compute,
 * communication and per-device bytes of the operators in the class; metrics
 * step_time, compute_time, comm_time, memory_per_device, memory_limit,
 * devices, feasible; detail holds the report (per-operator specs,
 * collectives per edge, the scheme table).
 *
 * The collectives of an operator are recomputed from the chosen strategies
 * (node_collectives), so the plan, the report and the task lists agree.
 */
#include "shard/search/search_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shard/memory_margin.h"
#include "shard/strategy/strategy_grad.h"
#include "shard/search/search_degrees.h"
#include "shard/search/search_label.h"
#include "shard/strategy/strategy_problem.h"
#include "util/fmt.h"
#include "util/json_file.h"

static const char *link_name(const pb_mesh *m, int a)
{
	return m->inter[a] ? "inter" : "intra";
}

static json_t *scheme_json(const pb_shard_search *s, int i)
{
	const pb_shard_row *r = &s->rows[i];
	json_t *o = json_object();
	json_object_set_new(o, "scheme", json_string(r->mesh.name));
	json_t *ax = json_array();
	for (int a = 0; a < r->mesh.n_axes; a++) {
		json_t *x = json_object();
		json_object_set_new(x, "size", json_integer(r->mesh.size[a]));
		json_object_set_new(x, "link", json_string(link_name(&r->mesh, a)));
		json_object_set_new(x, "bandwidth", json_real(r->mesh.link[a].bw));
		json_object_set_new(x, "latency", json_real(r->mesh.link[a].latency));
		json_array_append_new(ax, x);
	}
	json_object_set_new(o, "axes", ax);
	json_object_set_new(o, "status",
	                    json_string(r->status == 1  ? "solved"
	                                : r->status < 0 ? "error"
	                                                : "pending"));
	if (r->status == 1) {
		json_object_set_new(o, "step_time", json_real(r->step_time));
		json_object_set_new(o, "compute_time", json_real(r->compute));
		json_object_set_new(o, "comm_time", json_real(r->comm));
		json_object_set_new(o, "memory_per_device", json_real(r->memory));
		json_object_set_new(o, "feasible", json_boolean(r->feasible));
		/* proven for the scheme's unrestricted problem (search_label.h) */
		json_object_set_new(o, "optimal", json_boolean(pb_search_label_row_proven(r)));
		json_object_set_new(o, "solve_seconds", json_real(r->seconds));
		if (s->opts.train)
			json_object_set_new(o, "recompute",
			                    json_string(pb_recompute_names[r->recompute % 3]));
		json_object_set_new(o, "incumbents", json_integer(r->incumbents));
		json_t *m = json_object();
		json_object_set_new(m, "groups", json_integer(r->groups));
		json_object_set_new(m, "operators", json_integer(r->active));
		json_object_set_new(m, "edges", json_integer(r->edges));
		json_object_set_new(m, "cols", json_integer(r->size.cols));
		json_object_set_new(m, "binaries", json_integer(r->size.bins));
		json_object_set_new(m, "rows", json_integer(r->size.rows));
		json_object_set_new(m, "nonzeros", json_integer(r->size.nnz));
		json_object_set_new(o, "milp", m);
	} else if (r->status < 0) {
		json_object_set_new(o, "error", json_string(r->error));
	}
	if (r->status != 0) {
		json_object_set_new(o, "bound", isfinite(r->lb) ? json_real(r->lb) : json_null());
		json_t *rb = json_array();
		for (int k = 0; k < PB_RESTR_N; k++)
			if (r->restricted & (1u << k))
				json_array_append_new(rb,
				                      json_string(pb_search_label_restr_name(k)));
		json_object_set_new(o, "restricted_by", rb);
	}
	json_object_set_new(o, "best", json_boolean(i == s->best));
	return o;
}

static json_t *specs_json(const signed char (*specs)[PB_MESH_MAX_AXES], const int *tids, int n,
                          int n_axes)
{
	json_t *a = json_array();
	char buf[64];
	for (int i = 0; i < n; i++)
		json_array_append_new(
		    a, tids[i] < 0 ? json_null()
		                   : json_string(pb_spec_str(specs[i], n_axes, buf, sizeof buf)));
	return a;
}

/* The ZeRO stage row b runs with: the search's, or 0 when --dist-opt auto
 * solved it with the distributed optimizer (stage 1) and it fits without. */
static int row_zero(const pb_shard_search *s, const pb_shard_row *b)
{
	return s->opts.zero == 1 && !b->mopts.dist ? 0 : s->opts.zero;
}

/* Collectives on the input edges of node c (and the output/gradient ones). */
static double node_collectives(const pb_shard_problem *p, const int *choice, int c, json_t *arr)
{
	const pb_graph *g = p->g;
	const pb_node *n = &g->nodes[c];
	const pb_shard_node *sc = &p->nodes[c];
	const pb_strat *st = &sc->strat[pb_strategy_problem_node_strategy(p, choice, c)];
	double total = 0;
	char buf[64];
	for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++) {
		int t = n->inputs[i];
		/* a shared parameter comes from its owner's layout (strategy_problem.c) */
		int tied = t >= 0 && p->tkind[t] == PB_TKIND_PARAM && p->param_owner &&
		           p->param_owner[t] >= 0 && p->param_owner[t] != c;
		if (t < 0 || (p->tkind[t] != PB_TKIND_ACT && !tied))
			continue;
		int pr = tied ? p->param_owner[t] : g->tensors[t].producer;
		if (pr < 0 || !p->nodes[pr].active)
			continue;
		const pb_node *np = &g->nodes[pr];
		int j = 0, nj = tied ? np->n_inputs : np->n_outputs;
		while (j < nj && (tied ? np->inputs[j] : np->outputs[j]) != t)
			j++;
		if (j >= (tied ? PB_SHARD_MAX_IN : PB_SHARD_MAX_OUT) || j >= nj)
			continue;
		const pb_strat *sp =
		    &p->nodes[pr].strat[pb_strategy_problem_node_strategy(p, choice, pr)];
		const signed char *from = tied ? sp->in[j] : sp->out[j];
		pb_coll cl[PB_MESH_MAX_AXES];
		int nc = 0;
		double mult = pb_strategy_problem_comm_mult(p, c);
		total += pb_spec_reshard_cost_tensor(&p->mesh, &g->tensors[t], from, st->in[i], cl,
		                                     &nc) *
		         mult;
		for (int k = 0; k < nc && arr; k++) {
			json_t *o = json_object();
			json_object_set_new(o, "tensor", json_string(g->tensors[t].name));
			json_object_set_new(o, "from", json_string(np->name));
			json_object_set_new(o, "to", json_string(n->name));
			json_object_set_new(o, "kind", json_string(pb_spec_coll_name(cl[k].kind)));
			json_object_set_new(o, "axis", json_integer(cl[k].axis));
			json_object_set_new(o, "bytes", json_real(cl[k].bytes));
			json_object_set_new(o, "time", json_real(cl[k].time * mult));
			json_object_set_new(
			    o, "from_spec",
			    json_string(pb_spec_str(from, p->mesh.n_axes, buf, sizeof buf)));
			json_object_set_new(
			    o, "to_spec",
			    json_string(pb_spec_str(st->in[i], p->mesh.n_axes, buf, sizeof buf)));
			json_array_append_new(arr, o);
		}
	}
	/* partial model outputs are reduced */
	for (int j = 0; j < n->n_outputs && j < PB_SHARD_MAX_OUT; j++) {
		int t = n->outputs[j];
		if (t < 0 || !g->tensors[t].is_output)
			continue;
		signed char to[PB_MESH_MAX_AXES];
		for (int a = 0; a < PB_MESH_MAX_AXES; a++)
			to[a] = st->out[j][a] == PB_SPEC_P ? PB_SPEC_R : st->out[j][a];
		pb_coll cl[PB_MESH_MAX_AXES];
		int nc = 0;
		total +=
		    pb_spec_reshard_cost_tensor(&p->mesh, &g->tensors[t], st->out[j], to, cl, &nc);
		for (int k = 0; k < nc && arr; k++) {
			json_t *o = json_object();
			json_object_set_new(o, "tensor", json_string(g->tensors[t].name));
			json_object_set_new(o, "from", json_string(n->name));
			json_object_set_new(o, "to", json_string("(model output)"));
			json_object_set_new(o, "kind", json_string(pb_spec_coll_name(cl[k].kind)));
			json_object_set_new(o, "axis", json_integer(cl[k].axis));
			json_object_set_new(o, "bytes", json_real(cl[k].bytes));
			json_object_set_new(o, "time", json_real(cl[k].time));
			json_array_append_new(arr, o);
		}
	}
	/* gradient all-reduces of parameters replicated along an axis (a shared
	 * parameter's at its owner, in the layout it is stored in) */
	if (p->opts.train)
		total += pb_strategy_grad_collectives(p, st, c, arr, 1);
	return total;
}

static int strategy_class(const pb_shard_problem *p, const pb_strat *st)
{
	if (st->share <= 1)
		return 0;
	int all0 = 1, any0 = 0;
	for (int a = 0; a < p->mesh.n_axes; a++) {
		if (st->out[0][a] == 0)
			any0 = 1;
		else
			all0 = 0;
	}
	return all0 ? 1 : any0 ? 3 : 2;
}

static const char *const class_names[] = {"replicated", "data-parallel", "tensor-parallel",
                                          "hybrid"};

static json_t *ops_json(const pb_shard_problem *p, const int *choice, json_t *colls)
{
	const pb_graph *g = p->g;
	json_t *ops = json_array();
	for (int c = 0; c < g->n_nodes; c++) {
		if (!p->nodes[c].active)
			continue;
		const pb_node *n = &g->nodes[c];
		int si = pb_strategy_problem_node_strategy(p, choice, c);
		const pb_strat *st = &p->nodes[c].strat[si];
		json_t *o = json_object();
		json_object_set_new(o, "id", json_integer(c));
		json_object_set_new(o, "name", json_string(n->name));
		json_object_set_new(o, "op", json_string(n->op));
		json_object_set_new(o, "strategy", json_string(st->label));
		json_object_set_new(o, "class", json_string(class_names[strategy_class(p, st)]));
		json_object_set_new(o, "share", json_integer(st->share));
		if (st->pad > 1)
			json_object_set_new(o, "pad", json_real(st->pad));
		int nin = n->n_inputs < PB_SHARD_MAX_IN ? n->n_inputs : PB_SHARD_MAX_IN;
		int nout = n->n_outputs < PB_SHARD_MAX_OUT ? n->n_outputs : PB_SHARD_MAX_OUT;
		int tids[PB_SHARD_MAX_IN] = {0};
		for (int i = 0; i < nin; i++)
			tids[i] = n->inputs[i] >= 0 && p->tkind[n->inputs[i]] != PB_TKIND_META
			              ? n->inputs[i]
			              : -1;
		json_object_set_new(o, "in",
		                    specs_json((const signed char(*)[PB_MESH_MAX_AXES])st->in, tids,
		                               nin, p->mesh.n_axes));
		for (int j = 0; j < nout; j++)
			tids[j] = n->outputs[j];
		json_object_set_new(o, "out",
		                    specs_json((const signed char(*)[PB_MESH_MAX_AXES])st->out,
		                               tids, nout, p->mesh.n_axes));
		json_object_set_new(o, "group", json_integer(p->nodes[c].group));
		json_object_set_new(o, "compute", json_real(p->nodes[c].flops_part[si]));
		json_object_set_new(o, "comm", json_real(node_collectives(p, choice, c, colls)));
		json_object_set_new(o, "param_bytes", json_real(p->nodes[c].mem_param[si]));
		json_object_set_new(o, "act_bytes", json_real(p->nodes[c].mem_act[si]));
		json_array_append_new(ops, o);
	}
	return ops;
}

json_t *pb_search_report(const pb_shard_search *s)
{
	json_t *j = json_object();
	json_object_set_new(j, "model", json_string(s->g->path ? s->g->path : ""));
	json_object_set_new(j, "layout", json_string(s->cl.name ? s->cl.name : ""));
	json_object_set_new(j, "devices", json_integer(s->cl.n_devices));
	json_object_set_new(j, "train", json_boolean(s->opts.train));
	json_object_set_new(j, "opt_level", json_integer(s->opts.opt_level));
	json_t *rows = json_array();
	for (int i = 0; i < s->n_rows; i++)
		json_array_append_new(rows, scheme_json(s, i));
	json_object_set_new(j, "schemes", rows);
	json_t *dr = json_array();
	for (int i = 0; i < s->n_dropped; i++)
		json_array_append_new(dr, json_string(s->dropped[i]));
	json_object_set_new(j, "dropped_mirrors", dr);
	if (s->best < 0 || !s->best_problem) {
		json_object_set_new(j, "scheme", json_null());
		json_object_set_new(j, "step_time", json_null());
		json_object_set_new(j, "ops", json_array());
		return j;
	}
	const pb_shard_row *b = &s->rows[s->best];
	const pb_shard_problem *p = s->best_problem;
	json_object_set_new(j, "scheme", json_string(b->mesh.name));
	json_object_set_new(j, "step_time", json_real(b->step_time));
	json_object_set_new(j, "compute_time", json_real(b->compute));
	json_object_set_new(j, "comm_time", json_real(b->comm));
	json_object_set_new(j, "memory_per_device", json_real(b->memory));
	json_object_set_new(j, "memory_limit", json_real(s->cl.memory));
	pb_memory_margin_json(j, &s->cl, b->memory);
	json_object_set_new(j, "feasible", json_boolean(b->feasible));
	pb_label L;
	pb_search_label(s, &L);
	pb_label_json(j, &L);
	json_object_set_new(j, "param_bytes", json_real(p->param_bytes));
	json_object_set_new(j, "forced_param_sharding", json_boolean(p->forced));
	if (s->opts.train) {
		json_object_set_new(
		    j, "optimizer",
		    json_string(s->opts.optimizer == PB_OPTIM_ADAM ? "adam" : "none"));
		json_object_set_new(j, "zero", json_integer(row_zero(s, b)));
		pb_memory_options_json(j, &b->mopts);
		json_object_set_new(j, "recompute",
		                    json_string(pb_recompute_names[b->recompute % 3]));
	}
	pb_shard_degrees deg; /* what each axis splits: Megatron's dp and tp, or mixed */
	pb_search_degrees_of(p, s->best_result.choice, &deg);
	json_t *best = json_object(); /* the plan in the framework's terms */
	json_object_set_new(best, "kind", json_string("operator-level"));
	json_object_set_new(best, "dp", deg.mixed ? json_null() : json_integer(deg.dp));
	json_object_set_new(best, "tp", deg.mixed ? json_null() : json_integer(deg.tp));
	json_object_set_new(best, "pp", json_integer(1));
	json_object_set_new(best, "microbatches", json_integer(1));
	json_object_set_new(best, "step_time", json_real(b->step_time));
	json_object_set_new(best, "memory", json_real(b->memory));
	json_object_set_new(best, "fits", json_boolean(b->feasible));
	pb_search_degrees_json(best, &deg);
	json_object_set_new(j, "best", best);
	json_object_set_new(j, "layer_runs", json_integer(p->n_layer_runs));
	json_object_set_new(j, "layer_blocks", json_integer(p->layer_blocks));
	json_object_set_new(j, "layer_tied_groups", json_integer(p->layer_tied));
	json_t *colls = json_array();
	json_object_set_new(j, "ops", ops_json(p, s->best_result.choice, colls));
	json_object_set_new(j, "collectives", colls);
	json_t *ev = json_array();
	for (int i = 0; i < s->n_events; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "scheme",
		                    json_string(s->rows[s->events[i].scheme].mesh.name));
		json_object_set_new(o, "objective", json_real(s->events[i].objective));
		json_object_set_new(o, "bound",
		                    isfinite(s->events[i].bound) ? json_real(s->events[i].bound)
		                                                 : json_null());
		json_object_set_new(o, "at", json_real(s->events[i].at));
		json_array_append_new(ev, o);
	}
	json_object_set_new(j, "incumbents", ev);
	return j;
}

pb_plan *pb_search_report_plan(const pb_shard_search *s)
{
	if (s->best < 0 || !s->best_problem)
		return NULL;
	const pb_shard_problem *p = s->best_problem;
	const pb_graph *g = p->g;
	const int *choice = s->best_result.choice;
	pb_plan *plan =
	    pb_plan_new("shard", p->opts.opt_level >= 3 ? "milp-greedy" : "milp", g->n_nodes);
	if (!plan)
		return NULL;
	const pb_shard_row *b = &s->rows[s->best];
	pb_plan_group cls[4];
	memset(cls, 0, sizeof cls);
	int idx[4] = {-1, -1, -1, -1};
	for (int k = 0; k < 4; k++) {
		cls[k].first_unit = 0;
		cls[k].n_units = s->cl.n_devices;
		cls[k].first_node = cls[k].last_node = -1;
	}
	int cls_of_node_buf = 0;
	(void)cls_of_node_buf;
	for (int c = 0; c < g->n_nodes; c++) {
		if (!p->nodes[c].active)
			continue;
		int si = pb_strategy_problem_node_strategy(p, choice, c);
		const pb_strat *st = &p->nodes[c].strat[si];
		int k = strategy_class(p, st);
		double comm = node_collectives(p, choice, c, NULL);
		cls[k].compute += p->nodes[c].flops_part[si];
		cls[k].routing += comm;
		cls[k].time += p->nodes[c].flops_part[si] + comm;
		cls[k].storage += p->nodes[c].mem_param[si] + p->nodes[c].mem_act[si];
		cls[k].macs += g->nodes[c].cost.macs;
		if (cls[k].first_node < 0)
			cls[k].first_node = c;
		cls[k].last_node = c;
		plan->group[c] = k; /* remapped below */
	}
	double worst = -1;
	int wk = -1;
	for (int k = 0; k < 4; k++)
		if (cls[k].first_node >= 0 && cls[k].time > worst) {
			worst = cls[k].time;
			wk = k;
		}
	for (int k = 0; k < 4; k++) {
		if (cls[k].first_node < 0)
			continue;
		cls[k].label = (char *)class_names[k];
		cls[k].bottleneck = k == wk;
		cls[k].over_memory = !b->feasible;
		idx[k] = pb_plan_add_group(plan, &cls[k]);
	}
	for (int c = 0; c < g->n_nodes; c++)
		if (plan->group[c] >= 0)
			plan->group[c] = idx[plan->group[c]];
	pb_plan_set_metric(plan, "step_time", b->step_time);
	pb_plan_set_metric(plan, "compute_time", b->compute);
	pb_plan_set_metric(plan, "comm_time", b->comm);
	pb_plan_set_metric(plan, "memory_per_device", b->memory);
	pb_plan_set_metric(plan, "memory_limit", s->cl.memory);
	pb_plan_set_metric(plan, "devices", s->cl.n_devices);
	pb_plan_set_metric(plan, "feasible", b->feasible);
	pb_label L;
	pb_search_label(s, &L);
	pb_plan_set_label(plan, &L);
	pb_plan_set_metric(plan, "schemes_solved", s->next);
	json_decref(plan->detail);
	plan->detail = pb_search_report(s);
	return plan;
}

/* ------------------------------------------------------------------ tasks */

static void coords_of(const pb_mesh *m, int dev, int *coord)
{
	for (int a = 0; a < m->n_axes; a++)
		coord[a] = (dev / m->stride[a]) % m->size[a];
}

static json_t *local_tensor(const pb_graph *g, int t, const signed char *spec, const pb_mesh *m,
                            const int *coord)
{
	const pb_tensor *tt = &g->tensors[t];
	json_t *o = json_object();
	json_object_set_new(o, "tensor", json_string(tt->name));
	char buf[64];
	json_object_set_new(o, "spec", json_string(pb_spec_str(spec, m->n_axes, buf, sizeof buf)));
	if (tt->rank >= 0) {
		int64_t dims[PB_MAX_RANK];
		pb_spec_local_dims(tt, spec, m, dims);
		json_t *sh = json_array(), *off = json_array(), *pad = json_array();
		int padded = pb_spec_pad_factor(tt, spec, m) > 1;
		for (int k = 0; k < tt->rank; k++) {
			json_array_append_new(sh, json_integer(dims[k]));
			/* block index along dim k: axes splitting k, major axis first */
			long blk = 0;
			for (int a = 0; a < m->n_axes; a++)
				if (spec[a] == k)
					blk = blk * m->size[a] + coord[a];
			int64_t o0 = blk * (dims[k] > 0 ? dims[k] : 0);
			json_array_append_new(off, json_integer(o0));
			/* --pad: the rows of this block past the end of the tensor */
			int64_t real = tt->dims[k] - o0;
			int64_t p = dims[k] > 0 && tt->dims[k] > 0
			                ? (real >= dims[k] ? 0 : dims[k] - (real > 0 ? real : 0))
			                : 0;
			json_array_append_new(pad, json_integer(p));
		}
		json_object_set_new(o, "shape", sh);
		json_object_set_new(o, "offset", off);
		if (padded) {
			json_object_set_new(o, "pad", pad);
			int64_t full[PB_MAX_RANK];
			json_t *ps = json_array();
			for (int k = 0; k < tt->rank; k++) {
				long f = 1;
				for (int a = 0; a < m->n_axes; a++)
					if (spec[a] == k)
						f *= m->size[a];
				full[k] = dims[k] > 0 ? dims[k] * f : tt->dims[k];
				json_array_append_new(ps, json_integer(full[k]));
			}
			json_object_set_new(o, "padded_shape", ps);
		} else {
			json_decref(pad);
		}
	}
	return o;
}

static json_t *group_devices(const pb_mesh *m, int dev, int axis)
{
	int coord[PB_MESH_MAX_AXES];
	coords_of(m, dev, coord);
	json_t *a = json_array();
	int base = dev - coord[axis] * m->stride[axis];
	for (int k = 0; k < m->size[axis]; k++)
		json_array_append_new(a, json_integer(base + k * m->stride[axis]));
	return a;
}

int pb_search_report_emit_tasks(const pb_shard_search *s, const char *dir, pb_error *err)
{
	if (!s->best_problem)
		return pb_err(err, PB_EUSAGE, "shard: no plan to emit tasks for");
	struct stat dst;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return pb_err(err, PB_EINPUT, "%s: cannot create directory: %s", dir,
		              strerror(errno));
	/* an existing name must be a directory (or a link to one); the files in
	 * it are written through util/atomic_file.h like every output */
	if (stat(dir, &dst) != 0 || !S_ISDIR(dst.st_mode))
		return pb_err(err, PB_EINPUT, "%s: exists and is not a directory", dir);
	const pb_shard_problem *p = s->best_problem;
	const pb_graph *g = p->g;
	const pb_mesh *m = &p->mesh;
	const int *choice = s->best_result.choice;
	/* collectives per consumer node, computed once */
	json_t **colls = calloc((size_t)(g->n_nodes + 1), sizeof *colls);
	if (!colls)
		return pb_err(err, PB_ENOMEM, "shard: out of memory");
	for (int c = 0; c < g->n_nodes; c++)
		if (p->nodes[c].active) {
			colls[c] = json_array();
			node_collectives(p, choice, c, colls[c]);
		}
	int rc = PB_OK;
	for (int d = 0; d < s->cl.n_devices && rc == PB_OK; d++) {
		int coord[PB_MESH_MAX_AXES];
		coords_of(m, d, coord);
		json_t *j = json_object();
		json_object_set_new(j, "device", json_integer(d));
		json_object_set_new(j, "node", json_integer(d / s->cl.devices_per_node));
		json_object_set_new(j, "scheme", json_string(m->name));
		json_t *co = json_array();
		for (int a = 0; a < m->n_axes; a++)
			json_array_append_new(co, json_integer(coord[a]));
		json_object_set_new(j, "coords", co);
		json_t *ops = json_array();
		for (int c = 0; c < g->n_nodes; c++) {
			if (!p->nodes[c].active)
				continue;
			const pb_node *n = &g->nodes[c];
			const pb_strat *st =
			    &p->nodes[c].strat[pb_strategy_problem_node_strategy(p, choice, c)];
			json_t *o = json_object();
			json_object_set_new(o, "name", json_string(n->name));
			json_object_set_new(o, "op", json_string(n->op));
			json_object_set_new(o, "strategy", json_string(st->label));
			json_t *before = json_array();
			size_t k;
			json_t *cv;
			json_array_foreach(colls[c], k, cv)
			{
				json_t *x = json_deep_copy(cv);
				int axis = (int)json_integer_value(json_object_get(cv, "axis"));
				json_object_set_new(x, "group", group_devices(m, d, axis));
				json_array_append_new(before, x);
			}
			json_object_set_new(o, "collectives", before);
			json_t *ins = json_array(), *outs = json_array();
			for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++)
				if (n->inputs[i] >= 0 && p->tkind[n->inputs[i]] != PB_TKIND_META)
					json_array_append_new(
					    ins,
					    local_tensor(g, n->inputs[i], st->in[i], m, coord));
			for (int i = 0; i < n->n_outputs && i < PB_SHARD_MAX_OUT; i++)
				if (n->outputs[i] >= 0)
					json_array_append_new(
					    outs,
					    local_tensor(g, n->outputs[i], st->out[i], m, coord));
			json_object_set_new(o, "inputs", ins);
			json_object_set_new(o, "outputs", outs);
			json_array_append_new(ops, o);
		}
		json_object_set_new(j, "ops", ops);
		char path[4096];
		snprintf(path, sizeof path, "%s/device_%d.json", dir, d);
		rc = pb_json_save_atomic(j, path, err);
		json_decref(j);
	}
	for (int c = 0; c < g->n_nodes; c++)
		json_decref(colls[c]);
	free(colls);
	return rc;
}

/* The text form of pb_search_report()'s JSON: the scheme table, the best
 * scheme and, with details, its per-operator strategies and collectives. */
void pb_search_report_text(const pb_shard_search *s, const json_t *rep, int details, FILE *o)
{
	char t1[32], t2[32], t3[32], m1[32], m2[32];
	fprintf(o, "shard: %s on %s (%d devices = %d nodes x %d), %s, opt-level %d\n", s->g->path,
	        s->cl.name, s->cl.n_devices, s->cl.nodes, s->cl.devices_per_node,
	        s->opts.train ? "training" : "inference", s->opts.opt_level);
	fprintf(o, "\nschemes:\n  %-9s %-26s %12s %12s %12s %11s %9s %9s %8s\n", "scheme",
	        "axes (link)", "step time", "compute", "comm", "mem/device", "MILP cols", "rows",
	        "solve");
	for (int i = 0; i < s->n_rows; i++) {
		const pb_shard_row *r = &s->rows[i];
		char axes[64] = "";
		size_t off = 0;
		for (int a = 0; a < r->mesh.n_axes && off < sizeof axes; a++)
			off += (size_t)snprintf(axes + off, sizeof axes - off, "%s%d(%s)",
			                        a ? " " : "", r->mesh.size[a],
			                        r->mesh.inter[a] ? "inter" : "intra");
		if (r->status != 1) {
			fprintf(o, "  %-9s %-26s %s\n", r->mesh.name, axes,
			        r->status < 0 ? r->error : "not solved");
			continue;
		}
		pb_fmt_time_fixed(r->step_time, t1, sizeof t1);
		pb_fmt_time_fixed(r->compute, t2, sizeof t2);
		pb_fmt_time_fixed(r->comm, t3, sizeof t3);
		pb_fmt_bytes(r->memory, m1, sizeof m1);
		fprintf(o, "%c %-9s %-26s %12s %12s %12s %11s %9ld %9ld %7.2fs%s\n",
		        i == s->best ? '*' : ' ', r->mesh.name, axes, t1, t2, t3, m1, r->size.cols,
		        r->size.rows, r->seconds, r->feasible ? "" : "  OVER MEMORY");
	}
	if (s->n_dropped) {
		fprintf(o, "mirror duplicates dropped (same axis sizes and links):");
		for (int i = 0; i < s->n_dropped; i++)
			fprintf(o, " %s", s->dropped[i]);
		fputc('\n', o);
	}
	if (s->best < 0)
		return;
	const pb_shard_row *b = &s->rows[s->best];
	pb_fmt_time_fixed(b->step_time, t1, sizeof t1);
	pb_fmt_time_fixed(b->compute, t2, sizeof t2);
	pb_fmt_time_fixed(b->comm, t3, sizeof t3);
	pb_fmt_bytes(b->memory, m1, sizeof m1);
	pb_fmt_bytes(s->cl.memory, m2, sizeof m2);
	fprintf(o,
	        "\nbest: %s  step time %s (compute %s, communication %s), memory %s of %s per "
	        "device%s\n",
	        b->mesh.name, t1, t2, t3, m1, m2, b->feasible ? "" : " — DOES NOT FIT");
	pb_memory_margin_text(o, &s->cl, b->memory);
	if (s->best_problem) {
		pb_shard_degrees d;
		pb_search_degrees_of(s->best_problem, s->best_result.choice, &d);
		pb_search_degrees_text(o, &d);
	}
	pb_label L;
	char words[400];
	pb_search_label(s, &L);
	fprintf(o, "label: %s\n", pb_label_text(&L, pb_fmt_time_fixed, words, sizeof words));
	if (s->opts.train)
		fprintf(o, "training memory: optimizer %s, ZeRO stage %d, recomputation %s\n",
		        s->opts.optimizer == PB_OPTIM_ADAM ? "adam" : "none (weights + gradients)",
		        row_zero(s, b), pb_recompute_names[b->recompute % 3]);
	if (s->opts.train)
		pb_memory_options_text(o, &b->mopts);
	if (s->best_problem && s->best_problem->n_layer_runs)
		fprintf(
		    o,
		    "repeated layers: %d run(s), %d blocks, %d groups tied to a representative\n",
		    s->best_problem->n_layer_runs, s->best_problem->layer_blocks,
		    s->best_problem->layer_tied);
	if (json_is_true(json_object_get(rep, "forced_param_sharding")))
		fprintf(o,
		        "parameters exceed %.0f%% of a device's memory: parameter tensors are "
		        "forced to be sharded\n",
		        s->opts.force_fraction * 100);
	if (!details) {
		fprintf(o, "(its operators and collectives are not listed: a pipeline below is the "
		           "plan kept)\n");
		return;
	}
	fprintf(o, "\noperators (specs per mesh axis: Sk split dim k, R replicated, P partial):\n");
	fprintf(o, "  %5s %-36s %-14s %-10s %-14s %-30s %10s %10s\n", "id", "name", "op",
	        "strategy", "out", "in", "compute", "comm");
	size_t k;
	json_t *op;
	json_array_foreach(json_object_get(rep, "ops"), k, op)
	{
		char ins[128] = "", outs[64] = "";
		size_t off = 0, i;
		json_t *v;
		json_array_foreach(json_object_get(op, "in"), i, v)
		{
			if (off < sizeof ins)
				off += (size_t)snprintf(
				    ins + off, sizeof ins - off, "%s%s", i ? " " : "",
				    json_is_string(v) ? json_string_value(v) : "-");
		}
		off = 0;
		json_array_foreach(json_object_get(op, "out"), i, v)
		{
			if (off < sizeof outs)
				off += (size_t)snprintf(
				    outs + off, sizeof outs - off, "%s%s", i ? " " : "",
				    json_is_string(v) ? json_string_value(v) : "-");
		}
		pb_fmt_time_fixed(json_real_value(json_object_get(op, "compute")), t1, sizeof t1);
		pb_fmt_time_fixed(json_real_value(json_object_get(op, "comm")), t2, sizeof t2);
		fprintf(o, "  %5lld %-36.36s %-14.14s %-10.10s %-14.14s %-30.30s %10s %10s\n",
		        json_integer_value(json_object_get(op, "id")),
		        json_string_value(json_object_get(op, "name")),
		        json_string_value(json_object_get(op, "op")),
		        json_string_value(json_object_get(op, "strategy")), outs, ins, t1, t2);
	}
	const json_t *colls = json_object_get(rep, "collectives");
	fprintf(o, "\ncollectives (%zu):\n", json_array_size(colls));
	json_t *c;
	json_array_foreach(colls, k, c)
	{
		pb_fmt_bytes(json_real_value(json_object_get(c, "bytes")), m1, sizeof m1);
		pb_fmt_time_fixed(json_real_value(json_object_get(c, "time")), t1, sizeof t1);
		fprintf(o, "  %-15s axis %lld  %10s %10s  %s -> %s  (%s)\n",
		        json_string_value(json_object_get(c, "kind")),
		        json_integer_value(json_object_get(c, "axis")), m1, t1,
		        json_string_value(json_object_get(c, "from")),
		        json_string_value(json_object_get(c, "to")),
		        json_string_value(json_object_get(c, "tensor")));
	}
}
