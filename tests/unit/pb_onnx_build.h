/*
 * pb_onnx_build.h — tiny ONNX model builder for tests: fills the protobuf-c
 * structs generated from onnx.proto, packs them to bytes and loads them with
 * pb_onnx_load_buffer(), so tests exercise the real decoding path.
 * Every allocation is recorded and released by mb_free().
 */
#ifndef PB_ONNX_BUILD_H
#define PB_ONNX_BUILD_H

#include <stdlib.h>
#include <string.h>

#include "model/graph.h"
#include "load.h"
#include "onnx.pb-c.h"

typedef struct mb {
	Onnx__ModelProto model;
	Onnx__GraphProto graph;
	Onnx__OperatorSetIdProto opset;
	Onnx__OperatorSetIdProto *opsets[1];
	void *allocs[4096];
	int n_allocs;
	Onnx__NodeProto *last;
} mb;

static inline void *mb_alloc(mb *b, size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (b->n_allocs < 4096)
		b->allocs[b->n_allocs++] = p;
	return p;
}

static inline char *mb_str(mb *b, const char *s)
{
	char *p = mb_alloc(b, strlen(s) + 1);
	strcpy(p, s);
	return p;
}

#define MB_PUSH(b, arr, n, item)                                                                   \
	do {                                                                                       \
		void *np_ = mb_alloc((b), ((n) + 1) * sizeof *(arr));                              \
		if ((n))                                                                           \
			memcpy(np_, (arr), (n) * sizeof *(arr));                                   \
		(arr) = np_;                                                                       \
		(arr)[(n)++] = (item);                                                             \
	} while (0)

static inline void mb_init(mb *b, int64_t opset)
{
	memset(b, 0, sizeof *b);
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto o = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	b->model = m;
	b->graph = g;
	b->opset = o;
	b->opset.domain = "";
	b->opset.has_version = 1;
	b->opset.version = opset;
	b->opsets[0] = &b->opset;
	b->model.has_ir_version = 1;
	b->model.ir_version = 8;
	b->model.n_opset_import = 1;
	b->model.opset_import = b->opsets;
	b->model.graph = &b->graph;
	b->graph.name = "test";
}

/* A tensor type; dims < 0 are symbolic dims named by params[i] (or unnamed). */
static inline Onnx__TypeProto *mb_type(mb *b, int dtype, int rank, const int64_t *dims,
                                       const char *const *params)
{
	Onnx__TypeProto *tp = mb_alloc(b, sizeof *tp);
	Onnx__TypeProto__Tensor *tt = mb_alloc(b, sizeof *tt);
	Onnx__TensorShapeProto *sh = mb_alloc(b, sizeof *sh);
	Onnx__TypeProto ti = ONNX__TYPE_PROTO__INIT;
	Onnx__TypeProto__Tensor tti = ONNX__TYPE_PROTO__TENSOR__INIT;
	Onnx__TensorShapeProto shi = ONNX__TENSOR_SHAPE_PROTO__INIT;
	*tp = ti;
	*tt = tti;
	*sh = shi;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	tt->has_elem_type = 1;
	tt->elem_type = dtype;
	if (rank >= 0) {
		tt->shape = sh;
		for (int i = 0; i < rank; i++) {
			Onnx__TensorShapeProto__Dimension *d = mb_alloc(b, sizeof *d);
			Onnx__TensorShapeProto__Dimension di =
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
			*d = di;
			if (dims[i] >= 0) {
				d->value_case =
				    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
				d->dim_value = dims[i];
			} else if (params && params[i]) {
				d->value_case =
				    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
				d->dim_param = mb_str(b, params[i]);
			}
			MB_PUSH(b, sh->dim, sh->n_dim, d);
		}
	}
	return tp;
}

static inline void mb_input(mb *b, const char *name, int dtype, int rank, const int64_t *dims,
                            const char *const *params)
{
	Onnx__ValueInfoProto *vi = mb_alloc(b, sizeof *vi);
	Onnx__ValueInfoProto vii = ONNX__VALUE_INFO_PROTO__INIT;
	*vi = vii;
	vi->name = mb_str(b, name);
	vi->type = mb_type(b, dtype, rank, dims, params);
	MB_PUSH(b, b->graph.input, b->graph.n_input, vi);
}

static inline void mb_output(mb *b, const char *name)
{
	Onnx__ValueInfoProto *vi = mb_alloc(b, sizeof *vi);
	Onnx__ValueInfoProto vii = ONNX__VALUE_INFO_PROTO__INIT;
	*vi = vii;
	vi->name = mb_str(b, name);
	MB_PUSH(b, b->graph.output, b->graph.n_output, vi);
}

/* Float initializer with external data (no bytes), like the stripped models. */
static inline void mb_weight(mb *b, const char *name, int rank, const int64_t *dims)
{
	Onnx__TensorProto *t = mb_alloc(b, sizeof *t);
	Onnx__TensorProto ti = ONNX__TENSOR_PROTO__INIT;
	*t = ti;
	t->name = mb_str(b, name);
	t->has_data_type = 1;
	t->data_type = PB_DT_FLOAT;
	t->n_dims = (size_t)rank;
	t->dims = mb_alloc(b, (size_t)(rank + 1) * sizeof *t->dims);
	memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
	t->has_data_location = 1;
	t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	Onnx__StringStringEntryProto *e = mb_alloc(b, sizeof *e);
	Onnx__StringStringEntryProto ei = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
	*e = ei;
	e->key = "location";
	e->value = "absent.weights";
	MB_PUSH(b, t->external_data, t->n_external_data, e);
	MB_PUSH(b, b->graph.initializer, b->graph.n_initializer, t);
}

/* 1-D int64 initializer with inline data (n < 0: a scalar of vals[0]). */
static inline void mb_ints(mb *b, const char *name, int n, const int64_t *vals)
{
	Onnx__TensorProto *t = mb_alloc(b, sizeof *t);
	Onnx__TensorProto ti = ONNX__TENSOR_PROTO__INIT;
	*t = ti;
	t->name = mb_str(b, name);
	t->has_data_type = 1;
	t->data_type = PB_DT_INT64;
	int cnt = n < 0 ? 1 : n;
	if (n >= 0) {
		t->n_dims = 1;
		t->dims = mb_alloc(b, sizeof *t->dims);
		t->dims[0] = n;
	}
	t->n_int64_data = (size_t)cnt;
	t->int64_data = mb_alloc(b, (size_t)cnt * sizeof *t->int64_data);
	memcpy(t->int64_data, vals, (size_t)cnt * sizeof *vals);
	MB_PUSH(b, b->graph.initializer, b->graph.n_initializer, t);
}

/* Adds a node; names are comma-separated ("x,w" / "y"), "" for an omitted input. */
static inline Onnx__NodeProto *mb_node(mb *b, const char *op, const char *ins, const char *outs)
{
	Onnx__NodeProto *n = mb_alloc(b, sizeof *n);
	Onnx__NodeProto ni = ONNX__NODE_PROTO__INIT;
	*n = ni;
	n->op_type = mb_str(b, op);
	n->name = mb_str(b, op);
	n->domain = "";
	const char *lists[2] = {ins, outs};
	for (int k = 0; k < 2; k++) {
		const char *p = lists[k];
		while (p && *p) {
			const char *e = strchr(p, ',');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			char *s = mb_alloc(b, len + 1);
			memcpy(s, p, len);
			if (k == 0)
				MB_PUSH(b, n->input, n->n_input, s);
			else
				MB_PUSH(b, n->output, n->n_output, s);
			p = e ? e + 1 : NULL;
		}
	}
	MB_PUSH(b, b->graph.node, b->graph.n_node, n);
	b->last = n;
	return n;
}

static inline Onnx__AttributeProto *mb_attr(mb *b, const char *name, int type)
{
	Onnx__AttributeProto *a = mb_alloc(b, sizeof *a);
	Onnx__AttributeProto ai = ONNX__ATTRIBUTE_PROTO__INIT;
	*a = ai;
	a->name = mb_str(b, name);
	a->has_type = 1;
	a->type = type;
	MB_PUSH(b, b->last->attribute, b->last->n_attribute, a);
	return a;
}

static inline void mb_attr_int(mb *b, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = mb_attr(b, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
	a->has_i = 1;
	a->i = v;
}

static inline void mb_attr_ints(mb *b, const char *name, int n, const int64_t *v)
{
	Onnx__AttributeProto *a = mb_attr(b, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
	a->n_ints = (size_t)n;
	a->ints = mb_alloc(b, (size_t)(n + 1) * sizeof *a->ints);
	memcpy(a->ints, v, (size_t)n * sizeof *v);
}

static inline void mb_attr_str(mb *b, const char *name, const char *s)
{
	Onnx__AttributeProto *a = mb_attr(b, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
	a->has_s = 1;
	a->s.len = strlen(s);
	a->s.data = (uint8_t *)mb_str(b, s);
}

/* Packs and loads; returns NULL (and fills err) on failure. */
static inline pb_graph *mb_load(mb *b, const pb_load_opts *opts, pb_error *err)
{
	size_t len = onnx__model_proto__get_packed_size(&b->model);
	uint8_t *buf = malloc(len + 1);
	onnx__model_proto__pack(&b->model, buf);
	pb_graph *g = NULL;
	pb_onnx_load_buffer(buf, len, "built.onnx", opts, &g, err);
	free(buf);
	return g;
}

static inline void mb_free(mb *b)
{
	for (int i = 0; i < b->n_allocs; i++)
		free(b->allocs[i]);
	b->n_allocs = 0;
}

#endif
