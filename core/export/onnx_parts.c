/*
 * export/onnx_parts.c — index the source ONNX file, encode parts
 * (see onnx_parts.h).
 *
 * Field numbers (onnx.proto): ModelProto 7 graph, 1 ir_version, 20
 * training_info; GraphProto 1 node, 2 name, 5 initializer, 11 input, 12
 * output, 13 value_info, 15 sparse_initializer; TensorProto 8 name, 13
 * external_data (StringStringEntryProto 1 key, 2 value), 14 data_location (1
 * = EXTERNAL); ValueInfoProto 1 name, 2 type; TypeProto 1 tensor_type;
 * TypeProto.Tensor 1 elem_type, 2 shape; TensorShapeProto 1 dim; Dimension 1
 * dim_value, 2 dim_param.
 */
#include "export/onnx_parts.h"

#include <stdlib.h>
#include <string.h>

#include "util/read_file.h"

/* ------------------------------------------------------------ wire reading */

typedef struct wire_field {
	int num, type;
	uint64_t v;        /* varint value */
	const uint8_t *p;  /* length-delimited payload */
	size_t n;          /* its length */
	size_t start, end; /* byte range of the whole field in the buffer */
} wire_field;

static int read_varint(const uint8_t *b, size_t len, size_t *pos, uint64_t *v)
{
	uint64_t x = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*pos >= len)
			return -1;
		uint8_t c = b[(*pos)++];
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* Next field of the message b[0..len) at *pos (offsets relative to b). */
static int next_field(const uint8_t *b, size_t len, size_t *pos, wire_field *f)
{
	uint64_t key;
	f->start = *pos;
	if (read_varint(b, len, pos, &key) || key >> 3 == 0 || key >> 3 > 0x1fffffff)
		return -1;
	f->num = (int)(key >> 3);
	f->type = (int)(key & 7);
	f->p = NULL;
	f->n = 0;
	switch (f->type) {
	case 0:
		if (read_varint(b, len, pos, &f->v))
			return -1;
		break;
	case 1:
		if (len - *pos < 8)
			return -1;
		*pos += 8;
		break;
	case 5:
		if (len - *pos < 4)
			return -1;
		*pos += 4;
		break;
	case 2: {
		uint64_t n;
		if (read_varint(b, len, pos, &n) || n > len - *pos)
			return -1;
		f->p = b + *pos;
		f->n = (size_t)n;
		*pos += (size_t)n;
		break;
	}
	default: /* groups (3, 4) are not used by ONNX */
		return -1;
	}
	f->end = *pos;
	return 0;
}

/* The string field `num` of a message, malloc'd ("" when absent). */
static char *string_field(const uint8_t *b, size_t len, int num)
{
	size_t pos = 0;
	wire_field f;
	const uint8_t *s = NULL;
	size_t n = 0;
	while (pos < len && next_field(b, len, &pos, &f) == 0)
		if (f.num == num && f.type == 2) {
			s = f.p;
			n = f.n;
		}
	return strndup(s ? (const char *)s : "", n);
}

/* ------------------------------------------------------------ indexing */

#define GROW(arr, n, cap)                                                                          \
	do {                                                                                       \
		if ((n) == (cap)) {                                                                \
			int nc_ = (cap) ? 2 * (cap) : 16;                                          \
			void *a_ = realloc((arr), (size_t)nc_ * sizeof *(arr));                    \
			if (!a_)                                                                   \
				return -1;                                                         \
			(arr) = a_;                                                                \
			(cap) = nc_;                                                               \
		}                                                                                  \
	} while (0)

static int add_init(pb_onnx_src *s, int *cap, const wire_field *f, size_t base)
{
	GROW(s->inits, s->n_inits, *cap);
	pb_onnx_init *in = &s->inits[s->n_inits];
	memset(in, 0, sizeof *in);
	in->r.start = base + f->start;
	in->r.end = base + f->end;
	size_t pos = 0;
	wire_field t;
	int external = 0;
	const uint8_t *name = NULL;
	size_t name_n = 0;
	char *loc = NULL;
	while (pos < f->n && next_field(f->p, f->n, &pos, &t) == 0) {
		if (t.num == 8 && t.type == 2) {
			name = t.p;
			name_n = t.n;
		} else if (t.num == 14 && t.type == 0) {
			external = t.v == 1;
		} else if (t.num == 13 && t.type == 2) {
			char *key = string_field(t.p, t.n, 1);
			if (key && strcmp(key, "location") == 0) {
				free(loc);
				loc = string_field(t.p, t.n, 2);
			}
			free(key);
		}
	}
	in->name = strndup(name ? (const char *)name : "", name_n);
	in->location = external ? loc : NULL;
	if (!external)
		free(loc);
	if (!in->name)
		return -1;
	s->n_inits++;
	return 0;
}

static int add_vinfo(pb_onnx_src *s, int *cap, const wire_field *f, size_t base)
{
	GROW(s->vinfo, s->n_vinfo, *cap);
	int c2 = s->n_vinfo; /* the parallel arrays grow together */
	void *a = realloc(s->vinfo_name, (size_t)*cap * sizeof *s->vinfo_name);
	if (!a)
		return -1;
	s->vinfo_name = a;
	a = realloc(s->vinfo_kind, (size_t)*cap * sizeof *s->vinfo_kind);
	if (!a)
		return -1;
	s->vinfo_kind = a;
	s->vinfo[c2].start = base + f->start;
	s->vinfo[c2].end = base + f->end;
	s->vinfo_kind[c2] = f->num;
	s->vinfo_name[c2] = string_field(f->p, f->n, 1);
	if (!s->vinfo_name[c2])
		return -1;
	s->n_vinfo++;
	return 0;
}

static int scan_graph(pb_onnx_src *s, const wire_field *gf)
{
	size_t base = (size_t)(gf->p - s->data), pos = 0;
	int ncap = 0, icap = 0, vcap = 0;
	wire_field f;
	while (pos < gf->n) {
		if (next_field(gf->p, gf->n, &pos, &f))
			return -2;
		if (f.type != 2)
			continue;
		if (f.num == 1) {
			GROW(s->nodes, s->n_nodes, ncap);
			s->nodes[s->n_nodes].start = base + f.start;
			s->nodes[s->n_nodes++].end = base + f.end;
		} else if (f.num == 2) {
			free(s->graph_name);
			s->graph_name = strndup((const char *)f.p, f.n);
			if (!s->graph_name)
				return -1;
		} else if (f.num == 5) {
			if (add_init(s, &icap, &f, base))
				return -1;
		} else if (f.num == 11 || f.num == 12 || f.num == 13) {
			if (add_vinfo(s, &vcap, &f, base))
				return -1;
		} else if (f.num == 15) {
			s->n_sparse++;
		}
	}
	return 0;
}

static int index_names(pb_onnx_src *s)
{
	s->init_index = pb_strmap_new((size_t)s->n_inits + 1);
	s->vinfo_index = pb_strmap_new((size_t)s->n_vinfo + 1);
	if (!s->init_index || !s->vinfo_index)
		return -1;
	for (int i = 0; i < s->n_inits; i++)
		if (pb_strmap_get(s->init_index, s->inits[i].name, -1) < 0 &&
		    pb_strmap_put(s->init_index, s->inits[i].name, i))
			return -1;
	for (int kind = 11; kind <= 13; kind++)
		for (int i = 0; i < s->n_vinfo; i++)
			if (s->vinfo_kind[i] == kind &&
			    pb_strmap_get(s->vinfo_index, s->vinfo_name[i], -1) < 0 &&
			    pb_strmap_put(s->vinfo_index, s->vinfo_name[i], i))
				return -1;
	return 0;
}

void pb_onnx_src_free(pb_onnx_src *s)
{
	if (!s)
		return;
	free(s->data);
	free(s->top);
	free(s->graph_name);
	free(s->nodes);
	for (int i = 0; i < s->n_inits; i++) {
		free(s->inits[i].name);
		free(s->inits[i].location);
	}
	free(s->inits);
	for (int i = 0; i < s->n_vinfo; i++)
		free(s->vinfo_name[i]);
	free(s->vinfo);
	free(s->vinfo_name);
	free(s->vinfo_kind);
	pb_strmap_free(s->init_index);
	pb_strmap_free(s->vinfo_index);
	free(s);
}

int pb_onnx_src_open(const char *path, pb_onnx_src **out, pb_error *err)
{
	*out = NULL;
	pb_onnx_src *s = calloc(1, sizeof *s);
	if (!s)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", path);
	s->path = path;
	char *data = NULL;
	int rc = pb_read_file(path, PB_DOOR_MODEL, 0, "ONNX model", &data, &s->len, err);
	if (rc) {
		free(s);
		return rc;
	}
	s->data = (uint8_t *)data;
	size_t pos = 0;
	int tcap = 0, n_graphs = 0, bad = 0;
	wire_field f;
	while (pos < s->len && !bad) {
		if (next_field(s->data, s->len, &pos, &f)) {
			bad = 1;
			break;
		}
		if (f.num == 7 && f.type == 2) {
			if (n_graphs++) {
				bad = 3;
				break;
			}
			s->graph_at = (size_t)s->n_top;
			int r = scan_graph(s, &f);
			bad = r == -2 ? 1 : r ? 2 : 0;
			continue;
		}
		if (f.num == 1 && f.type == 0)
			s->ir_version = (int64_t)f.v;
		if (f.num == 20)
			continue; /* training_info names tensors of the whole model */
		if (s->n_top == tcap) {
			int nc = tcap ? 2 * tcap : 16;
			pb_onnx_range *a = realloc(s->top, (size_t)nc * sizeof *a);
			if (!a) {
				bad = 2;
				break;
			}
			s->top = a;
			tcap = nc;
		}
		s->top[s->n_top].start = f.start;
		s->top[s->n_top++].end = f.end;
	}
	if (!bad && !n_graphs)
		bad = 4;
	if (!bad && index_names(s))
		bad = 2;
	if (bad) {
		static const char *why[] = {"", "is not a valid ONNX protobuf (malformed field)",
		                            "out of memory while indexing it",
		                            "has several graph fields (not supported)",
		                            "has no graph"};
		rc = pb_err(err, bad == 2 ? PB_ENOMEM : PB_EINPUT, "%s: %s", path, why[bad]);
		pb_onnx_src_free(s);
		return rc;
	}
	*out = s;
	return PB_OK;
}

/* ------------------------------------------------------------ encoding */

typedef struct obuf {
	uint8_t *b;
	size_t n, cap;
	int oom;
} obuf;

static void put(obuf *o, const void *p, size_t n)
{
	if (o->oom)
		return;
	if (o->n + n > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap < o->n + n)
			cap *= 2;
		uint8_t *b = realloc(o->b, cap);
		if (!b) {
			o->oom = 1;
			return;
		}
		o->b = b;
		o->cap = cap;
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void put_varint(obuf *o, uint64_t v)
{
	uint8_t tmp[10];
	int n = 0;
	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	put(o, tmp, (size_t)n);
}

static void put_key(obuf *o, int num, int type)
{
	put_varint(o, (uint64_t)num << 3 | (uint64_t)type);
}

static void put_bytes(obuf *o, int num, const void *p, size_t n)
{
	put_key(o, num, 2);
	put_varint(o, n);
	put(o, p, n);
}

static void put_sub(obuf *o, int num, obuf *sub)
{
	if (sub->oom)
		o->oom = 1;
	put_bytes(o, num, sub->b ? sub->b : (const uint8_t *)"", sub->n);
	free(sub->b);
	memset(sub, 0, sizeof *sub);
}

/* A ValueInfoProto for t from partbench's shapes (symbolic dims kept). */
static int encode_value_info(obuf *o, int field, const pb_tensor *t, pb_error *err,
                             const char *path)
{
	if (t->dtype == PB_DT_UNDEFINED)
		return pb_err(
		    err, PB_EINPUT,
		    "%s: tensor '%s' crosses between parts but its element type is unknown "
		    "(the file declares no value_info for it)",
		    path, t->name);
	obuf tensor = {0}, shape = {0};
	put_key(&tensor, 1, 0);
	put_varint(&tensor, (uint64_t)t->dtype);
	if (t->rank >= 0) {
		for (int d = 0; d < t->rank; d++) {
			obuf dim = {0};
			if (t->dim_params[d] && t->dim_params[d][0]) {
				put_bytes(&dim, 2, t->dim_params[d], strlen(t->dim_params[d]));
			} else if (t->dims[d] >= 0) {
				put_key(&dim, 1, 0);
				put_varint(&dim, (uint64_t)t->dims[d]);
			}
			put_sub(&shape, 1, &dim);
		}
		put_sub(&tensor, 2, &shape);
	}
	obuf type = {0}, vi = {0};
	put_sub(&type, 1, &tensor);
	put_bytes(&vi, 1, t->name, strlen(t->name));
	put_sub(&vi, 2, &type);
	put_sub(o, field, &vi);
	return PB_OK;
}

/* A TensorProto (field `field`) holding t's known value: a constant shape
 * operand rewritten for a new batch (shape/shape_batch.c), in place of the
 * source's bytes. Integer shape values only. */
static int encode_value_tensor(obuf *o, int field, const pb_tensor *t, pb_error *err,
                               const char *path)
{
	const pb_value *v = t->value;
	int dt = t->dtype ? t->dtype : v->dtype;
	if (dt != PB_DT_INT64 && dt != PB_DT_INT32)
		return pb_err(err, PB_EINPUT,
		              "%s: constant '%s' was rewritten for the batch but holds %s, not "
		              "int32 or int64",
		              path, t->name, pb_dtype_name(dt));
	size_t es = dt == PB_DT_INT64 ? 8 : 4;
	uint8_t *raw = malloc((size_t)v->numel * es + 1);
	if (!raw)
		return pb_err(err, PB_ENOMEM, "%s: out of memory", path);
	for (int64_t k = 0; k < v->numel; k++) /* little-endian, as ONNX raw_data */
		for (size_t b = 0; b < es; b++)
			raw[(size_t)k * es + b] = (uint8_t)((uint64_t)v->i[k] >> (8 * b));
	obuf tp = {0};
	for (int d = 0; d < v->rank; d++) {
		put_key(&tp, 1, 0);
		put_varint(&tp, (uint64_t)v->dims[d]);
	}
	put_key(&tp, 2, 0);
	put_varint(&tp, (uint64_t)dt);
	put_bytes(&tp, 8, t->name, strlen(t->name));
	put_bytes(&tp, 9, raw, (size_t)v->numel * es);
	free(raw);
	put_sub(o, field, &tp);
	return PB_OK;
}

/* A Constant node (NodeProto) making t from its rewritten value. */
static int encode_constant_node(obuf *o, const pb_node *n, const pb_tensor *t, pb_error *err,
                                const char *path)
{
	obuf nd = {0}, at = {0};
	put_bytes(&nd, 2, t->name, strlen(t->name));
	put_bytes(&nd, 3, n->name, strlen(n->name));
	put_bytes(&nd, 4, "Constant", 8);
	put_bytes(&at, 1, "value", 5);
	int rc = encode_value_tensor(&at, 5, t, err, path);
	put_key(&at, 20, 0);
	put_varint(&at, 4); /* AttributeProto.TENSOR */
	put_sub(&nd, 5, &at);
	if (rc == PB_OK)
		put_sub(o, 1, &nd);
	else
		free(nd.b);
	return rc;
}

/* Graph input/output `field` for tensor t: the source's own ValueInfoProto
 * (re-keyed), else one built from the inferred shape; always the inferred
 * shape when --input changed the batch (the file's says the exported one). */
static int put_io(obuf *o, const pb_onnx_src *s, const pb_graph *g, int field, const pb_tensor *t,
                  pb_error *err)
{
	int i = pb_strmap_get(s->vinfo_index, t->name, -1);
	if (i < 0 || g->batch_exported)
		return encode_value_info(o, field, t, err, s->path);
	/* the payload of the source field, under this field number */
	size_t pos = s->vinfo[i].start;
	wire_field f;
	if (next_field(s->data, s->vinfo[i].end, &pos, &f))
		return pb_err(err, PB_EINPUT, "%s: malformed value_info '%s'", s->path, t->name);
	put_bytes(o, field, f.p, f.n);
	return PB_OK;
}

static void put_range(obuf *o, const pb_onnx_src *s, pb_onnx_range r)
{
	put(o, s->data + r.start, r.end - r.start);
}

static int encode_graph(obuf *gr, const pb_onnx_src *s, const pb_graph *g, const pb_extract_part *p,
                        int k, pb_error *err)
{
	char name[512];
	snprintf(name, sizeof name, "%s_part%d",
	         s->graph_name && s->graph_name[0] ? s->graph_name : "graph", k);
	for (int i = 0; i < p->n_nodes; i++) {
		int fo = g->nodes[p->nodes[i]].file_order;
		if (fo < 0 || fo >= s->n_nodes)
			return pb_err(err, PB_EINPUT,
			              "%s: node '%s' is not in the file (the model was changed "
			              "after loading?)",
			              s->path, g->nodes[p->nodes[i]].name);
	}
	/* nodes in file order (a valid file is topologically sorted) */
	int *fos = malloc(((size_t)p->n_nodes + 1) * sizeof *fos);
	unsigned char *init_used = calloc((size_t)s->n_inits + 1, 1);
	unsigned char *made = calloc((size_t)g->n_tensors + 1, 1);
	if (!fos || !init_used || !made) {
		free(fos);
		free(init_used);
		free(made);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", s->path);
	}
	for (int i = 0; i < p->n_nodes; i++)
		fos[i] = g->nodes[p->nodes[i]].file_order;
	for (int i = 1; i < p->n_nodes; i++) /* insertion sort: mostly sorted already */
		for (int j = i; j > 0 && fos[j - 1] > fos[j]; j--) {
			int t = fos[j];
			fos[j] = fos[j - 1];
			fos[j - 1] = t;
		}
	/* the constants rewritten for the batch (shape/shape_batch.c) */
	unsigned char *rew = calloc((size_t)g->n_tensors + 1, 1);
	int *by_fo = rew ? malloc(((size_t)s->n_nodes + 1) * sizeof *by_fo) : NULL;
	if (!by_fo) {
		free(rew);
		free(fos);
		free(init_used);
		free(made);
		return pb_err(err, PB_ENOMEM, "%s: out of memory", s->path);
	}
	for (int i = 0; i < g->n_rewrites; i++)
		rew[g->rewrites[i].tensor] = 1;
	for (int i = 0; i < p->n_nodes; i++)
		by_fo[g->nodes[p->nodes[i]].file_order] = p->nodes[i];
	int rc = PB_OK;
	for (int i = 0; i < p->n_nodes && !rc; i++) {
		const pb_node *n = &g->nodes[by_fo[fos[i]]];
		if (n->n_outputs == 1 && n->outputs[0] >= 0 && rew[n->outputs[0]] &&
		    !strcmp(n->op, "Constant"))
			rc = encode_constant_node(gr, n, &g->tensors[n->outputs[0]], err, s->path);
		else
			put_range(gr, s, s->nodes[fos[i]]);
	}
	put_bytes(gr, 2, name, strlen(name));
	for (int i = 0; i < p->n_nodes; i++) {
		const pb_node *n = &g->nodes[p->nodes[i]];
		for (int j = 0; j < n->n_inputs; j++) {
			int t = n->inputs[j];
			if (t < 0 || !g->tensors[t].is_initializer)
				continue;
			int ii = pb_strmap_get(s->init_index, g->tensors[t].name, -1);
			if (ii >= 0 && !init_used[ii]) {
				init_used[ii] = 1;
				if (rew[t] && !rc)
					rc = encode_value_tensor(gr, 5, &g->tensors[t], err,
					                         s->path);
				else
					put_range(gr, s, s->inits[ii].r);
			}
		}
		for (int j = 0; j < n->n_outputs; j++)
			if (n->outputs[j] >= 0)
				made[n->outputs[j]] = 1;
	}
	for (int i = 0; i < p->n_inputs && !rc; i++)
		rc = put_io(gr, s, g, 11, &g->tensors[p->inputs[i]], err);
	/* IR < 4: initializers are listed among the graph inputs too */
	for (int i = 0; i < s->n_inits && !rc && s->ir_version < 4; i++) {
		if (!init_used[i])
			continue;
		int v = pb_strmap_get(s->vinfo_index, s->inits[i].name, -1);
		if (v >= 0 && s->vinfo_kind[v] == 11)
			put_range(gr, s, s->vinfo[v]);
	}
	for (int i = 0; i < p->n_outputs && !rc; i++) {
		rc = put_io(gr, s, g, 12, &g->tensors[p->outputs[i]], err);
		made[p->outputs[i]] = 0; /* declared as an output, not as value_info */
	}
	/* the file's value_info, unless it states the exported batch */
	for (int i = 0; i < s->n_vinfo && !rc && !g->batch_exported; i++) {
		if (s->vinfo_kind[i] != 13)
			continue;
		int t = pb_graph_find_tensor(g, s->vinfo_name[i]);
		if (t >= 0 && made[t])
			put_range(gr, s, s->vinfo[i]);
	}
	free(fos);
	free(init_used);
	free(made);
	free(rew);
	free(by_fo);
	return rc;
}

int pb_onnx_part_encode(const pb_onnx_src *s, const pb_graph *g, const pb_extract_part *p, int k,
                        uint8_t **buf, size_t *len, pb_error *err)
{
	*buf = NULL;
	*len = 0;
	obuf gr = {0}, m = {0};
	int rc = encode_graph(&gr, s, g, p, k, err);
	if (rc) {
		free(gr.b);
		return rc;
	}
	for (int i = 0; i <= s->n_top; i++) {
		if ((size_t)i == s->graph_at)
			put_sub(&m, 7, &gr);
		if (i < s->n_top)
			put_range(&m, s, s->top[i]);
	}
	if (m.oom) {
		free(m.b);
		return pb_err(err, PB_ENOMEM, "%s: out of memory encoding part %d", s->path, k);
	}
	*buf = m.b;
	*len = m.n;
	return PB_OK;
}
