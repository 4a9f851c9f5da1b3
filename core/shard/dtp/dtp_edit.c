/*
 * shard/dtp/dtp_edit.c — hand edits of a data x tensor x pipeline plan
 * (dtp_edit.h): a chunk-boundary move and an operator's pinned spec.
 *
 * Both cost a split as the boundary polish does (dtp_polish.c): the model
 * at the micro-batch B/m, one search unit (pb_dtp_search_unit_open) with the plan's
 * pp, m, schedule and V, the split given per node (pb_pipeline_stages_split_given, which
 * refuses an activation edge going backwards), every chunk solved by its
 * stage MILP (chunks of the same content answered by the unit's cache), then
 * p2p, schedule and gradient all-reduces (pb_dtp_search_unit_eval) and the plan
 * built from the chunks' solves (pb_dtp_plan_build). The message compares
 * the two plans chunk by chunk (pb_pipeline_diff_describe).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard/dtp/dtp_edit.h"
#include "shard/dtp/dtp_plan.h"
#include "shard/dtp/dtp_stage.h"
#include "shard/rules.h"
#include "util/fmt.h"

int pb_dtp_edit_is_dtp(const pb_plan *p)
{
	return p && strcmp(p->kind, "pipeline") == 0 && pb_plan_has_metric(p, "dp");
}

json_t *pb_dtp_edit_options_json(const pb_dtp_opts *o)
{
	const pb_shard_opts *s = &o->shard;
	return json_pack("{s:b,s:b,s:i,s:i,s:i,s:i,s:i,s:i,s:b,s:b,s:b,s:f,s:f,s:I}", "train",
	                 o->pipe.train, "pad", o->pipe.pad, "opt_level", s->opt_level, "optimizer",
	                 s->optimizer, "zero", s->zero, "dist_opt", s->dist_opt, "seq_parallel",
	                 s->seq_parallel, "recompute", s->recompute, "layers", s->layers,
	                 "tie_blocks", s->tie_blocks, "no_shrink", s->no_shrink, "time_limit",
	                 s->time_limit, "stage_gap", o->gap, "stage_nodes",
	                 (json_int_t)o->node_limit);
}

static int opt_int(const json_t *j, const char *k, int dflt)
{
	const json_t *v = json_object_get(j, k);
	return json_is_integer(v)   ? (int)json_integer_value(v)
	       : json_is_boolean(v) ? json_is_true(v)
	                            : dflt;
}

void pb_dtp_edit_options(const pb_plan *p, pb_dtp_opts *o)
{
	pb_dtp_search_opts_default(o);
	const json_t *d = p->detail, *so = json_object_get(d, "search_options");
	o->pipe.batch = (long)json_integer_value(json_object_get(d, "batch"));
	o->pipe.train = json_is_true(json_object_get(d, "train"));
	o->pipe.pad = opt_int(so, "pad", o->pipe.pad);
	o->pipe.polish_tries = -1;
	pb_shard_opts *s = &o->shard;
	s->train = o->pipe.train;
	s->pad = o->pipe.pad;
	s->opt_level = o->pipe.opt_level = opt_int(so, "opt_level", o->pipe.opt_level);
	s->optimizer = opt_int(so, "optimizer", s->optimizer);
	s->zero = opt_int(so, "zero", s->zero);
	s->dist_opt = opt_int(so, "dist_opt", s->dist_opt);
	s->seq_parallel = opt_int(so, "seq_parallel", s->seq_parallel);
	s->recompute = opt_int(so, "recompute", s->recompute);
	s->layers = opt_int(so, "layers", s->layers);
	s->tie_blocks = opt_int(so, "tie_blocks", s->tie_blocks);
	s->no_shrink = opt_int(so, "no_shrink", s->no_shrink);
	const json_t *v;
	if (json_is_number(v = json_object_get(so, "time_limit")))
		s->time_limit = json_number_value(v);
	if (json_is_number(v = json_object_get(so, "stage_gap")))
		o->gap = json_number_value(v);
	if (json_is_integer(v = json_object_get(so, "stage_nodes")))
		o->node_limit = (long)json_integer_value(v);
}

/* The configuration of plan p: dp, tp, pp, m, schedule, V; B its batch. */
static int plan_config(const pb_plan *p, pb_dtp_config *c, long *B, pb_error *err)
{
	memset(c, 0, sizeof *c);
	const json_t *d = p->detail;
	if (!pb_dtp_edit_is_dtp(p))
		return pb_err(err, PB_EUSAGE,
		              "the plan is no dp x tp x pp plan (shard --pipeline)");
	if (json_is_true(json_object_get(d, "uneven")))
		return pb_err(err, PB_EUSAGE,
		              "the plan has uneven device groups (stage_tp); their chunks are not "
		              "re-split by hand");
	c->dp = (int)pb_plan_metric(p, "dp", 0);
	c->tp = (int)pb_plan_metric(p, "tp", 0);
	c->pp = (int)pb_plan_metric(p, "pp", 0);
	c->m = (int)pb_plan_metric(p, "microbatches", 0);
	*B = (long)json_integer_value(json_object_get(d, "batch"));
	const char *sc = json_string_value(json_object_get(d, "pipeline_schedule"));
	if (c->dp < 1 || c->tp < 1 || c->pp < 2 || c->m < 1 || *B < c->m || !sc ||
	    pb_dtp_search_parse_schedule(sc, &c->sched, &c->v, err) != PB_OK)
		return pb_err(err, PB_EINPUT,
		              "the dp x tp x pp plan lacks its configuration (dp, tp, pp, "
		              "micro-batches, schedule, batch): a damaged plan");
	if (p->n_groups != c->pp * c->v)
		return pb_err(err, PB_EINPUT, "the plan has %d chunks, not pp x V = %d",
		              p->n_groups, c->pp * c->v);
	return PB_OK;
}

typedef struct costing {
	pb_dtp_unit u;
	double *cost;
	pb_dtp_config want;
	long B;
	int open;
} costing;

static int costing_open(costing *k, const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                        const pb_plan *old, pb_error *err)
{
	memset(k, 0, sizeof *k);
	int rc = plan_config(old, &k->want, &k->B, err);
	if (rc == PB_OK && cl->n_devices != k->want.dp * k->want.tp * k->want.pp)
		rc = pb_err(
		    err, PB_EUSAGE,
		    "the plan is for %d devices (dp %d x tp %d x pp %d), the layout %s has %d",
		    k->want.dp * k->want.tp * k->want.pp, k->want.dp, k->want.tp, k->want.pp,
		    cl->name ? cl->name : "?", cl->n_devices);
	if (rc == PB_OK)
		rc = pb_dtp_search_reload(o, k->B / k->want.m, gp, err);
	if (rc == PB_OK && (*gp)->n_nodes != old->n_nodes)
		rc = pb_err(err, PB_EINPUT, "the plan has %d nodes, the model %d", old->n_nodes,
		            (*gp)->n_nodes);
	if (rc)
		return rc;
	rc = pb_dtp_search_unit_open(&k->u, *gp, cl, o, k->want.pp, k->want.m, &k->cost, err);
	k->open = 1;
	k->u.sched = k->want.sched;
	k->u.v = k->want.v;
	k->u.n_chunks = k->want.pp * k->want.v;
	return rc;
}

static void costing_close(costing *k)
{
	if (k->open)
		pb_dtp_search_unit_close(&k->u, k->cost);
}

/* Costs split chunk_of into *c (its chunks recorded when build). */
static int cost_split(costing *k, const int *chunk_of, int build, pb_dtp_config *c, pb_error *err)
{
	pb_dtp_unit *u = &k->u;
	pb_pipeline_stages_split_free(&u->split);
	int rc =
	    pb_pipeline_stages_split_given(u->g, u->cost, u->n_chunks, chunk_of, &u->split, err);
	if (rc)
		return rc == PB_ENOMEM ? rc : PB_EUSAGE;
	pb_dtp_search_unit_bytes(u);
	if (build && (rc = pb_dtp_search_unit_record(u, err)))
		return rc;
	memset(c, 0, sizeof *c);
	if ((rc = pb_dtp_search_unit_eval(u, k->want.dp, k->want.tp, 0, c, err)))
		return rc;
	if (!c->ok)
		return pb_err(err, PB_EUSAGE, "a chunk has no sharding plan on its %d devices%s%s",
		              u->d, c->error[0] ? ": " : "", c->error);
	return PB_OK;
}

/* The new plan from the unit's recorded chunks. */
static int build(costing *k, const pb_cluster *cl, const pb_dtp_opts *o, const pb_plan *old,
                 const pb_dtp_config *c, pb_pipe_diff *res, pb_error *err)
{
	pb_plan *p = NULL;
	int rc = pb_dtp_plan_build(k->u.g, cl, c, k->B, o->pipe.train, k->u.split.stage,
	                           k->u.chunks, &p, err);
	json_decref(k->u.chunks);
	k->u.chunks = NULL;
	if (rc)
		return rc;
	p->model_batch = pb_plan_graph_batch(k->u.g);
	pb_plan_set_method(p, "manual");
	const json_t *so = json_object_get(old->detail, "search_options");
	if (so)
		json_object_set(p->detail, "search_options", (json_t *)so);
	res->plan = p;
	res->after = c->step_time;
	pb_pipeline_diff_describe(old, p, res->what, sizeof res->what);
	return PB_OK;
}

/* The plan costed again must give its own step time. */
static int check_before(costing *k, const pb_plan *old, pb_pipe_diff *res, pb_error *err)
{
	pb_dtp_config c;
	pb_error e2 = {0};
	int rc = cost_split(k, old->group, 0, &c, &e2);
	if (rc == PB_ENOMEM || rc == PB_ECANCEL)
		return pb_err(err, rc, "%s", e2.msg);
	double t = pb_plan_metric(old, "step_time", NAN);
	if (rc || !(fabs(c.step_time - t) <= 1e-9 * t)) {
		char a[32], b[32];
		pb_fmt_time(t, a, sizeof a);
		pb_fmt_time(rc ? NAN : c.step_time, b, sizeof b);
		return pb_err(
		    err, PB_EUSAGE,
		    "the plan does not cost again to its step time (%s recorded, %s now%s%s): "
		    "it was made under other options or by another version; run 'shard "
		    "--pipeline auto' again",
		    a, b, rc ? ": " : "", rc ? e2.msg : "");
	}
	res->before = c.step_time;
	return PB_OK;
}

int pb_dtp_edit_boundary(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                         const pb_plan *old, int k, int delta, pb_pipe_diff *res, pb_error *err)
{
	memset(res, 0, sizeof *res);
	int n = old->n_nodes;
	int *chunk_of = malloc(((size_t)n + 1) * sizeof *chunk_of);
	if (!chunk_of)
		return pb_err(err, PB_ENOMEM, "out of memory");
	int rc = pb_plan_move_boundary(old, k, delta, chunk_of, err);
	if (rc) {
		free(chunk_of);
		return pb_err_prefix(err, "chunks");
	}
	costing kc;
	rc = costing_open(&kc, gp, cl, o, old, err);
	char why[400];
	if (rc == PB_OK && o->pipe.rules &&
	    pb_pipeline_stages_split_rule_broken(kc.u.g, kc.u.cost, chunk_of, old->group,
	                                         o->pipe.rules, why, sizeof why))
		rc = pb_err(
		    err, PB_EUSAGE,
		    "moving the boundary between chunks %d and %d by %+d nodes breaks Lua %s", k,
		    k + 1, delta, why);
	if (rc == PB_OK)
		rc = check_before(&kc, old, res, err);
	pb_dtp_config c;
	if (rc == PB_OK)
		rc = cost_split(&kc, chunk_of, 1, &c, err);
	if (rc == PB_OK)
		rc = build(&kc, cl, o, old, &c, res, err);
	costing_close(&kc);
	free(chunk_of);
	return rc;
}

int pb_dtp_edit_pin(const pb_graph **gp, const pb_cluster *cl, const pb_dtp_opts *o,
                    const pb_plan *old, pb_spec_pin *pins, int n_pins, pb_pipe_diff *res,
                    pb_error *err)
{
	memset(res, 0, sizeof *res);
	/* every pinned operator its own variables (as the shard pin) */
	pb_dtp_opts po = *o;
	po.shard.no_shrink = 1;
	po.shard.layers = 0;
	pb_shard_rules *f = pb_rules_new(0);
	if (!f)
		return pb_err(err, PB_ENOMEM, "out of memory");
	po.shard.filters = f;
	int rc = pb_spec_pin_rules(f, pins, n_pins, err);
	costing kc;
	memset(&kc, 0, sizeof kc);
	if (rc == PB_OK)
		rc = costing_open(&kc, gp, cl, &po, old, err);
	/* a chunk that holds a pinned node is its own content */
	if (rc == PB_OK)
		pb_dtp_stage_cache_by_node(kc.u.cache);
	pb_dtp_config c;
	if (rc == PB_OK)
		rc = cost_split(&kc, old->group, 1, &c, err);
	if (rc == PB_OK) {
		res->before = pb_plan_metric(old, "step_time", NAN);
		rc = build(&kc, cl, o, old, &c, res, err);
	}
	costing_close(&kc);
	pb_rules_free(f);
	return rc;
}
