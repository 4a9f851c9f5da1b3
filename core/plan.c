/*
 * plan.c — generic plans and their JSON form (see plan.h, docs/formats.md).
 */
#include "plan.h"
#include "util/file_door.h"

#include "model/graph.h"
#include "util/json_file.h"

#include "util/atomic_file.h"
#include "util/proof_label.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pb_plan *pb_plan_new(const char *kind, const char *method, int n_nodes)
{
	pb_plan *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->kind = strdup(kind ? kind : "");
	p->method = strdup(method ? method : "");
	p->n_nodes = n_nodes;
	p->group = malloc((size_t)(n_nodes > 0 ? n_nodes : 1) * sizeof *p->group);
	for (int i = 0; i < n_nodes; i++)
		p->group[i] = -1;
	p->detail = json_object();
	return p;
}

void pb_plan_set_method(pb_plan *p, const char *method)
{
	free(p->method);
	p->method = strdup(method ? method : "");
}

pb_plan *pb_plan_copy(const pb_plan *p)
{
	if (!p)
		return NULL;
	pb_plan *c = pb_plan_new(p->kind, p->method, p->n_nodes);
	if (!c)
		return NULL;
	memcpy(c->group, p->group, (size_t)p->n_nodes * sizeof *c->group);
	for (int i = 0; i < p->n_groups; i++)
		pb_plan_add_group(c, &p->groups[i]);
	for (int i = 0; i < p->n_metrics; i++)
		pb_plan_set_metric(c, p->metric_names[i], p->metric_values[i]);
	json_decref(c->detail);
	c->detail = json_deep_copy(p->detail);
	c->model_batch = p->model_batch;
	return c;
}

long pb_plan_graph_batch(const struct pb_graph *g)
{
	if (!g || g->n_inputs < 1)
		return 0;
	const pb_tensor *t = &g->tensors[g->inputs[0]];
	return t->rank >= 1 && t->dims[0] > 0 ? (long)t->dims[0] : 0;
}

void pb_plan_clear_groups(pb_plan *p)
{
	for (int i = 0; i < p->n_groups; i++)
		free(p->groups[i].label);
	free(p->groups);
	p->groups = NULL;
	p->n_groups = 0;
}

void pb_plan_fill_node_ranges(pb_plan *p, const struct pb_graph *g)
{
	int n = p->n_nodes < g->n_nodes ? p->n_nodes : g->n_nodes;
	for (int k = 0; k < p->n_groups; k++) {
		p->groups[k].macs = 0;
		p->groups[k].first_node = p->groups[k].last_node = -1;
	}
	for (int v = 0; v < n; v++) {
		int k = p->group[v];
		if (k < 0 || k >= p->n_groups)
			continue;
		pb_plan_group *pg = &p->groups[k];
		pg->macs += g->nodes[v].cost.macs;
		if (pg->first_node < 0)
			pg->first_node = v;
		pg->last_node = v;
	}
	/* a range holding another group's node is no range (unassigned nodes,
	 * such as constants, may sit inside one) */
	for (int k = 0; k < p->n_groups; k++) {
		pb_plan_group *pg = &p->groups[k];
		for (int v = pg->first_node; v >= 0 && v <= pg->last_node; v++)
			if (p->group[v] >= 0 && p->group[v] < p->n_groups && p->group[v] != k) {
				pg->first_node = pg->last_node = -1;
				break;
			}
	}
}

void pb_plan_free(pb_plan *p)
{
	if (!p)
		return;
	free(p->kind);
	free(p->method);
	free(p->group);
	pb_plan_clear_groups(p);
	for (int i = 0; i < p->n_metrics; i++)
		free(p->metric_names[i]);
	free(p->metric_names);
	free(p->metric_values);
	json_decref(p->detail);
	free(p);
}

int pb_plan_add_group(pb_plan *p, const pb_plan_group *g)
{
	pb_plan_group *ng = realloc(p->groups, (size_t)(p->n_groups + 1) * sizeof *ng);
	if (!ng)
		return -1;
	p->groups = ng;
	p->groups[p->n_groups] = *g;
	p->groups[p->n_groups].label = strdup(g->label ? g->label : "");
	return p->n_groups++;
}

void pb_plan_set_label(pb_plan *p, const pb_label *L)
{
	pb_plan_set_metric(p, "optimal", L->optimal);
	if (isfinite(L->bound)) {
		pb_plan_set_metric(p, "bound", L->bound);
		pb_plan_set_metric(p, "gap", pb_label_gap(L));
	}
}

void pb_plan_set_metric(pb_plan *p, const char *name, double v)
{
	for (int i = 0; i < p->n_metrics; i++)
		if (strcmp(p->metric_names[i], name) == 0) {
			p->metric_values[i] = v;
			return;
		}
	char **nn = realloc(p->metric_names, (size_t)(p->n_metrics + 1) * sizeof *nn);
	if (!nn)
		return;
	p->metric_names = nn;
	double *nv = realloc(p->metric_values, (size_t)(p->n_metrics + 1) * sizeof *nv);
	if (!nv)
		return;
	p->metric_values = nv;
	p->metric_names[p->n_metrics] = strdup(name);
	p->metric_values[p->n_metrics] = v;
	p->n_metrics++;
}

double pb_plan_metric(const pb_plan *p, const char *name, double dflt)
{
	for (int i = 0; p && i < p->n_metrics; i++)
		if (strcmp(p->metric_names[i], name) == 0)
			return p->metric_values[i];
	return dflt;
}

int pb_plan_has_metric(const pb_plan *p, const char *name)
{
	for (int i = 0; p && i < p->n_metrics; i++)
		if (strcmp(p->metric_names[i], name) == 0)
			return 1;
	return 0;
}

/* JSON has no NaN/Inf: write them as null. */
static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *pb_plan_to_json(const pb_plan *p, const char *const *node_names)
{
	json_t *j = json_object();
	json_object_set_new(j, "format", json_string("partbench-plan"));
	json_object_set_new(j, "version", json_integer(1));
	json_object_set_new(j, "kind", json_string(p->kind));
	json_object_set_new(j, "method", json_string(p->method));
	json_object_set_new(j, "n_nodes", json_integer(p->n_nodes));
	if (p->model_batch > 0)
		json_object_set_new(j, "model_batch", json_integer(p->model_batch));
	json_t *assign = json_array();
	for (int i = 0; i < p->n_nodes; i++)
		json_array_append_new(assign, json_integer(p->group[i]));
	json_object_set_new(j, "assignment", assign);
	if (node_names) {
		json_t *names = json_array();
		for (int i = 0; i < p->n_nodes; i++)
			json_array_append_new(names,
			                      json_string(node_names[i] ? node_names[i] : ""));
		json_object_set_new(j, "node_names", names);
	}
	json_t *groups = json_array();
	for (int i = 0; i < p->n_groups; i++) {
		const pb_plan_group *g = &p->groups[i];
		json_t *o = json_object();
		json_object_set_new(o, "label", json_string(g->label));
		json_object_set_new(o, "first_unit", json_integer(g->first_unit));
		json_object_set_new(o, "n_units", json_integer(g->n_units));
		json_object_set_new(o, "first_node", json_integer(g->first_node));
		json_object_set_new(o, "last_node", json_integer(g->last_node));
		json_object_set_new(o, "time", num(g->time));
		json_object_set_new(o, "compute", num(g->compute));
		json_object_set_new(o, "routing", num(g->routing));
		json_object_set_new(o, "storage", num(g->storage));
		json_object_set_new(o, "macs", num(g->macs));
		json_object_set_new(o, "bottleneck", json_boolean(g->bottleneck));
		json_object_set_new(o, "over_memory", json_boolean(g->over_memory));
		json_array_append_new(groups, o);
	}
	json_object_set_new(j, "groups", groups);
	json_t *m = json_object();
	for (int i = 0; i < p->n_metrics; i++)
		json_object_set_new(m, p->metric_names[i], num(p->metric_values[i]));
	json_object_set_new(j, "metrics", m);
	json_object_set_new(j, "detail", json_deep_copy(p->detail));
	return j;
}

static double jnum(const json_t *o, const char *k, double dflt)
{
	const json_t *v = json_object_get(o, k);
	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_null(v))
		return NAN;
	return dflt;
}

/* An int field of a group: absent or null gives dflt; anything but a whole
 * number in int range is an error (-1; a cast of 1e10 or NaN to int is
 * undefined behaviour). */
static int jint(const json_t *o, const char *k, int dflt, int *out)
{
	const json_t *v = json_object_get(o, k);
	*out = dflt;
	if (!v || json_is_null(v))
		return 0;
	double d = json_number_value(v);
	if (!json_is_number(v) || d != floor(d) || d < INT_MIN || d > INT_MAX)
		return -1;
	*out = (int)d;
	return 0;
}

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/* Every field is named when it is missing or of the wrong type (a missing
 * 'assignment' once read "a plan must be a JSON object"). Optional fields
 * (kind, method, groups, metrics, detail) may be absent, but when present
 * they must have their type. */
static int check_fields(const json_t *j, const char *src, pb_error *err)
{
	if (!json_is_object(j))
		return pb_err(err, PB_EINPUT, "%s: a plan must be a JSON object, not %s", src,
		              json_kind(j));
	const json_t *f = json_object_get(j, "format");
	if (!f)
		return pb_err(err, PB_EINPUT,
		              "%s: not a partbench plan (field 'format' is missing; expected "
		              "\"partbench-plan\")",
		              src);
	if (!json_is_string(f) || strcmp(json_string_value(f), "partbench-plan") != 0)
		return pb_err(err, PB_EINPUT,
		              "%s: not a partbench plan (\"format\" is not \"partbench-plan\")",
		              src);
	const json_t *a = json_object_get(j, "assignment");
	if (!a)
		return pb_err(err, PB_EINPUT,
		              "%s: field 'assignment' is missing (one group index per node)", src);
	if (!json_is_array(a))
		return pb_err(err, PB_EINPUT, "%s: field 'assignment' must be an array, not %s",
		              src, json_kind(a));
	static const struct {
		const char *name;
		json_type type;
	} opt[] = {{"kind", JSON_STRING},
	           {"method", JSON_STRING},
	           {"groups", JSON_ARRAY},
	           {"metrics", JSON_OBJECT},
	           {"detail", JSON_OBJECT}};
	for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++) {
		const json_t *v = json_object_get(j, opt[i].name);
		if (v && !json_is_null(v) && json_typeof(v) != opt[i].type)
			return pb_err(err, PB_EINPUT, "%s: field '%s' must be %s, not %s", src,
			              opt[i].name,
			              opt[i].type == JSON_STRING  ? "a string"
			              : opt[i].type == JSON_ARRAY ? "an array"
			                                          : "an object",
			              json_kind(v));
	}
	const json_t *g;
	size_t gi;
	json_array_foreach(json_object_get(j, "groups"), gi, g)
	{
		if (!json_is_object(g))
			return pb_err(err, PB_EINPUT, "%s: groups[%zu] must be an object, not %s",
			              src, gi, json_kind(g));
	}
	return PB_OK;
}

/* Every group listed must hold a node: a plan of a few nodes listing tens of
 * thousands of empty groups made every pass over groups x ranges quadratic
 * (`export --plan`: 127 s at 40,000 groups). */
static int check_groups_used(const pb_plan *p, const char *src, pb_error *err)
{
	if (p->n_groups == 0)
		return PB_OK;
	unsigned char *used = calloc((size_t)p->n_groups, 1);
	if (!used)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", src);
	for (int i = 0; i < p->n_nodes; i++)
		if (p->group[i] >= 0)
			used[p->group[i]] = 1;
	int unused = -1;
	for (int k = 0; k < p->n_groups && unused < 0; k++)
		if (!used[k])
			unused = k;
	free(used);
	if (unused >= 0)
		return pb_err(err, PB_EINPUT,
		              "%s: groups[%d] is used by no node (assignment never names it): a "
		              "group no node uses is refused",
		              src, unused);
	return PB_OK;
}

int pb_plan_from_json(const json_t *j, const char *src, int n_nodes, pb_plan **out, pb_error *err)
{
	*out = NULL;
	int rc = check_fields(j, src, err);
	if (rc)
		return rc;
	const json_t *assign = json_object_get(j, "assignment");
	if (json_array_size(assign) > INT32_MAX)
		return pb_err(err, PB_EINPUT, "%s: field 'assignment' is too long", src);
	int n = (int)json_array_size(assign);
	if (n_nodes >= 0 && n != n_nodes)
		return pb_err(err, PB_EINPUT,
		              "%s: the plan assigns %d nodes but the model has %d (plan made for "
		              "another model?)",
		              src, n, n_nodes);
	pb_plan *p = pb_plan_new(json_string_value(json_object_get(j, "kind")),
	                         json_string_value(json_object_get(j, "method")), n);
	for (int i = 0; i < n; i++) {
		const json_t *v = json_array_get(assign, (size_t)i);
		if (!json_is_integer(v)) {
			pb_plan_free(p);
			return pb_err(err, PB_EINPUT, "%s: assignment[%d] is not an integer", src,
			              i);
		}
		json_int_t a = json_integer_value(v);
		if (a < -1 || a > INT32_MAX) { /* before the cast: 2^32 would wrap to group 0 */
			pb_plan_free(p);
			return pb_err(err, PB_EINPUT,
			              "%s: assignment[%d] = %" JSON_INTEGER_FORMAT
			              " names no group",
			              src, i, a);
		}
		p->group[i] = (int)a;
	}
	const json_t *groups = json_object_get(j, "groups");
	if (json_array_size(groups) > (size_t)n) { /* before building them */
		pb_plan_free(p);
		return pb_err(err, PB_EINPUT,
		              "%s: the plan lists %zu groups for %d nodes: a group no node uses "
		              "is refused",
		              src, json_array_size(groups), n);
	}
	size_t gi;
	const json_t *o;
	json_array_foreach(groups, gi, o)
	{
		pb_plan_group g = {0};
		g.label = (char *)json_string_value(json_object_get(o, "label"));
		const char *bad = jint(o, "first_unit", -1, &g.first_unit)   ? "first_unit"
		                  : jint(o, "n_units", 0, &g.n_units)        ? "n_units"
		                  : jint(o, "first_node", -1, &g.first_node) ? "first_node"
		                  : jint(o, "last_node", -1, &g.last_node)   ? "last_node"
		                                                             : NULL;
		if (bad) {
			pb_plan_free(p);
			return pb_err(err, PB_EINPUT, "%s: groups[%zu].%s must be a whole number",
			              src, gi, bad);
		}
		g.time = jnum(o, "time", 0);
		g.compute = jnum(o, "compute", 0);
		g.routing = jnum(o, "routing", 0);
		g.storage = jnum(o, "storage", 0);
		g.macs = jnum(o, "macs", 0);
		g.bottleneck = json_is_true(json_object_get(o, "bottleneck"));
		g.over_memory = json_is_true(json_object_get(o, "over_memory"));
		pb_plan_add_group(p, &g);
	}
	for (int i = 0; i < n; i++)
		if (p->group[i] < -1 || p->group[i] >= (p->n_groups ? p->n_groups : INT32_MAX)) {
			int bad = p->group[i];
			pb_plan_free(p);
			return pb_err(err, PB_EINPUT, "%s: assignment[%d] = %d names no group", src,
			              i, bad);
		}
	if ((rc = check_groups_used(p, src, err))) {
		pb_plan_free(p);
		return rc;
	}
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)json_object_get(j, "metrics"), key, v)
	{
		pb_plan_set_metric(p, key, json_is_number(v) ? json_number_value(v) : NAN);
	}
	const json_t *d = json_object_get(j, "detail");
	if (json_is_object(d)) {
		json_decref(p->detail);
		p->detail = json_deep_copy(d);
	}
	const json_t *mb = json_object_get(j, "model_batch");
	if (mb && (!json_is_integer(mb) || json_integer_value(mb) < 1 ||
	           json_integer_value(mb) > INT32_MAX)) {
		pb_plan_free(p);
		return pb_err(err, PB_EINPUT, "%s: model_batch must be a whole number >= 1", src);
	}
	if (mb) {
		p->model_batch = (long)json_integer_value(mb);
	} else if (!strcmp(p->kind, "pipeline")) {
		/* a plan saved before model_batch: a pipeline's detail has its batch
		 * and the micro-batches, its stages were costed at batch / m */
		long B = (long)json_number_value(json_object_get(p->detail, "batch"));
		long m = (long)pb_plan_metric(p, "microbatches", 0);
		if (B > 0 && m > 0 && B % m == 0 && !pb_plan_has_metric(p, "dp"))
			p->model_batch = B / m;
	}
	*out = p;
	return PB_OK;
}

int pb_plan_save(const pb_plan *p, const char *const *node_names, const char *path, pb_error *err)
{
	json_t *j = pb_plan_to_json(p, node_names);
	int rc = pb_json_save_atomic(j, path, err);
	json_decref(j);
	return rc;
}

int pb_plan_load(const char *path, int n_nodes, pb_plan **out, pb_error *err)
{
	json_t *j = pb_door_load_json(path, 0, PB_DOOR_JSON, "plan", NULL, err);
	if (!j)
		return err ? err->code : PB_EINPUT;
	/* a saved session stands for its plan (`export --plan session.json`) */
	const json_t *src = j;
	const char *fmt = json_string_value(json_object_get(j, "format"));
	if (fmt && !strcmp(fmt, "partbench-session")) {
		src = json_object_get(j, "plan");
		if (!json_is_object(src)) {
			json_decref(j);
			return pb_err(err, PB_EINPUT,
			              "%s: a partbench session without a plan (its \"plan\" is "
			              "null); open it with 'load %s' and make one",
			              path, path);
		}
	}
	int rc = pb_plan_from_json(src, path, n_nodes, out, err);
	json_decref(j);
	return rc;
}

int pb_plan_move_boundary(const pb_plan *p, int k, int delta, int *group_out, pb_error *err)
{
	int ng = p->n_groups;
	if (k < 0 || k + 1 >= ng)
		return pb_err(err, PB_EUSAGE,
		              "group %d has no next group (valid: 0..%d of %d groups)", k, ng - 2,
		              ng);
	int na = 0, nb = 0;
	for (int v = 0; v < p->n_nodes; v++) {
		group_out[v] = p->group[v];
		na += p->group[v] == k;
		nb += p->group[v] == k + 1;
	}
	int take = delta > 0 ? delta : -delta;
	if (delta == 0 || take >= (delta > 0 ? nb : na))
		return pb_err(err, PB_EUSAGE,
		              "cannot move %d nodes: group %d has %d and group %d has %d, and each "
		              "must keep at least one",
		              delta, k, na, k + 1, nb);
	if (delta > 0) { /* the first nodes of k+1 */
		for (int v = 0; v < p->n_nodes && take > 0; v++)
			if (p->group[v] == k + 1) {
				group_out[v] = k;
				take--;
			}
	} else { /* the last nodes of k */
		for (int v = p->n_nodes - 1; v >= 0 && take > 0; v--)
			if (p->group[v] == k) {
				group_out[v] = k + 1;
				take--;
			}
	}
	return PB_OK;
}
