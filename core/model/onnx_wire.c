/*
 * onnx_wire.c — fast decoding of the two ONNX messages a model holds by the
 * thousand: NodeProto and ValueInfoProto (see onnx_wire.h).
 *
 * protobuf-c decodes generically, driven by descriptors: for a 6.6k-node
 * model with as many value_info entries that was the largest single cost of
 * `partbench info`. These decoders read the wire format directly and fill
 * the same protobuf-c structs (Onnx__NodeProto, ...), so the loader's code
 * after decoding is unchanged.
 *
 * Contract: they handle only the common, well-formed shape of each message
 * and return NULL for anything else — a wire type that does not match the
 * schema, a truncated field, a singular field given twice (protobuf merges
 * those), a oneof given twice, an integer outside int32 for an int32/enum
 * field, a field this decoder does not model (subgraphs,
 * sparse tensors, non-tensor types). The caller then decodes the part with
 * protobuf-c, which gives the same result or the same error as before. So a
 * message decoded here is exactly what protobuf-c would produce for it,
 * except that unknown fields are skipped instead of kept, and bytes fields
 * point into the input buffer (which outlives the decoded part).
 * Tensor attributes (Constant values) are decoded by protobuf-c on their own
 * span. Everything is allocated from the caller's ProtobufCAllocator (the
 * loader's bump arena).
 */
#include "model/onnx_wire.h"

#include <string.h>

typedef struct {
	const uint8_t *p;
	size_t off, end;
} rd;

/* One field: number, wire type, varint value or payload span. */
typedef struct {
	uint32_t num;
	int wt;
	uint64_t v;
	const uint8_t *data;
	size_t len;
} fld;

static inline int rd_varint(rd *r, uint64_t *v)
{
	if (r->off < r->end && r->p[r->off] < 0x80) { /* the common one-byte case */
		*v = r->p[r->off++];
		return 1;
	}
	uint64_t x = 0;
	for (int i = 0; i < 10; i++) {
		if (r->off >= r->end)
			return 0;
		uint8_t b = r->p[r->off++];
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = x;
			return 1;
		}
	}
	return 0;
}

/* 1 = a field, 0 = end of message, -1 = not for the fast path. */
static inline int rd_field(rd *r, fld *f)
{
	if (r->off >= r->end)
		return 0;
	uint64_t key;
	if (!rd_varint(r, &key) || key > 0xffffffffu || (key >> 3) == 0)
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wt = (int)(key & 7);
	f->data = NULL;
	f->len = 0;
	switch (f->wt) {
	case 0:
		return rd_varint(r, &f->v) ? 1 : -1;
	case 1:
	case 5: {
		size_t w = f->wt == 1 ? 8 : 4;
		if (r->end - r->off < w)
			return -1;
		f->data = r->p + r->off;
		f->len = w;
		r->off += w;
		return 1;
	}
	case 2:
		if (!rd_varint(r, &f->v) || f->v > r->end - r->off)
			return -1;
		f->data = r->p + r->off;
		f->len = (size_t)f->v;
		r->off += f->len;
		return 1;
	default:
		return -1; /* groups and invalid wire types: protobuf-c decides */
	}
}

static void *alloc(ProtobufCAllocator *a, size_t n)
{
	return a->alloc(a->allocator_data, n ? n : 1);
}

/* A NUL-terminated copy of a string field (protobuf-c does not check UTF-8
 * either), or NULL when out of memory. */
static char *str_copy(ProtobufCAllocator *a, const fld *f)
{
	char *s = alloc(a, f->len + 1);
	if (!s)
		return NULL;
	memcpy(s, f->data, f->len);
	s[f->len] = '\0';
	return s;
}

/* Number of varints in a packed payload; -1 if the last one is cut off. */
static long packed_varints(const fld *f)
{
	long n = 0;
	for (size_t i = 0; i < f->len; i++)
		n += !(f->data[i] & 0x80);
	return (f->len && (f->data[f->len - 1] & 0x80)) ? -1 : n;
}

/* ---------------------------------------------------------------- attribute */

static Onnx__AttributeProto *attr_decode(ProtobufCAllocator *a, const uint8_t *p, size_t len)
{
	rd r = {p, 0, len};
	fld f;
	int k;
	size_t n_floats = 0, n_ints = 0, n_strings = 0;
	unsigned seen = 0; /* bit per singular field */
	while ((k = rd_field(&r, &f)) == 1) {
		unsigned bit = 0;
		switch (f.num) {
		case 1:  /* name */
		case 4:  /* s */
		case 5:  /* t */
		case 13: /* doc_string */
		case 21: /* ref_attr_name */
			if (f.wt != 2)
				return NULL;
			bit = 1u << (f.num == 13 ? 6 : f.num == 21 ? 7 : f.num);
			break;
		case 2: /* f */
			if (f.wt != 5)
				return NULL;
			bit = 1u << 2;
			break;
		case 3: /* i */
			if (f.wt != 0)
				return NULL;
			bit = 1u << 3;
			break;
		case 20: /* type: the schema's enum values only */
			if (f.wt != 0 || f.v > ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS)
				return NULL;
			bit = 1u << 8;
			break;
		case 7: /* floats */
			if (f.wt == 5)
				n_floats++;
			else if (f.wt == 2 && f.len % 4 == 0)
				n_floats += f.len / 4;
			else
				return NULL;
			break;
		case 8: /* ints */
			if (f.wt == 0) {
				n_ints++;
			} else if (f.wt == 2) {
				long c = packed_varints(&f);
				if (c < 0)
					return NULL;
				n_ints += (size_t)c;
			} else {
				return NULL;
			}
			break;
		case 9: /* strings */
			if (f.wt != 2)
				return NULL;
			n_strings++;
			break;
		case 6:
		case 10:
		case 11:
		case 14:
		case 15:
		case 22:
		case 23:
			return NULL; /* graphs, tensor lists, sparse tensors, types */
		default:
			break; /* unknown: skipped */
		}
		if (bit) {
			if (seen & bit)
				return NULL;
			seen |= bit;
		}
	}
	if (k < 0)
		return NULL;

	Onnx__AttributeProto *m = alloc(a, sizeof *m);
	if (!m)
		return NULL;
	onnx__attribute_proto__init(m);
	if (n_floats && !(m->floats = alloc(a, n_floats * sizeof *m->floats)))
		return NULL;
	if (n_ints && !(m->ints = alloc(a, n_ints * sizeof *m->ints)))
		return NULL;
	if (n_strings && !(m->strings = alloc(a, n_strings * sizeof *m->strings)))
		return NULL;
	r.off = 0;
	while (rd_field(&r, &f) == 1) {
		switch (f.num) {
		case 1:
			if (!(m->name = str_copy(a, &f)))
				return NULL;
			break;
		case 21:
			if (!(m->ref_attr_name = str_copy(a, &f)))
				return NULL;
			break;
		case 13:
			if (!(m->doc_string = str_copy(a, &f)))
				return NULL;
			break;
		case 2:
			m->has_f = 1;
			memcpy(&m->f, f.data, 4);
			break;
		case 3:
			m->has_i = 1;
			m->i = (int64_t)f.v;
			break;
		case 4:
			m->has_s = 1;
			m->s.len = f.len;
			m->s.data = (uint8_t *)f.data;
			break;
		case 5:
			m->t = onnx__tensor_proto__unpack(a, f.len, f.data);
			if (!m->t)
				return NULL;
			break;
		case 20:
			m->has_type = 1;
			m->type = (Onnx__AttributeProto__AttributeType)f.v;
			break;
		case 7:
			if (f.wt == 5) {
				memcpy(&m->floats[m->n_floats++], f.data, 4);
			} else if (f.len) { /* an empty packed list adds nothing (floats may be
				               NULL) */
				memcpy(m->floats + m->n_floats, f.data, f.len);
				m->n_floats += f.len / 4;
			}
			break;
		case 8:
			if (f.wt == 0) {
				m->ints[m->n_ints++] = (int64_t)f.v;
			} else {
				rd pr = {f.data, 0, f.len};
				uint64_t v;
				while (pr.off < pr.end && rd_varint(&pr, &v))
					m->ints[m->n_ints++] = (int64_t)v;
				if (pr.off < pr.end)
					return NULL; /* a varint longer than 10 bytes */
			}
			break;
		case 9:
			m->strings[m->n_strings].len = f.len;
			m->strings[m->n_strings].data = (uint8_t *)f.data;
			m->n_strings++;
			break;
		default:
			break;
		}
	}
	return m;
}

/* ---------------------------------------------------------------- node */

Onnx__NodeProto *pb_onnx_wire_node(ProtobufCAllocator *a, const uint8_t *p, size_t len)
{
	/* One pass: every field takes at least two bytes, so len / 2 bounds
	 * each repeated field's count (the arena makes the slack free). */
	size_t cap = len / 2 + 1;
	Onnx__NodeProto *m = alloc(a, sizeof *m);
	if (!m)
		return NULL;
	onnx__node_proto__init(m);
	if (!(m->input = alloc(a, cap * sizeof *m->input)) ||
	    !(m->output = alloc(a, cap * sizeof *m->output)) ||
	    !(m->attribute = alloc(a, cap * sizeof *m->attribute)))
		return NULL;
	rd r = {p, 0, len};
	fld f;
	int k;
	while ((k = rd_field(&r, &f)) == 1) {
		if (f.num > 7)
			continue; /* unknown field: skipped */
		if (f.wt != 2)
			return NULL;
		if (f.num == 5) {
			if (!(m->attribute[m->n_attribute++] = attr_decode(a, f.data, f.len)))
				return NULL;
			continue;
		}
		char *s = str_copy(a, &f);
		if (!s)
			return NULL;
		char **one = NULL; /* singular fields: a repeat goes to protobuf-c */
		switch (f.num) {
		case 1:
			m->input[m->n_input++] = s;
			break;
		case 2:
			m->output[m->n_output++] = s;
			break;
		case 3:
			one = &m->name;
			break;
		case 4:
			one = &m->op_type;
			break;
		case 6:
			one = &m->doc_string;
			break;
		default: /* 7 */
			one = &m->domain;
			break;
		}
		if (one) {
			if (*one)
				return NULL;
			*one = s;
		}
	}
	return k < 0 ? NULL : m;
}

/* ---------------------------------------------------------------- value info */

static Onnx__TensorShapeProto__Dimension *dim_decode(ProtobufCAllocator *a, const fld *in)
{
	rd r = {in->data, 0, in->len};
	fld f;
	int k;
	Onnx__TensorShapeProto__Dimension *d = alloc(a, sizeof *d);
	if (!d)
		return NULL;
	onnx__tensor_shape_proto__dimension__init(d);
	while ((k = rd_field(&r, &f)) == 1) {
		if (f.num == 1) {
			if (f.wt != 0 || d->value_case)
				return NULL;
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = (int64_t)f.v;
		} else if (f.num == 2) {
			if (f.wt != 2 || d->value_case || !(d->dim_param = str_copy(a, &f)))
				return NULL;
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
		} else if (f.num == 3) {
			if (f.wt != 2 || d->denotation || !(d->denotation = str_copy(a, &f)))
				return NULL;
		}
	}
	return k < 0 ? NULL : d;
}

static Onnx__TensorShapeProto *shape_decode(ProtobufCAllocator *a, const fld *in)
{
	Onnx__TensorShapeProto *s = alloc(a, sizeof *s);
	if (!s)
		return NULL;
	onnx__tensor_shape_proto__init(s);
	if (!(s->dim = alloc(a, (in->len / 2 + 1) * sizeof *s->dim))) /* see node */
		return NULL;
	rd r = {in->data, 0, in->len};
	fld f;
	int k;
	while ((k = rd_field(&r, &f)) == 1)
		if (f.num == 1 && (f.wt != 2 || !(s->dim[s->n_dim++] = dim_decode(a, &f))))
			return NULL;
	return k < 0 ? NULL : s;
}

static Onnx__TypeProto__Tensor *tensor_type_decode(ProtobufCAllocator *a, const fld *in)
{
	rd r = {in->data, 0, in->len};
	fld f;
	int k;
	Onnx__TypeProto__Tensor *t = alloc(a, sizeof *t);
	if (!t)
		return NULL;
	onnx__type_proto__tensor__init(t);
	while ((k = rd_field(&r, &f)) == 1) {
		if (f.num == 1) {
			if (f.wt != 0 || f.v > INT32_MAX || t->has_elem_type)
				return NULL;
			t->has_elem_type = 1;
			t->elem_type = (int32_t)f.v;
		} else if (f.num == 2) {
			if (f.wt != 2 || t->shape || !(t->shape = shape_decode(a, &f)))
				return NULL;
		}
	}
	return k < 0 ? NULL : t;
}

static Onnx__TypeProto *type_decode(ProtobufCAllocator *a, const fld *in)
{
	rd r = {in->data, 0, in->len};
	fld f;
	int k;
	Onnx__TypeProto *t = alloc(a, sizeof *t);
	if (!t)
		return NULL;
	onnx__type_proto__init(t);
	while ((k = rd_field(&r, &f)) == 1) {
		if (f.num == 1) {
			if (f.wt != 2 || t->value_case ||
			    !(t->tensor_type = tensor_type_decode(a, &f)))
				return NULL;
			t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
		} else if (f.num == 6) {
			if (f.wt != 2 || t->denotation || !(t->denotation = str_copy(a, &f)))
				return NULL;
		} else if (f.num <= 15) {
			return NULL; /* sequence, map, optional, sparse types */
		}
	}
	return k < 0 ? NULL : t;
}

Onnx__ValueInfoProto *pb_onnx_wire_value_info(ProtobufCAllocator *a, const uint8_t *p, size_t len)
{
	rd r = {p, 0, len};
	fld f;
	int k;
	Onnx__ValueInfoProto *m = alloc(a, sizeof *m);
	if (!m)
		return NULL;
	onnx__value_info_proto__init(m);
	while ((k = rd_field(&r, &f)) == 1) {
		if (f.num == 1) {
			if (f.wt != 2 || m->name || !(m->name = str_copy(a, &f)))
				return NULL;
		} else if (f.num == 2) {
			if (f.wt != 2 || m->type || !(m->type = type_decode(a, &f)))
				return NULL;
		} else if (f.num == 3) {
			if (f.wt != 2 || m->doc_string || !(m->doc_string = str_copy(a, &f)))
				return NULL;
		} else if (f.num <= 15) {
			return NULL; /* fields of newer schemas (metadata_props) */
		}
	}
	return k < 0 ? NULL : m;
}
