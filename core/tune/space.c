/*
 * tune/space.c — shapes (parsed or taken from a graph node) and the search
 * space of each operator.
 *
 * GEMM: vec {1,4,8,16} × mr {2,4,6,8,12,14} × nr {8,16,32} × unroll {1,4} ×
 *       mc {48,192} × kc {64,256} × nc {256,1024} × pack × order = 4608 points
 *       (vec 16 and mr 12/14 are AVX-512F kernels: illegal on other CPUs).
 * Conv: vec {1,4,8} × kb {1,2,4,8} × owv {1,2,4} × unroll {1,4} ×
 *       ct {8,64,512} × pack × order = 864 points.
 * Grouped and depthwise convolutions have their own space (from the shape):
 * kb only up to the K/group output channels of a group, ct only up to its
 * C/group input channels (one value when C/group <= 8), and for depthwise
 * (one input channel per group) no unroll (1), no weight packing (0): the
 * kernel's register tile is one channel x vec*owv columns of a row.
 * Depthwise 3x3 of mnasnet: vec × owv × order = 18 points.
 * Legality is decided by the kernels (register budget, micro-kernel exists).
 * Features for the cost model are the parameter values plus derived
 * quantities a tree cannot easily compute itself (accumulators, cache
 * footprints, edge waste).
 */
#include "tune/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pb_tune_op_name(int op)
{
	return op == PB_TUNE_CONV2D ? "conv2d" : "gemm";
}

static int parse_ints(const char *spec, long *v, int max)
{
	int n = 0;
	const char *p = spec;
	while (*p) {
		char *end;
		long x = strtol(p, &end, 10);
		if (end == p || n == max)
			return -1;
		v[n++] = x;
		p = end;
		if (*p == ',' || *p == 'x')
			p++;
		else if (*p)
			return -1;
	}
	return n;
}

static int check_shape(pb_tune_shape *s, const char *src, pb_error *err)
{
	if (s->op == PB_TUNE_GEMM) {
		if (s->m < 1 || s->n < 1 || s->k < 1 || s->batch < 1)
			return pb_err(err, PB_EINPUT, "%s: GEMM dimensions must be >= 1", src);
		if ((double)s->m * s->k > 1 << 28 || (double)s->k * s->n > 1 << 28 ||
		    (double)s->m * s->n > 1 << 28)
			return pb_err(err, PB_EINPUT, "%s: GEMM operand larger than 2^28 elements",
			              src);
		return PB_OK;
	}
	const pb_conv_shape *c = &s->conv;
	if (c->group < 0 || c->c % pb_conv_groups(c) || c->k % pb_conv_groups(c))
		return pb_err(err, PB_EINPUT,
		              "%s: conv2d group %d does not divide C = %d and K = %d", src,
		              c->group, c->c, c->k);
	if (c->n < 1 || c->c < 1 || c->h < 1 || c->w < 1 || c->k < 1 || c->r < 1 || c->s < 1 ||
	    c->stride < 1 || c->pad < 0)
		return pb_err(err, PB_EINPUT,
		              "%s: conv2d needs N,C,H,W,K,R,S,stride >= 1 and pad >= 0", src);
	if (pb_conv_out_h(c) < 1 || pb_conv_out_w(c) < 1)
		return pb_err(err, PB_EINPUT,
		              "%s: conv2d kernel %dx%d larger than the padded input", src, c->r,
		              c->s);
	double in = (double)c->n * c->c * (c->h + 2 * c->pad) * c->s * (c->w + 32);
	if (in > 1 << 28 || (double)c->k * c->c * c->r * c->s > 1 << 28)
		return pb_err(err, PB_EINPUT, "%s: conv2d tensors larger than 2^28 elements", src);
	return PB_OK;
}

int pb_tune_shape_parse(const char *op, const char *spec, pb_tune_shape *out, pb_error *err)
{
	memset(out, 0, sizeof *out);
	long v[16];
	if (!op || !spec)
		return pb_err(err, PB_EUSAGE, "tune: --op and --shape go together");
	int n = parse_ints(spec, v, 16);
	for (int i = 0; i < n; i++)
		if (v[i] < 0 || v[i] > 1 << 24)
			return pb_err(err, PB_EUSAGE, "tune: --shape '%s': value %ld out of range",
			              spec, v[i]);
	if (strcmp(op, "gemm") == 0) {
		if (n != 3)
			return pb_err(err, PB_EUSAGE, "tune: --shape '%s': gemm expects M,N,K",
			              spec);
		out->op = PB_TUNE_GEMM;
		out->m = (int)v[0], out->n = (int)v[1], out->k = (int)v[2], out->batch = 1;
	} else if (strcmp(op, "conv2d") == 0) {
		if (n != 9 && n != 10)
			return pb_err(
			    err, PB_EUSAGE,
			    "tune: --shape '%s': conv2d expects N,C,H,W,K,R,S,stride,pad[,group]",
			    spec);
		out->op = PB_TUNE_CONV2D;
		out->batch = 1;
		pb_conv_shape *c = &out->conv;
		c->n = (int)v[0], c->c = (int)v[1], c->h = (int)v[2], c->w = (int)v[3];
		c->k = (int)v[4], c->r = (int)v[5], c->s = (int)v[6], c->stride = (int)v[7];
		c->pad = (int)v[8];
		c->group = n == 10 ? (int)v[9] : 1;
		if (c->group < 1)
			return pb_err(err, PB_EUSAGE, "tune: --shape '%s': group must be >= 1",
			              spec);
	} else
		return pb_err(err, PB_EUSAGE, "tune: --op '%s': expected gemm or conv2d", op);
	char src[64];
	snprintf(src, sizeof src, "--shape %s", spec);
	if (check_shape(out, src, err) == PB_OK)
		return PB_OK;
	if (err)
		err->code = PB_EUSAGE;
	return PB_EUSAGE;
}

static const pb_tensor *node_in(const pb_graph *g, const pb_node *nd, int i)
{
	if (i >= nd->n_inputs || nd->inputs[i] < 0)
		return NULL;
	const pb_tensor *t = &g->tensors[nd->inputs[i]];
	if (t->rank < 0)
		return NULL;
	for (int d = 0; d < t->rank; d++)
		if (t->dims[d] < 0)
			return NULL;
	return t;
}

static int all_equal(const pb_attr *a, int64_t want)
{
	if (!a)
		return 1;
	for (int i = 0; i < a->n; i++)
		if (a->ints[i] != want)
			return 0;
	return 1;
}

int pb_tune_shape_from_node(const pb_graph *g, int node, pb_tune_shape *out, pb_error *err)
{
	memset(out, 0, sizeof *out);
	out->batch = 1;
	const pb_node *nd = &g->nodes[node];
	const char *src = g->path ? g->path : "graph";
	const pb_tensor *a = node_in(g, nd, 0), *b = node_in(g, nd, 1);
	if (!strcmp(nd->op, "Conv")) {
		if (!a || !b || a->rank != 4 || b->rank != 4)
			return pb_err(
			    err, PB_EINPUT,
			    "%s: node '%s': Conv needs 4-D input and weight shapes (known)", src,
			    nd->name);
		long long grp = (long long)pb_node_attr_int(nd, "group", 1);
		if (grp < 1 || grp > a->dims[1] || a->dims[1] % grp || b->dims[0] % grp)
			return pb_err(
			    err, PB_EINPUT,
			    "%s: node '%s': group %lld does not divide the %lld input and "
			    "%lld output channels",
			    src, nd->name, grp, (long long)a->dims[1], (long long)b->dims[0]);
		if (!all_equal(pb_node_attr(nd, "dilations"), 1))
			return pb_err(err, PB_EINPUT,
			              "%s: node '%s': dilated convolution is not tunable", src,
			              nd->name);
		const pb_attr *st = pb_node_attr(nd, "strides"), *pd = pb_node_attr(nd, "pads");
		const char *ap = pb_node_attr_str(nd, "auto_pad", "NOTSET");
		if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
			return pb_err(err, PB_EINPUT, "%s: node '%s': auto_pad %s is not tunable",
			              src, nd->name, ap);
		int stride = st && st->n ? (int)st->ints[0] : 1;
		int pad = pd && pd->n ? (int)pd->ints[0] : 0;
		if (!all_equal(st, stride) || !all_equal(pd, pad))
			return pb_err(
			    err, PB_EINPUT,
			    "%s: node '%s': only equal strides and symmetric pads are tunable", src,
			    nd->name);
		out->op = PB_TUNE_CONV2D;
		pb_conv_shape *c = &out->conv;
		c->n = (int)a->dims[0], c->c = (int)a->dims[1], c->h = (int)a->dims[2];
		c->w = (int)a->dims[3], c->k = (int)b->dims[0], c->r = (int)b->dims[2];
		c->s = (int)b->dims[3], c->stride = stride, c->pad = pad, c->group = (int)grp;
		if (b->dims[1] * grp != a->dims[1])
			return pb_err(
			    err, PB_EINPUT,
			    "%s: node '%s': weight channels %lld x group %lld != input %lld", src,
			    nd->name, (long long)b->dims[1], grp, (long long)a->dims[1]);
		if (grp == 1 && c->r == 1 && c->s == 1 && stride == 1 && pad == 0) {
			/* 1x1 convolution = GEMM per image: out[K][HW] = W[K][C] x[C][HW] */
			out->op = PB_TUNE_GEMM;
			out->m = c->k, out->n = c->h * c->w, out->k = c->c, out->batch = c->n;
			memset(c, 0, sizeof *c);
		}
	} else if (!strcmp(nd->op, "Gemm")) {
		if (!a || !b || a->rank != 2 || b->rank != 2)
			return pb_err(err, PB_EINPUT,
			              "%s: node '%s': Gemm needs known 2-D operands", src,
			              nd->name);
		int ta = (int)pb_node_attr_int(nd, "transA", 0),
		    tb = (int)pb_node_attr_int(nd, "transB", 0);
		out->op = PB_TUNE_GEMM;
		out->m = (int)a->dims[ta ? 1 : 0], out->k = (int)a->dims[ta ? 0 : 1];
		out->n = (int)b->dims[tb ? 0 : 1];
	} else if (!strcmp(nd->op, "MatMul")) {
		if (!a || !b || a->rank < 2 || b->rank < 2)
			return pb_err(err, PB_EINPUT,
			              "%s: node '%s': MatMul needs known operands of rank >= 2",
			              src, nd->name);
		out->op = PB_TUNE_GEMM;
		out->m = (int)a->dims[a->rank - 2], out->k = (int)a->dims[a->rank - 1];
		out->n = (int)b->dims[b->rank - 1];
		double ba = 1, bb = 1;
		for (int d = 0; d < a->rank - 2; d++)
			ba *= (double)a->dims[d];
		for (int d = 0; d < b->rank - 2; d++)
			bb *= (double)b->dims[d];
		if (bb == 1) /* shared 2-D weight: fold A's batch into M */
			out->m = (int)(out->m * ba);
		else
			out->batch = (int)(ba > bb ? ba : bb);
	} else
		return pb_err(err, PB_EINPUT,
		              "%s: node '%s' is a %s; tunable nodes are Conv, Gemm and MatMul", src,
		              nd->name, nd->op);
	char where[300];
	snprintf(where, sizeof where, "%s: node '%s'", src, nd->name);
	return check_shape(out, where, err);
}

void pb_tune_shape_key(const pb_tune_shape *s, char *buf, size_t len)
{
	if (s->op == PB_TUNE_GEMM) {
		snprintf(buf, len, "gemm:%d,%d,%d", s->m, s->n, s->k);
		return;
	}
	const pb_conv_shape *c = &s->conv;
	int n = snprintf(buf, len, "conv2d:%d,%d,%d,%d,%d,%d,%d,%d,%d", c->n, c->c, c->h, c->w,
	                 c->k, c->r, c->s, c->stride, c->pad);
	if (pb_conv_groups(c) > 1 && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ",%d", c->group);
}

double pb_tune_shape_flops(const pb_tune_shape *s)
{
	if (s->op == PB_TUNE_GEMM)
		return 2.0 * s->m * s->n * s->k;
	const pb_conv_shape *c = &s->conv;
	return 2.0 * c->n * c->k * pb_conv_out_h(c) * pb_conv_out_w(c) *
	       (c->c / pb_conv_groups(c)) * c->r * c->s;
}

static void add_param(pb_tune_space *sp, const char *name, int n, const int *v)
{
	pb_tune_param *p = &sp->params[sp->n_params++];
	p->name = name;
	p->n_values = n;
	memcpy(p->values, v, (size_t)n * sizeof *v);
}

#define ADD(sp, name, ...)                                                                         \
	do {                                                                                       \
		static const int v_[] = {__VA_ARGS__};                                             \
		add_param(sp, name, (int)(sizeof v_ / sizeof v_[0]), v_);                          \
	} while (0)

/* Values of 'all' up to 'limit' (at least the first). */
static void add_upto(pb_tune_space *sp, const char *name, const int *all, int n, int limit)
{
	int v[PB_TUNE_MAX_VALUES], k = 0;
	for (int i = 0; i < n; i++)
		if (i == 0 || all[i] <= limit)
			v[k++] = all[i];
	add_param(sp, name, k, v);
}

/* Grouped / depthwise convolution: the same parameters, values the group's
 * channel counts can use. */
static void grouped_space(pb_tune_space *sp, const pb_conv_shape *c)
{
	static const int kb[] = {1, 2, 4, 8}, ct[] = {8, 64, 512};
	const int cg = c->c / pb_conv_groups(c), kg = c->k / pb_conv_groups(c);
	ADD(sp, "vec", 1, 4, 8);
	add_upto(sp, "kb", kb, 4, kg);
	ADD(sp, "owv", 1, 2, 4);
	if (cg == 1)
		ADD(sp, "unroll", 1);
	else
		ADD(sp, "unroll", 1, 4);
	add_upto(sp, "ct", ct, 3, cg - 1); /* a tile >= cg is one tile: the first stands for it */
	if (kg == 1)
		ADD(sp, "pack", 0);
	else
		ADD(sp, "pack", 0, 1);
	ADD(sp, "order", 0, 1);
}

void pb_tune_space_init(pb_tune_space *sp, const pb_tune_shape *shape)
{
	memset(sp, 0, sizeof *sp);
	sp->shape = *shape;
	if (shape->op == PB_TUNE_GEMM) {
		ADD(sp, "vec", 1, 4, 8, 16);
		ADD(sp, "mr", 2, 4, 6, 8, 12, 14);
		ADD(sp, "nr", 8, 16, 32);
		ADD(sp, "unroll", 1, 4);
		ADD(sp, "mc", 48, 192);
		ADD(sp, "kc", 64, 256);
		ADD(sp, "nc", 256, 1024);
		ADD(sp, "pack", 0, 1);
		ADD(sp, "order", 0, 1);
	} else if (pb_conv_groups(&shape->conv) == 1) {
		ADD(sp, "vec", 1, 4, 8);
		ADD(sp, "kb", 1, 2, 4, 8);
		ADD(sp, "owv", 1, 2, 4);
		ADD(sp, "unroll", 1, 4);
		ADD(sp, "ct", 8, 64, 512);
		ADD(sp, "pack", 0, 1);
		ADD(sp, "order", 0, 1);
	} else
		grouped_space(sp, &shape->conv);
}

double pb_tune_space_size(const pb_tune_space *sp)
{
	double n = 1;
	for (int i = 0; i < sp->n_params; i++)
		n *= sp->params[i].n_values;
	return n;
}

void pb_tune_space_decode(const pb_tune_space *sp, int64_t id, int *idx)
{
	for (int i = sp->n_params - 1; i >= 0; i--) {
		idx[i] = (int)(id % sp->params[i].n_values);
		id /= sp->params[i].n_values;
	}
}

int64_t pb_tune_space_encode(const pb_tune_space *sp, const int *idx)
{
	int64_t id = 0;
	for (int i = 0; i < sp->n_params; i++)
		id = id * sp->params[i].n_values + idx[i];
	return id;
}

static int val(const pb_tune_space *sp, const int *idx, int i)
{
	return sp->params[i].values[idx[i]];
}

void pb_tune_space_gemm_cfg(const pb_tune_space *sp, const int *idx, pb_gemm_cfg *c)
{
	c->vec = val(sp, idx, 0), c->mr = val(sp, idx, 1), c->nr = val(sp, idx, 2);
	c->unroll = val(sp, idx, 3), c->mc = val(sp, idx, 4), c->kc = val(sp, idx, 5);
	c->nc = val(sp, idx, 6), c->pack = val(sp, idx, 7), c->order = val(sp, idx, 8);
}

void pb_tune_space_conv_cfg(const pb_tune_space *sp, const int *idx, pb_conv_cfg *c)
{
	c->vec = val(sp, idx, 0), c->kb = val(sp, idx, 1), c->owv = val(sp, idx, 2);
	c->unroll = val(sp, idx, 3), c->ct = val(sp, idx, 4), c->pack = val(sp, idx, 5);
	c->order = val(sp, idx, 6);
}

int pb_tune_space_legal(const pb_tune_space *sp, const int *idx, char *why, size_t len)
{
	for (int i = 0; i < sp->n_params; i++)
		if (idx[i] < 0 || idx[i] >= sp->params[i].n_values) {
			if (why)
				snprintf(why, len, "parameter %s index out of range",
				         sp->params[i].name);
			return 0;
		}
	if (sp->shape.op == PB_TUNE_GEMM) {
		pb_gemm_cfg c;
		pb_tune_space_gemm_cfg(sp, idx, &c);
		return pb_gemm_legal(&c, why, len);
	}
	pb_conv_cfg c;
	pb_tune_space_conv_cfg(sp, idx, &c);
	return pb_conv_legal(&c, why, len);
}

int64_t pb_tune_space_count_legal(const pb_tune_space *sp)
{
	int64_t n = 0, size = (int64_t)pb_tune_space_size(sp);
	int idx[PB_TUNE_MAX_PARAMS];
	for (int64_t id = 0; id < size; id++) {
		pb_tune_space_decode(sp, id, idx);
		n += pb_tune_space_legal(sp, idx, NULL, 0);
	}
	return n;
}

static double waste(int dim, int tile)
{
	int t = (dim + tile - 1) / tile * tile;
	return (double)(t - dim) / t;
}

int pb_tune_space_features(const pb_tune_space *sp, const int *idx, float *f)
{
	int n = 0;
	for (int i = 0; i < sp->n_params; i++)
		f[n++] = (float)val(sp, idx, i);
	const pb_tune_shape *s = &sp->shape;
	if (s->op == PB_TUNE_GEMM) {
		pb_gemm_cfg c;
		pb_tune_space_gemm_cfg(sp, idx, &c);
		int mc = c.mc < s->m ? c.mc : s->m, kc = c.kc < s->k ? c.kc : s->k;
		int nc = c.nc < s->n ? c.nc : s->n;
		f[n++] = (float)c.mr * c.nr / c.vec; /* accumulators */
		/* vector registers the tile needs beyond the ISA's (16 ymm, 32 zmm):
		 * accumulators + B vectors + the broadcast; > 0 spills */
		f[n++] = (float)(c.mr * c.nr / c.vec + c.nr / c.vec + 1 - (c.vec == 16 ? 32 : 16));
		f[n++] = (float)log2((double)kc * c.nr * 4); /* B panel bytes (L1) */
		f[n++] = (float)log2((double)mc * kc * 4);   /* A block bytes (L2) */
		f[n++] = (float)log2((double)kc * nc * 4);   /* B block bytes (L3) */
		f[n++] =
		    (float)pb_gemm_edge_waste(&c, s->m, s->n); /* padding of the edge kernels */
		f[n++] = (float)((double)(s->m / mc + 1) * (s->n / nc + 1)); /* repacks */
	} else {
		pb_conv_cfg c;
		pb_tune_space_conv_cfg(sp, idx, &c);
		pb_conv_shape gs = s->conv; /* one group's channels */
		gs.c /= pb_conv_groups(&s->conv), gs.k /= pb_conv_groups(&s->conv);
		const pb_conv_shape *v = &gs;
		int ct = c.ct < v->c ? c.ct : v->c;
		f[n++] = (float)c.kb * c.owv;
		f[n++] = (float)(c.vec * c.owv);
		f[n++] = (float)(waste(pb_conv_out_w(v), c.vec * c.owv) + waste(v->k, c.kb));
		f[n++] = (float)log2((double)ct * v->r * v->s * c.kb * 4);   /* weight tile bytes */
		f[n++] = (float)log2((double)ct * v->r * v->s * 32 * 4 + 1); /* input rows bytes */
		f[n++] = (float)v->stride;
	}
	return n;
}

json_t *pb_tune_space_config_json(const pb_tune_space *sp, const int *idx)
{
	json_t *o = json_object();
	for (int i = 0; i < sp->n_params; i++)
		json_object_set_new(o, sp->params[i].name, json_integer(val(sp, idx, i)));
	return o;
}

int pb_tune_space_config_from_json(const pb_tune_space *sp, const json_t *o, int *idx)
{
	if (!json_is_object(o))
		return -1;
	for (int i = 0; i < sp->n_params; i++) {
		const json_t *v = json_object_get(o, sp->params[i].name);
		if (!json_is_integer(v))
			return -1;
		idx[i] = -1;
		for (int k = 0; k < sp->params[i].n_values; k++)
			if (sp->params[i].values[k] == json_integer_value(v))
				idx[i] = k;
		if (idx[i] < 0)
			return -1;
	}
	return 0;
}

void pb_tune_space_config_str(const pb_tune_space *sp, const int *idx, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < sp->n_params && off < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%s=%d", i ? " " : "", sp->params[i].name,
		                 val(sp, idx, i));
		if (w < 0)
			break;
		off += (size_t)w;
	}
}
