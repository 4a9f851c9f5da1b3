/*
 * onnx_load.c — ONNX (.onnx) model loader, structure only.
 *
 * Decoding: the file is memory-mapped. The ModelProto and GraphProto framing
 * is walked by hand (wire format: field key, varint length) only to record
 * where each opset_import, graph input/output, initializer, value_info and
 * node sits (layout_scan). Each of those parts is then decoded on its own by
 * the protobuf-c bindings generated at build time from the system's
 * onnx.proto (onnx.pb-c.h), into a bump arena that is reset after every part.
 * Nodes and value infos, which a model holds by the thousand, are first
 * tried with the hand-written decoders of onnx_wire.h (same structs, several
 * times faster); whatever they do not handle goes to protobuf-c.
 * So the fully decoded model never exists at once: memory is the file plus
 * the largest single part (one inline weight) plus the graph, and decoding
 * costs no per-field malloc/free.
 *
 * What is kept (copied into a pb_builder):
 *  - opset versions per domain, graph inputs/outputs, value_info shapes (they
 *    seed shape inference, see shape.c);
 *  - initializers: name, dtype, dims, external or not. Their bytes are never
 *    required (data_location = EXTERNAL files may be absent). Values are kept
 *    as pb_value only for small tensors that shape arithmetic may need:
 *    integer/bool tensors up to PB_VALUE_MAX elements, floating tensors up to
 *    ONNX_FLOAT_VALUE_MAX elements (a float weight is never shape data, and
 *    copying every weight would double the memory of a full-weight model);
 *  - Constant nodes: the output shape from the tensor attribute (so a large
 *    constant still has a shape), the value when small;
 *  - If/Loop/Scan bodies stay opaque: the node is kept as one node and its
 *    GRAPH attribute records the body's node count (subgraph_nodes).
 *
 * Parts are processed in a fixed order whatever the file order: opsets,
 * inputs, initializers (their dims win over an input's declared type),
 * value_info, nodes, outputs.
 *
 * Errors: an empty file, a truncated file or one that is not protobuf (byte
 * offset of the bad field), a model without a graph, a part that protobuf-c
 * rejects (its index and byte range), nodes without op_type, unnamed tensors
 * and raw_data of the wrong size all give a message naming the file and the
 * problem.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/onnx_load.h"
#include "util/file_door.h"
#include "onnx.pb-c.h"
#include "model/onnx_wire.h"

#define ONNX_FLOAT_VALUE_MAX 1024
#define ONNX_DIM_MAX ((int64_t)1 << 40) /* larger dims are malformed input */

/* ---------------------------------------------------------------- arena */

/* protobuf-c allocates every string, message and repeated array separately;
 * for a 6.6k-node model that is ~10^5 small mallocs and as many frees. The
 * decoded message lives only for one load, so it is decoded into a bump
 * arena (chained blocks) that is released in one go. */
typedef struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	max_align_t data[];
} arena_block;

typedef struct {
	arena_block *head;
	int failed;
} arena;

#define ARENA_BLOCK (256 * 1024)

static void *arena_alloc(void *ud, size_t size)
{
	arena *a = ud;
	size = (size + 15) & ~(size_t)15;
	arena_block *b = a->head;
	if (!b || b->cap - b->used < size) {
		size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
		b = malloc(sizeof *b + cap);
		if (!b) {
			a->failed = 1;
			return NULL;
		}
		b->cap = cap;
		b->used = 0;
		/* A large single allocation gets its own block behind the head, so
		 * the head's free space is not wasted. */
		if (a->head && size > ARENA_BLOCK) {
			b->next = a->head->next;
			a->head->next = b;
		} else {
			b->next = a->head;
			a->head = b;
		}
	}
	void *p = (char *)b->data + b->used;
	b->used += size;
	return p;
}

static void arena_free_one(void *ud, void *p)
{
	(void)ud;
	(void)p; /* released with the whole arena */
}

/* Keeps one standard block for reuse (hot in cache), frees the rest. */
static void arena_reset(arena *a)
{
	arena_block *keep = NULL;
	while (a->head) {
		arena_block *n = a->head->next;
		if (!keep && a->head->cap == ARENA_BLOCK) {
			keep = a->head;
			keep->next = NULL;
			keep->used = 0;
		} else {
			free(a->head);
		}
		a->head = n;
	}
	a->head = keep;
}

static void arena_release(arena *a)
{
	while (a->head) {
		arena_block *n = a->head->next;
		free(a->head);
		a->head = n;
	}
}

/* ---------------------------------------------------------------- wire format */

static int read_varint(const uint8_t *p, size_t len, size_t *off, uint64_t *v)
{
	uint64_t r = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*off >= len)
			return -1; /* ran off the end */
		uint8_t b = p[(*off)++];
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -2; /* over-long varint */
}

/* One field of a message: number, wire type, varint value or the span of a
 * length-delimited payload (absolute offsets into the file). */
typedef struct {
	uint32_t num;
	int wt;
	uint64_t v;
	size_t off, len;
} wfield;

/* Reads the next field of the message in p[*off, end). Returns 1 for a
 * field, 0 at the end, or an error naming the byte offset. */
static int next_field(const uint8_t *p, size_t *off, size_t end, wfield *f, const char *file,
                      const char *what, pb_error *err)
{
	if (*off >= end)
		return 0;
	size_t at = *off;
	uint64_t key;
	int r = read_varint(p, end, off, &key);
	if (r == -1)
		return pb_err(err, PB_EINPUT,
		              "%s: truncated ONNX file: a field header of the %s at byte %zu is "
		              "cut off",
		              file, what, at) *
		       -1;
	if (r < 0 || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
		return pb_err(
		           err, PB_EINPUT,
		           "%s: not an ONNX model (not protobuf data: bad field header in the %s "
		           "at byte %zu)",
		           file, what, at) *
		       -1;
	f->num = (uint32_t)(key >> 3);
	f->wt = (int)(key & 7);
	f->off = *off;
	f->len = 0;
	switch (f->wt) {
	case 0:
		if (read_varint(p, end, off, &f->v) == -1)
			return pb_err(err, PB_EINPUT,
			              "%s: truncated ONNX file: the value of field %u of the %s at "
			              "byte %zu is cut off",
			              file, f->num, what, at) *
			       -1;
		return 1;
	case 1:
	case 5: {
		size_t w = f->wt == 1 ? 8 : 4;
		if (end - *off < w)
			return pb_err(err, PB_EINPUT,
			              "%s: truncated ONNX file: field %u of the %s at byte %zu is "
			              "cut off",
			              file, f->num, what, at) *
			       -1;
		*off += w;
		return 1;
	}
	case 2:
		if (read_varint(p, end, off, &f->v) == -1)
			return pb_err(
			           err, PB_EINPUT,
			           "%s: truncated ONNX file: the length of field %u of the %s at "
			           "byte %zu is cut off",
			           file, f->num, what, at) *
			       -1;
		if (f->v > end - *off)
			return pb_err(
			           err, PB_EINPUT,
			           "%s: truncated ONNX file: field %u of the %s at byte %zu needs "
			           "%llu bytes but only %zu remain",
			           file, f->num, what, at, (unsigned long long)f->v, end - *off) *
			       -1;
		f->off = *off;
		f->len = (size_t)f->v;
		*off += f->len;
		return 1;
	default:
		return pb_err(
		           err, PB_EINPUT,
		           "%s: not an ONNX model (not protobuf data: invalid wire type %d in the "
		           "%s at byte %zu)",
		           file, f->wt, what, at) *
		       -1;
	}
}

typedef struct {
	size_t off, len;
} span;

typedef struct {
	span *v;
	size_t n, cap;
} spans;

static int spans_push(spans *s, size_t off, size_t len)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 64;
		span *nv = realloc(s->v, nc * sizeof *nv);
		if (!nv)
			return -1;
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n].off = off;
	s->v[s->n].len = len;
	s->n++;
	return 0;
}

/* Where the parts of a model sit in the file. */
typedef struct {
	int has_ir;
	int64_t ir_version;
	int n_graphs;
	span name;
	spans opsets, nodes, inits, sparse, inputs, outputs, vinfo;
} layout;

static void layout_free(layout *l)
{
	free(l->opsets.v);
	free(l->nodes.v);
	free(l->inits.v);
	free(l->sparse.v);
	free(l->inputs.v);
	free(l->outputs.v);
	free(l->vinfo.v);
}

/* Walks the ModelProto and GraphProto framing (the only messages that are
 * not decoded by protobuf-c) and records the spans of their parts. */
static int layout_scan(const uint8_t *p, size_t len, const char *file, layout *l, pb_error *err)
{
	size_t off = 0;
	wfield f;
	int r;
	while ((r = next_field(p, &off, len, &f, file, "model", err)) == 1) {
		if (f.num == 1 && f.wt == 0) {
			l->has_ir = 1;
			l->ir_version = (int64_t)f.v;
		} else if ((f.num == 7 || f.num == 8) && f.wt != 2) {
			return pb_err(
			    err, PB_EINPUT,
			    "%s: not an ONNX model (field %u of the model has wire type %d, "
			    "expected a message)",
			    file, f.num, f.wt);
		} else if (f.num == 8) {
			if (spans_push(&l->opsets, f.off, f.len))
				return pb_err(err, PB_ENOMEM, "%s: out of memory", file);
		} else if (f.num == 7) {
			l->n_graphs++;
			size_t goff = f.off, gend = f.off + f.len;
			wfield g;
			int rg;
			while ((rg = next_field(p, &goff, gend, &g, file, "graph", err)) == 1) {
				spans *dst = NULL;
				switch (g.num) {
				case 1:
					dst = &l->nodes;
					break;
				case 5:
					dst = &l->inits;
					break;
				case 11:
					dst = &l->inputs;
					break;
				case 12:
					dst = &l->outputs;
					break;
				case 13:
					dst = &l->vinfo;
					break;
				case 15:
					dst = &l->sparse;
					break;
				case 2:
					if (g.wt == 2) {
						l->name.off = g.off;
						l->name.len = g.len;
					}
					break;
				default:
					break;
				}
				if (dst && g.wt != 2)
					return pb_err(
					    err, PB_EINPUT,
					    "%s: not an ONNX model (field %u of the graph has "
					    "wire type %d, expected a message)",
					    file, g.num, g.wt);
				if (dst && spans_push(dst, g.off, g.len))
					return pb_err(err, PB_ENOMEM, "%s: out of memory", file);
			}
			if (rg < 0)
				return -rg;
		}
	}
	return r < 0 ? -r : PB_OK;
}

/* ---------------------------------------------------------------- tensors */

static double half_to_double(uint16_t h)
{
	int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;
	if (e == 0)
		v = ldexp(m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp(m + 1024, e - 25);
	return s ? -v : v;
}

static double bf16_to_double(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static int dtype_is_int(int dt)
{
	switch (dt) {
	case PB_DT_UINT8:
	case PB_DT_INT8:
	case PB_DT_UINT16:
	case PB_DT_INT16:
	case PB_DT_INT32:
	case PB_DT_INT64:
	case PB_DT_BOOL:
	case PB_DT_UINT32:
	case PB_DT_UINT64:
		return 1;
	default:
		return 0;
	}
}

/* Element count of a TensorProto; -1 if a dim is negative or it overflows. */
static int64_t tensor_numel(const Onnx__TensorProto *t)
{
	int64_t n = 1;
	for (size_t i = 0; i < t->n_dims; i++) {
		if (t->dims[i] < 0)
			return -1;
		if (t->dims[i] > 0 && n > INT64_MAX / t->dims[i])
			return -1;
		n *= t->dims[i];
	}
	return n;
}

static int is_external(const Onnx__TensorProto *t)
{
	return t->has_data_location &&
	       t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* Checks that inline data has the size the dims say. */
static int tensor_check(const Onnx__TensorProto *t, const char *file, const char *what,
                        pb_error *err)
{
	const char *nm = t->name ? t->name : "";
	if (t->n_dims > PB_MAX_RANK)
		return pb_err(err, PB_EINPUT,
		              "%s: %s '%s' has rank %zu (partbench supports up to %d)", file, what,
		              nm, t->n_dims, PB_MAX_RANK);
	int64_t n = tensor_numel(t);
	for (size_t i = 0; i < t->n_dims && n >= 0; i++)
		if (t->dims[i] > ONNX_DIM_MAX)
			n = -1;
	if (n < 0)
		return pb_err(err, PB_EINPUT,
		              "%s: %s '%s' has invalid dims (negative or too large)", file, what,
		              nm);
	if (is_external(t))
		return PB_OK;
	int dt = t->data_type, sz = pb_dtype_size(dt);
	if (t->has_raw_data && sz > 0 &&
	    (t->raw_data.len % (size_t)sz != 0 || (int64_t)(t->raw_data.len / (size_t)sz) != n))
		return pb_err(err, PB_EINPUT,
		              "%s: %s '%s' has %zu bytes of raw_data, but its dims and type (%s) "
		              "need %lld",
		              file, what, nm, t->raw_data.len, pb_dtype_name(dt),
		              (long long)n * sz);
	return PB_OK;
}

static void value_set(pb_value *v, int64_t k, double f, int64_t i, int from_float)
{
	if (from_float) {
		v->f[k] = f;
		v->i[k] = (isfinite(f) && fabs(f) < 9.2e18) ? (int64_t)f : 0;
	} else {
		v->i[k] = i;
		v->f[k] = (double)i;
	}
}

/* Decodes a small inline tensor into a pb_value; NULL when not kept. */
static pb_value *tensor_value(const Onnx__TensorProto *t)
{
	int dt = t->data_type;
	if (is_external(t) || t->n_dims > PB_MAX_RANK || pb_dtype_size(dt) == 0 ||
	    dt == PB_DT_COMPLEX64 || dt == PB_DT_COMPLEX128)
		return NULL;
	int64_t n = tensor_numel(t);
	if (n < 0 || n > PB_VALUE_MAX || (!dtype_is_int(dt) && n > ONNX_FLOAT_VALUE_MAX))
		return NULL;
	const uint8_t *raw = t->has_raw_data ? t->raw_data.data : NULL;
	size_t avail;
	if (raw)
		avail = t->raw_data.len / (size_t)pb_dtype_size(dt);
	else if (dt == PB_DT_FLOAT)
		avail = t->n_float_data;
	else if (dt == PB_DT_INT64)
		avail = t->n_int64_data;
	else if (dt == PB_DT_DOUBLE)
		avail = t->n_double_data;
	else if (dt == PB_DT_UINT32 || dt == PB_DT_UINT64)
		avail = t->n_uint64_data;
	else
		avail = t->n_int32_data;
	if ((int64_t)avail != n)
		return NULL;
	pb_value *v = pb_value_new(dt, (int)t->n_dims, t->dims);
	if (!v)
		return NULL;
	for (int64_t k = 0; k < n; k++) {
		if (raw) {
			const uint8_t *p = raw + (size_t)k * (size_t)pb_dtype_size(dt);
			switch (dt) {
			case PB_DT_FLOAT: {
				float x;
				memcpy(&x, p, 4);
				value_set(v, k, x, 0, 1);
				break;
			}
			case PB_DT_DOUBLE: {
				double x;
				memcpy(&x, p, 8);
				value_set(v, k, x, 0, 1);
				break;
			}
			case PB_DT_FLOAT16: {
				uint16_t x;
				memcpy(&x, p, 2);
				value_set(v, k, half_to_double(x), 0, 1);
				break;
			}
			case PB_DT_BFLOAT16: {
				uint16_t x;
				memcpy(&x, p, 2);
				value_set(v, k, bf16_to_double(x), 0, 1);
				break;
			}
			case PB_DT_INT64: {
				int64_t x;
				memcpy(&x, p, 8);
				value_set(v, k, 0, x, 0);
				break;
			}
			case PB_DT_UINT64: {
				uint64_t x;
				memcpy(&x, p, 8);
				value_set(v, k, 0, (int64_t)x, 0);
				break;
			}
			case PB_DT_INT32: {
				int32_t x;
				memcpy(&x, p, 4);
				value_set(v, k, 0, x, 0);
				break;
			}
			case PB_DT_UINT32: {
				uint32_t x;
				memcpy(&x, p, 4);
				value_set(v, k, 0, x, 0);
				break;
			}
			case PB_DT_INT16: {
				int16_t x;
				memcpy(&x, p, 2);
				value_set(v, k, 0, x, 0);
				break;
			}
			case PB_DT_UINT16: {
				uint16_t x;
				memcpy(&x, p, 2);
				value_set(v, k, 0, x, 0);
				break;
			}
			case PB_DT_INT8:
				value_set(v, k, 0, (int8_t)p[0], 0);
				break;
			default:
				value_set(v, k, 0, p[0], 0);
				break; /* uint8, bool */
			}
		} else {
			switch (dt) {
			case PB_DT_FLOAT:
				value_set(v, k, t->float_data[k], 0, 1);
				break;
			case PB_DT_DOUBLE:
				value_set(v, k, t->double_data[k], 0, 1);
				break;
			case PB_DT_INT64:
				value_set(v, k, 0, t->int64_data[k], 0);
				break;
			case PB_DT_UINT32:
			case PB_DT_UINT64:
				value_set(v, k, 0, (int64_t)t->uint64_data[k], 0);
				break;
			case PB_DT_FLOAT16:
				value_set(v, k, half_to_double((uint16_t)t->int32_data[k]), 0, 1);
				break;
			case PB_DT_BFLOAT16:
				value_set(v, k, bf16_to_double((uint16_t)t->int32_data[k]), 0, 1);
				break;
			default:
				value_set(v, k, 0, t->int32_data[k], 0);
				break;
			}
		}
	}
	return v;
}

/* ---------------------------------------------------------------- types */

/* Copies a ValueInfo's tensor type (dtype, rank, dims, dim_params). */
static void set_type(pb_builder *b, int tid, const Onnx__TypeProto *tp)
{
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
		return;
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	int dtype = tt->has_elem_type ? tt->elem_type : 0;
	if (!tt->shape || tt->shape->n_dim > PB_MAX_RANK) {
		if (dtype)
			pb_builder_tensor_ptr(b, tid)->dtype = dtype;
		return;
	}
	int64_t dims[PB_MAX_RANK];
	char *params[PB_MAX_RANK];
	int rank = (int)tt->shape->n_dim;
	for (int i = 0; i < rank; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
		dims[i] = PB_DIM_UNKNOWN;
		params[i] = NULL;
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    d->dim_value >= 0 && d->dim_value <= ONNX_DIM_MAX)
			dims[i] = d->dim_value;
		else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
		         d->dim_param && *d->dim_param)
			params[i] = d->dim_param;
	}
	pb_builder_set_shape(b, tid, dtype, rank, dims, params);
}

/* ---------------------------------------------------------------- attributes */

static int convert_attr(pb_builder *b, int nid, const Onnx__AttributeProto *ap, const char *file,
                        const char *node, pb_error *err)
{
	pb_attr a;
	memset(&a, 0, sizeof a);
	if (!ap->name || !*ap->name)
		return pb_err(err, PB_EINPUT, "%s: node '%s' has an attribute without a name", file,
		              node);
	a.name = ap->name;
	a.type = ap->has_type ? (int)ap->type : 0;
	char *s = NULL;
	char **strings = NULL;
	double *floats = NULL;
	if (!a.type) {
		/* IR < 3 files may omit the type: deduce it from the filled field. */
		if (ap->n_ints)
			a.type = PB_ATTR_INTS;
		else if (ap->n_floats)
			a.type = PB_ATTR_FLOATS;
		else if (ap->n_strings)
			a.type = PB_ATTR_STRINGS;
		else if (ap->t)
			a.type = PB_ATTR_TENSOR;
		else if (ap->g)
			a.type = PB_ATTR_GRAPH;
		else if (ap->has_s)
			a.type = PB_ATTR_STRING;
		else if (ap->has_f)
			a.type = PB_ATTR_FLOAT;
		else
			a.type = PB_ATTR_INT;
	}
	a.f = ap->f;
	a.i = ap->i;
	if (ap->has_s || a.type == PB_ATTR_STRING) {
		s = malloc(ap->s.len + 1);
		if (!s)
			return pb_err(err, PB_ENOMEM, "%s: out of memory", file);
		if (ap->s.len)
			memcpy(s, ap->s.data, ap->s.len);
		s[ap->s.len] = '\0';
		a.s = s;
	}
	switch (a.type) {
	case PB_ATTR_FLOATS:
		a.n = (int)ap->n_floats;
		if (a.n) {
			floats = malloc((size_t)a.n * sizeof *floats);
			if (!floats)
				return pb_err(err, PB_ENOMEM, "%s: out of memory", file);
			for (int k = 0; k < a.n; k++)
				floats[k] = ap->floats[k];
			a.floats = floats;
		}
		break;
	case PB_ATTR_INTS:
		a.n = (int)ap->n_ints;
		a.ints = ap->ints;
		break;
	case PB_ATTR_STRINGS:
		a.n = (int)ap->n_strings;
		if (a.n) {
			strings = calloc((size_t)a.n, sizeof *strings);
			if (!strings)
				return pb_err(err, PB_ENOMEM, "%s: out of memory", file);
			for (int k = 0; k < a.n; k++) {
				strings[k] = malloc(ap->strings[k].len + 1);
				if (strings[k]) {
					if (ap->strings[k].len)
						memcpy(strings[k], ap->strings[k].data,
						       ap->strings[k].len);
					strings[k][ap->strings[k].len] = '\0';
				}
			}
			a.strings = strings;
		}
		break;
	case PB_ATTR_TENSOR:
		if (ap->t) {
			int rc = tensor_check(ap->t, file, "tensor attribute of node", err);
			if (rc) {
				free(s);
				return rc;
			}
			a.t = tensor_value(ap->t);
		}
		break;
	case PB_ATTR_GRAPH:
		a.subgraph_nodes = ap->g ? (int)ap->g->n_node : 0;
		break;
	default:
		/* GRAPHS (10) and the like: keep the type number, count the nodes. */
		for (size_t k = 0; k < ap->n_graphs; k++)
			a.subgraph_nodes += ap->graphs[k] ? (int)ap->graphs[k]->n_node : 0;
		break;
	}
	pb_builder_attr(b, nid, &a);
	free(s);
	free(floats);
	for (int k = 0; strings && k < a.n; k++)
		free(strings[k]);
	free(strings);
	pb_value_free(a.t);
	return PB_OK;
}

/* Shape of a Constant node's output, taken from its attribute (the value may
 * be too large to keep, the shape is always known). */
static void constant_shape(pb_builder *b, const Onnx__NodeProto *np)
{
	if (np->n_output < 1 || !np->output[0] || !*np->output[0])
		return;
	int tid = pb_builder_tensor(b, np->output[0]);
	for (size_t k = 0; k < np->n_attribute; k++) {
		const Onnx__AttributeProto *ap = np->attribute[k];
		if (ap->name && strcmp(ap->name, "value") == 0 && ap->t &&
		    ap->t->n_dims <= PB_MAX_RANK) {
			pb_builder_set_shape(b, tid, ap->t->data_type, (int)ap->t->n_dims,
			                     ap->t->dims, NULL);
			return;
		}
		const Onnx__SparseTensorProto *sp = ap->sparse_tensor;
		if (ap->name && strcmp(ap->name, "sparse_value") == 0 && sp &&
		    sp->n_dims <= PB_MAX_RANK) {
			int ok = 1;
			for (size_t d = 0; d < sp->n_dims; d++)
				ok &= sp->dims[d] >= 0 && sp->dims[d] <= ONNX_DIM_MAX;
			if (ok)
				pb_builder_set_shape(b, tid, sp->values ? sp->values->data_type : 0,
				                     (int)sp->n_dims, sp->dims, NULL);
			return;
		}
	}
}

/* ---------------------------------------------------------------- model */

/* Decodes the part at span sp with protobuf-c into the arena; NULL with an
 * error naming the part when the bytes do not form that message. DECODE_FAST
 * first tries a hand-written decoder of onnx_wire.h, which handles the usual
 * shape of the message and leaves everything else to protobuf-c. */
#define DECODE_FAST(T, fast, unpack, ctx, sp, what, idx)                                           \
	T *m_ = fast(&(ctx)->alloc, (ctx)->p + (sp).off, (sp).len);                                \
	if (!m_)                                                                                   \
		m_ = unpack(&(ctx)->alloc, (sp).len, (ctx)->p + (sp).off);                         \
	if (!m_) {                                                                                 \
		if ((ctx)->ar.failed)                                                              \
			return pb_err(err, PB_ENOMEM, "%s: out of memory", file);                  \
		return pb_err(err, PB_EINPUT,                                                      \
		              "%s: malformed ONNX file: %s %zu (bytes %zu-%zu) is not a valid "    \
		              "%s message",                                                        \
		              file, what, (size_t)(idx), (sp).off, (sp).off + (sp).len, #T + 6);   \
	}
#define NO_FAST(a, p, len) NULL
#define DECODE(T, unpack, ctx, sp, what, idx) DECODE_FAST(T, NO_FAST, unpack, ctx, sp, what, idx)

typedef struct {
	const uint8_t *p;
	arena ar;
	ProtobufCAllocator alloc;
} decoder;

static int build_graph(pb_builder *b, decoder *d, const layout *l, const char *file, pb_error *err)
{
	int rc;
	/* Tensors: every node output is one; inputs, weights and value_info
	 * mostly name tensors that nodes also mention. */
	size_t n_t = l->inputs.n + l->inits.n + l->nodes.n + l->nodes.n / 4 + 16;
	if (l->nodes.n < (size_t)INT32_MAX / 2 && n_t < (size_t)INT32_MAX / 2)
		pb_builder_reserve(b, (int)l->nodes.n, (int)n_t);
	if (l->name.len) {
		char *nm = strndup((const char *)d->p + l->name.off, l->name.len);
		if (nm)
			pb_builder_name(b, nm);
		free(nm);
	}
	int have_default = 0;
	for (size_t i = 0; i < l->opsets.n; i++) {
		DECODE(Onnx__OperatorSetIdProto, onnx__operator_set_id_proto__unpack, d,
		       l->opsets.v[i], "opset_import", i);
		const char *dom = m_->domain ? m_->domain : "";
		pb_builder_opset(b, dom, m_->has_version ? m_->version : 1);
		if (!*dom || strcmp(dom, "ai.onnx") == 0)
			have_default = 1;
		arena_reset(&d->ar);
	}
	for (size_t i = 0; i < l->inputs.n; i++) {
		DECODE_FAST(Onnx__ValueInfoProto, pb_onnx_wire_value_info,
		            onnx__value_info_proto__unpack, d, l->inputs.v[i], "graph input", i);
		if (!m_->name || !*m_->name)
			return pb_err(err, PB_EINPUT, "%s: graph input %zu has no name", file, i);
		int tid = pb_builder_tensor(b, m_->name);
		pb_builder_input(b, tid);
		set_type(b, tid, m_->type);
		arena_reset(&d->ar);
	}
	for (size_t i = 0; i < l->inits.n; i++) {
		DECODE(Onnx__TensorProto, onnx__tensor_proto__unpack, d, l->inits.v[i],
		       "initializer", i);
		const Onnx__TensorProto *t = m_;
		if (!t->name || !*t->name)
			return pb_err(err, PB_EINPUT, "%s: initializer %zu has no name", file, i);
		if ((rc = tensor_check(t, file, "initializer", err)) != PB_OK)
			return rc;
		int tid = pb_builder_tensor(b, t->name);
		pb_builder_initializer(b, tid, is_external(t));
		pb_builder_set_shape(b, tid, t->data_type, (int)t->n_dims, t->dims, NULL);
		pb_value *v = tensor_value(t);
		if (v)
			pb_builder_value(b, tid, v);
		arena_reset(&d->ar);
	}
	for (size_t i = 0; i < l->sparse.n; i++) {
		DECODE(Onnx__SparseTensorProto, onnx__sparse_tensor_proto__unpack, d,
		       l->sparse.v[i], "sparse initializer", i);
		const Onnx__TensorProto *vals = m_->values;
		if (!vals || !vals->name || !*vals->name)
			return pb_err(err, PB_EINPUT, "%s: sparse initializer %zu has no name",
			              file, i);
		if (m_->n_dims > PB_MAX_RANK)
			return pb_err(err, PB_EINPUT, "%s: sparse initializer '%s' has rank %zu",
			              file, vals->name, m_->n_dims);
		for (size_t k = 0; k < m_->n_dims; k++)
			if (m_->dims[k] < 0 || m_->dims[k] > ONNX_DIM_MAX)
				return pb_err(err, PB_EINPUT,
				              "%s: sparse initializer '%s' has invalid dims", file,
				              vals->name);
		int tid = pb_builder_tensor(b, vals->name);
		pb_builder_initializer(b, tid, 0);
		pb_builder_set_shape(b, tid, vals->data_type, (int)m_->n_dims, m_->dims, NULL);
		arena_reset(&d->ar);
	}
	for (size_t i = 0; i < l->vinfo.n; i++) {
		DECODE_FAST(Onnx__ValueInfoProto, pb_onnx_wire_value_info,
		            onnx__value_info_proto__unpack, d, l->vinfo.v[i], "value_info", i);
		if (m_->name && *m_->name)
			set_type(b, pb_builder_tensor(b, m_->name), m_->type);
		arena_reset(&d->ar);
	}

	int uses_default = 0;
	const char *stack_in[16], *stack_out[16];
	for (size_t i = 0; i < l->nodes.n; i++) {
		DECODE_FAST(Onnx__NodeProto, pb_onnx_wire_node, onnx__node_proto__unpack, d,
		            l->nodes.v[i], "node", i);
		const Onnx__NodeProto *np = m_;
		if (!np->op_type || !*np->op_type)
			return pb_err(err, PB_EINPUT, "%s: node %zu%s%s%s has no op_type", file, i,
			              np->name && *np->name ? " ('" : "", np->name ? np->name : "",
			              np->name && *np->name ? "')" : "");
		const char **ins = np->n_input <= 16 ? stack_in : malloc(np->n_input * sizeof *ins);
		const char **outs =
		    np->n_output <= 16 ? stack_out : malloc(np->n_output * sizeof *outs);
		if (!ins || !outs) {
			if (ins != stack_in)
				free(ins);
			if (outs != stack_out)
				free(outs);
			return pb_err(err, PB_ENOMEM, "%s: out of memory", file);
		}
		for (size_t k = 0; k < np->n_input; k++)
			ins[k] = np->input[k];
		for (size_t k = 0; k < np->n_output; k++)
			outs[k] = np->output[k];
		int is_default = !np->domain || !*np->domain || strcmp(np->domain, "ai.onnx") == 0;
		uses_default |= is_default;
		int nid = pb_builder_node(b, np->name, np->op_type, np->domain ? np->domain : "",
		                          ins, (int)np->n_input, outs, (int)np->n_output);
		if (ins != stack_in)
			free(ins);
		if (outs != stack_out)
			free(outs);
		const char *nname = np->name && *np->name ? np->name : np->op_type;
		for (size_t k = 0; k < np->n_attribute; k++)
			if ((rc = convert_attr(b, nid, np->attribute[k], file, nname, err)) !=
			    PB_OK)
				return rc;
		if (is_default && strcmp(np->op_type, "Constant") == 0)
			constant_shape(b, np);
		arena_reset(&d->ar);
	}
	for (size_t i = 0; i < l->outputs.n; i++) {
		DECODE_FAST(Onnx__ValueInfoProto, pb_onnx_wire_value_info,
		            onnx__value_info_proto__unpack, d, l->outputs.v[i], "graph output", i);
		if (!m_->name || !*m_->name)
			return pb_err(err, PB_EINPUT, "%s: graph output %zu has no name", file, i);
		int tid = pb_builder_tensor(b, m_->name);
		pb_builder_output(b, tid);
		set_type(b, tid, m_->type);
		arena_reset(&d->ar);
	}
	if (!have_default) {
		if (l->opsets.n > 0 || (l->has_ir && l->ir_version >= 3)) {
			if (uses_default)
				return pb_err(err, PB_EINPUT,
				              "%s: the model has no opset_import for the default "
				              "ONNX domain (required since IR version 3)",
				              file);
		} else {
			pb_builder_opset(b, "", 1); /* IR < 3: opset 1 implied */
		}
	}
	return PB_OK;
}

/* Decodes and builds; `owned` (the file bytes, or NULL) is freed once the
 * graph is built, before shape inference. Each part of the model is decoded
 * by protobuf-c on its own into a reused arena, so memory stays at the file
 * plus the largest single part (an inline weight), never the whole decoded
 * message. */
static int load_bytes(const void *data, size_t len, void *owned, const char *name,
                      const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	*out = NULL;
	if (!name)
		name = "<buffer>";
	if (len == 0) {
		free(owned);
		return pb_err(err, PB_EINPUT, "%s: empty file (not an ONNX model)", name);
	}
	layout l;
	memset(&l, 0, sizeof l);
	int rc = layout_scan(data, len, name, &l, err);
	if (rc == PB_OK && l.n_graphs == 0)
		rc = pb_err(err, PB_EINPUT,
		            "%s: not an ONNX model: the protobuf has no graph (ModelProto.graph is "
		            "missing)",
		            name);
	pb_builder *b = NULL;
	if (rc == PB_OK && !(b = pb_builder_new(name, "onnx")))
		rc = pb_err(err, PB_ENOMEM, "%s: out of memory", name);
	if (rc == PB_OK) {
		decoder d;
		memset(&d, 0, sizeof d);
		d.p = data;
		d.alloc.alloc = arena_alloc;
		d.alloc.free = arena_free_one;
		d.alloc.allocator_data = &d.ar;
		rc = build_graph(b, &d, &l, name, err);
		arena_release(&d.ar);
	}
	layout_free(&l);
	free(owned);
	if (rc != PB_OK) {
		pb_builder_free(b);
		return rc;
	}
	return pb_builder_finish(b, opts, out, err);
}

int pb_onnx_read_buffer(const void *data, size_t len, const char *name, const pb_load_opts *opts,
                        pb_graph **out, pb_error *err)
{
	return load_bytes(data, len, NULL, name, opts, out, err);
}

int pb_onnx_read(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err)
{
	*out = NULL;
	int fd = pb_door_open_read(path, PB_DOOR_MODEL, "model", err);
	if (fd < 0)
		return err ? err->code : PB_EINPUT;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return pb_err(err, PB_EINPUT, "%s: cannot read (not a regular file)", path);
	}
	size_t len = (size_t)st.st_size;
	if (len == 0) {
		close(fd);
		return load_bytes("", 0, NULL, path, opts, out, err);
	}
	/* Map the file: no copy, and its pages are shared with the page cache. */
	int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
	flags |= MAP_POPULATE; /* map every page now: one call, not a fault per page */
#endif
	void *map = mmap(NULL, len, PROT_READ, flags, fd, 0);
	if (map != MAP_FAILED) {
		close(fd);
		madvise(map, len, MADV_SEQUENTIAL);
		int rc = load_bytes(map, len, NULL, path, opts, out, err);
		munmap(map, len);
		return rc;
	}
	void *buf = malloc(len);
	if (!buf) {
		close(fd);
		return pb_err(err, PB_ENOMEM, "%s: out of memory reading %zu bytes", path, len);
	}
	size_t got = 0;
	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	if (got != len) {
		free(buf);
		return pb_err(err, PB_EINPUT, "%s: read error", path);
	}
	return load_bytes(buf, len, buf, path, opts, out, err);
}
