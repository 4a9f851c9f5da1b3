/*
 * shape_sx.c — helpers of the shape rules (shape_rules.h): the tensors of the
 * node being inferred, setting and copying shapes, integer lists from inputs
 * or attributes, numpy broadcasting, axes, products and overflow-safe dim
 * arithmetic.
 *
 * They read and write the pb_sx context only; they call no rule, no
 * evaluation and not the driver (shape.c), so the driver -> rules/eval ->
 * helpers order has no way back. Invariants: the dim arithmetic (pb_sx_mul,
 * pb_sx_prod, pb_sx_dim) returns -1 or a value in [0, PB_SX_BIG]; numbers
 * read from attributes or values by pb_sx_ints are clamped to
 * [-PB_SX_BIG, PB_SX_BIG] (pb_sx_dims_arg refuses them instead: a shape
 * entry beyond 2^40 must not silently become 2^40); pb_sx_set stores negative
 * dims as PB_DIM_UNKNOWN; pb_sx_check_numel bounds every output's element
 * count by PB_SX_NUMEL_MAX.
 */
#include "shape/shape_rules.h"

#include <math.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int64_t pb_sx_mul(int64_t a, int64_t b)
{
	int64_t r;
	if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) || r > PB_SX_BIG)
		return -1;
	return r;
}

int pb_sx_conflict(pb_sx *c, const char *fmt, ...)
{
	if (c->conflict[0])
		return 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->conflict, sizeof c->conflict, fmt, ap);
	va_end(ap);
	return 0;
}

int64_t pb_sx_clamp(int64_t v)
{
	return v > PB_SX_BIG ? PB_SX_BIG : (v < -PB_SX_BIG ? -PB_SX_BIG : v);
}

int64_t pb_sx_dim(double v)
{
	if (!(v >= 0 && v <= (double)PB_SX_BIG)) /* also rejects NaN */
		return -1;
	return (int64_t)floor(v);
}

pb_tensor *pb_sx_in(const pb_sx *c, int i)
{
	if (i < 0 || i >= c->n->n_inputs || c->n->inputs[i] < 0)
		return NULL;
	return &c->g->tensors[c->n->inputs[i]];
}

pb_tensor *pb_sx_out(const pb_sx *c, int i)
{
	if (i < 0 || i >= c->n->n_outputs || c->n->outputs[i] < 0)
		return NULL;
	return &c->g->tensors[c->n->outputs[i]];
}

const pb_value *pb_sx_val(const pb_sx *c, int i)
{
	pb_tensor *t = pb_sx_in(c, i);
	return t ? t->value : NULL;
}

void pb_sx_set(pb_tensor *t, int dtype, int rank, const int64_t *dims)
{
	if (!t || rank > PB_MAX_RANK)
		return;
	if (dtype)
		t->dtype = dtype;
	t->rank = rank < 0 ? -1 : rank;
	for (int i = 0; i < PB_MAX_RANK; i++)
		t->dims[i] = (i < rank && dims && dims[i] >= 0) ? dims[i] : PB_DIM_UNKNOWN;
}

void pb_sx_same(pb_tensor *t, const pb_tensor *src)
{
	if (!t || !src)
		return;
	pb_sx_set(t, src->dtype, src->rank, src->dims);
}

static int ints_impl(const pb_sx *c, int i, const char *attr, int64_t *out, int max, int *n,
                     int clamp)
{
	pb_tensor *t = pb_sx_in(c, i);
	*n = 0;
	if (t) {
		if (!t->value)
			return -1;
		if (t->value->numel > max)
			return -1;
		*n = (int)t->value->numel;
		for (int k = 0; k < *n; k++)
			out[k] = clamp ? pb_sx_clamp(t->value->i[k]) : t->value->i[k];
		return 1;
	}
	if (attr) {
		const pb_attr *a = pb_node_attr(c->n, attr);
		if (a) {
			if (a->type == PB_ATTR_INT) {
				out[0] = clamp ? pb_sx_clamp(a->i) : a->i;
				*n = 1;
				return 1;
			}
			if (a->n > max)
				return -1;
			*n = a->n;
			for (int k = 0; k < a->n; k++)
				out[k] = a->ints ? (clamp ? pb_sx_clamp(a->ints[k]) : a->ints[k])
				                 : (isnan(a->floats[k])
				                        ? 0
				                        : (int64_t)fmax(
				                              fmin(a->floats[k], (double)PB_SX_BIG),
				                              -(double)PB_SX_BIG));
			return 1;
		}
	}
	return 0;
}

int pb_sx_ints(const pb_sx *c, int i, const char *attr, int64_t *out, int max, int *n)
{
	return ints_impl(c, i, attr, out, max, n, 1);
}

int pb_sx_dims_arg(pb_sx *c, int i, const char *attr, const char *what, int64_t *out, int max,
                   int *n)
{
	int rc = ints_impl(c, i, attr, out, max, n, 0);
	for (int k = 0; rc == 1 && k < *n; k++)
		if (out[k] > PB_SX_BIG || out[k] < -PB_SX_BIG)
			return pb_sx_conflict(c, "%s[%d] = %lld is beyond 2^40, not a dimension",
			                      what, k, (long long)out[k]);
	return rc;
}

int pb_sx_check_numel(pb_sx *c, const pb_tensor *t)
{
	if (!t || t->rank < 0)
		return 1;
	int64_t n = 1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] > PB_SX_BIG)
			return pb_sx_conflict(c, "output '%s': dim %d = %lld is beyond 2^40",
			                      t->name, i, (long long)t->dims[i]);
		if (t->dims[i] >= 0 && __builtin_mul_overflow(n, t->dims[i], &n))
			n = INT64_MAX;
	}
	if (n > PB_SX_NUMEL_MAX) {
		char dims[160];
		pb_tensor_shape_str(t, dims, sizeof dims);
		if (n == INT64_MAX)
			return pb_sx_conflict(
			    c, "output '%s' of shape %s: its element count overflows int64",
			    t->name, dims);
		return pb_sx_conflict(c,
		                      "output '%s' of shape %s would hold %lld elements (more than "
		                      "2^48)",
		                      t->name, dims, (long long)n);
	}
	return 1;
}

int pb_sx_broadcast(int ra, const int64_t *a, int rb, const int64_t *b, int *r, int64_t *out)
{
	int rr = ra > rb ? ra : rb;
	if (rr > PB_MAX_RANK || ra < 0 || rb < 0)
		return 0;
	int64_t res[PB_MAX_RANK] = {0}; /* rr may be 0 (two scalars) */
	for (int k = 0; k < rr; k++) {
		int ia = k - (rr - ra), ib = k - (rr - rb);
		int64_t x = ia >= 0 ? a[ia] : 1, y = ib >= 0 ? b[ib] : 1;
		int64_t d;
		if (x == 1)
			d = y;
		else if (y == 1)
			d = x;
		else if (x < 0)
			d = y;
		else if (y < 0)
			d = x;
		else if (x == y)
			d = x;
		else
			return 0;
		/* "unknown vs 1" stays unknown; "unknown vs k>1" is k. */
		res[k] = d;
	}
	memcpy(out, res, (size_t)rr * sizeof *out); /* out may alias a or b */
	*r = rr;
	return 1;
}

int pb_sx_axis(int64_t axis, int rank)
{
	if (axis < 0)
		axis += rank;
	if (axis < 0 || axis >= rank)
		return -1;
	return (int)axis;
}

int64_t pb_sx_prod(const int64_t *dims, int from, int to)
{
	int64_t p = 1;
	for (int i = from; i < to && p >= 0; i++)
		p = pb_sx_mul(p, dims[i]);
	return p;
}
