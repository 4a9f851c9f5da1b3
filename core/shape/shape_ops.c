/*
 * shape_ops.c — shape rules for element-wise and tensor-manipulation
 * operators (the "tensor" family; convolutions, pooling, normalisation and
 * matrix products live in shape_nn.c).
 *
 * Each rule follows the ONNX operator specification for every opset the
 * operator had: where an operand moved from an attribute to an input (axes of
 * Squeeze/Unsqueeze/Reduce*, split of Split, pads of Pad, starts/ends of
 * Slice), the input is used when present and the attribute otherwise, which
 * is exactly the per-opset behaviour for valid models. Rules never fail hard:
 * what cannot be determined is left unknown (-1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape_rules.h"

#define MAXL 64 /* longest axes/pads/perm list a rule reads */

static int has_shape(const pb_tensor *t)
{
	return t && t->rank >= 0;
}

/* ---------------------------------------------------------------- element-wise */

static int rule_unary(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x)) {
		pb_sx_set(pb_sx_out(c, 0), x ? x->dtype : 0, -1, NULL);
		return 0;
	}
	pb_sx_same(pb_sx_out(c, 0), x);
	return 1;
}

static int rule_bool_unary(pb_sx *c)
{
	int r = rule_unary(c);
	pb_tensor *o = pb_sx_out(c, 0);
	if (o)
		o->dtype = PB_DT_BOOL;
	return r;
}

static int rule_cast(pb_sx *c)
{
	int r = rule_unary(c);
	pb_tensor *o = pb_sx_out(c, 0);
	if (o)
		o->dtype = (int)pb_node_attr_int(c->n, "to", 0);
	return r;
}

static int rule_castlike(pb_sx *c)
{
	int r = rule_unary(c);
	pb_tensor *o = pb_sx_out(c, 0), *like = pb_sx_in(c, 1);
	if (o && like)
		o->dtype = like->dtype;
	return r;
}

static int rule_eyelike(pb_sx *c)
{
	int r = rule_unary(c);
	pb_tensor *o = pb_sx_out(c, 0);
	int64_t dt = pb_node_attr_int(c->n, "dtype", 0);
	if (o && dt)
		o->dtype = (int)dt;
	return r;
}

/* Dropout: output like the input, optional mask (bool) of the same shape. */
static int rule_dropout(pb_sx *c)
{
	int r = rule_unary(c);
	pb_tensor *x = pb_sx_in(c, 0), *m = pb_sx_out(c, 1);
	if (m && has_shape(x))
		pb_sx_set(m, c->opset >= 10 ? PB_DT_BOOL : x->dtype, x->rank, x->dims);
	return r;
}

/* Broadcast of all (present) inputs; dtype of the first. */
static int broadcast_inputs(pb_sx *c, int first, int dtype)
{
	int rank = 0;
	int64_t dims[PB_MAX_RANK];
	int any = 0;
	pb_tensor *o = pb_sx_out(c, 0);
	for (int i = first; i < c->n->n_inputs; i++) {
		pb_tensor *t = pb_sx_in(c, i);
		if (!t)
			continue;
		if (!has_shape(t)) {
			pb_sx_set(o, dtype, -1, NULL);
			return 0;
		}
		if (!any) {
			rank = t->rank;
			memcpy(dims, t->dims, sizeof dims);
			any = 1;
		} else if (!pb_sx_broadcast(rank, dims, t->rank, t->dims, &rank, dims)) {
			pb_sx_set(o, dtype, -1, NULL);
			return pb_sx_conflict(
			    c, "input '%s' does not broadcast with the inputs before it", t->name);
		}
	}
	if (!any)
		return 0;
	pb_sx_set(o, dtype, rank, dims);
	return 1;
}

static int rule_binary(pb_sx *c)
{
	pb_tensor *a = pb_sx_in(c, 0);
	return broadcast_inputs(c, 0, a ? a->dtype : 0);
}

static int rule_compare(pb_sx *c)
{
	return broadcast_inputs(c, 0, PB_DT_BOOL);
}

static int rule_where(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 1);
	return broadcast_inputs(c, 0, x ? x->dtype : 0);
}

/* PRelu: slope broadcasts to X (unidirectional); the output has X's shape. */
static int rule_prelu(pb_sx *c)
{
	return broadcast_inputs(c, 0, pb_sx_in(c, 0) ? pb_sx_in(c, 0)->dtype : 0);
}

/* ---------------------------------------------------------------- reshaping */

/* Reshape refuses what no tensor can be reshaped to: an entry below -1, two
 * -1 entries, an entry beyond 2^40 (it was clamped: [2^62, 4] became
 * 1099511627776x4) and a target whose element count overflows int64. */
static int rule_reshape(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	int64_t shp[PB_MAX_RANK];
	int n = 0;
	int dt = x ? x->dtype : 0;
	int found = c->n->n_inputs >= 2
	                ? pb_sx_dims_arg(c, 1, NULL, "shape", shp, PB_MAX_RANK, &n)
	                : pb_sx_dims_arg(c, 99, "shape", "shape", shp, PB_MAX_RANK, &n);
	if (c->conflict[0])
		return 0;
	if (found != 1) {
		/* The rank is still known from the shape tensor's length. */
		pb_tensor *s = pb_sx_in(c, 1);
		if (s && s->rank == 1 && s->dims[0] >= 0 && s->dims[0] <= PB_MAX_RANK) {
			pb_sx_set(o, dt, (int)s->dims[0], NULL);
			return 1;
		}
		pb_sx_set(o, dt, -1, NULL);
		return 0;
	}
	int allowzero = (int)pb_node_attr_int(c->n, "allowzero", 0);
	int neg = -1, unknown = 0, overflow = 0;
	int64_t known = 1;
	for (int i = 0; i < n; i++) {
		if (shp[i] < -1)
			return pb_sx_conflict(c, "shape[%d] = %lld (only -1 may be negative)", i,
			                      (long long)shp[i]);
		if (shp[i] == -1) {
			if (neg >= 0)
				return pb_sx_conflict(c, "shape has two -1 entries (%d and %d)",
				                      neg, i);
			neg = i;
			continue;
		}
		if (shp[i] == 0 && !allowzero)
			shp[i] = (x && i < x->rank) ? x->dims[i] : -1; /* copy (maybe unknown) */
		if (shp[i] < 0)
			unknown = 1;
		else if (__builtin_mul_overflow(known, shp[i], &known))
			overflow = 1;
	}
	int64_t total = has_shape(x) ? pb_tensor_numel(x) : -1;
	if (overflow)
		return pb_sx_conflict(c, "the element count of the target shape overflows int64");
	/* ONNX Reshape keeps the element count: a target of another count (a
	 * batch-1 constant at --input batch 32 that the batch rewrite could not
	 * trace, shape_batch.c) is refused, as a -1 that does not divide. */
	if (total >= 0 && !unknown && known <= PB_SX_NUMEL_MAX) { /* beyond: the size cap */
		char xs[160], ts[160];
		pb_tensor tt = {.rank = n};
		for (int i = 0; i < n; i++)
			tt.dims[i] = i == neg ? -1 : shp[i];
		if ((neg < 0 && known != total) || (neg >= 0 && (known == 0 || total % known != 0)))
			return pb_sx_conflict(
			    c,
			    "Reshape keeps the element count: input '%s' is %s (%lld elements), "
			    "the "
			    "target %s%s",
			    x->name, pb_tensor_shape_str(x, xs, sizeof xs), (long long)total,
			    pb_tensor_shape_str(&tt, ts, sizeof ts),
			    neg < 0 ? " has another count" : " has no whole -1 for it");
	}
	if (neg >= 0)
		shp[neg] = (total >= 0 && !unknown && known > 0 && total % known == 0)
		               ? total / known
		               : -1;
	pb_sx_set(o, dt, n, shp);
	return 1;
}

static int rule_flatten(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	if (!has_shape(x))
		return 0;
	int64_t axis = pb_node_attr_int(c->n, "axis", 1);
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > x->rank)
		return 0;
	int64_t d[2] = {pb_sx_prod(x->dims, 0, (int)axis), pb_sx_prod(x->dims, (int)axis, x->rank)};
	pb_sx_set(o, x->dtype, 2, d);
	return 1;
}

static int rule_transpose(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	if (!has_shape(x))
		return 0;
	int64_t perm[MAXL];
	int n = 0;
	if (pb_sx_ints(c, 99, "perm", perm, MAXL, &n) != 1 || n == 0) {
		n = x->rank;
		for (int i = 0; i < n; i++)
			perm[i] = n - 1 - i;
	}
	if (n != x->rank)
		return 0;
	int64_t d[PB_MAX_RANK];
	for (int i = 0; i < n; i++) {
		int a = pb_sx_axis(perm[i], x->rank);
		if (a < 0)
			return 0;
		d[i] = x->dims[a];
	}
	pb_sx_set(o, x->dtype, n, d);
	return 1;
}

static int rule_squeeze(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	if (!has_shape(x))
		return 0;
	int64_t axes[MAXL];
	int n = 0;
	int f = pb_sx_ints(c, 1, "axes", axes, MAXL, &n);
	if (f < 0)
		return 0;
	int drop[PB_MAX_RANK] = {0};
	if (f == 0 || n == 0) {
		for (int i = 0; i < x->rank; i++) {
			if (x->dims[i] < 0)
				return 0;
			drop[i] = x->dims[i] == 1;
		}
	} else {
		for (int k = 0; k < n; k++) {
			int a = pb_sx_axis(axes[k], x->rank);
			if (a < 0)
				return 0;
			drop[a] = 1;
		}
	}
	int64_t d[PB_MAX_RANK];
	int r = 0;
	for (int i = 0; i < x->rank; i++)
		if (!drop[i])
			d[r++] = x->dims[i];
	pb_sx_set(o, x->dtype, r, d);
	return 1;
}

static int rule_unsqueeze(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	if (!has_shape(x))
		return 0;
	int64_t axes[MAXL];
	int n = 0;
	if (pb_sx_ints(c, 1, "axes", axes, MAXL, &n) != 1)
		return 0;
	int r = x->rank + n;
	if (r > PB_MAX_RANK)
		return 0;
	int ins[PB_MAX_RANK] = {0};
	for (int k = 0; k < n; k++) {
		int a = pb_sx_axis(axes[k], r);
		if (a < 0 || ins[a])
			return 0;
		ins[a] = 1;
	}
	int64_t d[PB_MAX_RANK];
	for (int i = 0, j = 0; i < r; i++)
		d[i] = ins[i] ? 1 : x->dims[j++];
	pb_sx_set(o, x->dtype, r, d);
	return 1;
}

static int rule_concat(pb_sx *c)
{
	pb_tensor *o = pb_sx_out(c, 0);
	pb_tensor *first = NULL;
	for (int i = 0; i < c->n->n_inputs && !first; i++)
		first = pb_sx_in(c, i);
	if (!has_shape(first))
		return 0;
	int rank = first->rank;
	int axis = pb_sx_axis(pb_node_attr_int(c->n, "axis", 0), rank);
	if (axis < 0)
		return 0;
	int64_t d[PB_MAX_RANK];
	memcpy(d, first->dims, sizeof d);
	d[axis] = 0;
	for (int i = 0; i < c->n->n_inputs; i++) {
		pb_tensor *t = pb_sx_in(c, i);
		if (!t)
			continue;
		char as[160], bs[160];
		if (has_shape(t) && t->rank != rank)
			return pb_sx_conflict(
			    c, "Concat inputs have one rank: '%s' is %s, '%s' is %s", first->name,
			    pb_tensor_shape_str(first, as, sizeof as), t->name,
			    pb_tensor_shape_str(t, bs, sizeof bs));
		if (!has_shape(t)) {
			d[axis] = -1;
			continue;
		}
		for (int k = 0; k < rank; k++)
			if (k != axis && d[k] >= 0 && t->dims[k] >= 0 && d[k] != t->dims[k])
				return pb_sx_conflict(
				    c,
				    "Concat on axis %d needs equal dims elsewhere: '%s' is %s, "
				    "'%s' "
				    "is %s (dim %d)",
				    axis, first->name, pb_tensor_shape_str(first, as, sizeof as),
				    t->name, pb_tensor_shape_str(t, bs, sizeof bs), k);
		for (int k = 0; k < rank; k++)
			if (k != axis && d[k] < 0)
				d[k] = t->dims[k];
		if (d[axis] >= 0 && t->dims[axis] >= 0)
			d[axis] += t->dims[axis];
		else
			d[axis] = -1;
	}
	pb_sx_set(o, first->dtype, rank, d);
	return 1;
}

static int rule_split(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x))
		return 0;
	int axis = pb_sx_axis(pb_node_attr_int(c->n, "axis", 0), x->rank);
	if (axis < 0)
		return 0;
	int nout = c->n->n_outputs;
	int64_t split[MAXL];
	int n = 0;
	int f = pb_sx_ints(c, 1, "split", split, MAXL, &n);
	if (f < 0)
		return 0;
	int64_t dim = x->dims[axis];
	if (f == 0 || n == 0) {
		/* Equal parts; opset 18 allows a smaller last part (ceil split). */
		n = nout;
		if (n > MAXL || n <= 0 || dim < 0)
			return 0;
		int64_t part = (dim + n - 1) / n;
		if (c->opset < 18 && dim % n != 0)
			return 0;
		for (int k = 0; k < n; k++) {
			int64_t left = dim - part * k;
			split[k] = left < part ? (left > 0 ? left : 0) : part;
		}
	}
	if (f == 1 && n > 0) { /* explicit sizes: one per output, summing to the axis */
		int64_t sum = 0;
		for (int k = 0; k < n; k++) {
			if (split[k] < 0)
				return pb_sx_conflict(c, "split[%d] = %lld is negative", k,
				                      (long long)split[k]);
			sum += split[k];
		}
		char xs[160];
		if (n != nout)
			return pb_sx_conflict(c, "Split gives %d sizes for %d outputs", n, nout);
		if (dim >= 0 && sum != dim)
			return pb_sx_conflict(
			    c, "Split sizes sum to %lld, but axis %d of '%s' (%s) has %lld",
			    (long long)sum, axis, x->name, pb_tensor_shape_str(x, xs, sizeof xs),
			    (long long)dim);
	}
	for (int k = 0; k < nout && k < n; k++) {
		int64_t d[PB_MAX_RANK];
		memcpy(d, x->dims, sizeof d);
		d[axis] = split[k];
		pb_sx_set(pb_sx_out(c, k), x->dtype, x->rank, d);
	}
	return 1;
}

/* Slice (opset >= 10: inputs starts, ends, axes, steps; before: attributes). */
static int rule_slice(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	if (!has_shape(x))
		return 0;
	int64_t st[MAXL], en[MAXL], ax[MAXL], sp[MAXL];
	int ns = 0, ne = 0, na = 0, np = 0;
	int from_inputs = c->n->n_inputs >= 2;
	if (from_inputs) {
		if (pb_sx_ints(c, 1, NULL, st, MAXL, &ns) != 1 ||
		    pb_sx_ints(c, 2, NULL, en, MAXL, &ne) != 1) {
			/* Only the sliced axes become unknown when axes are known. */
			int64_t d[PB_MAX_RANK];
			memcpy(d, x->dims, sizeof d);
			int fa = pb_sx_ints(c, 3, NULL, ax, MAXL, &na);
			if (fa == 1) {
				for (int k = 0; k < na; k++) {
					int a = pb_sx_axis(ax[k], x->rank);
					if (a >= 0)
						d[a] = -1;
				}
			} else {
				for (int k = 0; k < x->rank; k++)
					d[k] = -1;
			}
			pb_sx_set(o, x->dtype, x->rank, d);
			return 1;
		}
		int fa = pb_sx_ints(c, 3, NULL, ax, MAXL, &na);
		int fs = pb_sx_ints(c, 4, NULL, sp, MAXL, &np);
		if (fa < 0 || fs < 0) {
			pb_sx_set(o, x->dtype, x->rank, NULL);
			return 1;
		}
	} else {
		if (pb_sx_ints(c, 99, "starts", st, MAXL, &ns) != 1 ||
		    pb_sx_ints(c, 99, "ends", en, MAXL, &ne) != 1)
			return 0;
		pb_sx_ints(c, 99, "axes", ax, MAXL, &na);
	}
	if (ns != ne || (na && na != ns) || (np && np != ns))
		return 0;
	int64_t d[PB_MAX_RANK];
	memcpy(d, x->dims, sizeof d);
	for (int k = 0; k < ns; k++) {
		int a = na ? pb_sx_axis(ax[k], x->rank) : k;
		if (a < 0)
			return 0;
		int64_t step = np ? sp[k] : 1, dim = x->dims[a];
		if (step == 0)
			return 0;
		if (dim < 0) {
			d[a] = -1;
			continue;
		}
		int64_t s = st[k], e = en[k];
		if (s < 0)
			s += dim;
		if (e < 0)
			e += dim;
		if (step > 0) {
			s = s < 0 ? 0 : (s > dim ? dim : s);
			e = e < 0 ? 0 : (e > dim ? dim : e);
			d[a] = e > s ? (e - s + step - 1) / step : 0;
		} else {
			s = s < 0 ? -1 : (s > dim - 1 ? dim - 1 : s);
			e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
			d[a] = s > e ? (s - e + (-step) - 1) / (-step) : 0;
		}
	}
	pb_sx_set(o, x->dtype, x->rank, d);
	return 1;
}

static int rule_gather(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *idx = pb_sx_in(c, 1), *o = pb_sx_out(c, 0);
	if (!has_shape(x) || !has_shape(idx))
		return 0;
	int axis = pb_sx_axis(pb_node_attr_int(c->n, "axis", 0), x->rank);
	int r = x->rank - 1 + idx->rank;
	if (axis < 0 || r > PB_MAX_RANK)
		return 0;
	int64_t d[PB_MAX_RANK];
	int k = 0;
	for (int i = 0; i < axis; i++)
		d[k++] = x->dims[i];
	for (int i = 0; i < idx->rank; i++)
		d[k++] = idx->dims[i];
	for (int i = axis + 1; i < x->rank; i++)
		d[k++] = x->dims[i];
	pb_sx_set(o, x->dtype, r, d);
	return 1;
}

/* GatherElements: the output has the indices' shape. */
static int rule_gather_elements(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *idx = pb_sx_in(c, 1);
	if (!has_shape(idx))
		return 0;
	pb_sx_set(pb_sx_out(c, 0), x ? x->dtype : 0, idx->rank, idx->dims);
	return 1;
}

static int rule_gather_nd(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *idx = pb_sx_in(c, 1);
	if (!has_shape(x) || !has_shape(idx) || idx->rank < 1)
		return 0;
	int64_t bd = pb_node_attr_int(c->n, "batch_dims", 0);
	int64_t last = idx->dims[idx->rank - 1];
	if (last < 0 || last > PB_MAX_RANK || bd < 0 || bd > PB_MAX_RANK)
		return 0;
	int b = (int)bd;
	int r = idx->rank - 1 + x->rank - b - (int)last;
	if (r < 0 || r > PB_MAX_RANK)
		return 0;
	int64_t d[PB_MAX_RANK];
	int k = 0;
	for (int i = 0; i < idx->rank - 1; i++)
		d[k++] = idx->dims[i];
	for (int i = b + (int)last; i < x->rank; i++)
		d[k++] = x->dims[i];
	pb_sx_set(pb_sx_out(c, 0), x->dtype, r, d);
	return 1;
}

static int rule_expand(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	int64_t shp[PB_MAX_RANK];
	int n = 0;
	if (!has_shape(x))
		return 0;
	if (pb_sx_dims_arg(c, 1, NULL, "shape", shp, PB_MAX_RANK, &n) != 1) {
		pb_tensor *s = pb_sx_in(c, 1);
		if (s && s->rank == 1 && s->dims[0] >= 0) {
			int r = (int)s->dims[0] > x->rank ? (int)s->dims[0] : x->rank;
			pb_sx_set(o, x->dtype, r, NULL);
			return 1;
		}
		return 0;
	}
	int r;
	int64_t d[PB_MAX_RANK];
	for (int i = 0; i < n; i++)
		if (shp[i] < 0)
			shp[i] = -1;
	if (!pb_sx_broadcast(x->rank, x->dims, n, shp, &r, d)) {
		char a[160];
		return pb_sx_conflict(
		    c, "input '%s' of shape %s does not broadcast to the shape given", x->name,
		    pb_tensor_shape_str(x, a, sizeof a));
	}
	pb_sx_set(o, x->dtype, r, d);
	return 1;
}

static int rule_tile(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	int64_t rep[PB_MAX_RANK];
	int n = 0;
	if (!has_shape(x))
		return 0;
	int found = pb_sx_dims_arg(c, 1, NULL, "repeats", rep, PB_MAX_RANK, &n);
	if (found == 1 && n != x->rank) {
		char xs[160];
		return pb_sx_conflict(c, "Tile has %d repeats for input '%s' of rank %d (%s)", n,
		                      x->name, x->rank, pb_tensor_shape_str(x, xs, sizeof xs));
	}
	if (found != 1) {
		pb_sx_set(o, x->dtype, x->rank, NULL);
		return 1;
	}
	int64_t d[PB_MAX_RANK];
	for (int i = 0; i < n; i++) {
		if (rep[i] < 0)
			return pb_sx_conflict(c, "repeats[%d] = %lld is negative", i,
			                      (long long)rep[i]);
		d[i] = pb_sx_mul(x->dims[i], rep[i]);
		if (d[i] < 0 && x->dims[i] >= 0)
			return pb_sx_conflict(c, "dim %d: %lld x %lld repeats is beyond 2^40", i,
			                      (long long)x->dims[i], (long long)rep[i]);
	}
	pb_sx_set(o, x->dtype, n, d);
	return 1;
}

static int rule_pad(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	if (!has_shape(x))
		return 0;
	int64_t pads[2 * PB_MAX_RANK], axes[PB_MAX_RANK];
	int n = 0, na = 0;
	int f = c->n->n_inputs >= 2 ? pb_sx_ints(c, 1, NULL, pads, 2 * PB_MAX_RANK, &n)
	                            : pb_sx_ints(c, 99, "pads", pads, 2 * PB_MAX_RANK, &n);
	int fa = pb_sx_ints(c, 3, NULL, axes, PB_MAX_RANK, &na);
	if (f != 1 || fa < 0) {
		pb_sx_set(o, x->dtype, x->rank, NULL);
		return 1;
	}
	if (fa == 0) {
		na = x->rank;
		for (int i = 0; i < na; i++)
			axes[i] = i;
	}
	if (n != 2 * na)
		return 0;
	int64_t d[PB_MAX_RANK];
	memcpy(d, x->dims, sizeof d);
	for (int k = 0; k < na; k++) {
		int a = pb_sx_axis(axes[k], x->rank);
		if (a < 0)
			return 0;
		if (d[a] >= 0)
			d[a] += pads[k] + pads[k + na];
	}
	pb_sx_set(o, x->dtype, x->rank, d);
	return 1;
}

static int rule_shape(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x))
		return 0;
	int64_t s = pb_sx_clamp(pb_node_attr_int(c->n, "start", 0));
	int64_t e = pb_sx_clamp(pb_node_attr_int(c->n, "end", x->rank));
	if (s < 0)
		s += x->rank;
	if (e < 0)
		e += x->rank;
	s = s < 0 ? 0 : (s > x->rank ? x->rank : s);
	e = e < 0 ? 0 : (e > x->rank ? x->rank : e);
	int64_t d = e > s ? e - s : 0;
	pb_sx_set(pb_sx_out(c, 0), PB_DT_INT64, 1, &d);
	return 1;
}

static int rule_size(pb_sx *c)
{
	pb_sx_set(pb_sx_out(c, 0), PB_DT_INT64, 0, NULL);
	return 1;
}

static int rule_constant_of_shape(pb_sx *c)
{
	const pb_attr *a = pb_node_attr(c->n, "value");
	int dt = (a && a->t) ? a->t->dtype : PB_DT_FLOAT;
	int64_t shp[PB_MAX_RANK];
	int n = 0;
	if (pb_sx_dims_arg(c, 0, NULL, "shape", shp, PB_MAX_RANK, &n) != 1) {
		pb_tensor *s = pb_sx_in(c, 0);
		if (s && s->rank == 1 && s->dims[0] >= 0 && s->dims[0] <= PB_MAX_RANK) {
			pb_sx_set(pb_sx_out(c, 0), dt, (int)s->dims[0], NULL);
			return 1;
		}
		pb_sx_set(pb_sx_out(c, 0), dt, -1, NULL);
		return 0;
	}
	for (int i = 0; i < n; i++)
		if (shp[i] < 0)
			return pb_sx_conflict(c, "shape[%d] = %lld is negative", i,
			                      (long long)shp[i]);
	pb_sx_set(pb_sx_out(c, 0), dt, n, shp);
	return 1;
}

/* Constant: the value (kept when small) or the shape the loader recorded. */
static int rule_constant(pb_sx *c)
{
	pb_tensor *o = pb_sx_out(c, 0);
	for (int i = 0; i < c->n->n_attrs; i++) {
		const pb_attr *a = &c->n->attrs[i];
		if (strcmp(a->name, "value_float") == 0 || strcmp(a->name, "value_int") == 0) {
			pb_sx_set(o, a->name[6] == 'f' ? PB_DT_FLOAT : PB_DT_INT64, 0, NULL);
			return 1;
		}
		if (strcmp(a->name, "value_floats") == 0 || strcmp(a->name, "value_ints") == 0 ||
		    strcmp(a->name, "value_strings") == 0) {
			int64_t d = a->n;
			int dt = a->name[6] == 'f'   ? PB_DT_FLOAT
			         : a->name[6] == 'i' ? PB_DT_INT64
			                             : PB_DT_STRING;
			pb_sx_set(o, dt, 1, &d);
			return 1;
		}
		if (strcmp(a->name, "value_string") == 0) {
			pb_sx_set(o, PB_DT_STRING, 0, NULL);
			return 1;
		}
		if (strcmp(a->name, "value") == 0 && a->t) {
			pb_sx_set(o, a->t->dtype, a->t->rank, a->t->dims);
			return 1;
		}
	}
	return 0; /* a large tensor: the loader set its shape */
}

static int rule_range(pb_sx *c)
{
	const pb_value *s = pb_sx_val(c, 0), *l = pb_sx_val(c, 1), *d = pb_sx_val(c, 2);
	pb_tensor *st = pb_sx_in(c, 0);
	int dt = st ? st->dtype : 0;
	if (!s || !l || !d || s->numel < 1 || l->numel < 1 || d->numel < 1) {
		pb_sx_set(pb_sx_out(c, 0), dt, 1, NULL);
		return 1;
	}
	if (d->f[0] == 0)
		return pb_sx_conflict(c, "delta is 0 (the range never ends)");
	double n = ceil((l->f[0] - s->f[0]) / d->f[0]);
	if (n > (double)PB_SX_BIG)
		return pb_sx_conflict(c, "a range of %.0f elements is beyond 2^40", n);
	int64_t len = n > 0 ? pb_sx_dim(n) : (n <= 0 ? 0 : -1); /* -1: NaN */
	pb_sx_set(pb_sx_out(c, 0), dt, 1, &len);
	return 1;
}

/* Reduce*: axes from the input (ReduceSum >= 13, the others >= 18) or the
 * attribute; keepdims (default 1); noop_with_empty_axes. */
static int rule_reduce(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	if (!has_shape(x))
		return 0;
	int64_t axes[MAXL];
	int n = 0;
	int f = pb_sx_ints(c, 1, "axes", axes, MAXL, &n);
	int keep = (int)pb_node_attr_int(c->n, "keepdims", 1);
	int dt = x->dtype;
	if (f < 0) {
		pb_sx_set(o, dt, keep ? x->rank : -1, NULL);
		return keep;
	}
	int red[PB_MAX_RANK] = {0};
	if (n == 0) {
		if (pb_node_attr_int(c->n, "noop_with_empty_axes", 0)) {
			pb_sx_same(o, x);
			return 1;
		}
		for (int i = 0; i < x->rank; i++)
			red[i] = 1;
	}
	for (int k = 0; k < n; k++) {
		int a = pb_sx_axis(axes[k], x->rank);
		if (a < 0)
			return 0;
		red[a] = 1;
	}
	int64_t d[PB_MAX_RANK];
	int r = 0;
	for (int i = 0; i < x->rank; i++) {
		if (!red[i])
			d[r++] = x->dims[i];
		else if (keep)
			d[r++] = 1;
	}
	pb_sx_set(o, dt, r, d);
	return 1;
}

static int rule_argreduce(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	if (!has_shape(x))
		return 0;
	int a = pb_sx_axis(pb_node_attr_int(c->n, "axis", 0), x->rank);
	int keep = (int)pb_node_attr_int(c->n, "keepdims", 1);
	if (a < 0)
		return 0;
	int64_t d[PB_MAX_RANK];
	int r = 0;
	for (int i = 0; i < x->rank; i++) {
		if (i != a)
			d[r++] = x->dims[i];
		else if (keep)
			d[r++] = 1;
	}
	pb_sx_set(o, PB_DT_INT64, r, d);
	return 1;
}

static int rule_topk(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x))
		return 0;
	int a = pb_sx_axis(pb_node_attr_int(c->n, "axis", -1), x->rank);
	if (a < 0)
		return 0;
	int64_t k[MAXL];
	int n = 0;
	int64_t d[PB_MAX_RANK];
	memcpy(d, x->dims, sizeof d);
	d[a] = pb_sx_dims_arg(c, 1, "k", "k", k, MAXL, &n) == 1 && n == 1 ? k[0] : -1;
	if (c->conflict[0])
		return 0;
	if (n == 1 && (k[0] < 0 || (x->dims[a] >= 0 && k[0] > x->dims[a])))
		return pb_sx_conflict(c, "k = %lld but axis %d of '%s' has %lld elements",
		                      (long long)k[0], a, x->name, (long long)x->dims[a]);
	pb_sx_set(pb_sx_out(c, 0), x->dtype, x->rank, d);
	pb_sx_set(pb_sx_out(c, 1), PB_DT_INT64, x->rank, d);
	return 1;
}

static int rule_onehot(pb_sx *c)
{
	pb_tensor *idx = pb_sx_in(c, 0), *vals = pb_sx_in(c, 2);
	if (!has_shape(idx) || idx->rank + 1 > PB_MAX_RANK)
		return 0;
	const pb_value *depth = pb_sx_val(c, 1);
	int r = idx->rank + 1;
	int a = pb_sx_axis(pb_node_attr_int(c->n, "axis", -1), r);
	if (a < 0)
		return 0;
	if (depth && depth->numel >= 1 && !(depth->f[0] >= 1 && depth->f[0] <= (double)PB_SX_BIG))
		return pb_sx_conflict(c, "depth = %g is not a dimension (1 to 2^40)", depth->f[0]);
	int64_t d[PB_MAX_RANK];
	for (int i = 0, j = 0; i < r; i++)
		d[i] = i == a ? (depth && depth->numel >= 1 ? pb_sx_dim(depth->f[0]) : -1)
		              : idx->dims[j++];
	pb_sx_set(pb_sx_out(c, 0), vals ? vals->dtype : 0, r, d);
	return 1;
}

static int rule_depth_to_space(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	int64_t b = pb_node_attr_int(c->n, "blocksize", 0), bb = pb_sx_mul(b, b);
	if (b < 1 || bb < 0)
		return pb_sx_conflict(c, "blocksize = %lld (must be 1 to 2^20)", (long long)b);
	if (!has_shape(x) || x->rank != 4 || b <= 0 || bb <= 0)
		return 0;
	int64_t d[4] = {x->dims[0], x->dims[1] >= 0 ? x->dims[1] / bb : -1,
	                pb_sx_mul(x->dims[2], b), pb_sx_mul(x->dims[3], b)};
	pb_sx_set(pb_sx_out(c, 0), x->dtype, 4, d);
	return 1;
}

static int rule_space_to_depth(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	int64_t b = pb_node_attr_int(c->n, "blocksize", 0), bb = pb_sx_mul(b, b);
	if (b < 1 || bb < 0)
		return pb_sx_conflict(c, "blocksize = %lld (must be 1 to 2^20)", (long long)b);
	if (!has_shape(x) || x->rank != 4 || b <= 0 || bb <= 0)
		return 0;
	int64_t d[4] = {x->dims[0], pb_sx_mul(x->dims[1], bb),
	                x->dims[2] >= 0 ? x->dims[2] / b : -1,
	                x->dims[3] >= 0 ? x->dims[3] / b : -1};
	pb_sx_set(pb_sx_out(c, 0), x->dtype, 4, d);
	return 1;
}

/* Resize (opset >= 11: X, roi, scales, sizes; opset 10: X, scales) and
 * Upsample (scales attribute before opset 9, input after). */
static int rule_resize(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	if (!has_shape(x))
		return 0;
	int64_t d[PB_MAX_RANK];
	memcpy(d, x->dims, sizeof d);
	const pb_value *sizes = NULL, *scales = NULL;
	double attr_scales[PB_MAX_RANK];
	int n_attr = 0;
	if (strcmp(c->n->op, "Upsample") == 0) {
		const pb_attr *a = pb_node_attr(c->n, "scales");
		if (a && a->floats && a->n <= PB_MAX_RANK) {
			n_attr = a->n;
			for (int i = 0; i < a->n; i++)
				attr_scales[i] = a->floats[i];
		} else {
			scales = pb_sx_val(c, 1);
		}
	} else if (c->opset < 11 || c->n->n_inputs == 2) {
		scales = pb_sx_val(c, 1);
	} else {
		pb_tensor *st = pb_sx_in(c, 3);
		if (st && !(st->rank == 1 && st->dims[0] == 0))
			sizes = pb_sx_val(c, 3);
		pb_tensor *sc = pb_sx_in(c, 2);
		if (!st && sc)
			scales = pb_sx_val(c, 2);
		if (st && !sizes && st->value == NULL && !(st->rank == 1 && st->dims[0] == 0)) {
			pb_sx_set(o, x->dtype, x->rank, NULL);
			return 1;
		}
		if (!sizes && sc && !(sc->rank == 1 && sc->dims[0] == 0))
			scales = pb_sx_val(c, 2);
	}
	int64_t axes[PB_MAX_RANK];
	int na = 0;
	if (pb_sx_ints(c, 99, "axes", axes, PB_MAX_RANK, &na) != 1) {
		na = x->rank;
		for (int i = 0; i < na; i++)
			axes[i] = i;
	}
	if (sizes) {
		if (sizes->numel != na)
			return 0;
		const char *policy = pb_node_attr_str(c->n, "keep_aspect_ratio_policy", "stretch");
		if (strcmp(policy, "stretch") != 0) {
			double s = strcmp(policy, "not_larger") == 0 ? INFINITY : 0;
			for (int k = 0; k < na; k++) {
				int a = pb_sx_axis(axes[k], x->rank);
				if (a < 0 || x->dims[a] <= 0)
					return 0;
				double r = (double)sizes->i[k] / (double)x->dims[a];
				s = strcmp(policy, "not_larger") == 0 ? fmin(s, r) : fmax(s, r);
			}
			for (int k = 0; k < na; k++) {
				int a = pb_sx_axis(axes[k], x->rank);
				d[a] = pb_sx_dim(floor(s * (double)x->dims[a] + 0.5));
			}
		} else {
			for (int k = 0; k < na; k++) {
				int a = pb_sx_axis(axes[k], x->rank);
				if (a < 0)
					return 0;
				d[a] = sizes->i[k];
			}
		}
	} else if (scales || n_attr) {
		int ns = scales ? (int)scales->numel : n_attr;
		if (ns != na)
			return 0;
		for (int k = 0; k < na; k++) {
			int a = pb_sx_axis(axes[k], x->rank);
			if (a < 0)
				return 0;
			double s = scales ? scales->f[k] : attr_scales[k];
			d[a] = x->dims[a] >= 0 ? pb_sx_dim((double)x->dims[a] * s + 1e-9) : -1;
		}
	} else {
		pb_sx_set(o, x->dtype, x->rank, NULL);
		return 1;
	}
	pb_sx_set(o, x->dtype, x->rank, d);
	return 1;
}

/* Compress / NonZero / Unique: data-dependent; only the rank is known here
 * (constant propagation fills the rest when the data is known). */
static int rule_nonzero(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x))
		return 0;
	int64_t d[2] = {x->rank, -1};
	pb_sx_set(pb_sx_out(c, 0), PB_DT_INT64, 2, d);
	return 1;
}

static int rule_compress(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x))
		return 0;
	const pb_attr *ax = pb_node_attr(c->n, "axis");
	if (!ax) {
		pb_sx_set(pb_sx_out(c, 0), x->dtype, 1, NULL);
		return 1;
	}
	int a = pb_sx_axis(ax->i, x->rank);
	if (a < 0)
		return 0;
	int64_t d[PB_MAX_RANK];
	memcpy(d, x->dims, sizeof d);
	d[a] = -1;
	pb_sx_set(pb_sx_out(c, 0), x->dtype, x->rank, d);
	return 1;
}

static int rule_scatter(pb_sx *c)
{
	return rule_unary(c);
}

static int rule_det(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	if (!has_shape(x) || x->rank < 2)
		return 0;
	pb_sx_set(pb_sx_out(c, 0), x->dtype, x->rank - 2, x->dims);
	return 1;
}

/* Variadic element-wise (Sum, Mean, Max, Min). */
static int rule_variadic(pb_sx *c)
{
	return rule_binary(c);
}

const pb_shape_rule_entry pb_shape_rules_tensor[] = {
    /* element-wise, same shape */
    {"Abs", rule_unary},
    {"Acos", rule_unary},
    {"Acosh", rule_unary},
    {"Asin", rule_unary},
    {"Asinh", rule_unary},
    {"Atan", rule_unary},
    {"Atanh", rule_unary},
    {"BitwiseNot", rule_unary},
    {"Ceil", rule_unary},
    {"Celu", rule_unary},
    {"Clip", rule_unary},
    {"Cos", rule_unary},
    {"Cosh", rule_unary},
    {"CumSum", rule_unary},
    {"Elu", rule_unary},
    {"Erf", rule_unary},
    {"Exp", rule_unary},
    {"Floor", rule_unary},
    {"HardSigmoid", rule_unary},
    {"HardSwish", rule_unary},
    {"Hardmax", rule_unary},
    {"Identity", rule_unary},
    {"LeakyRelu", rule_unary},
    {"Log", rule_unary},
    {"LogSoftmax", rule_unary},
    {"Mish", rule_unary},
    {"Neg", rule_unary},
    {"Not", rule_unary},
    {"Reciprocal", rule_unary},
    {"Relu", rule_unary},
    {"Round", rule_unary},
    {"Selu", rule_unary},
    {"Shrink", rule_unary},
    {"Sigmoid", rule_unary},
    {"Sign", rule_unary},
    {"Sin", rule_unary},
    {"Sinh", rule_unary},
    {"Softmax", rule_unary},
    {"Softplus", rule_unary},
    {"Softsign", rule_unary},
    {"Sqrt", rule_unary},
    {"Tan", rule_unary},
    {"Tanh", rule_unary},
    {"ThresholdedRelu", rule_unary},
    {"Trilu", rule_unary},
    {"ReverseSequence", rule_unary},
    {"Gelu", rule_unary},
    {"IsNaN", rule_bool_unary},
    {"IsInf", rule_bool_unary},
    {"Cast", rule_cast},
    {"CastLike", rule_castlike},
    {"EyeLike", rule_eyelike},
    {"Dropout", rule_dropout},
    {"Scatter", rule_scatter},
    {"ScatterElements", rule_scatter},
    {"ScatterND", rule_scatter},
    /* broadcasting */
    {"Add", rule_binary},
    {"Sub", rule_binary},
    {"Mul", rule_binary},
    {"Div", rule_binary},
    {"Pow", rule_binary},
    {"Mod", rule_binary},
    {"BitShift", rule_binary},
    {"BitwiseAnd", rule_binary},
    {"BitwiseOr", rule_binary},
    {"BitwiseXor", rule_binary},
    {"PRelu", rule_prelu},
    {"Sum", rule_variadic},
    {"Mean", rule_variadic},
    {"Max", rule_variadic},
    {"Min", rule_variadic},
    {"And", rule_compare},
    {"Or", rule_compare},
    {"Xor", rule_compare},
    {"Equal", rule_compare},
    {"Greater", rule_compare},
    {"Less", rule_compare},
    {"GreaterOrEqual", rule_compare},
    {"LessOrEqual", rule_compare},
    {"Where", rule_where},
    /* shape manipulation */
    {"Reshape", rule_reshape},
    {"Flatten", rule_flatten},
    {"Transpose", rule_transpose},
    {"Squeeze", rule_squeeze},
    {"Unsqueeze", rule_unsqueeze},
    {"Concat", rule_concat},
    {"Split", rule_split},
    {"Slice", rule_slice},
    {"Gather", rule_gather},
    {"GatherElements", rule_gather_elements},
    {"GatherND", rule_gather_nd},
    {"Expand", rule_expand},
    {"Tile", rule_tile},
    {"Pad", rule_pad},
    {"Shape", rule_shape},
    {"Size", rule_size},
    {"ConstantOfShape", rule_constant_of_shape},
    {"Constant", rule_constant},
    {"Range", rule_range},
    {"DepthToSpace", rule_depth_to_space},
    {"SpaceToDepth", rule_space_to_depth},
    {"Resize", rule_resize},
    {"Upsample", rule_resize},
    {"NonZero", rule_nonzero},
    {"Compress", rule_compress},
    {"Det", rule_det},
    {"OneHot", rule_onehot},
    {"TopK", rule_topk},
    {"ArgMax", rule_argreduce},
    {"ArgMin", rule_argreduce},
    /* reductions */
    {"ReduceMean", rule_reduce},
    {"ReduceSum", rule_reduce},
    {"ReduceMax", rule_reduce},
    {"ReduceMin", rule_reduce},
    {"ReduceProd", rule_reduce},
    {"ReduceL1", rule_reduce},
    {"ReduceL2", rule_reduce},
    {"ReduceLogSum", rule_reduce},
    {"ReduceLogSumExp", rule_reduce},
    {"ReduceSumSquare", rule_reduce},
    {NULL, NULL}};
