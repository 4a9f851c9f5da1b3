/*
 * model/gen_gpt.c — the structure-only GPT-style decoder (gen_gpt.h) built
 * with the protobuf-c structs of onnx.proto and packed to bytes.
 *
 * Every allocation goes to one arena (a growing list of blocks) freed after
 * packing. Weights are initializers with data_location EXTERNAL and no bytes
 * (the reader accepts absent external files); the Reshape shapes and the
 * attention scale are small inline constants.
 */
#include "model/gen_gpt.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/graph.h"
#include "onnx.pb-c.h"
#include "util/atomic_file.h"

void pb_gpt_spec_default(pb_gpt_spec *s)
{
	s->layers = 12;
	s->hidden = 768;
	s->heads = 12;
	s->seq = 1024;
	s->vocab = 50257;
	s->batch = 1;
	s->fp16 = 0;
}

int pb_gpt_spec_check(const pb_gpt_spec *s, pb_error *err)
{
	const struct {
		const char *name;
		long v, max;
	} f[] = {{"layers", s->layers, 100000}, {"hidden", s->hidden, 1L << 20},
	         {"heads", s->heads, 1L << 16}, {"seq", s->seq, 1L << 24},
	         {"vocab", s->vocab, 1L << 26}, {"batch", s->batch, 1L << 24}};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (f[i].v < 1 || f[i].v > f[i].max)
			return pb_err(err, PB_EINPUT, "gen gpt: %s must be in 1..%ld, got %ld",
			              f[i].name, f[i].max, f[i].v);
	if (s->hidden % s->heads)
		return pb_err(err, PB_EINPUT,
		              "gen gpt: hidden (%ld) must be a multiple of heads (%ld)", s->hidden,
		              s->heads);
	return PB_OK;
}

double pb_gpt_params(const pb_gpt_spec *s)
{
	double h = (double)s->hidden;
	return (double)s->layers * (12 * h * h + 13 * h) + (double)s->vocab * h +
	       (double)s->seq * h + 2 * h + 1;
}

/* Narayanan et al. 2021, eq. 3: the GEMMs of a forward pass are per layer
 * 24 B s h^2 (Q, K, V, output projection, MLP) + 4 B s^2 h (scores, context)
 * and 2 B s h V for the logits; a training step with activation
 * recomputation runs the layers' forward twice plus a backward of twice the
 * forward (x4) and the logits x3: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). */
double pb_gpt_train_flops(const pb_gpt_spec *s, double batch)
{
	double h = (double)s->hidden, l = (double)s->layers, sq = (double)s->seq;
	double v = (double)s->vocab;
	return 96 * batch * sq * l * h * h * (1 + sq / (6 * h) + v / (16 * l * h));
}

enum { BLOCK_OPS = 29, OUTER_OPS = 5 };

long pb_gpt_node_count(const pb_gpt_spec *s)
{
	return s->layers * BLOCK_OPS + OUTER_OPS;
}

/* ------------------------------------------------------------------ arena */

typedef struct arena {
	void **p;
	size_t n, cap;
	int oom;
	Onnx__GraphProto *g;
	int dtype;
} arena;

static void *al(arena *a, size_t n)
{
	if (a->oom)
		return NULL;
	if (a->n == a->cap) {
		size_t c = a->cap ? a->cap * 2 : 1024;
		void **np = realloc(a->p, c * sizeof *np);
		if (!np) {
			a->oom = 1;
			return NULL;
		}
		a->p = np;
		a->cap = c;
	}
	void *q = calloc(1, n ? n : 1);
	if (!q) {
		a->oom = 1;
		return NULL;
	}
	a->p[a->n++] = q;
	return q;
}

static char *str(arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *str(arena *a, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	char *s = al(a, strlen(buf) + 1);
	if (s)
		strcpy(s, buf);
	return s;
}

/* Appends item to a protobuf-c repeated field (pointer array + count). The
 * array doubles when the count reaches a power of two (the arena keeps the
 * old ones), so n pushes hold O(n) memory: a new array per push held
 * O(n^2), 17 GB for a 2000-layer model's node list. */
static int push(arena *a, void ***arr, size_t *n, void *item)
{
	if (!item)
		return -1;
	if ((*n & (*n - 1)) == 0) { /* 0, 1, 2, 4, ...: full */
		void **np = al(a, (*n ? 2 * *n : 1) * sizeof *np);
		if (!np)
			return -1;
		if (*n)
			memcpy(np, *arr, *n * sizeof *np);
		*arr = np;
	}
	(*arr)[(*n)++] = item;
	return 0;
}
#define PUSH(a, arr, n, item) push((a), (void ***)&(arr), &(n), (item))

static Onnx__TensorProto *tensor(arena *a, const char *name, int dtype, int rank,
                                 const int64_t *dims)
{
	Onnx__TensorProto *t = al(a, sizeof *t);
	int64_t *d = al(a, (size_t)(rank + 1) * sizeof *d);
	if (!t || !d)
		return NULL;
	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = dtype;
	t->n_dims = (size_t)rank;
	t->dims = d;
	memcpy(d, dims, (size_t)rank * sizeof *d);
	PUSH(a, a->g->initializer, a->g->n_initializer, t);
	return t;
}

/* A weight of the model's dtype, with no bytes (external data, absent). */
static const char *weight(arena *a, const char *name, int rank, const int64_t *dims)
{
	Onnx__TensorProto *t = tensor(a, name, a->dtype, rank, dims);
	Onnx__StringStringEntryProto *e = al(a, sizeof *e);
	if (!t || !e)
		return name;
	onnx__string_string_entry_proto__init(e);
	e->key = "location";
	e->value = "weights.absent";
	t->has_data_location = 1;
	t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	PUSH(a, t->external_data, t->n_external_data, e);
	return name;
}

static void ints_const(arena *a, const char *name, int n, const int64_t *v)
{
	int64_t dim = n;
	Onnx__TensorProto *t = tensor(a, name, PB_DT_INT64, 1, &dim);
	int64_t *d = al(a, (size_t)n * sizeof *d);
	if (!t || !d)
		return;
	memcpy(d, v, (size_t)n * sizeof *d);
	t->n_int64_data = (size_t)n;
	t->int64_data = d;
}

static Onnx__NodeProto *node(arena *a, const char *op, const char *name, int nin,
                             const char *const *in, const char *out)
{
	Onnx__NodeProto *n = al(a, sizeof *n);
	if (!n)
		return NULL;
	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->name = (char *)name;
	for (int i = 0; i < nin; i++)
		PUSH(a, n->input, n->n_input, (char *)in[i]);
	PUSH(a, n->output, n->n_output, (char *)out);
	PUSH(a, a->g->node, a->g->n_node, n);
	return n;
}

static void attr_int(arena *a, Onnx__NodeProto *n, const char *name, int64_t v)
{
	Onnx__AttributeProto *at = al(a, sizeof *at);
	if (!n || !at)
		return;
	onnx__attribute_proto__init(at);
	at->name = (char *)name;
	at->has_type = 1;
	at->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	at->has_i = 1;
	at->i = v;
	PUSH(a, n->attribute, n->n_attribute, at);
}

static void attr_perm(arena *a, Onnx__NodeProto *n, int k, const int64_t *perm)
{
	Onnx__AttributeProto *at = al(a, sizeof *at);
	int64_t *p = al(a, (size_t)k * sizeof *p);
	if (!n || !at || !p)
		return;
	onnx__attribute_proto__init(at);
	at->name = "perm";
	at->has_type = 1;
	at->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	memcpy(p, perm, (size_t)k * sizeof *p);
	at->n_ints = (size_t)k;
	at->ints = p;
	PUSH(a, n->attribute, n->n_attribute, at);
}

static Onnx__ValueInfoProto *value_info(arena *a, const char *name, int dtype, int rank,
                                        const int64_t *dims)
{
	Onnx__ValueInfoProto *vi = al(a, sizeof *vi);
	Onnx__TypeProto *tp = al(a, sizeof *tp);
	Onnx__TypeProto__Tensor *tt = al(a, sizeof *tt);
	Onnx__TensorShapeProto *sh = al(a, sizeof *sh);
	if (!vi || !tp || !tt || !sh)
		return NULL;
	onnx__value_info_proto__init(vi);
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	onnx__tensor_shape_proto__init(sh);
	vi->name = (char *)name;
	vi->type = tp;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	tt->has_elem_type = 1;
	tt->elem_type = dtype;
	if (rank >= 0) {
		tt->shape = sh;
		for (int i = 0; i < rank; i++) {
			Onnx__TensorShapeProto__Dimension *d = al(a, sizeof *d);
			if (!d)
				return NULL;
			onnx__tensor_shape_proto__dimension__init(d);
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[i];
			PUSH(a, sh->dim, sh->n_dim, d);
		}
	}
	return vi;
}

/* ------------------------------------------------------------------ graph */

/* y = x . W + b (W [k, n]); returns y's name. */
static const char *linear(arena *a, const char *pre, const char *x, long k, long n)
{
	int64_t wd[2] = {k, n}, bd[1] = {n};
	const char *w = weight(a, str(a, "%s.weight", pre), 2, wd);
	const char *b = weight(a, str(a, "%s.bias", pre), 1, bd);
	const char *mm = str(a, "%s.mm", pre), *y = str(a, "%s.out", pre);
	const char *in1[2] = {x, w}, *in2[2] = {mm, b};
	node(a, "MatMul", str(a, "%s.matmul", pre), 2, in1, mm);
	node(a, "Add", str(a, "%s.add_bias", pre), 2, in2, y);
	return y;
}

static const char *layer_norm(arena *a, const char *pre, const char *x, long h)
{
	int64_t d[1] = {h};
	const char *in[3] = {x, weight(a, str(a, "%s.weight", pre), 1, d),
	                     weight(a, str(a, "%s.bias", pre), 1, d)};
	const char *y = str(a, "%s.out", pre);
	Onnx__NodeProto *n = node(a, "LayerNormalization", str(a, "%s", pre), 3, in, y);
	attr_int(a, n, "axis", -1);
	return y;
}

static const char *unary(arena *a, const char *op, const char *name, const char *x)
{
	const char *y = str(a, "%s.out", name);
	node(a, op, name, 1, &x, y);
	return y;
}

static const char *binary(arena *a, const char *op, const char *name, const char *x, const char *z)
{
	const char *in[2] = {x, z}, *y = str(a, "%s.out", name);
	node(a, op, name, 2, in, y);
	return y;
}

static const char *transpose(arena *a, const char *name, const char *x, const int64_t *perm)
{
	const char *y = str(a, "%s.out", name);
	attr_perm(a, node(a, "Transpose", name, 1, &x, y), 4, perm);
	return y;
}

/* One decoder block on x [B,S,H]; returns its output. */
static const char *block(arena *a, const pb_gpt_spec *s, long l, const char *x)
{
	long h = s->hidden;
	static const int64_t p_heads[4] = {0, 2, 1, 3}, p_keys[4] = {0, 2, 3, 1};
	const char *ln1 = layer_norm(a, str(a, "h%ld.ln_1", l), x, h);
	const char *qkv[3];
	const char *nm[3] = {"q", "k", "v"};
	for (int i = 0; i < 3; i++) {
		const char *y = linear(a, str(a, "h%ld.attn.%s", l, nm[i]), ln1, h, h);
		const char *r =
		    binary(a, "Reshape", str(a, "h%ld.attn.%s_heads", l, nm[i]), y, "shape_heads");
		qkv[i] =
		    transpose(a, str(a, "h%ld.attn.%s_t", l, nm[i]), r, i == 1 ? p_keys : p_heads);
	}
	const char *sc = binary(a, "MatMul", str(a, "h%ld.attn.scores", l), qkv[0], qkv[1]);
	sc = binary(a, "Mul", str(a, "h%ld.attn.scale", l), sc, "attn_scale");
	Onnx__NodeProto *sm = NULL;
	const char *pr = str(a, "h%ld.attn.softmax.out", l);
	sm = node(a, "Softmax", str(a, "h%ld.attn.softmax", l), 1, &sc, pr);
	attr_int(a, sm, "axis", -1);
	const char *ctx = binary(a, "MatMul", str(a, "h%ld.attn.context", l), pr, qkv[2]);
	ctx = transpose(a, str(a, "h%ld.attn.merge_t", l), ctx, p_heads);
	ctx = binary(a, "Reshape", str(a, "h%ld.attn.merge", l), ctx, "shape_hidden");
	const char *o = linear(a, str(a, "h%ld.attn.proj", l), ctx, h, h);
	const char *r1 = binary(a, "Add", str(a, "h%ld.residual_1", l), x, o);
	const char *ln2 = layer_norm(a, str(a, "h%ld.ln_2", l), r1, h);
	const char *f1 = linear(a, str(a, "h%ld.mlp.fc", l), ln2, h, 4 * h);
	const char *g = unary(a, "Gelu", str(a, "h%ld.mlp.gelu", l), f1);
	const char *f2 = linear(a, str(a, "h%ld.mlp.proj", l), g, 4 * h, h);
	return binary(a, "Add", str(a, "h%ld.residual_2", l), r1, f2);
}

static void build(arena *a, const pb_gpt_spec *s, Onnx__GraphProto *g)
{
	long h = s->hidden, d = s->hidden / s->heads;
	g->name = "gpt";
	int64_t ids[2] = {s->batch, s->seq};
	PUSH(a, g->input, g->n_input, value_info(a, "input_ids", PB_DT_INT64, 2, ids));
	int64_t heads[4] = {0, 0, s->heads, d}, hid[3] = {0, 0, h}, flat[2] = {-1, h};
	ints_const(a, "shape_heads", 4, heads);
	ints_const(a, "shape_hidden", 3, hid);
	ints_const(a, "shape_tokens", 2, flat);
	int64_t one = 1;
	Onnx__TensorProto *sc = tensor(a, "attn_scale", a->dtype, 0, &one);
	float *f = al(a, sizeof *f);
	if (sc && f) {
		*f = (float)(1.0 / sqrt((double)d));
		if (a->dtype == PB_DT_FLOAT) {
			sc->n_float_data = 1;
			sc->float_data = f;
		} else { /* float16 bits travel in int32_data */
			int32_t *bits = al(a, sizeof *bits);
			if (bits) {
				/* 1/sqrt(d) is in (0, 1]: a normal half, rounded down */
				int e = 0;
				double m = frexp(*f, &e); /* *f = m 2^e, m in [0.5, 1) */
				*bits = (int32_t)(((e - 1 + 15) << 10) | (int)((m * 2 - 1) * 1024));
				sc->n_int32_data = 1;
				sc->int32_data = bits;
			}
		}
	}
	int64_t wte_d[2] = {s->vocab, h}, wpe_d[2] = {s->seq, h};
	const char *wte = weight(a, "wte", 2, wte_d);
	const char *ge[2] = {wte, "input_ids"};
	node(a, "Gather", "embed.tokens", 2, ge, "embed.tokens.out");
	const char *x =
	    binary(a, "Add", "embed.positions", "embed.tokens.out", weight(a, "wpe", 2, wpe_d));
	for (long l = 0; l < s->layers; l++)
		x = block(a, s, l, x);
	x = layer_norm(a, "ln_f", x, h);
	x = binary(a, "Reshape", "lm_head.tokens", x, "shape_tokens");
	const char *in[2] = {x, wte};
	attr_int(a, node(a, "Gemm", "lm_head", 2, in, "logits"), "transB", 1);
	PUSH(a, g->output, g->n_output, value_info(a, "logits", a->dtype, -1, NULL));
}

int pb_gen_gpt_bytes(const pb_gpt_spec *s, unsigned char **out, size_t *len, pb_error *err)
{
	int rc = pb_gpt_spec_check(s, err);
	if (rc)
		return rc;
	arena a = {0};
	a.dtype = s->fp16 ? PB_DT_FLOAT16 : PB_DT_FLOAT;
	Onnx__ModelProto m;
	Onnx__GraphProto g;
	Onnx__OperatorSetIdProto ops;
	Onnx__OperatorSetIdProto *opsv[1] = {&ops};
	onnx__model_proto__init(&m);
	onnx__graph_proto__init(&g);
	onnx__operator_set_id_proto__init(&ops);
	ops.domain = "";
	ops.has_version = 1;
	ops.version = 20; /* Gelu */
	m.has_ir_version = 1;
	m.ir_version = 9;
	m.producer_name = "partbench gen gpt";
	m.n_opset_import = 1;
	m.opset_import = opsv;
	m.graph = &g;
	a.g = &g;
	build(&a, s, &g);
	*out = NULL;
	*len = 0;
	if (!a.oom) {
		size_t n = onnx__model_proto__get_packed_size(&m);
		*out = malloc(n ? n : 1);
		if (*out)
			*len = onnx__model_proto__pack(&m, *out);
	}
	for (size_t i = 0; i < a.n; i++)
		free(a.p[i]);
	free(a.p);
	if (!*out)
		return pb_err(err, PB_ENOMEM, "gen gpt: out of memory");
	return PB_OK;
}

int pb_gen_gpt_write(const pb_gpt_spec *s, const char *path, pb_error *err)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int rc = pb_gen_gpt_bytes(s, &buf, &len, err);
	if (rc == PB_OK)
		rc = pb_write_file_atomic(path, (const char *)buf, len, err);
	free(buf);
	return rc;
}
