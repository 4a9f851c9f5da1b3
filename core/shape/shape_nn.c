/*
 * shape_nn.c — shape rules for the neural-network operators: convolutions,
 * pooling, normalisations, matrix products (Gemm, MatMul with numpy batch
 * broadcasting, Einsum) and quantisation wrappers.
 *
 * Spatial output size (per spatial axis, ONNX spec):
 *   explicit pads: floor((in + pb + pe - dil*(k-1) - 1) / s) + 1
 *                  (ceil instead of floor for pools with ceil_mode = 1, and
 *                   the last window must start inside the input or left pad)
 *   SAME_UPPER/SAME_LOWER: ceil(in / s);  VALID: ceil((in - dil*(k-1)) / s)
 *   ConvTranspose: s*(in-1) + output_padding + dil*(k-1) + 1 - pb - pe, or
 *                  in*s with SAME_*, or output_shape when given.
 */
#include <ctype.h>
#include <string.h>

#include "shape/shape.h"
#include "shape/shape_rules.h"

static int has_shape(const pb_tensor *t)
{
	return t && t->rank >= 0;
}

static void attr_list(const pb_node *n, const char *name, int64_t *out, int count, int64_t dflt)
{
	const pb_attr *a = pb_node_attr(n, name);
	for (int i = 0; i < count; i++)
		out[i] = pb_sx_clamp((a && a->ints && i < a->n) ? a->ints[i] : dflt);
}

static int64_t div_floor(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t div_ceil(int64_t a, int64_t b)
{
	return -div_floor(-a, b);
}

/* Attribute list entries that must be at least lo (strides, dilations,
 * kernel_shape >= 1; pads >= 0): a conflict naming the first one that is not
 * (strides = 0 once divided by zero's stand-in 1, negative pads gave
 * 1x4x0x0). */
static int check_at_least(pb_sx *c, const char *name, int64_t lo)
{
	const pb_attr *a = pb_node_attr(c->n, name);
	for (int i = 0; a && a->ints && i < a->n; i++)
		if (a->ints[i] < lo)
			return pb_sx_conflict(c, "%s[%d] = %lld (must be at least %lld)", name, i,
			                      (long long)a->ints[i], (long long)lo);
	return 1;
}

/* group >= 1 (group = 0 divides the channels by zero). */
static int check_group(pb_sx *c)
{
	int64_t group = pb_node_attr_int(c->n, "group", 1);
	if (group < 1)
		return pb_sx_conflict(c, "group = %lld (must be at least 1)", (long long)group);
	return 1;
}

/* Sliding-window output dims for Conv and the pools. kernel: spatial kernel
 * sizes (-1 unknown). Writes spatial output dims into out; returns 0 (with a
 * conflict) for zero strides, dilations or kernels, negative pads, and a
 * window that does not fit the (padded) input: an output size below 1. */
static int window_dims(pb_sx *c, const pb_tensor *x, const int64_t *kernel, int ns, int ceil_mode,
                       int64_t *out)
{
	const pb_node *n = c->n;
	if (!check_at_least(c, "strides", 1) || !check_at_least(c, "dilations", 1) ||
	    !check_at_least(c, "kernel_shape", 1) || !check_at_least(c, "pads", 0))
		return 0;
	int64_t strides[PB_MAX_RANK], dil[PB_MAX_RANK], pads[2 * PB_MAX_RANK];
	attr_list(n, "strides", strides, ns, 1);
	attr_list(n, "dilations", dil, ns, 1);
	attr_list(n, "pads", pads, 2 * ns, 0);
	const char *ap = pb_node_attr_str(n, "auto_pad", "NOTSET");
	for (int i = 0; i < ns; i++) {
		int64_t in = x->dims[2 + i], k = kernel[i], s = strides[i] > 0 ? strides[i] : 1;
		if (k == 0)
			return pb_sx_conflict(c, "the kernel of spatial axis %d is 0", i);
		/* Real kernels and dilations are small; huge ones are malformed. */
		if (in < 0 || k < 0 || k > (1 << 20) || dil[i] < 0 || dil[i] > (1 << 20)) {
			out[i] = -1;
			continue;
		}
		int64_t ek = dil[i] * (k - 1) + 1;
		if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
			out[i] = div_ceil(in, s);
		} else if (strcmp(ap, "VALID") == 0) {
			out[i] = div_ceil(in - ek + 1, s);
		} else {
			int64_t span = in + pads[i] + pads[i + ns] - ek;
			if (ceil_mode) {
				int64_t o = div_ceil(span, s) + 1;
				if ((o - 1) * s >= in + pads[i])
					o--;
				out[i] = o;
			} else {
				out[i] = div_floor(span, s) + 1;
			}
		}
		/* an input of 0 (`--input x=1,3,0,0`) fits no window either */
		if (out[i] < 1 && in >= 0)
			return pb_sx_conflict(
			    c,
			    "spatial axis %d: a window of %lld (kernel %lld, dilation "
			    "%lld) does not fit the input of %lld with pads %lld+%lld",
			    i, (long long)ek, (long long)k, (long long)dil[i], (long long)in,
			    (long long)pads[i], (long long)pads[i + ns]);
		if (out[i] < 0)
			out[i] = 0;
	}
	return 1;
}

/* Conv, ConvInteger, QLinearConv: X is input xi, W is input wi. */
static int conv_like(pb_sx *c, int xi, int wi, int dtype)
{
	pb_tensor *x = pb_sx_in(c, xi), *w = pb_sx_in(c, wi), *o = pb_sx_out(c, 0);
	if (!has_shape(x) || x->rank < 3)
		return 0;
	int ns = x->rank - 2;
	int64_t kernel[PB_MAX_RANK], d[PB_MAX_RANK];
	const pb_attr *ks = pb_node_attr(c->n, "kernel_shape");
	for (int i = 0; i < ns; i++)
		kernel[i] = (ks && ks->ints && i < ks->n)          ? ks->ints[i]
		            : (has_shape(w) && w->rank == x->rank) ? w->dims[2 + i]
		                                                   : -1;
	if (!check_group(c))
		return 0;
	if (has_shape(w) && w->rank == x->rank && x->dims[1] >= 0 && w->dims[1] >= 0) {
		int64_t group = pb_node_attr_int(c->n, "group", 1);
		if (group < 1 || x->dims[1] != pb_sx_mul(w->dims[1], group))
			return pb_sx_conflict(
			    c,
			    "input '%s' has %lld channels but weight '%s' expects "
			    "%lld x group %lld",
			    x->name, (long long)x->dims[1], w->name, (long long)w->dims[1],
			    (long long)group);
	}
	if (!window_dims(c, x, kernel, ns, 0, d + 2))
		return 0;
	d[0] = x->dims[0];
	d[1] = has_shape(w) ? w->dims[0] : -1;
	pb_sx_set(o, dtype ? dtype : x->dtype, x->rank, d);
	return 1;
}

static int rule_conv(pb_sx *c)
{
	return conv_like(c, 0, 1, 0);
}

static int rule_conv_integer(pb_sx *c)
{
	return conv_like(c, 0, 1, PB_DT_INT32);
}

static int rule_qlinear_conv(pb_sx *c)
{
	pb_tensor *zp = pb_sx_in(c, 7);
	return conv_like(c, 0, 3, zp ? zp->dtype : PB_DT_UINT8);
}

static int rule_conv_transpose(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *w = pb_sx_in(c, 1), *o = pb_sx_out(c, 0);
	if (!has_shape(x) || x->rank < 3)
		return 0;
	int ns = x->rank - 2;
	int64_t kernel[PB_MAX_RANK], d[PB_MAX_RANK], strides[PB_MAX_RANK], dil[PB_MAX_RANK],
	    pads[2 * PB_MAX_RANK], opad[PB_MAX_RANK], oshape[PB_MAX_RANK];
	const pb_attr *ks = pb_node_attr(c->n, "kernel_shape");
	for (int i = 0; i < ns; i++)
		kernel[i] = (ks && ks->ints && i < ks->n)          ? ks->ints[i]
		            : (has_shape(w) && w->rank == x->rank) ? w->dims[2 + i]
		                                                   : -1;
	attr_list(c->n, "strides", strides, ns, 1);
	attr_list(c->n, "dilations", dil, ns, 1);
	attr_list(c->n, "pads", pads, 2 * ns, 0);
	attr_list(c->n, "output_padding", opad, ns, 0);
	if (!check_group(c) || !check_at_least(c, "strides", 1) ||
	    !check_at_least(c, "dilations", 1) || !check_at_least(c, "kernel_shape", 1) ||
	    !check_at_least(c, "output_padding", 0) || !check_at_least(c, "pads", 0))
		return 0;
	const pb_attr *os = pb_node_attr(c->n, "output_shape");
	const char *ap = pb_node_attr_str(c->n, "auto_pad", "NOTSET");
	int64_t group = pb_node_attr_int(c->n, "group", 1);
	d[0] = x->dims[0];
	d[1] = has_shape(w) ? pb_sx_mul(w->dims[1], group) : -1;
	if (os && os->ints && os->n >= ns) {
		attr_list(c->n, "output_shape", oshape, ns, -1);
		for (int i = 0; i < ns; i++)
			d[2 + i] = oshape[os->n - ns + i];
	} else {
		for (int i = 0; i < ns; i++) {
			int64_t in = x->dims[2 + i];
			if (in < 0 || kernel[i] < 0 || kernel[i] > (1 << 20) || dil[i] < 0 ||
			    dil[i] > (1 << 20) || strides[i] < 0 || strides[i] > (1 << 20))
				d[2 + i] = -1;
			else if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0)
				d[2 + i] = in * strides[i];
			else
				d[2 + i] = strides[i] * (in - 1) + opad[i] +
				           dil[i] * (kernel[i] - 1) + 1 - pads[i] - pads[i + ns];
			if (d[2 + i] < 1 && in > 0)
				return pb_sx_conflict(
				    c,
				    "spatial axis %d: pads %lld+%lld leave an output of "
				    "%lld",
				    i, (long long)pads[i], (long long)pads[i + ns],
				    (long long)d[2 + i]);
		}
	}
	pb_sx_set(o, x->dtype, x->rank, d);
	return 1;
}

static int rule_pool(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x) || x->rank < 3)
		return 0;
	int ns = x->rank - 2;
	int64_t kernel[PB_MAX_RANK], d[PB_MAX_RANK];
	const pb_attr *ks = pb_node_attr(c->n, "kernel_shape");
	if (!ks || !ks->ints || ks->n != ns)
		return 0;
	for (int i = 0; i < ns; i++)
		kernel[i] = ks->ints[i];
	if (!window_dims(c, x, kernel, ns, (int)pb_node_attr_int(c->n, "ceil_mode", 0), d + 2))
		return 0;
	d[0] = x->dims[0];
	d[1] = x->dims[1];
	pb_sx_set(pb_sx_out(c, 0), x->dtype, x->rank, d);
	pb_sx_set(pb_sx_out(c, 1), PB_DT_INT64, x->rank, d); /* MaxPool indices */
	return 1;
}

static int rule_global_pool(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x) || x->rank < 2)
		return 0;
	int64_t d[PB_MAX_RANK];
	for (int i = 0; i < x->rank; i++)
		d[i] = i < 2 ? x->dims[i] : 1;
	pb_sx_set(pb_sx_out(c, 0), x->dtype, x->rank, d);
	return 1;
}

/* Same shape as X; BatchNormalization's training outputs are per channel. */
static int rule_norm(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x))
		return 0;
	pb_sx_same(pb_sx_out(c, 0), x);
	if (strcmp(c->n->op, "BatchNormalization") == 0) {
		pb_tensor *scale = pb_sx_in(c, 1);
		int64_t ch =
		    x->rank >= 2 ? x->dims[1] : (scale && scale->rank == 1 ? scale->dims[0] : -1);
		for (int k = 1; k < c->n->n_outputs; k++)
			pb_sx_set(pb_sx_out(c, k), scale ? scale->dtype : x->dtype, 1, &ch);
	}
	return 1;
}

/* LayerNormalization: Y like X; Mean and InvStdDev keep dims before axis and
 * are 1 from axis on. */
static int rule_layer_norm(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x))
		return 0;
	pb_sx_same(pb_sx_out(c, 0), x);
	int a = pb_sx_axis(pb_node_attr_int(c->n, "axis", -1), x->rank);
	if (a < 0)
		return 1;
	int64_t d[PB_MAX_RANK];
	for (int i = 0; i < x->rank; i++)
		d[i] = i < a ? x->dims[i] : 1;
	int st = (int)pb_node_attr_int(c->n, "stash_type", 1);
	for (int k = 1; k < 3; k++)
		pb_sx_set(pb_sx_out(c, k), st, x->rank, d);
	return 1;
}

static int rule_gemm(pb_sx *c)
{
	pb_tensor *a = pb_sx_in(c, 0), *b = pb_sx_in(c, 1);
	if (!has_shape(a) || !has_shape(b))
		return 0;
	if (a->rank != 2 || b->rank != 2) {
		char as[160], bs[160];
		return pb_sx_conflict(c, "Gemm multiplies matrices: '%s' is %s, '%s' is %s",
		                      a->name, pb_tensor_shape_str(a, as, sizeof as), b->name,
		                      pb_tensor_shape_str(b, bs, sizeof bs));
	}
	int ta = (int)pb_node_attr_int(c->n, "transA", 0),
	    tb = (int)pb_node_attr_int(c->n, "transB", 0);
	int64_t ka = a->dims[ta ? 0 : 1], kb = b->dims[tb ? 1 : 0];
	if (ka >= 0 && kb >= 0 && ka != kb)
		return pb_sx_conflict(c, "inner dims differ: '%s' has %lld, '%s' has %lld", a->name,
		                      (long long)ka, b->name, (long long)kb);
	int64_t d[2] = {a->dims[ta ? 1 : 0], b->dims[tb ? 0 : 1]};
	pb_sx_set(pb_sx_out(c, 0), a->dtype, 2, d);
	return 1;
}

/* MatMul with numpy semantics: batch dims broadcast; a 1-D left operand
 * loses its M, a 1-D right operand loses its N. */
static int matmul_like(pb_sx *c, int ai, int bi, int dtype)
{
	pb_tensor *a = pb_sx_in(c, ai), *b = pb_sx_in(c, bi);
	if (!has_shape(a) || !has_shape(b) || a->rank < 1 || b->rank < 1)
		return 0;
	int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0;
	int r;
	int64_t d[PB_MAX_RANK + 2];
	int64_t ka = a->dims[a->rank - 1], kb = b->dims[b->rank >= 2 ? b->rank - 2 : 0];
	if (ka >= 0 && kb >= 0 && ka != kb)
		return pb_sx_conflict(c, "inner dims differ: '%s' has %lld, '%s' has %lld", a->name,
		                      (long long)ka, b->name, (long long)kb);
	if (!pb_sx_broadcast(ra, a->dims, rb, b->dims, &r, d))
		return pb_sx_conflict(c, "batch dims of '%s' and '%s' do not broadcast", a->name,
		                      b->name);
	if (a->rank >= 2)
		d[r++] = a->dims[a->rank - 2];
	if (b->rank >= 2)
		d[r++] = b->dims[b->rank - 1];
	if (r > PB_MAX_RANK)
		return 0;
	pb_sx_set(pb_sx_out(c, 0), dtype ? dtype : a->dtype, r, d);
	return 1;
}

static int rule_matmul(pb_sx *c)
{
	return matmul_like(c, 0, 1, 0);
}

static int rule_matmul_integer(pb_sx *c)
{
	return matmul_like(c, 0, 1, PB_DT_INT32);
}

static int rule_qlinear_matmul(pb_sx *c)
{
	pb_tensor *zp = pb_sx_in(c, 7);
	return matmul_like(c, 0, 3, zp ? zp->dtype : PB_DT_UINT8);
}

/* ---------------------------------------------------------------- Einsum */

/* Labels of one Einsum term ("ij", "...ij", "b..."): letters as themselves,
 * ellipsis dims as the control characters 1..ne counted from the right (so
 * that operands with fewer ellipsis dims broadcast against the last ones).
 * rank < 0: output term, the ellipsis has n_ell dims. Returns the label
 * count, or -1 for a malformed term or a rank mismatch. */
static int einsum_term(const char *s, size_t len, int rank, int n_ell, char *labels)
{
	int letters = 0, ell = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (ell || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
				return -1;
			ell = 1;
			i += 2;
		} else if (isalpha((unsigned char)s[i])) {
			letters++;
		} else if (s[i] != ' ') {
			return -1;
		}
	}
	int ne = ell ? (rank >= 0 ? rank - letters : n_ell) : 0;
	if (ne < 0 || (rank >= 0 && letters + ne != rank) || letters + ne > PB_MAX_RANK)
		return -1;
	int k = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			for (int e = 0; e < ne; e++)
				labels[k++] = (char)(1 + (ne - 1 - e));
			i += 2;
		} else if (isalpha((unsigned char)s[i])) {
			labels[k++] = s[i];
		}
	}
	return k;
}

/* Extent of every label of an Einsum node (ext[label], -1 unknown, -2 not
 * used) and the output labels. Returns 0 when the equation or the input
 * ranks are not usable. Shared with cost.c (MACs = product of extents). */
int pb_einsum_extents(const pb_graph *g, const pb_node *n, int64_t ext[128], char *out_labels,
                      int *out_rank)
{
	const char *eq = pb_node_attr_str(n, "equation", NULL);
	if (!eq)
		return 0;
	for (int i = 0; i < 128; i++)
		ext[i] = -2;
	const char *arrow = strstr(eq, "->");
	size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
	int n_ell = 0, count[128] = {0};
	size_t pos = 0;
	for (int k = 0; k < n->n_inputs; k++) {
		const char *p = eq + pos;
		const char *end = memchr(p, ',', lhs_len - pos);
		size_t len = end ? (size_t)(end - p) : lhs_len - pos;
		const pb_tensor *t = n->inputs[k] >= 0 ? &g->tensors[n->inputs[k]] : NULL;
		if (!t || t->rank < 0)
			return 0;
		char labels[PB_MAX_RANK + 1];
		int nl = einsum_term(p, len, t->rank, 0, labels);
		if (nl != t->rank)
			return 0;
		for (int i = 0; i < nl; i++) {
			unsigned char L = (unsigned char)labels[i];
			int64_t dim = t->dims[i];
			if (L < 32 && L > n_ell)
				n_ell = L;
			count[L]++;
			if (ext[L] == -2 || ext[L] == -1 || (ext[L] == 1 && dim >= 0))
				ext[L] = (ext[L] == -2 || dim >= 0) ? dim : ext[L];
			else if (dim >= 0 && dim != 1 && dim != ext[L])
				return 0;
		}
		if (!end) {
			if (k != n->n_inputs - 1)
				return 0;
			break;
		}
		pos += len + 1;
	}
	int r = 0;
	if (arrow) {
		r = einsum_term(arrow + 2, strlen(arrow + 2), -1, n_ell, out_labels);
		if (r < 0)
			return 0;
		for (int i = 0; i < r; i++)
			if (ext[(unsigned char)out_labels[i]] == -2)
				return 0;
	} else {
		for (int e = 0; e < n_ell; e++)
			out_labels[r++] = (char)(n_ell - e);
		for (int L = 'A'; L <= 'z'; L++)
			if (isalpha(L) && count[L] == 1 && r < PB_MAX_RANK)
				out_labels[r++] = (char)L;
	}
	*out_rank = r;
	return 1;
}

static int rule_einsum(pb_sx *c)
{
	int64_t ext[128];
	char labels[PB_MAX_RANK];
	int r = 0;
	if (!pb_einsum_extents(c->g, c->n, ext, labels, &r))
		return 0;
	int64_t d[PB_MAX_RANK];
	for (int i = 0; i < r; i++) {
		int64_t e = ext[(unsigned char)labels[i]];
		d[i] = e;
	}
	pb_tensor *a = pb_sx_in(c, 0);
	pb_sx_set(pb_sx_out(c, 0), a ? a->dtype : 0, r, d);
	return 1;
}

/* ---------------------------------------------------------------- quantisation */

static int rule_quantize(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *zp = pb_sx_in(c, 2);
	if (!has_shape(x))
		return 0;
	pb_sx_set(pb_sx_out(c, 0), zp ? zp->dtype : PB_DT_UINT8, x->rank, x->dims);
	return 1;
}

static int rule_dequantize(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *sc = pb_sx_in(c, 1);
	if (!has_shape(x))
		return 0;
	pb_sx_set(pb_sx_out(c, 0), sc ? sc->dtype : PB_DT_FLOAT, x->rank, x->dims);
	return 1;
}

const pb_shape_rule_entry pb_shape_rules_nn[] = {{"Conv", rule_conv},
                                                 {"ConvInteger", rule_conv_integer},
                                                 {"QLinearConv", rule_qlinear_conv},
                                                 {"ConvTranspose", rule_conv_transpose},
                                                 {"MaxPool", rule_pool},
                                                 {"AveragePool", rule_pool},
                                                 {"LpPool", rule_pool},
                                                 {"GlobalAveragePool", rule_global_pool},
                                                 {"GlobalMaxPool", rule_global_pool},
                                                 {"GlobalLpPool", rule_global_pool},
                                                 {"BatchNormalization", rule_norm},
                                                 {"InstanceNormalization", rule_norm},
                                                 {"LRN", rule_norm},
                                                 {"MeanVarianceNormalization", rule_norm},
                                                 {"LpNormalization", rule_norm},
                                                 {"GroupNormalization", rule_norm},
                                                 {"LayerNormalization", rule_layer_norm},
                                                 {"Gemm", rule_gemm},
                                                 {"MatMul", rule_matmul},
                                                 {"MatMulInteger", rule_matmul_integer},
                                                 {"QLinearMatMul", rule_qlinear_matmul},
                                                 {"Einsum", rule_einsum},
                                                 {"QuantizeLinear", rule_quantize},
                                                 {"DequantizeLinear", rule_dequantize},
                                                 {NULL, NULL}};
