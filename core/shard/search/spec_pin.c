/*
 * shard/search/spec_pin.c — pinned sharding specs (spec_pin.h): the filter rule,
 * the pins a plan records, and the hand edit of a shard plan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard/search/search.h"
#include "shard/search/spec_pin.h"
#include "util/fmt.h"
#include "util/proof_label.h"

static int pin_match(const pb_graph *g, int nid, void *ud)
{
	(void)g;
	return nid == ((const pb_spec_pin *)ud)->nid;
}

/* Keeps the pinned label; notes every label offered. */
static int pin_keep(const pb_graph *g, int nid, const pb_strat *st, const pb_mesh *m, void *ud)
{
	(void)g;
	(void)nid;
	(void)m;
	pb_spec_pin *p = ud;
	int k = strcmp(st->label, p->label) == 0;
	p->seen |= k;
	size_t l = strlen(p->offered), w = strlen(st->label);
	char key[48];
	snprintf(key, sizeof key, ", %s, ", st->label);
	char have[sizeof p->offered + 4];
	snprintf(have, sizeof have, ", %s, ", p->offered);
	if (!strstr(have, key) && l + w + 3 < sizeof p->offered)
		snprintf(p->offered + l, sizeof p->offered - l, "%s%s", l ? ", " : "", st->label);
	return k;
}

int pb_spec_pin_rules(pb_shard_rules *lib, pb_spec_pin *pins, int n, pb_error *err)
{
	for (int i = 0; i < n; i++) {
		pb_shard_rule r = {"pin",     "an operator's spec pinned by hand",
		                   pin_match, pin_keep,
		                   &pins[i],  NULL};
		pins[i].seen = 0;
		pins[i].offered[0] = '\0';
		int rc = pb_rules_add(lib, &r, err);
		if (rc)
			return rc;
	}
	return PB_OK;
}

int pb_spec_pin_collect(const pb_graph *g, const pb_plan *old, int nid, const char *label,
                        pb_spec_pin *pins, int *n, pb_error *err)
{
	*n = 0;
	if (strlen(label) >= sizeof pins[0].label)
		return pb_err(err, PB_EUSAGE, "--spec '%s' is too long", label);
	const json_t *pl = json_object_get(old->detail, "pinned");
	for (size_t i = 0; i < json_array_size(pl) && *n < PB_SPEC_PIN_MAX - 1; i++) {
		const json_t *e = json_array_get(pl, i);
		int v = pb_graph_find_node(g, json_string_value(json_object_get(e, "node")));
		const char *l = json_string_value(json_object_get(e, "spec"));
		if (v < 0 || !l || v == nid)
			continue;
		memset(&pins[*n], 0, sizeof pins[*n]);
		pins[*n].nid = v;
		snprintf(pins[*n].label, sizeof pins[*n].label, "%s", l);
		(*n)++;
	}
	memset(&pins[*n], 0, sizeof pins[*n]);
	pins[*n].nid = nid;
	snprintf(pins[*n].label, sizeof pins[*n].label, "%s", label);
	(*n)++;
	return PB_OK;
}

json_t *pb_spec_pin_json(const pb_graph *g, const pb_spec_pin *pins, int n)
{
	json_t *pl = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(pl, json_pack("{s:s,s:s}", "node", g->nodes[pins[i].nid].name,
		                                    "spec", pins[i].label));
	return pl;
}

static const char *ops_strategy(const json_t *ops, int nid)
{
	for (size_t i = 0; i < json_array_size(ops); i++) {
		const json_t *o = json_array_get(ops, i);
		if (json_integer_value(json_object_get(o, "id")) == nid) {
			const char *st = json_string_value(json_object_get(o, "strategy"));
			return st ? st : "";
		}
	}
	return NULL;
}

const char *pb_spec_pin_strategy(const pb_plan *p, int nid)
{
	const char *s = ops_strategy(json_object_get(p->detail, "ops"), nid);
	const json_t *st = json_object_get(p->detail, "stages");
	for (size_t k = 0; !s && k < json_array_size(st); k++)
		s = ops_strategy(json_object_get(json_array_get(st, k), "ops"), nid);
	return s ? s : "";
}

int pb_spec_pin_refuse(const pb_graph *g, const pb_spec_pin *pin, const char *where,
                       const char *was, pb_error *err)
{
	const pb_node *nd = &g->nodes[pin->nid];
	return pb_err(
	    err, PB_EUSAGE,
	    "'%s' is not a candidate spec of node '%s' (%s) on %s; its candidates: %s (it "
	    "has '%s')",
	    pin->label, nd->name, nd->op, where, pin->offered[0] ? pin->offered : "none", was);
}

/* The options of the search that made a shard plan, as its detail records
 * them: training, optimisation level and, in training, the optimizer, the
 * ZeRO stage, the recomputation, the distributed optimizer and sequence
 * parallelism the plan was costed with (a pin solved
 * with the defaults costed an Adam plan's memory without the moments). */
static void opts_of_plan(const json_t *d, pb_shard_opts *o)
{
	o->train = json_is_true(json_object_get(d, "train"));
	o->opt_level = (int)json_integer_value(json_object_get(d, "opt_level"));
	const char *opt = json_string_value(json_object_get(d, "optimizer"));
	if (opt)
		o->optimizer = strcmp(opt, "adam") == 0 ? PB_OPTIM_ADAM : PB_OPTIM_NONE;
	if (json_is_integer(json_object_get(d, "zero")))
		o->zero = (int)json_integer_value(json_object_get(d, "zero"));
	const char *rc = json_string_value(json_object_get(d, "recompute"));
	for (int k = 0; rc && k < 3; k++)
		if (strcmp(rc, pb_recompute_names[k]) == 0)
			o->recompute = k;
	/* the distributed optimizer and sequence parallelism the plan runs with
	 * (memory_options.h: 1 = PB_DISTOPT_ON = PB_SEQPAR_ON) */
	o->dist_opt = json_is_true(json_object_get(d, "dist_opt")) ? 1 : 0;
	o->seq_parallel = json_is_true(json_object_get(d, "seq_parallel")) ? 1 : 0;
}

int pb_spec_pin_edit(const pb_graph *g, const pb_cluster *cl, const pb_shard_opts *base,
                     const pb_plan *old, pb_spec_pin *pins, int n_pins, pb_plan **out,
                     pb_error *err)
{
	*out = NULL;
	pb_shard_opts o = *base;
	const json_t *d = old->detail;
	opts_of_plan(d, &o);
	o.no_shrink = 1;
	o.layers = 0;
	/* the session's Lua filters first, then the pins, in a library of our own */
	pb_shard_rules *lib = pb_rules_new(0);
	if (!lib)
		return pb_err(err, PB_ENOMEM, "out of memory");
	int rc = PB_OK;
	for (int i = 0; base->filters && rc == PB_OK && i < base->filters->n; i++) {
		pb_shard_rule r = base->filters->r[i];
		r.ud_free = NULL; /* the session's library owns it */
		rc = pb_rules_add(lib, &r, err);
	}
	if (rc == PB_OK)
		rc = pb_spec_pin_rules(lib, pins, n_pins, err);
	o.filters = lib;
	const char *scheme = json_string_value(json_object_get(d, "scheme"));
	pb_shard_search *sr = NULL;
	if (rc == PB_OK)
		rc = pb_search_rows_new(g, cl, &o, scheme, 2, NULL, &sr, err);
	if (rc == PB_OK)
		sr->want_label = 1; /* the bound of the scheme with the pins (search_label.c) */
	for (int done = 0; rc == PB_OK && !done;)
		rc = pb_search_step(sr, &done, err);
	if (rc == PB_OK)
		rc = pb_search_finish(sr, err);
	if (rc == PB_OK && !sr->plan)
		rc = pb_err(err, PB_EINPUT, "the scheme has no feasible plan with these pins");
	const pb_spec_pin *mine = &pins[n_pins - 1];
	if (rc == PB_OK &&
	    (!mine->seen || strcmp(pb_spec_pin_strategy(sr->plan, mine->nid), mine->label) != 0)) {
		char where[64];
		snprintf(where, sizeof where, "scheme %s", scheme ? scheme : "?");
		rc = pb_spec_pin_refuse(g, mine, where, pb_spec_pin_strategy(old, mine->nid), err);
	}
	if (rc == PB_OK && !(*out = pb_plan_copy(sr->plan)))
		rc = pb_err(err, PB_ENOMEM, "out of memory");
	if (rc == PB_OK) {
		pb_plan_set_method(*out, "manual");
		json_object_set_new((*out)->detail, "pinned", pb_spec_pin_json(g, pins, n_pins));
		/* what its label is for: the user posed this scheme with these pins */
		json_object_set_new((*out)->detail, "posed",
		                    json_sprintf("scheme %s with %d pinned spec%s",
		                                 scheme ? scheme : "?", n_pins,
		                                 n_pins == 1 ? "" : "s"));
	}
	pb_search_rows_free(sr);
	pb_rules_free(lib);
	return rc;
}

/* The strategy per node of plan p (NULL entries: none), from its ops. */
static void strategies(const pb_plan *p, const char **of, int n)
{
	const json_t *lists[2] = {json_object_get(p->detail, "ops"), NULL};
	const json_t *st = json_object_get(p->detail, "stages");
	for (int i = 0; i < n; i++)
		of[i] = NULL;
	for (size_t k = 0; k <= json_array_size(st); k++) {
		const json_t *ops =
		    k == 0 ? lists[0] : json_object_get(json_array_get(st, k - 1), "ops");
		for (size_t i = 0; i < json_array_size(ops); i++) {
			const json_t *o = json_array_get(ops, i);
			json_int_t id = json_integer_value(json_object_get(o, "id"));
			const char *s = json_string_value(json_object_get(o, "strategy"));
			if (id >= 0 && id < n && s)
				of[id] = s;
		}
	}
}

void pb_spec_pin_describe(const pb_graph *g, const pb_plan *before, const pb_plan *after, char *buf,
                          size_t len)
{
	int n = g->n_nodes, changed = 0;
	const char **a = malloc(2 * ((size_t)n + 1) * sizeof *a), **b = a ? a + n + 1 : NULL;
	if (len)
		buf[0] = '\0';
	if (!a) {
		snprintf(buf, len, "(out of memory describing the edit)");
		return;
	}
	strategies(before, a, n);
	strategies(after, b, n);
	size_t at = 0;
	for (int v = 0; v < n; v++) {
		const char *x = a[v] ? a[v] : "-", *y = b[v] ? b[v] : "-";
		if (strcmp(x, y) == 0)
			continue;
		if (changed++ < 4 && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s'%s' %s -> %s",
			                       changed > 1 ? ", " : "", g->nodes[v].name, x, y);
	}
	if (changed > 4 && at < len)
		at += (size_t)snprintf(buf + at, len - at, " and %d more", changed - 4);
	if (at < len)
		snprintf(buf + at, len - at, "%s%d operator spec%s changed", changed ? "; " : "",
		         changed, changed == 1 ? "" : "s");
	free(a);
}

void pb_spec_pin_label(const pb_plan *p, char *buf, size_t len)
{
	const json_t *d = p->detail;
	pb_label L;
	pb_label_init(&L, json_number_value(json_object_get(d, "step_time")));
	const json_t *b = json_object_get(d, "bound"), *rs = json_object_get(d, "restricted_by");
	for (size_t i = 0; i < json_array_size(rs) && i < PB_LABEL_MAX; i++)
		if (json_string_value(json_array_get(rs, i)))
			pb_label_restrict(&L, json_string_value(json_array_get(rs, i)));
	if (json_is_number(b))
		pb_label_bound(&L, json_number_value(b));
	L.optimal = json_is_true(json_object_get(d, "optimal"));
	size_t at = strlen(pb_label_text(&L, pb_fmt_time, buf, len));
	const char *posed = json_string_value(json_object_get(d, "posed"));
	if (posed && at < len)
		snprintf(buf + at, len - at, " (for %s)", posed);
}

/* Marks the candidates each filter of lib removes (a filter that would
 * remove all keeps all, as pb_rules_filter does). */
static void mark_refused(const pb_shard_rules *lib, const pb_graph *g, int nid,
                         const pb_shard_node *nd, const pb_mesh *m, pb_spec_cand *c)
{
	for (int r = 0; lib && r < lib->n; r++) {
		const pb_shard_rule *rule = &lib->r[r];
		if (rule->match && !rule->match(g, nid, rule->ud))
			continue;
		int kept = 0;
		for (int s = 0; s < nd->n_strat; s++)
			kept += rule->keep(g, nid, &nd->strat[s], m, rule->ud) != 0;
		for (int s = 0; kept > 0 && kept < nd->n_strat && s < nd->n_strat; s++)
			if (!c[s].refused_by[0] && !rule->keep(g, nid, &nd->strat[s], m, rule->ud))
				snprintf(c[s].refused_by, sizeof c[s].refused_by, "%s", rule->name);
	}
}

int pb_spec_pin_candidates(const pb_graph *g, const pb_cluster *cl, const pb_shard_opts *base,
                           const pb_plan *plan, int nid, pb_spec_cand **out, int *n, pb_error *err)
{
	*out = NULL;
	*n = 0;
	const json_t *d = plan->detail;
	const char *scheme = json_string_value(json_object_get(d, "scheme"));
	pb_mesh m;
	if (!scheme)
		return pb_err(err, PB_EINPUT, "the plan names no grouping scheme");
	int rc = pb_cluster_mesh_parse(&m, cl, scheme, err);
	if (rc)
		return rc;
	pb_shard_opts o = *base; /* as pb_spec_pin_edit, one operator, no filter */
	opts_of_plan(d, &o);
	o.no_shrink = 1;
	o.layers = 0;
	o.filters = NULL;
	unsigned char *mask = calloc((size_t)g->n_nodes + 1, 1);
	pb_shard_rules *own = o.opt_level >= 1 && !o.rules ? pb_rules_new(1) : NULL;
	if (!mask || (o.opt_level >= 1 && !o.rules && !own)) {
		free(mask);
		return pb_err(err, PB_ENOMEM, "out of memory");
	}
	if (own)
		o.rules = own;
	mask[nid] = 1;
	o.mask = mask;
	pb_shard_problem *p = NULL;
	rc = pb_strategy_problem_build(g, cl, &m, &o, &p, err);
	const pb_shard_node *nd = rc == PB_OK ? &p->nodes[nid] : NULL;
	if (rc == PB_OK && (!nd->active || nd->n_strat < 1))
		rc = pb_err(err, PB_EUSAGE, "node '%s' (%s) is no operator of the plan",
		            g->nodes[nid].name, g->nodes[nid].op);
	if (rc == PB_OK && !(*out = calloc((size_t)nd->n_strat, sizeof **out)))
		rc = pb_err(err, PB_ENOMEM, "out of memory");
	const char *now = pb_spec_pin_strategy(plan, nid);
	for (int s = 0; rc == PB_OK && s < nd->n_strat; s++) {
		pb_spec_cand *c = &(*out)[s];
		snprintf(c->label, sizeof c->label, "%s", nd->strat[s].label);
		c->time = nd->cost[s];
		c->memory = nd->mem_param[s] + (o.train ? p->act_mult : 1.0) * nd->mem_act[s];
		c->current = strcmp(c->label, now) == 0;
	}
	if (rc == PB_OK) {
		mark_refused(base->filters, g, nid, nd, &m, *out);
		*n = nd->n_strat;
	}
	pb_strategy_problem_free(p);
	pb_rules_free(own);
	free(mask);
	return rc;
}
