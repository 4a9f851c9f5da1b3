/*
 * partition/chain/chain_rules.c — cut and pin rules of the chain partition
 * (chain_rules.h).
 */
#include "partition/chain/chain_rules.h"
#include "partition/chain/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pb_part_rules *pb_part_rules_new(int m)
{
	pb_part_rules *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->m = m;
	snprintf(r->pin_kind, sizeof r->pin_kind, "core");
	r->cut = calloc((size_t)m + 1, 1);
	r->pin = malloc(((size_t)m + 1) * sizeof *r->pin);
	r->info = json_array();
	if (!r->cut || !r->pin || !r->info) {
		pb_part_rules_free(r);
		return NULL;
	}
	for (int v = 0; v < m; v++)
		r->pin[v] = -1;
	return r;
}

void pb_part_rules_free(pb_part_rules *r)
{
	if (!r)
		return;
	free(r->cut);
	free(r->pin);
	json_decref(r->info);
	free(r);
}

/* The info entry of (name, effect), created on first use. */
static json_t *entry(pb_part_rules *r, const char *name, const char *effect)
{
	size_t i;
	json_t *e;
	json_array_foreach(r->info, i, e)
	{
		if (!strcmp(json_string_value(json_object_get(e, "name")), name) &&
		    !strcmp(json_string_value(json_object_get(e, "effect")), effect))
			return e;
	}
	e = json_pack("{s:s,s:s,s:[],s:i}", "name", name, "effect", effect, "nodes", "count", 0);
	json_array_append_new(r->info, e);
	return e;
}

static void note(pb_part_rules *r, const char *name, const char *effect, const char *node)
{
	json_t *e = entry(r, name, effect);
	json_t *nodes = json_object_get(e, "nodes");
	/* The report lists a few nodes; count says how many matched. */
	if (json_array_size(nodes) < 8)
		json_array_append_new(nodes, json_string(node));
	json_object_set_new(e, "count",
	                    json_integer(json_integer_value(json_object_get(e, "count")) + 1));
}

int pb_part_rules_cut(pb_part_rules *r, const char *name, int v, const char *node, int how,
                      pb_error *err)
{
	if (v < 0 || v >= r->m - 1)
		return PB_OK;
	int p = v + 1;
	if (r->cut[p] && r->cut[p] != how)
		return pb_err(err, PB_EINPUT,
		              "rule '%s': the boundary after node '%s' is both forbidden and "
		              "forced by cut rules",
		              name, node);
	if (!r->cut[p])
		r->n_cut++;
	r->cut[p] = (unsigned char)how;
	note(r, name, how == PB_CUT_FORCE ? "cut=force" : "cut=forbid", node);
	return PB_OK;
}

int pb_part_rules_pin(pb_part_rules *r, const char *name, int v, const char *node, int core,
                      pb_error *err)
{
	if (v < 0 || v >= r->m)
		return PB_OK;
	if (core < 0)
		return pb_err(err, PB_EINPUT, "rule '%s': core %d for node '%s' is negative", name,
		              core, node);
	if (r->pin[v] < 0)
		r->n_pin++;
	r->pin[v] = core;
	char effect[32];
	snprintf(effect, sizeof effect, "%s=%d", r->pin_kind, core);
	note(r, name, effect, node);
	return PB_OK;
}

const char *pb_part_rules_info_name(const json_t *info, const char *effect, const char *node)
{
	size_t i, k;
	const json_t *r, *x;
	const char *last = "?";
	json_array_foreach(info, i, r)
	{
		const char *ef = json_string_value(json_object_get(r, "effect"));
		if (!ef || strcmp(ef, effect))
			continue;
		last = json_string_value(json_object_get(r, "name"));
		json_array_foreach(json_object_get(r, "nodes"), k, x)
		{
			const char *nm = json_string_value(x);
			if (nm && node && !strcmp(nm, node))
				return last;
		}
	}
	return last ? last : "?";
}

const char *pb_part_rules_name(const pb_part_rules *r, const char *effect)
{
	size_t i;
	json_t *e;
	const char *name = "?";
	json_array_foreach(r->info, i, e)
	{
		if (!strcmp(json_string_value(json_object_get(e, "effect")), effect))
			name = json_string_value(json_object_get(e, "name"));
	}
	return name;
}

int pb_part_rules_empty(const pb_part_rules *r)
{
	return !r || (r->n_cut == 0 && r->n_pin == 0);
}

int pb_part_has_rules(const pb_part_problem *P)
{
	return P->cut || P->pin;
}

/* Node-level rules (r->m graph nodes) as layer rules of P: a cut after a
 * layer's node stays; a cut after a folded node is no boundary of the chain
 * and is dropped; a pin on a folded node pins its host layer (the node is in
 * that layer's group). Two different pins on one layer are an error. */
static int map_to_layers(pb_part_problem *P, const pb_part_rules *r, pb_error *err)
{
	for (int l = 0; l <= P->m; l++)
		P->cut[l] = PB_CUT_FREE;
	for (int l = 0; l < P->m; l++)
		P->pin[l] = -1;
	for (int v = 0; v < r->m; v++) {
		int l = P->node_layer[v];
		if (l < 0)
			continue;
		int own = P->layer_node[l] == v;
		if (own && r->cut[v + 1] && l + 1 < P->m)
			P->cut[l + 1] = r->cut[v + 1];
		if (r->pin[v] < 0)
			continue;
		if (P->pin[l] >= 0 && P->pin[l] != r->pin[v]) {
			char e1[32], e2[32];
			snprintf(e1, sizeof e1, "%s=%d", r->pin_kind, P->pin[l]);
			snprintf(e2, sizeof e2, "%s=%d", r->pin_kind, r->pin[v]);
			return pb_err(err, PB_EINPUT,
			              "rules '%s' (%s) and '%s' (%s) pin layer %d (node %d and the "
			              "load-time constants it consumes, which go with it) to two "
			              "cores",
			              pb_part_rules_name(r, e1), e1, pb_part_rules_name(r, e2), e2,
			              l, P->layer_node[l]);
		}
		P->pin[l] = r->pin[v];
	}
	return PB_OK;
}

int pb_part_problem_set_rules(pb_part_problem *P, const pb_part_rules *r, pb_error *err)
{
	if (pb_part_rules_empty(r))
		return PB_OK;
	int nodes = P->node_layer && r->m == P->n_nodes;
	if (r->m != P->m && !nodes)
		return pb_err(err, PB_EINPUT,
		              "partition rules: made for %d layers, the model has %d", r->m, P->m);
	for (int v = 0; v < r->m; v++)
		if (r->pin[v] >= P->n) {
			char effect[32];
			snprintf(effect, sizeof effect, "core=%d", r->pin[v]);
			return pb_err(err, PB_EINPUT,
			              "rule '%s': core %d does not exist in layout %s (%d cores, "
			              "numbered from 0)",
			              pb_part_rules_name(r, effect), r->pin[v],
			              P->hw.path[0] ? P->hw.path : P->hw.name, P->n);
		}
	P->cut = malloc((size_t)P->m + 1);
	P->pin = malloc(((size_t)P->m + 1) * sizeof *P->pin);
	if (!P->cut || !P->pin) {
		free(P->cut);
		free(P->pin);
		P->cut = NULL;
		P->pin = NULL;
		return pb_err(err, PB_ENOMEM, "partition: out of memory");
	}
	int rc = PB_OK;
	if (nodes && P->n_folded > 0) {
		rc = map_to_layers(P, r, err);
	} else {
		memcpy(P->cut, r->cut, (size_t)P->m + 1);
		memcpy(P->pin, r->pin, (size_t)P->m * sizeof *P->pin);
	}
	if (rc) {
		free(P->cut);
		free(P->pin);
		P->cut = NULL;
		P->pin = NULL;
		return rc;
	}
	json_decref(P->rules);
	P->rules = json_deep_copy(r->info);
	return PB_OK;
}

int pb_part_rules_apply(const pb_part_problem *P, int *ac, int action, const char **why)
{
	int n = P->n, type, i;
	if (!P->cut || !pb_env_decode(n, action, &type, &i) ||
	    (type != PB_ACT_C && type != PB_ACT_D) || !pb_env_valid(ac, n, action, why))
		return pb_env_apply(ac, n, action, why);
	int p = 0; /* the boundary after core i's layers */
	for (int c = 0; c <= i; c++)
		p += ac[c];
	int d = 1;
	if (type == PB_ACT_C) {
		while (d < ac[i] && P->cut[p - d] == PB_CUT_FORBID)
			d++;
		ac[i] -= d;
		ac[i + 1] += d;
	} else {
		/* the last core keeps a layer: then one layer, as pb_env_apply */
		int most = i + 1 == n - 1 ? ac[i + 1] - 1 : ac[i + 1];
		while (d < most && p + d < P->m && P->cut[p + d] == PB_CUT_FORBID)
			d++;
		ac[i] += d;
		ac[i + 1] -= d;
	}
	return 1;
}
