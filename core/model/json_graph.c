/*
 * model/json_graph.c — partbench's own JSON graph format (docs/formats.md), via jansson.
 *
 * Saving writes everything needed to rebuild an identical pb_graph:
 * tensors in id order (dtype, shape, symbolic dims, initializer flags, small
 * constant values), nodes in topological order (id, name, op, domain,
 * attributes with their types, inputs/outputs by tensor name, the node's
 * position in its source file, costs, members of fused nodes, whether its
 * output shapes are known), graph inputs/outputs and opsets. For readers that
 * only want the structure, each node also has `shape` (of its first output)
 * and the file has a derived top-level `edges` list ({from, to, bytes}).
 *
 * Loading declares the tensors first, in file order, so tensor ids are the
 * same; nodes are added in ascending `file_order`, so pb_builder_finish's
 * topological numbering (a min-heap on file order) reproduces the saved ids
 * and file orders. Costs stated in the file are fixed (absent fields are
 * inferred). When every node states `shape_known` (a complete snapshot, as
 * partbench writes) and no --input override is given, shape inference is not
 * re-run: the file's shapes and values are the graph's. Otherwise (hand-made
 * files, overrides) shapes are inferred from what the file gives.
 * `edges` is derived data and is ignored on loading.
 *
 * Exactness: doubles are written with 17 significant digits (integral values
 * as JSON integers), non-finite numbers as the strings "nan", "inf", "-inf",
 * and strings that are not valid UTF-8 as {"hex": "..."}.
 *
 * Errors name the file and either line:column (malformed JSON) or the path of
 * the offending field ("nodes[3].inputs[1]").
 */
#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/json_graph.h"
#include "util/file_door.h"
#include "util/json_file.h"

#define PB_GRAPH_FORMAT "partbench-graph"
#define PB_GRAPH_VERSION 1

/* ================================================================ writing */

static json_t *num_json(double v)
{
	if (isnan(v))
		return json_string("nan");
	if (isinf(v))
		return json_string(v > 0 ? "inf" : "-inf");
	if (v == floor(v) && fabs(v) < 9007199254740992.0 && !(v == 0 && signbit(v)))
		return json_integer((json_int_t)v);
	return json_real(v);
}

static int utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		int n;
		if (*p < 0x80)
			n = 0;
		else if ((*p & 0xE0) == 0xC0 && *p >= 0xC2)
			n = 1;
		else if ((*p & 0xF0) == 0xE0)
			n = 2;
		else if ((*p & 0xF8) == 0xF0 && *p <= 0xF4)
			n = 3;
		else
			return 0;
		unsigned cp = n == 0   ? *p
		              : n == 1 ? (*p & 0x1Fu)
		              : n == 2 ? (*p & 0x0Fu)
		                       : (*p & 0x07u);
		p++;
		for (int k = 0; k < n; k++, p++) {
			if ((*p & 0xC0) != 0x80)
				return 0;
			cp = (cp << 6) | (*p & 0x3Fu);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
			return 0;
	}
	return 1;
}

static json_t *str_json(const char *s)
{
	if (!s)
		s = "";
	if (utf8_valid(s))
		return json_string(s);
	size_t len = strlen(s);
	char *hex = malloc(2 * len + 1);
	if (!hex)
		return json_null();
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)s[i]);
	json_t *o = json_pack("{s:s}", "hex", hex);
	free(hex);
	return o;
}

static json_t *dtype_json(int dt)
{
	if (dt >= 0 && dt <= PB_DT_BFLOAT16)
		return json_string(pb_dtype_name(dt));
	return json_integer(dt);
}

static int64_t trunc_view(double f)
{
	if (isnan(f))
		return 0;
	if (f >= 9.2e18)
		return INT64_MAX;
	if (f <= -9.2e18)
		return INT64_MIN;
	return (int64_t)f;
}

/* The primary array is the float view for float dtypes, the integer view
 * otherwise; the other view is written only when it is not derivable. */
static json_t *value_json(const pb_value *v)
{
	json_t *o = json_object();
	json_object_set_new(o, "dtype", dtype_json(v->dtype));
	json_t *dims = json_array();
	for (int i = 0; i < v->rank; i++)
		json_array_append_new(dims, json_integer(v->dims[i]));
	json_object_set_new(o, "dims", dims);
	json_t *data = json_array();
	int fl = pb_dtype_is_float(v->dtype);
	int other_differs = 0;
	for (int64_t k = 0; k < v->numel; k++) {
		if (fl) {
			json_array_append_new(data, num_json(v->f[k]));
			other_differs |= v->i[k] != trunc_view(v->f[k]);
		} else {
			json_array_append_new(data, json_integer(v->i[k]));
			other_differs |= !(v->f[k] == (double)v->i[k]);
		}
	}
	json_object_set_new(o, "data", data);
	if (other_differs) {
		json_t *view = json_array();
		for (int64_t k = 0; k < v->numel; k++)
			json_array_append_new(view, fl ? json_integer(v->i[k]) : num_json(v->f[k]));
		json_object_set_new(o, fl ? "int_view" : "float_view", view);
	}
	return o;
}

static const char *const attr_type_names[] = {"undefined", "float",  "int",  "string", "tensor",
                                              "graph",     "floats", "ints", "strings"};

static json_t *attr_json(const pb_attr *a)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", str_json(a->name));
	if (a->type >= 0 && a->type <= PB_ATTR_STRINGS)
		json_object_set_new(o, "type", json_string(attr_type_names[a->type]));
	else
		json_object_set_new(o, "type", json_integer(a->type));
	json_t *v = NULL;
	switch (a->type) {
	case PB_ATTR_FLOAT:
		v = num_json(a->f);
		break;
	case PB_ATTR_INT:
		v = json_integer(a->i);
		break;
	case PB_ATTR_STRING:
		v = str_json(a->s);
		break;
	case PB_ATTR_TENSOR:
		v = a->t ? value_json(a->t) : json_null();
		break;
	case PB_ATTR_GRAPH:
		v = json_pack("{s:i}", "subgraph_nodes", a->subgraph_nodes);
		break;
	case PB_ATTR_FLOATS:
	case PB_ATTR_INTS:
	case PB_ATTR_STRINGS:
		v = json_array();
		for (int k = 0; k < a->n; k++) {
			if (a->type == PB_ATTR_FLOATS)
				json_array_append_new(v, num_json(a->floats ? a->floats[k] : 0));
			else if (a->type == PB_ATTR_INTS)
				json_array_append_new(v, json_integer(a->ints ? a->ints[k] : 0));
			else
				json_array_append_new(v, str_json(a->strings ? a->strings[k] : ""));
		}
		break;
	default:
		v = json_null();
		break;
	}
	json_object_set_new(o, "value", v);
	return o;
}

static json_t *cost_json(const pb_cost *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "macs", num_json(c->macs));
	json_object_set_new(o, "flops", num_json(c->flops));
	json_object_set_new(o, "params", num_json(c->params));
	json_object_set_new(o, "param_bytes", num_json(c->param_bytes));
	json_object_set_new(o, "out_bytes", num_json(c->out_bytes));
	json_object_set_new(o, "in_bytes", num_json(c->in_bytes));
	return o;
}

static json_t *tensor_name_json(const pb_graph *g, int tid)
{
	return str_json(tid >= 0 && tid < g->n_tensors ? g->tensors[tid].name : "");
}

static json_t *node_json(const pb_graph *g, int id)
{
	const pb_node *n = &g->nodes[id];
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(id));
	json_object_set_new(o, "name", str_json(n->name));
	json_object_set_new(o, "op", str_json(n->op));
	if (n->domain && *n->domain)
		json_object_set_new(o, "domain", str_json(n->domain));
	json_t *ins = json_array(), *outs = json_array();
	for (int j = 0; j < n->n_inputs; j++)
		json_array_append_new(ins, tensor_name_json(g, n->inputs[j]));
	for (int j = 0; j < n->n_outputs; j++)
		json_array_append_new(outs, tensor_name_json(g, n->outputs[j]));
	json_object_set_new(o, "inputs", ins);
	json_object_set_new(o, "outputs", outs);
	if (n->n_attrs) {
		json_t *attrs = json_array();
		for (int k = 0; k < n->n_attrs; k++)
			json_array_append_new(attrs, attr_json(&n->attrs[k]));
		json_object_set_new(o, "attrs", attrs);
	}
	char shape[256] = "-";
	for (int j = 0; j < n->n_outputs; j++)
		if (n->outputs[j] >= 0) {
			pb_tensor_shape_str(&g->tensors[n->outputs[j]], shape, sizeof shape);
			break;
		}
	json_object_set_new(o, "shape", str_json(shape));
	json_object_set_new(o, "shape_known", json_boolean(n->shape_known));
	json_object_set_new(o, "file_order", json_integer(n->file_order));
	json_object_set_new(o, "cost", cost_json(&n->cost));
	if (n->n_members > 0) {
		json_t *names = json_array(), *ids = json_array();
		for (int m = 0; m < n->n_members; m++) {
			json_array_append_new(names, n->member_names && n->member_names[m]
			                                 ? str_json(n->member_names[m])
			                                 : json_null());
			json_array_append_new(ids, json_integer(n->members ? n->members[m] : -1));
		}
		json_object_set_new(o, "members", names);
		json_object_set_new(o, "member_ids", ids);
	}
	return o;
}

static json_t *tensor_json(const pb_tensor *t)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", str_json(t->name));
	json_object_set_new(o, "dtype", dtype_json(t->dtype));
	if (t->rank < 0) {
		json_object_set_new(o, "shape", json_null());
	} else {
		json_t *dims = json_array();
		int any_param = 0;
		for (int i = 0; i < t->rank; i++) {
			json_array_append_new(dims, json_integer(t->dims[i]));
			any_param |= t->dim_params[i] != NULL;
		}
		json_object_set_new(o, "shape", dims);
		if (any_param) {
			json_t *dp = json_array();
			for (int i = 0; i < t->rank; i++)
				json_array_append_new(dp, t->dim_params[i]
				                              ? str_json(t->dim_params[i])
				                              : json_null());
			json_object_set_new(o, "dim_params", dp);
		}
	}
	if (t->is_initializer)
		json_object_set_new(o, "initializer", json_true());
	if (t->external_data)
		json_object_set_new(o, "external_data", json_true());
	if (t->value)
		json_object_set_new(o, "value", value_json(t->value));
	return o;
}

static json_t *graph_json(const pb_graph *g)
{
	json_t *j = json_object();
	json_object_set_new(j, "format", json_string(PB_GRAPH_FORMAT));
	json_object_set_new(j, "version", json_integer(PB_GRAPH_VERSION));
	json_object_set_new(j, "name", str_json(g->name));
	json_object_set_new(j, "source", str_json(g->path));
	json_object_set_new(j, "source_format", str_json(g->format));
	json_t *opsets = json_array();
	for (int i = 0; i < g->n_opsets; i++)
		json_array_append_new(opsets, json_pack("{s:o,s:I}", "domain",
		                                        str_json(g->opsets[i].domain), "version",
		                                        (json_int_t)g->opsets[i].version));
	json_object_set_new(j, "opsets", opsets);
	json_t *ins = json_array(), *outs = json_array();
	for (int i = 0; i < g->n_inputs; i++)
		json_array_append_new(ins, tensor_name_json(g, g->inputs[i]));
	for (int i = 0; i < g->n_outputs; i++)
		json_array_append_new(outs, tensor_name_json(g, g->outputs[i]));
	json_object_set_new(j, "inputs", ins);
	json_object_set_new(j, "outputs", outs);
	json_t *nodes = json_array();
	for (int i = 0; i < g->n_nodes; i++)
		json_array_append_new(nodes, node_json(g, i));
	json_object_set_new(j, "nodes", nodes);
	json_t *edges = json_array();
	for (int i = 0; i < g->n_nodes; i++)
		for (int k = 0; k < g->nodes[i].n_succs; k++) {
			int s = g->nodes[i].succs[k];
			json_t *e = json_object();
			json_object_set_new(e, "from", str_json(g->nodes[i].name));
			json_object_set_new(e, "to", str_json(g->nodes[s].name));
			json_object_set_new(e, "bytes", num_json(pb_graph_edge_bytes(g, i, s)));
			json_array_append_new(edges, e);
		}
	json_object_set_new(j, "edges", edges);
	json_t *tensors = json_array();
	for (int t = 0; t < g->n_tensors; t++)
		json_array_append_new(tensors, tensor_json(&g->tensors[t]));
	json_object_set_new(j, "tensors", tensors);
	return j;
}

int pb_json_graph_save(const pb_graph *g, const char *path, pb_error *err)
{
	json_t *j = graph_json(g);
	if (!j)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", path);
	int rc = pb_json_save_atomic_flags(j, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17), err);
	json_decref(j);
	return rc;
}

/* ================================================================ reading */

/* Where we are in the document, for error messages ("nodes[3].inputs[1]"). */
typedef struct {
	const char *file;
	pb_error *err;
	char path[256];
} rd;

static int rd_fail(rd *r, const char *what, ...) __attribute__((format(printf, 2, 3)));
static int rd_fail(rd *r, const char *what, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, what);
	vsnprintf(msg, sizeof msg, what, ap);
	va_end(ap);
	return pb_err(r->err, PB_EINPUT, "%s: %s%s%s", r->file, r->path, r->path[0] ? ": " : "",
	              msg);
}

/* Appends ".key" or "[i]" to the path; returns the old length to restore. */
static size_t rd_push_key(rd *r, const char *key)
{
	size_t old = strlen(r->path);
	snprintf(r->path + old, sizeof r->path - old, "%s%s", old ? "." : "", key);
	return old;
}

static size_t rd_push_idx(rd *r, size_t i)
{
	size_t old = strlen(r->path);
	snprintf(r->path + old, sizeof r->path - old, "[%zu]", i);
	return old;
}

static void rd_pop(rd *r, size_t old)
{
	r->path[old] = '\0';
}

/* Decodes a string or {"hex": "..."}; returns a malloc'd string or NULL. */
static char *str_decode(const json_t *v)
{
	if (json_is_string(v)) {
		size_t len = json_string_length(v);
		const char *s = json_string_value(v);
		if (memchr(s, '\0', len))
			return NULL;
		return strdup(s);
	}
	const json_t *h = json_object_get(v, "hex");
	if (!json_is_object(v) || json_object_size(v) != 1 || !json_is_string(h))
		return NULL;
	const char *s = json_string_value(h);
	size_t len = strlen(s);
	if (len % 2)
		return NULL;
	char *out = malloc(len / 2 + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < len / 2; i++) {
		unsigned x;
		if (sscanf(s + 2 * i, "%2x", &x) != 1 || x == 0 ||
		    !strchr("0123456789abcdefABCDEF", s[2 * i]) ||
		    !strchr("0123456789abcdefABCDEF", s[2 * i + 1])) {
			free(out);
			return NULL;
		}
		out[i] = (char)x;
	}
	out[len / 2] = '\0';
	return out;
}

/* Reads a string field; absent → dflt (NULL dflt = required). */
static int rd_str(rd *r, const json_t *obj, const char *key, const char *dflt, char **out)
{
	*out = NULL;
	const json_t *v = json_object_get(obj, key);
	size_t old = rd_push_key(r, key);
	int rc = PB_OK;
	if (!v) {
		if (dflt)
			*out = strdup(dflt);
		else
			rc = rd_fail(r, "missing (expected a string)");
	} else if (!(*out = str_decode(v))) {
		rc = rd_fail(r, "expected a string");
	}
	rd_pop(r, old);
	return rc;
}

static int num_decode(const json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return 0;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		if (strcmp(s, "nan") == 0)
			*out = NAN;
		else if (strcmp(s, "inf") == 0)
			*out = INFINITY;
		else if (strcmp(s, "-inf") == 0)
			*out = -INFINITY;
		else
			return -1;
		return 0;
	}
	return -1;
}

static int rd_num_at(rd *r, const json_t *v, double *out)
{
	if (num_decode(v, out) != 0)
		return rd_fail(r, "expected a number");
	return PB_OK;
}

static int rd_int_at(rd *r, const json_t *v, int64_t lo, int64_t hi, int64_t *out)
{
	if (!json_is_integer(v))
		return rd_fail(r, "expected an integer");
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return rd_fail(r, "%lld is out of range [%lld, %lld]", (long long)x, (long long)lo,
		               (long long)hi);
	*out = x;
	return PB_OK;
}

static int rd_array(rd *r, const json_t *obj, const char *key, int required, const json_t **out)
{
	*out = json_object_get(obj, key);
	if (!*out) {
		if (!required)
			return PB_OK;
		size_t old = rd_push_key(r, key);
		int rc = rd_fail(r, "missing (expected an array)");
		rd_pop(r, old);
		return rc;
	}
	if (!json_is_array(*out)) {
		size_t old = rd_push_key(r, key);
		int rc = rd_fail(r, "expected an array");
		rd_pop(r, old);
		return rc;
	}
	return PB_OK;
}

static int rd_bool(rd *r, const json_t *obj, const char *key, int *out)
{
	const json_t *v = json_object_get(obj, key);
	*out = 0;
	if (!v)
		return PB_OK;
	if (!json_is_boolean(v)) {
		size_t old = rd_push_key(r, key);
		int rc = rd_fail(r, "expected true or false");
		rd_pop(r, old);
		return rc;
	}
	*out = json_is_true(v);
	return PB_OK;
}

static int rd_dtype(rd *r, const json_t *obj, const char *key, int *out)
{
	const json_t *v = json_object_get(obj, key);
	*out = PB_DT_UNDEFINED;
	if (!v)
		return PB_OK;
	size_t old = rd_push_key(r, key);
	int rc = PB_OK;
	if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 1000) {
		*out = (int)json_integer_value(v);
	} else if (json_is_string(v)) {
		const char *s = json_string_value(v);
		int found = -1;
		for (int d = 0; d <= PB_DT_BFLOAT16 && found < 0; d++)
			if (strcmp(s, pb_dtype_name(d)) == 0)
				found = d;
		if (found < 0)
			rc = rd_fail(r, "unknown dtype \"%s\" (float32, int64, float16, ...)", s);
		else
			*out = found;
	} else {
		rc = rd_fail(r, "expected a dtype name such as \"float32\"");
	}
	rd_pop(r, old);
	return rc;
}

static int rd_dims(rd *r, const json_t *arr, int *rank, int64_t *dims, int64_t lo)
{
	if (!json_is_array(arr))
		return rd_fail(r, "expected an array of dims");
	if (json_array_size(arr) > PB_MAX_RANK)
		return rd_fail(r, "rank %zu exceeds the maximum %d", json_array_size(arr),
		               PB_MAX_RANK);
	*rank = (int)json_array_size(arr);
	for (int i = 0; i < *rank; i++) {
		size_t old = rd_push_idx(r, (size_t)i);
		int rc = rd_int_at(r, json_array_get(arr, (size_t)i), lo, INT64_MAX, &dims[i]);
		rd_pop(r, old);
		if (rc)
			return rc;
	}
	return PB_OK;
}

static int rd_value(rd *r, const json_t *o, pb_value **out)
{
	*out = NULL;
	if (!json_is_object(o))
		return rd_fail(r, "expected a value object {dtype, dims, data}");
	int dtype, rank, rc;
	int64_t dims[PB_MAX_RANK];
	if ((rc = rd_dtype(r, o, "dtype", &dtype)))
		return rc;
	size_t old = rd_push_key(r, "dims");
	const json_t *jd = json_object_get(o, "dims");
	rc = jd ? rd_dims(r, jd, &rank, dims, 0) : rd_fail(r, "missing (expected an array)");
	rd_pop(r, old);
	if (rc)
		return rc;
	pb_value *v = pb_value_new(dtype, rank, dims);
	if (!v)
		return rd_fail(r, "value too large (at most %d elements)", PB_VALUE_MAX);
	int fl = pb_dtype_is_float(dtype);
	const json_t *data, *view;
	if ((rc = rd_array(r, o, "data", 1, &data)) ||
	    (rc = rd_array(r, o, fl ? "int_view" : "float_view", 0, &view))) {
		pb_value_free(v);
		return rc;
	}
	for (int pass = 0; pass < 2 && rc == PB_OK; pass++) {
		const json_t *arr = pass == 0 ? data : view;
		if (!arr)
			continue;
		const char *key = pass == 0 ? "data" : fl ? "int_view" : "float_view";
		old = rd_push_key(r, key);
		if (json_array_size(arr) != (size_t)v->numel)
			rc = rd_fail(r, "has %zu elements, the dims give %lld",
			             json_array_size(arr), (long long)v->numel);
		for (int64_t k = 0; k < v->numel && rc == PB_OK; k++) {
			size_t o2 = rd_push_idx(r, (size_t)k);
			const json_t *x = json_array_get(arr, (size_t)k);
			int want_float = (pass == 0) == (fl != 0);
			if (want_float) {
				rc = rd_num_at(r, x, &v->f[k]);
				if (pass == 0)
					v->i[k] = trunc_view(v->f[k]);
			} else {
				int64_t iv = 0;
				rc = rd_int_at(r, x, INT64_MIN, INT64_MAX, &iv);
				v->i[k] = iv;
				if (pass == 0)
					v->f[k] = (double)iv;
			}
			rd_pop(r, o2);
		}
		rd_pop(r, old);
	}
	if (rc) {
		pb_value_free(v);
		return rc;
	}
	*out = v;
	return PB_OK;
}

static int attr_type_of(const char *s)
{
	for (int t = 1; t <= PB_ATTR_STRINGS; t++)
		if (strcmp(s, attr_type_names[t]) == 0)
			return t;
	return -1;
}

static void attr_clear(pb_attr *a)
{
	free(a->name);
	free(a->s);
	free(a->floats);
	free(a->ints);
	for (int k = 0; a->strings && k < a->n; k++)
		free(a->strings[k]);
	free(a->strings);
	pb_value_free(a->t);
	memset(a, 0, sizeof *a);
}

static int rd_attr(rd *r, const json_t *o, pb_attr *a)
{
	memset(a, 0, sizeof *a);
	if (!json_is_object(o))
		return rd_fail(r, "expected an attribute object {name, type, value}");
	int rc = rd_str(r, o, "name", NULL, &a->name);
	if (rc)
		return rc;
	char *type = NULL;
	if ((rc = rd_str(r, o, "type", NULL, &type)))
		return rc;
	a->type = attr_type_of(type);
	size_t old = rd_push_key(r, "type");
	if (a->type < 0)
		rc = rd_fail(r,
		             "unknown attribute type \"%s\" (float, int, string, tensor, graph, "
		             "floats, ints, strings)",
		             type);
	rd_pop(r, old);
	free(type);
	if (rc)
		return rc;
	const json_t *v = json_object_get(o, "value");
	old = rd_push_key(r, "value");
	if (!v) {
		rc = rd_fail(r, "missing");
	} else {
		switch (a->type) {
		case PB_ATTR_FLOAT:
			rc = rd_num_at(r, v, &a->f);
			break;
		case PB_ATTR_INT:
			rc = rd_int_at(r, v, INT64_MIN, INT64_MAX, &a->i);
			break;
		case PB_ATTR_STRING:
			if (!(a->s = str_decode(v)))
				rc = rd_fail(r, "expected a string");
			break;
		case PB_ATTR_TENSOR:
			if (!json_is_null(v))
				rc = rd_value(r, v, &a->t);
			break;
		case PB_ATTR_GRAPH: {
			int64_t n = 0;
			const json_t *sn = json_object_get(v, "subgraph_nodes");
			if (!json_is_object(v) || !sn)
				rc = rd_fail(r, "expected {\"subgraph_nodes\": N}");
			else
				rc = rd_int_at(r, sn, 0, INT32_MAX, &n);
			a->subgraph_nodes = (int)n;
			break;
		}
		default: /* lists */
			if (!json_is_array(v) || json_array_size(v) > (size_t)INT32_MAX / 16) {
				rc = rd_fail(r, "expected an array");
				break;
			}
			a->n = (int)json_array_size(v);
			size_t cnt = a->n ? (size_t)a->n : 1;
			if (a->type == PB_ATTR_FLOATS)
				a->floats = calloc(cnt, sizeof *a->floats);
			else if (a->type == PB_ATTR_INTS)
				a->ints = calloc(cnt, sizeof *a->ints);
			else
				a->strings = calloc(cnt, sizeof *a->strings);
			if (!a->floats && !a->ints && !a->strings) {
				rc = pb_err(r->err, PB_ENOMEM, "%s: out of memory", r->file);
				break;
			}
			for (int k = 0; k < a->n && rc == PB_OK; k++) {
				size_t o2 = rd_push_idx(r, (size_t)k);
				const json_t *x = json_array_get(v, (size_t)k);
				if (a->type == PB_ATTR_FLOATS)
					rc = rd_num_at(r, x, &a->floats[k]);
				else if (a->type == PB_ATTR_INTS)
					rc = rd_int_at(r, x, INT64_MIN, INT64_MAX, &a->ints[k]);
				else if (!(a->strings[k] = str_decode(x)))
					rc = rd_fail(r, "expected a string");
				rd_pop(r, o2);
			}
			break;
		}
	}
	rd_pop(r, old);
	return rc;
}

static int rd_cost(rd *r, const json_t *o, pb_cost *c)
{
	*c = (pb_cost){NAN, NAN, NAN, NAN, NAN, NAN};
	if (!o)
		return PB_OK;
	if (!json_is_object(o))
		return rd_fail(r, "expected an object {macs, flops, params, ...}");
	static const char *const keys[] = {"macs",        "flops",     "params",
	                                   "param_bytes", "out_bytes", "in_bytes"};
	double *fields[] = {&c->macs,        &c->flops,     &c->params,
	                    &c->param_bytes, &c->out_bytes, &c->in_bytes};
	for (int k = 0; k < 6; k++) {
		const json_t *v = json_object_get(o, keys[k]);
		if (!v)
			continue;
		size_t old = rd_push_key(r, keys[k]);
		int rc = rd_num_at(r, v, fields[k]);
		/* Costs are counts: the same bound as DOT graphs (dot_load.c). */
		if (rc == PB_OK && !(*fields[k] >= 0 && *fields[k] <= 1e18))
			rc = rd_fail(r, "%g is not a cost (expected a number from 0 to 1e18)",
			             *fields[k]);
		rd_pop(r, old);
		if (rc)
			return rc;
	}
	return PB_OK;
}

/* Reads one tensor record into the builder (tensor already declared as tid). */
static int rd_tensor(rd *r, pb_builder *b, int tid, const json_t *o)
{
	int dtype, rc, flag;
	if ((rc = rd_dtype(r, o, "dtype", &dtype)))
		return rc;
	const json_t *shape = json_object_get(o, "shape");
	if (shape && !json_is_null(shape)) {
		int rank;
		int64_t dims[PB_MAX_RANK];
		size_t old = rd_push_key(r, "shape");
		rc = rd_dims(r, shape, &rank, dims, PB_DIM_UNKNOWN);
		/* element counts are int64 products everywhere: keep them finite */
		double numel = 1;
		for (int i = 0; rc == PB_OK && i < rank; i++)
			numel *= dims[i] > 0 ? (double)dims[i] : 1;
		if (rc == PB_OK && numel > 4e18)
			rc = rd_fail(r, "%g elements is more than a tensor can hold", numel);
		rd_pop(r, old);
		if (rc)
			return rc;
		char *params[PB_MAX_RANK] = {0};
		const json_t *dp = json_object_get(o, "dim_params");
		old = rd_push_key(r, "dim_params");
		if (dp && (!json_is_array(dp) || json_array_size(dp) != (size_t)rank))
			rc = rd_fail(r, "expected an array of %d strings or nulls", rank);
		for (int i = 0; dp && rc == PB_OK && i < rank; i++) {
			const json_t *x = json_array_get(dp, (size_t)i);
			if (json_is_null(x))
				continue;
			if (!(params[i] = str_decode(x))) {
				size_t o2 = rd_push_idx(r, (size_t)i);
				rc = rd_fail(r, "expected a string or null");
				rd_pop(r, o2);
			}
		}
		rd_pop(r, old);
		if (rc == PB_OK)
			pb_builder_set_shape(b, tid, dtype, rank, dims, params);
		for (int i = 0; i < PB_MAX_RANK; i++)
			free(params[i]);
		if (rc)
			return rc;
	} else {
		pb_builder_set_shape(b, tid, dtype, -1, NULL, NULL);
	}
	if ((rc = rd_bool(r, o, "initializer", &flag)))
		return rc;
	int ext;
	if ((rc = rd_bool(r, o, "external_data", &ext)))
		return rc;
	if (flag || ext)
		pb_builder_initializer(b, tid, ext);
	const json_t *val = json_object_get(o, "value");
	if (val && !json_is_null(val)) {
		pb_value *v;
		size_t old = rd_push_key(r, "value");
		rc = rd_value(r, val, &v);
		rd_pop(r, old);
		if (rc)
			return rc;
		pb_builder_value(b, tid, v);
	}
	return PB_OK;
}

typedef struct {
	const json_t *obj;
	int64_t file_order;
	size_t index;
} node_ref;

static int cmp_node_ref(const void *a, const void *b)
{
	const node_ref *x = a, *y = b;
	if (x->file_order != y->file_order)
		return x->file_order < y->file_order ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* Reads a list of tensor names; "" stays "" (an omitted optional input). */
static int rd_names(rd *r, const json_t *node, const char *key, char ***out, int *n)
{
	const json_t *arr;
	*out = NULL;
	*n = 0;
	int rc = rd_array(r, node, key, 0, &arr);
	if (rc || !arr)
		return rc;
	size_t cnt = json_array_size(arr);
	if (cnt > 1u << 20) {
		size_t old = rd_push_key(r, key);
		rc = rd_fail(r, "too many entries");
		rd_pop(r, old);
		return rc;
	}
	*out = calloc(cnt ? cnt : 1, sizeof **out);
	if (!*out)
		return pb_err(r->err, PB_ENOMEM, "%s: out of memory", r->file);
	size_t old = rd_push_key(r, key);
	for (size_t i = 0; i < cnt && rc == PB_OK; i++) {
		(*out)[i] = str_decode(json_array_get(arr, i));
		if (!(*out)[i]) {
			size_t o2 = rd_push_idx(r, i);
			rc = rd_fail(r, "expected a tensor name (string)");
			rd_pop(r, o2);
		}
		*n = (int)i + 1;
	}
	rd_pop(r, old);
	return rc;
}

static void names_free(char **names, int n)
{
	for (int i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

static int rd_node(rd *r, pb_builder *b, const json_t *o, int *all_shape_known,
                   unsigned char *shape_known)
{
	if (!json_is_object(o))
		return rd_fail(r, "expected a node object");
	char *name = NULL, *op = NULL, *domain = NULL;
	char **ins = NULL, **outs = NULL;
	int n_in = 0, n_out = 0, rc;
	if ((rc = rd_str(r, o, "name", "", &name)) || (rc = rd_str(r, o, "op", NULL, &op)) ||
	    (rc = rd_str(r, o, "domain", "", &domain)) ||
	    (rc = rd_names(r, o, "inputs", &ins, &n_in)) ||
	    (rc = rd_names(r, o, "outputs", &outs, &n_out)))
		goto done;
	int nid = pb_builder_node(b, name, op, domain, (const char *const *)ins, n_in,
	                          (const char *const *)outs, n_out);
	const json_t *attrs;
	if ((rc = rd_array(r, o, "attrs", 0, &attrs)))
		goto done;
	for (size_t k = 0; attrs && k < json_array_size(attrs) && rc == PB_OK; k++) {
		size_t old = rd_push_key(r, "attrs");
		rd_push_idx(r, k);
		pb_attr a;
		rc = rd_attr(r, json_array_get(attrs, k), &a);
		if (rc == PB_OK)
			pb_builder_attr(b, nid, &a);
		attr_clear(&a);
		rd_pop(r, old);
	}
	if (rc)
		goto done;
	pb_cost c;
	size_t old = rd_push_key(r, "cost");
	rc = rd_cost(r, json_object_get(o, "cost"), &c);
	rd_pop(r, old);
	if (rc)
		goto done;
	pb_builder_node_cost(b, nid, &c);

	const json_t *members, *member_ids;
	if ((rc = rd_array(r, o, "members", 0, &members)) ||
	    (rc = rd_array(r, o, "member_ids", 0, &member_ids)))
		goto done;
	if (members || member_ids) {
		size_t cnt = members ? json_array_size(members) : json_array_size(member_ids);
		if (members && member_ids && json_array_size(member_ids) != cnt) {
			old = rd_push_key(r, "member_ids");
			rc = rd_fail(r, "has %zu entries, members has %zu",
			             json_array_size(member_ids), cnt);
			rd_pop(r, old);
			goto done;
		}
		int *ids = calloc(cnt ? cnt : 1, sizeof *ids);
		char **mn = calloc(cnt ? cnt : 1, sizeof *mn);
		for (size_t m = 0; ids && mn && m < cnt && rc == PB_OK; m++) {
			int64_t id = -1;
			if (member_ids) {
				old = rd_push_key(r, "member_ids");
				rd_push_idx(r, m);
				rc =
				    rd_int_at(r, json_array_get(member_ids, m), -1, INT32_MAX, &id);
				rd_pop(r, old);
			}
			ids[m] = (int)id;
			const json_t *x = members ? json_array_get(members, m) : NULL;
			if (rc == PB_OK && x && !json_is_null(x) && !(mn[m] = str_decode(x))) {
				old = rd_push_key(r, "members");
				rd_push_idx(r, m);
				rc = rd_fail(r, "expected a node name (string)");
				rd_pop(r, old);
			}
		}
		if (!ids || !mn)
			rc = pb_err(r->err, PB_ENOMEM, "%s: out of memory", r->file);
		if (rc == PB_OK)
			pb_builder_node_members(b, nid, ids, (const char *const *)mn, (int)cnt);
		for (size_t m = 0; mn && m < cnt; m++)
			free(mn[m]);
		free(mn);
		free(ids);
		if (rc)
			goto done;
	}
	int known;
	const json_t *sk = json_object_get(o, "shape_known");
	if (!sk)
		*all_shape_known = 0;
	if ((rc = rd_bool(r, o, "shape_known", &known)))
		goto done;
	shape_known[nid] = (unsigned char)known;
done:
	free(name);
	free(op);
	free(domain);
	names_free(ins, n_in);
	names_free(outs, n_out);
	return rc;
}

static int json_to_graph(const json_t *j, const char *file, const pb_load_opts *opts,
                         pb_graph **out, pb_error *err)
{
	rd r = {file, err, ""};
	if (!json_is_object(j))
		return rd_fail(&r, "expected a JSON object (partbench graph)");
	const json_t *fmt = json_object_get(j, "format");
	if (fmt && (!json_is_string(fmt) || strcmp(json_string_value(fmt), PB_GRAPH_FORMAT) != 0)) {
		const char *got = json_is_string(fmt) ? json_string_value(fmt) : "";
		return pb_err(err, PB_EINPUT, "%s: format: expected \"%s\", found \"%s\"%s", file,
		              PB_GRAPH_FORMAT, got,
		              strcmp(got, "partbench-plan") == 0 ? " (this is a plan, not a graph)"
		                                                 : "");
	}
	const json_t *ver = json_object_get(j, "version");
	if (ver && (!json_is_integer(ver) || json_integer_value(ver) < 1 ||
	            json_integer_value(ver) > PB_GRAPH_VERSION))
		return pb_err(err, PB_EINPUT,
		              "%s: version: this partbench reads graph format version %d", file,
		              PB_GRAPH_VERSION);
	const json_t *nodes, *tensors, *ins, *outs, *opsets;
	int rc;
	if ((rc = rd_array(&r, j, "nodes", 1, &nodes)) ||
	    (rc = rd_array(&r, j, "tensors", 0, &tensors)) ||
	    (rc = rd_array(&r, j, "inputs", 0, &ins)) ||
	    (rc = rd_array(&r, j, "outputs", 0, &outs)) ||
	    (rc = rd_array(&r, j, "opsets", 0, &opsets)))
		return rc;
	size_t n_nodes = json_array_size(nodes);
	if (n_nodes > (1u << 24))
		return rd_fail(&r, "nodes: too many nodes");

	pb_builder *b = pb_builder_new(file, "json");
	if (!b)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", file);
	char *gname = NULL;
	if ((rc = rd_str(&r, j, "name", "", &gname)))
		goto fail;
	pb_builder_name(b, gname);
	free(gname);

	/* Tensors first, in file order: ids are the file's. */
	for (size_t t = 0; tensors && t < json_array_size(tensors); t++) {
		const json_t *o = json_array_get(tensors, t);
		size_t old = rd_push_key(&r, "tensors");
		rd_push_idx(&r, t);
		char *tname = NULL;
		if (!json_is_object(o))
			rc = rd_fail(&r, "expected a tensor object");
		else if ((rc = rd_str(&r, o, "name", NULL, &tname)) == PB_OK) {
			int tid = *tname ? pb_builder_tensor(b, tname) : -1;
			if (tid < 0)
				rc = rd_fail(&r, "name: must not be empty");
			else if ((size_t)tid != t)
				rc = rd_fail(&r, "name: tensor \"%s\" is listed twice", tname);
			else
				rc = rd_tensor(&r, b, tid, o);
		}
		free(tname);
		rd_pop(&r, old);
		if (rc)
			goto fail;
	}

	/* Nodes, added in file order. */
	node_ref *refs = calloc(n_nodes ? n_nodes : 1, sizeof *refs);
	unsigned char *known = calloc(n_nodes ? n_nodes : 1, 1);
	if (!refs || !known) {
		free(refs);
		free(known);
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory", file);
		goto fail;
	}
	for (size_t i = 0; i < n_nodes && rc == PB_OK; i++) {
		const json_t *o = json_array_get(nodes, i);
		refs[i].obj = o;
		refs[i].index = i;
		refs[i].file_order = (int64_t)i;
		const json_t *fo = json_object_get(o, "file_order");
		if (fo) {
			size_t old = rd_push_key(&r, "nodes");
			rd_push_idx(&r, i);
			rd_push_key(&r, "file_order");
			rc = rd_int_at(&r, fo, 0, INT32_MAX, &refs[i].file_order);
			rd_pop(&r, old);
		}
	}
	if (rc == PB_OK)
		qsort(refs, n_nodes, sizeof *refs, cmp_node_ref);
	int all_known = 1;
	for (size_t k = 0; k < n_nodes && rc == PB_OK; k++) {
		size_t old = rd_push_key(&r, "nodes");
		rd_push_idx(&r, refs[k].index);
		rc = rd_node(&r, b, refs[k].obj, &all_known, known);
		rd_pop(&r, old);
	}
	free(refs);
	if (rc) {
		free(known);
		goto fail;
	}

	/* Graph inputs and outputs, opsets. */
	for (int pass = 0; pass < 2 && rc == PB_OK; pass++) {
		const json_t *arr = pass ? outs : ins;
		for (size_t i = 0; arr && i < json_array_size(arr) && rc == PB_OK; i++) {
			size_t old = rd_push_key(&r, pass ? "outputs" : "inputs");
			rd_push_idx(&r, i);
			char *tn = str_decode(json_array_get(arr, i));
			if (!tn || !*tn)
				rc = rd_fail(&r, "expected a tensor name");
			else if (pass)
				pb_builder_output(b, pb_builder_tensor(b, tn));
			else
				pb_builder_input(b, pb_builder_tensor(b, tn));
			free(tn);
			rd_pop(&r, old);
		}
	}
	for (size_t i = 0; opsets && i < json_array_size(opsets) && rc == PB_OK; i++) {
		const json_t *o = json_array_get(opsets, i);
		size_t old = rd_push_key(&r, "opsets");
		rd_push_idx(&r, i);
		char *dom = NULL;
		int64_t version = 0;
		if (!json_is_object(o)) {
			rc = rd_fail(&r, "expected {\"domain\": ..., \"version\": N}");
		} else if ((rc = rd_str(&r, o, "domain", "", &dom)) == PB_OK) {
			size_t o2 = rd_push_key(&r, "version");
			const json_t *v = json_object_get(o, "version");
			rc = v ? rd_int_at(&r, v, 0, INT64_MAX, &version) : rd_fail(&r, "missing");
			rd_pop(&r, o2);
			if (rc == PB_OK)
				pb_builder_opset(b, dom, version);
		}
		free(dom);
		rd_pop(&r, old);
	}
	if (rc) {
		free(known);
		goto fail;
	}

	/* A complete snapshot keeps its shapes; otherwise infer. */
	int snapshot = all_known && !(opts && opts->n_overrides > 0);
	rc = pb_builder_finish(b, opts, out, err);
	if (rc == PB_OK && snapshot) {
		/* Node ids equal file order here only when the file was sorted; map
		 * through file_order, which finish kept. */
		pb_graph *g = *out;
		g->shapes_given = 1;
		g->n_unknown_shapes = 0;
		for (int i = 0; i < g->n_nodes; i++) {
			g->nodes[i].shape_known = known[g->nodes[i].file_order] ? 1 : 0;
			g->n_unknown_shapes += !g->nodes[i].shape_known;
		}
	}
	free(known);
	return rc;
fail:
	pb_builder_free(b);
	return rc;
}

int pb_json_graph_read_buffer(const char *text, size_t len, const char *name,
                              const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	*out = NULL;
	if (!name)
		name = "<json>";
	json_error_t je;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return pb_err(err, PB_EINPUT, "%s:%d:%d: %s", name, je.line, je.column, je.text);
	int rc = json_to_graph(j, name, opts, out, err);
	json_decref(j);
	return rc;
}

int pb_json_graph_read(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	*out = NULL;
	json_error_t je;
	FILE *f = pb_door_fopen_read(path, PB_DOOR_MODEL, "model", err);
	if (!f)
		return err ? err->code : PB_EINPUT;
	json_t *j = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
	fclose(f);
	if (!j)
		return pb_err(err, PB_EINPUT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
	int rc = json_to_graph(j, path, opts, out, err);
	json_decref(j);
	return rc;
}
