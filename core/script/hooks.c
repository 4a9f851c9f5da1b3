/*
 * hooks.c — the session's Lua heuristics and rules as solver callbacks
 * (see hooks.h for the error protocol: the first script error is kept and
 * reported by pb_hooks_finish, callbacks answer neutrally after it).
 *
 * Sharding candidates are described to Lua as
 *   { label = "n", inputs = {"R", "S1"}, outputs = {"S1"}, share = 8 }
 * with one spec string per tensor slot ("S<dim>", "R" or "P" per mesh axis,
 * joined by ','). A `specs` rule is a list of such patterns (or one); a
 * pattern matches a candidate when each field it gives matches: `label`
 * equals the whole label or one of its per-axis parts, `inputs[i]` /
 * `outputs[i]` equal the slot's spec string ("*" matches anything), `share`
 * equals. A strategy is kept when some pattern matches it.
 */
#include "script/hooks.h"

#include "partition/chain/chain_layers.h"
#include "partition/chain/chain_rules.h"

#include <stdlib.h>
#include <string.h>

void pb_hooks_init(pb_hooks *h, pb_session *s)
{
	memset(h, 0, sizeof *h);
	h->sc = pb_script_of(s);
	h->g = s->graph;
	h->spec_node = -1;
}

static void fail(pb_hooks *h, int rc, const pb_error *e)
{
	if (h->failed)
		return;
	h->failed = 1;
	h->err = *e;
	if (!h->err.code)
		h->err.code = rc > 0 ? rc : -rc;
}

/* ---------------------------------------------------------------- partition */

static int mask_cb(void *ud, const int *ac, int n, unsigned char *mask)
{
	pb_hooks *h = ud;
	if (h->failed)
		return 1;
	double *am = calloc((size_t)n, sizeof *am);
	if (!am)
		return 1;
	int layer = 0;
	for (int c = 0; c < n; c++)
		for (int k = 0; k < ac[c] && layer < h->n_layers; k++)
			am[c] += h->layer_macs[layer++];
	pb_error e = {0};
	int rc = pb_script_action_mask(h->sc, ac, am, n, 4 * (n - 1), mask, &e);
	free(am);
	if (rc < 0) {
		fail(h, rc, &e);
		return 1;
	}
	return 0;
}

int pb_hooks_chain_rules(pb_hooks *h, const char *kind, pb_part_rules **out, pb_error *err)
{
	*out = NULL;
	if (!h->sc || !h->g ||
	    pb_script_rule_count(h->sc, "cut") + pb_script_rule_count(h->sc, kind) == 0)
		return PB_OK;
	int m = h->g->n_nodes;
	pb_part_rules *r = pb_part_rules_new(m);
	if (!r)
		return pb_err(err, PB_ENOMEM, "out of memory");
	snprintf(r->pin_kind, sizeof r->pin_kind, "%s", kind);
	int rc = PB_OK;
	for (int v = 0; v < m && rc == PB_OK; v++) {
		int how = 0, pin = -1;
		int got = pb_script_rule_cut(h->sc, v, &how, err);
		if (got < 0)
			rc = -got;
		else if (got)
			rc = pb_part_rules_cut(r, pb_script_matched_rule(h->sc), v,
			                       h->g->nodes[v].name,
			                       how == 2 ? PB_CUT_FORCE : PB_CUT_FORBID, err);
		if (rc)
			break;
		got = pb_script_rule_pin(h->sc, kind, v, &pin, err);
		if (got < 0)
			rc = -got;
		else if (got)
			rc = pb_part_rules_pin(r, pb_script_matched_rule(h->sc), v,
			                       h->g->nodes[v].name, pin, err);
	}
	if (rc) {
		pb_part_rules_free(r);
		return rc;
	}
	*out = r;
	return PB_OK;
}

int pb_hooks_partition(pb_hooks *h, const pb_hw *hw, pb_part_opts *o, pb_error *err)
{
	if (!h->sc || !h->g)
		return PB_OK;
	int rrc = pb_hooks_chain_rules(h, "core", &h->part_rules, err);
	if (rrc)
		return rrc;
	o->rules = h->part_rules;
	int masks = pb_script_count(h->sc, "action_mask") > 0,
	    init = pb_script_count(h->sc, "initial_partition") > 0;
	if (!masks && !init)
		return PB_OK;
	/* the heuristics see the partition's layers: load-time constants are
	 * none (chain_layers.h) */
	pb_part_layers L = {0};
	int rc = pb_part_layers_new(h->g, &L, err);
	if (rc)
		return rc;
	free(h->layer_macs);
	h->n_layers = L.m;
	h->layer_macs = malloc(((size_t)L.m + 1) * sizeof *h->layer_macs);
	if (!h->layer_macs) {
		pb_part_layers_free(&L);
		return pb_err(err, PB_ENOMEM, "out of memory");
	}
	for (int l = 0; l < L.m; l++)
		h->layer_macs[l] = h->g->nodes[L.layer_node[l]].cost.macs;
	pb_part_layers_free(&L);
	if (masks) {
		o->mask = mask_cb;
		o->mask_ud = h;
	}
	if (!init)
		return PB_OK;
	pb_manycore mc;
	if ((rc = pb_manycore_parse(hw, &mc, err)))
		return rc;
	h->init_state = malloc(((size_t)mc.cores + 1) * sizeof *h->init_state);
	if (!h->init_state)
		return pb_err(err, PB_ENOMEM, "out of memory");
	rc = pb_script_initial_partition(h->sc, mc.cores, h->n_layers, h->layer_macs, h->init_state,
	                                 err);
	if (rc < 0)
		return -rc;
	o->init_state = h->init_state;
	return PB_OK;
}

int pb_hooks_cost_terms(pb_session *s, pb_plan *plan, pb_error *err)
{
	pb_script *sc = pb_script_of(s);
	if (!plan || pb_script_count(sc, "cost_term") == 0)
		return PB_OK;
	double extra = 0;
	int rc = pb_script_cost_terms(sc, plan, &extra, err);
	if (rc < 0)
		return -rc;
	pb_plan_set_metric(plan, "script_cost", extra);
	return PB_OK;
}

/* ---------------------------------------------------------------- shard */

static json_t *candidate_json(const pb_graph *g, int nid, const pb_strat *st, const pb_mesh *m)
{
	const pb_node *n = &g->nodes[nid];
	json_t *c = json_object(), *in = json_array(), *out = json_array();
	char buf[64];
	for (int i = 0; i < n->n_inputs && i < PB_SHARD_MAX_IN; i++)
		json_array_append_new(
		    in, json_string(pb_spec_str(st->in[i], m->n_axes, buf, sizeof buf)));
	for (int i = 0; i < n->n_outputs && i < PB_SHARD_MAX_OUT; i++)
		json_array_append_new(
		    out, json_string(pb_spec_str(st->out[i], m->n_axes, buf, sizeof buf)));
	json_object_set_new(c, "label", json_string(st->label));
	json_object_set_new(c, "inputs", in);
	json_object_set_new(c, "outputs", out);
	json_object_set_new(c, "share", json_integer(st->share));
	return c;
}

/* One candidate_filter heuristic as a shard rule of its own, so a spec it
 * removes is named by it (pin's refusal, the workbench's candidate rows). */
typedef struct filter_ud {
	pb_hooks *h;
	int which; /* the heuristic's index among the candidate filters */
} filter_ud;

static int filter_keep(const pb_graph *g, int nid, const pb_strat *st, const pb_mesh *m, void *ud)
{
	const filter_ud *f = ud;
	pb_hooks *h = f->h;
	if (h->failed)
		return 1;
	json_t *c = candidate_json(g, nid, st, m);
	int keep = 1;
	pb_error e = {0};
	int rc = pb_script_candidate_filter(h->sc, f->which, nid, c, &keep, &e);
	json_decref(c);
	if (rc < 0) {
		fail(h, rc, &e);
		return 1;
	}
	return keep;
}

static int label_matches(const char *want, const char *label)
{
	if (!strcmp(want, label))
		return 1;
	size_t wl = strlen(want);
	for (const char *p = label; *p;) {
		const char *q = strchr(p, ',');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (len == wl && !strncmp(p, want, len))
			return 1;
		if (!q)
			break;
		p = q + 1;
	}
	return 0;
}

static int slots_match(const char *rule, const char *field, json_t *want, json_t *have, pb_error *e)
{
	if (!want)
		return 1;
	if (!json_is_array(want))
		return -pb_err(e, PB_EINPUT,
		               "rule '%s': specs field '%s' must be a list of spec strings", rule,
		               field);
	size_t i;
	json_t *w;
	json_array_foreach(want, i, w)
	{
		if (!json_is_string(w))
			return -pb_err(
			    e, PB_EINPUT,
			    "rule '%s': specs field '%s' must hold strings like \"S1\", \"R\", "
			    "\"P\" or \"*\"",
			    rule, field);
		const char *ws = json_string_value(w);
		if (!strcmp(ws, "*"))
			continue;
		json_t *hv = json_array_get(have, i);
		if (!hv || strcmp(json_string_value(hv), ws) != 0)
			return 0;
	}
	return 1;
}

/* 1 if pattern p matches candidate c, 0 if not, negative on a malformed rule. */
static int pattern_matches(const char *rule, json_t *p, json_t *c, pb_error *e)
{
	if (json_is_string(p))
		return label_matches(json_string_value(p),
		                     json_string_value(json_object_get(c, "label")));
	if (!json_is_object(p))
		return -pb_err(e, PB_EINPUT,
		               "rule '%s': each entry of specs must be a label string or a table "
		               "{label=, inputs=, outputs=, share=} (docs/lua-api.md)",
		               rule);
	const char *k;
	json_t *v;
	json_object_foreach(p, k, v)
	{
		if (strcmp(k, "label") && strcmp(k, "inputs") && strcmp(k, "outputs") &&
		    strcmp(k, "share"))
			return -pb_err(
			    e, PB_EINPUT,
			    "rule '%s': unknown specs field '%s' (label, inputs, outputs, share)",
			    rule, k);
	}
	json_t *l = json_object_get(p, "label");
	if (l &&
	    (!json_is_string(l) ||
	     !label_matches(json_string_value(l), json_string_value(json_object_get(c, "label")))))
		return json_is_string(l)
		           ? 0
		           : -pb_err(e, PB_EINPUT, "rule '%s': specs label must be a string", rule);
	json_t *sh = json_object_get(p, "share");
	if (sh && json_number_value(sh) != (double)json_integer_value(json_object_get(c, "share")))
		return 0;
	int r = slots_match(rule, "inputs", json_object_get(p, "inputs"),
	                    json_object_get(c, "inputs"), e);
	if (r <= 0)
		return r;
	return slots_match(rule, "outputs", json_object_get(p, "outputs"),
	                   json_object_get(c, "outputs"), e);
}

static int specs_match(const pb_graph *g, int nid, void *ud)
{
	(void)g;
	pb_hooks *h = ud;
	if (h->failed)
		return 0;
	json_decref(h->specs);
	h->specs = NULL;
	h->spec_node = nid;
	pb_error e = {0};
	int rc = pb_script_rule_specs(h->sc, nid, &h->specs, h->spec_rule, sizeof h->spec_rule, &e);
	if (rc < 0) {
		fail(h, rc, &e);
		return 0;
	}
	return rc == 1;
}

static int specs_keep(const pb_graph *g, int nid, const pb_strat *st, const pb_mesh *m, void *ud)
{
	pb_hooks *h = ud;
	if (h->failed || !h->specs || nid != h->spec_node)
		return 1;
	json_t *c = candidate_json(g, nid, st, m);
	json_t *list = h->specs;
	int keep = 0;
	pb_error e = {0};
	if (json_is_array(list)) {
		size_t i;
		json_t *p;
		json_array_foreach(list, i, p)
		{
			int r = pattern_matches(h->spec_rule, p, c, &e);
			if (r < 0) {
				fail(h, -r, &e);
				keep = 1;
				break;
			}
			if (r) {
				keep = 1;
				break;
			}
		}
	} else {
		int r = pattern_matches(h->spec_rule, list, c, &e);
		if (r < 0)
			fail(h, -r, &e);
		keep = r != 0;
	}
	json_decref(c);
	return keep;
}

int pb_hooks_shard(pb_hooks *h, pb_shard_opts *o, pb_error *err)
{
	if (!h->sc || !h->g)
		return PB_OK;
	int n_filters = pb_script_count(h->sc, "candidate_filter");
	if (n_filters > 0) {
		h->filters = pb_rules_new(0);
		if (!h->filters)
			return pb_err(err, PB_ENOMEM, "out of memory");
		o->filters = h->filters;
	}
	for (int k = 0; k < n_filters; k++) {
		filter_ud *f = malloc(sizeof *f);
		char name[96];
		const char *hn = pb_script_heuristic_name(h->sc, "candidate_filter", k);
		snprintf(name, sizeof name, "%s (Lua candidate_filter)", hn ? hn : "?");
		pb_shard_rule r = {name, "a Lua candidate_filter heuristic", NULL, filter_keep, f,
		                   free};
		if (!f)
			return pb_err(err, PB_ENOMEM, "out of memory");
		f->h = h;
		f->which = k;
		int rc = pb_rules_add(h->filters, &r, err);
		if (rc) {
			free(f);
			return rc;
		}
	}
	if (pb_script_rule_count(h->sc, "specs") > 0) {
		h->rules = pb_rules_new(1);
		pb_shard_rule r = {"lua specs", "Lua pb.rule{specs=...} entries",
		                   specs_match, specs_keep,
		                   h,           NULL};
		if (!h->rules)
			return pb_err(err, PB_ENOMEM, "out of memory");
		int rc = pb_rules_add(h->rules, &r, err);
		if (rc)
			return rc;
		/* The Lua rules go first: they are the user's explicit choice. */
		int n = h->rules->n;
		pb_shard_rule last = h->rules->r[n - 1];
		memmove(h->rules->r + 1, h->rules->r, (size_t)(n - 1) * sizeof last);
		h->rules->r[0] = last;
		o->rules = h->rules;
	}
	return PB_OK;
}

/* ---------------------------------------------------------------- fusion */

static int fuse_cb(void *ud, const pb_graph *g, int node)
{
	(void)g;
	pb_hooks *h = ud;
	if (h->failed)
		return -1;
	int fusable = 1;
	pb_error e = {0};
	int rc = pb_script_rule_fusable(h->sc, node, &fusable, &e);
	if (rc < 0) {
		fail(h, rc, &e);
		return -1;
	}
	return rc == 1 ? fusable : -1;
}

void pb_hooks_fuse(pb_hooks *h, pb_fuse_rules *rules)
{
	if (h->sc && h->g && pb_script_rule_count(h->sc, "fusable") > 0)
		pb_fuse_rules_callback(rules, fuse_cb, h);
}

/* ---------------------------------------------------------------- map */

int pb_hooks_map(pb_hooks *h, const pb_hetero *het, pb_map_opts *o, pb_error *err)
{
	if (!h->sc || !h->g || pb_script_rule_count(h->sc, "backend") == 0)
		return PB_OK;
	int n = h->g->n_nodes;
	h->force = malloc(((size_t)n + 1) * sizeof *h->force);
	h->force_rule = calloc((size_t)n + 1, sizeof *h->force_rule);
	if (!h->force || !h->force_rule)
		return pb_err(err, PB_ENOMEM, "out of memory");
	for (int v = 0; v < n; v++) {
		const char *be = NULL;
		h->force[v] = -1;
		int rc = pb_script_rule_backend(h->sc, v, &be, err);
		if (rc < 0)
			return -rc;
		if (rc == 0)
			continue;
		const char *rule = pb_script_matched_rule(h->sc);
		int b = -1;
		for (int k = 0; k < het->n; k++)
			if (!strcmp(het->b[k].name, be))
				b = k;
		double speed = 1;
		if (b < 0)
			return pb_err(err, PB_EINPUT,
			              "rule '%s': backend '%s' is not in layout %s (node '%s')",
			              rule, be, het->path, h->g->nodes[v].name);
		if (pb_hetero_support(het, b, h->g->nodes[v].op, &speed) <= 0)
			return pb_err(
			    err, PB_EINPUT,
			    "rule '%s': backend '%s' of %s does not support op %s (node '%s')",
			    rule, be, het->path, h->g->nodes[v].op, h->g->nodes[v].name);
		h->force[v] = b;
		/* the rule's own name (the rules cannot change while the command
		 * runs): a copy per node multiplied a long name by the node count */
		h->force_rule[v] = rule ? rule : "?";
	}
	o->force = h->force;
	return PB_OK;
}

int pb_hooks_finish(pb_hooks *h, int rc, pb_error *err)
{
	if (h->failed) {
		*err = h->err;
		rc = h->err.code ? h->err.code : PB_EINPUT;
	}
	free(h->init_state);
	free(h->layer_macs);
	free(h->force_rule);
	free(h->force);
	pb_part_rules_free(h->part_rules);
	pb_rules_free(h->rules);
	pb_rules_free(h->filters);
	json_decref(h->specs);
	memset(h, 0, sizeof *h);
	return rc;
}
