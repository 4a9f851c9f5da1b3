/*
 * shard/dtp/dtp_report.c — the data x tensor x pipeline configurations as JSON
 * ("best", "configurations") and as a text table (dtp_report.h).
 */
#include <math.h>
#include <string.h>

#include "shard/dtp/dtp_report.h"
#include "shard/dtp/dtp_plan.h"
#include "shard/memory_margin.h"
#include "shard/search/search.h"
#include "shard/search/search_label.h"
#include "util/fmt.h"

json_t *pb_dtp_report_config_json(const pb_dtp_config *c)
{
	char buf[32];
	json_t *o = json_object();
	json_object_set_new(o, "dp", json_integer(c->dp));
	json_object_set_new(o, "tp", json_integer(c->tp));
	json_object_set_new(o, "pp", json_integer(c->pp));
	json_object_set_new(o, "microbatches", json_integer(c->m));
	json_object_set_new(o, "schedule", json_string(pb_dtp_plan_sched_name(c, buf, sizeof buf)));
	json_object_set_new(o, "kind",
	                    json_string(c->pp > 1  ? "pipeline"
	                                : c->m > 1 ? "accumulation"
	                                           : "operator"));
	json_object_set_new(o, "scheme", json_string(c->scheme));
	pb_dtp_plan_uneven_json(o, c); /* uneven groups: stage_tp, stage_devices */
	if (pb_dtp_plan_unit_row(c) && c->bound > 0)
		json_object_set_new(o, "bound", json_real(c->bound));
	if (c->pruned)
		json_object_set_new(o, "pruned", json_true());
	if (!c->ok) {
		json_object_set_new(o, "step_time", json_null());
		json_object_set_new(o, "memory", json_null());
		json_object_set_new(o, "fits", json_false());
		json_object_set_new(o, "error", json_string(c->error));
		return o;
	}
	json_object_set_new(o, "step_time", json_real(c->step_time));
	json_object_set_new(o, "memory", json_real(c->memory));
	json_object_set_new(o, "fits", json_boolean(c->fits));
	pb_memory_options_json(o, &c->mopts);
	if (pb_dtp_plan_unit_row(c)) {
		json_object_set_new(o, "bubble", json_real(c->bubble));
		json_object_set_new(o, "slowest_group", json_real(c->slowest));
		json_object_set_new(o, "p2p", json_real(c->p2p));
		/* the transfer seconds in the step, the rest hidden behind compute
		 * (pb_pipeline_p2p_step) */
		if (c->pp > 1) {
			double all =
			    (c->sched == PB_SCHED_1F1B ? (double)(c->m + c->pp - 1)
			                               : c->m + (double)(c->pp - 1) / c->v) *
			    (c->sched == PB_SCHED_1F1B ? 1 : c->v) * c->p2p;
			json_object_set_new(o, "p2p_exposed", json_real(c->p2p_exposed));
			json_object_set_new(o, "p2p_overlapped", json_real(all - c->p2p_exposed));
		}
		json_object_set_new(o, "grad_sync", json_real(c->grad));
		/* the all-reduce time in the step (the group that sets it) and what
		 * its backward pass hides, in grad_buckets buckets */
		json_object_set_new(o, "grad_exposed", json_real(c->grad_exposed));
		json_object_set_new(o, "grad_overlapped", json_real(c->grad_hidden));
		json_object_set_new(o, "grad_buckets", json_integer(c->grad_buckets));
		json_object_set_new(o, "layer_split", json_boolean(c->layers_split));
		/* false: a stage MILP stopped at the node limit (not proven) */
		json_object_set_new(o, "stages_proven", json_boolean(c->proven));
		if (c->layers_split) {
			json_object_set_new(o, "min_layers", json_integer(c->min_layers));
			json_object_set_new(o, "max_layers", json_integer(c->max_layers));
		}
	}
	return o;
}

void pb_dtp_report_note_op_degrees(pb_dtp_result *r, const struct pb_shard_search *s)
{
	r->have_op_deg = 0;
	r->deg_row = -1;
	if (s->best < 0 || !s->best_problem || r->best < 0)
		return;
	const pb_dtp_config *c = &r->cfg[r->best];
	snprintf(r->op_scheme, sizeof r->op_scheme, "%s", s->rows[s->best].mesh.name);
	if (!c->ok || c->pp != 1 || c->m > 1 || strcmp(c->scheme, r->op_scheme))
		return; /* the best row is not that plan */
	pb_search_degrees_of(s->best_problem, s->best_result.choice, &r->op_deg);
	r->have_op_deg = 1;
	r->deg_row = r->best;
}

void pb_dtp_report_note_plan_degrees(pb_dtp_result *r, const pb_graph *g, const json_t *detail)
{
	r->have_op_deg = 0;
	r->deg_row = -1;
	if (r->best < 0 || !detail ||
	    pb_search_degrees_of_stages(g, json_object_get(detail, "stages"), &r->op_deg))
		return;
	r->have_op_deg = 1;
	r->deg_row = r->best;
}

/* The best row's plan has its degrees known. */
static int op_degrees_apply(const pb_dtp_result *r)
{
	return r->best >= 0 && r->have_op_deg && r->deg_row == r->best;
}

void pb_dtp_report_degrees_json(json_t *best, const pb_dtp_result *r)
{
	if (!json_is_object(best) || !op_degrees_apply(r))
		return;
	const pb_shard_degrees *d = &r->op_deg;
	/* null when mixed: "degrees" says so, "axes" what each splits */
	json_object_set_new(best, "grouping", json_string(r->cfg[r->best].scheme));
	json_object_set_new(best, "dp", d->mixed ? json_null() : json_integer(d->dp));
	json_object_set_new(best, "tp", d->mixed ? json_null() : json_integer(d->tp));
	pb_search_degrees_json(best, d);
}

void pb_dtp_report_json(json_t *rep, const pb_dtp_result *r)
{
	json_t *arr = json_array();
	for (int i = 0; i < r->n; i++)
		json_array_append_new(arr, pb_dtp_report_config_json(&r->cfg[i]));
	json_object_set_new(rep, "configurations", arr);
	json_t *best = r->best >= 0 ? pb_dtp_report_config_json(&r->cfg[r->best]) : json_null();
	if (r->best >= 0) { /* what --dp and --tp select */
		json_object_set_new(best, "grouping_dp", json_integer(r->cfg[r->best].dp));
		json_object_set_new(best, "grouping_tp", json_integer(r->cfg[r->best].tp));
	}
	pb_dtp_report_degrees_json(best, r); /* the grouping is not the degrees */
	if (r->best >= 0 && r->cl && r->cfg[r->best].ok)
		pb_memory_margin_json(best, r->cl, r->cfg[r->best].memory);
	json_object_set_new(rep, "best", best);
	json_t *st = json_object();
	json_object_set_new(st, "batch", json_integer(r->batch));
	json_object_set_new(st, "configurations", json_integer(r->n));
	json_object_set_new(st, "stage_milps", json_integer(r->milps));
	json_object_set_new(st, "stage_cache_hits", json_integer(r->cache_hits));
	json_object_set_new(st, "pruned", json_integer(r->pruned));
	/* 0: every stage MILP solved to proof (for its own, restricted, problem:
	 * the search's label says what the whole is); else each within this relative gap,
	 * unless stopped at the node limit (its row's stages_proven false) */
	json_object_set_new(st, "stage_gap", json_real(r->gap));
	json_object_set_new(st, "stage_node_limit", json_integer(r->node_limit));
	long unproven = 0;
	for (int i = 0; i < r->n; i++)
		unproven += r->cfg[i].ok && pb_dtp_plan_unit_row(&r->cfg[i]) && !r->cfg[i].proven;
	json_object_set_new(st, "unproven", json_integer(unproven));
	json_object_set_new(rep, "dtp_search", st);
}

static void fmt_bytes(char *buf, size_t n, double b)
{
	snprintf(buf, n, "%.2f GB", b / 1e9);
}

/* The best row's "dp D tp T" for its line: the degrees of its plan when
 * known (with the grouping when it differs; "degrees mixed" when mixed),
 * else the row's grouping. */
static void best_degrees(const pb_dtp_result *r, char *buf, size_t n)
{
	const pb_dtp_config *c = &r->cfg[r->best];
	const pb_shard_degrees *d = &r->op_deg;
	if (!op_degrees_apply(r) || (!d->mixed && d->dp == c->dp && d->tp == c->tp))
		snprintf(buf, n, "dp %d tp %d", c->dp, c->tp);
	else if (d->mixed)
		snprintf(buf, n, "degrees mixed (grouping dp %d x tp %d)", c->dp, c->tp);
	else
		snprintf(buf, n, "dp %d tp %d (grouping dp %d x tp %d)", d->dp, d->tp, c->dp,
		         c->tp);
}

void pb_dtp_report_text(FILE *f, const pb_dtp_result *r)
{
	fprintf(f,
	        "\ndata x tensor x pipeline (batch %ld; %d configurations, %ld stage MILPs, "
	        "%ld answered by the cache, %ld pruned by their bound)\n",
	        r->batch, r->n, r->milps, r->cache_hits, r->pruned);
	if (r->gap > 0)
		fprintf(f,
		        "stage MILPs solved to a relative gap of %g: a stage's plan is within it "
		        "of its optimum\n",
		        r->gap);
	if (r->node_limit > 0)
		fprintf(f,
		        "stage MILPs stopped after %ld branch-and-bound nodes: rows marked '~' "
		        "are not proven\n",
		        r->node_limit);
	int sw = 8; /* the scheme column: as wide as its longest name ("tp 2+2+4+24") */
	for (int i = 0; i < r->n; i++)
		if ((int)strlen(r->cfg[i].scheme) > sw)
			sw = (int)strlen(r->cfg[i].scheme);
	fprintf(f, "    dp   tp   pp     m  schedule        %-*s%14s%12s  fits\n", sw, "scheme",
	        "step time", "memory");
	for (int i = 0; i < r->n; i++) {
		const pb_dtp_config *c = &r->cfg[i];
		char sb[32], mb[32];
		fprintf(f, "%c %4d %4d %4d %5d  %-14s  %-*s", i == r->best ? '*' : ' ', c->dp,
		        c->tp, c->pp, c->m, pb_dtp_plan_sched_name(c, sb, sizeof sb), sw,
		        c->scheme);
		if (!c->ok) {
			fprintf(f, "  %s%s\n", c->pruned ? "" : "error: ", c->error);
			continue;
		}
		fmt_bytes(mb, sizeof mb, c->memory);
		fprintf(f, " %12.3f ms %11s  %s%s\n", c->step_time * 1e3, mb,
		        c->fits ? "yes" : "no", pb_dtp_plan_unit_row(c) && !c->proven ? " ~" : "");
	}
	if (r->n > 0)
		fprintf(f,
		        "  dp x tp of a row: the grouping of its devices (the scheme's mesh); what "
		        "each axis splits is chosen per operator (the best's degrees: below)\n");
	for (int i = 0; i < r->n; i++)
		if (r->cfg[i].uneven) { /* dtp_uneven.c */
			fprintf(
			    f,
			    "  scheme \"tp a+b+...\": uneven device groups, stage s on dp x tp_s "
			    "devices (tp: the largest)\n");
			break;
		}
	if (r->best >= 0) {
		/* the row the session keeps and -o writes, said in words: the
		 * operator-level report above shows only its own best */
		const pb_dtp_config *c = &r->cfg[r->best];
		char sb[32], db[96];
		best_degrees(r, db, sizeof db);
		if (c->pp > 1)
			fprintf(f, "best overall: pipeline %s pp %d, %d micro-batches, %s", db,
			        c->pp, c->m, pb_dtp_plan_sched_name(c, sb, sizeof sb));
		else if (c->m > 1)
			fprintf(
			    f,
			    "best overall: %s pp 1, %d micro-batches (gradient accumulation, one "
			    "all-reduce per step)",
			    db, c->m);
		else
			fprintf(f, "best overall: operator-level %s", c->scheme);
		fprintf(f, ", %.3f ms per step%s: the plan kept (and written by -o)\n",
		        c->step_time * 1e3, c->fits ? "" : ", does not fit");
		if (op_degrees_apply(r)) /* "4x8" names the grouping, not dp x tp */
			pb_search_degrees_text(f, &r->op_deg);
		if (r->cl && c->ok && pb_dtp_plan_unit_row(c) && c->grad > 0)
			pb_dtp_report_overlap_text(f, r->cl, c);
		if (r->cl && c->ok && pb_dtp_plan_unit_row(c) && c->pp > 1 && c->p2p > 0)
			fprintf(f,
			        "pipeline transfers: %.3f ms exposed in the step (%s), %.3f ms per "
			        "micro-batch and boundary\n",
			        c->p2p_exposed * 1e3,
			        r->cl->p2p_overlap
			            ? "the fill, the drain and what the passes cannot "
			              "hide; the rest overlapped"
			            : "not overlapped: --p2p-overlap off",
			        c->p2p * 1e3);
		if (r->cl && c->ok)
			pb_memory_margin_text(f, r->cl, c->memory);
		if (c->ok)
			pb_memory_options_text(f, &c->mopts);
	}
}

void pb_dtp_report_overlap_text(FILE *f, const pb_cluster *cl, const pb_dtp_config *c)
{
	if (cl->grad_bucket > 0)
		fprintf(
		    f,
		    "gradient all-reduce: %.3f ms exposed in the step, %.3f ms overlapped "
		    "with the backward pass (%ld buckets of %g MiB; slowest group's all-reduces "
		    "%.3f ms)\n",
		    c->grad_exposed * 1e3, c->grad_hidden * 1e3, c->grad_buckets,
		    cl->grad_bucket / 1048576.0, c->grad * 1e3);
	else
		fprintf(f,
		        "gradient all-reduce: %.3f ms exposed in the step, not overlapped "
		        "(bucket 0)\n",
		        c->grad_exposed * 1e3);
}

json_t *pb_dtp_report_best_overall_json(const pb_dtp_result *r)
{
	json_t *o = json_object();
	if (r->best < 0) {
		json_object_set_new(o, "kind", json_null());
		return o;
	}
	const pb_dtp_config *c = &r->cfg[r->best];
	char buf[96], sb[32];
	if (pb_dtp_plan_unit_row(c))
		snprintf(buf, sizeof buf, "%d stages x %s, m %d, %s", c->pp, c->scheme, c->m,
		         pb_dtp_plan_sched_name(c, sb, sizeof sb));
	else
		snprintf(buf, sizeof buf, "%s", c->scheme);
	json_object_set_new(o, "kind",
	                    json_string(c->pp > 1  ? "pipeline"
	                                : c->m > 1 ? "accumulation"
	                                           : "operator-level"));
	json_object_set_new(o, "scheme", json_string(buf));
	json_object_set_new(o, "step_time", json_real(c->step_time));
	json_object_set_new(o, "fits", json_boolean(c->fits));
	return o;
}

void pb_dtp_report_label(const pb_dtp_result *r, const pb_dtp_opts *o, const pb_graph *g,
                         const pb_cluster *cl, const pb_label *op, pb_label *L)
{
	const pb_dtp_config *c = r->best >= 0 ? &r->cfg[r->best] : NULL;
	pb_label_init(L, c && c->ok ? c->step_time : NAN);
	for (int k = 0; op && k < op->n_restricted; k++)
		pb_label_restrict(L, op->restricted_by[k]);
	if (o->pp != 1) {
		pb_label_restrict(L, "chunk split (layer boundaries or FLOP balance, boundary "
		                     "polish)");
		pb_shard_opts so = o->shard;
		so.mip_gap = o->gap;
		so.node_limit = o->node_limit;
		pb_search_label_opts_restrictions(&so, L);
	}
	double cb = pb_search_label_compute_bound(g, cl, o->pipe.train, 1);
	if (o->pp == 1 && op && isfinite(op->bound) && !(op->bound <= cb))
		cb = op->bound; /* operator-level plans only: their own bound */
	if (c && c->ok && c->fits)
		pb_label_bound(L, cb);
	else
		L->bound = cb;
}

void pb_dtp_report_label_text(FILE *f, const pb_label *L)
{
	char words[512];
	fprintf(f, "label (dp x tp x pp): %s\n",
	        pb_label_text(L, pb_fmt_time_fixed, words, sizeof words));
}
