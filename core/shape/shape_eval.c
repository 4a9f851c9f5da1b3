/*
 * shape_eval.c — constant propagation of small tensors.
 *
 * Exported models compute many shapes at run time (Shape → Gather →
 * Unsqueeze → Concat → Reshape; Range; Slice of shapes; Where/Equal/Expand
 * chains that torch emits for -1 handling). When every input a node needs has
 * a known value (initializer, Constant or an earlier evaluation) and the
 * result has at most PB_VALUE_MAX elements, the node is executed here on
 * pb_value data, so downstream shape rules see concrete numbers.
 *
 * Arithmetic: a value holds both an integer and a floating view. Integer
 * outputs compute on the integer view (Div truncates toward zero, Mod follows
 * the sign of the divisor unless fmod=1), floating outputs on the floating
 * view; the other view is derived. Output dtypes come from the shape rule
 * (the output tensor's dtype), falling back to the first input's.
 *
 * Invariant: a value is only attached when it is exact for the operator's
 * definition; anything unsupported simply leaves the output without a value.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape_rules.h"

#define MAXL 64

static int is_float(int dt)
{
	return pb_dtype_is_float(dt);
}

/* Creates the output value for output k with the given dims; the dtype is
 * the output tensor's (or dflt). */
static pb_value *out_value(pb_sx *c, int k, int dflt, int rank, const int64_t *dims)
{
	pb_tensor *o = pb_sx_out(c, k);
	if (!o)
		return NULL;
	int dt = o->dtype ? o->dtype : dflt;
	if (!dt || pb_dtype_size(dt) == 0 || dt == PB_DT_COMPLEX64 || dt == PB_DT_COMPLEX128)
		return NULL;
	return pb_value_new(dt, rank, dims);
}

static void set_elem(pb_value *v, int64_t k, double f, int64_t i, int from_float)
{
	if (v->dtype == PB_DT_BOOL) {
		int64_t b = from_float ? (f != 0) : (i != 0);
		v->i[k] = b;
		v->f[k] = (double)b;
	} else if (is_float(v->dtype)) {
		double x = from_float ? f : (double)i;
		if (v->dtype == PB_DT_FLOAT)
			x = (float)x;
		v->f[k] = x;
		v->i[k] = (isfinite(x) && fabs(x) < 9.2e18) ? (int64_t)x : 0;
	} else {
		int64_t x = from_float ? ((isfinite(f) && fabs(f) < 9.2e18) ? (int64_t)f : 0) : i;
		switch (v->dtype) { /* wrap to the integer width */
		case PB_DT_INT32:
			x = (int32_t)x;
			break;
		case PB_DT_UINT32:
			x = (uint32_t)x;
			break;
		case PB_DT_INT16:
			x = (int16_t)x;
			break;
		case PB_DT_UINT16:
			x = (uint16_t)x;
			break;
		case PB_DT_INT8:
			x = (int8_t)x;
			break;
		case PB_DT_UINT8:
			x = (uint8_t)x;
			break;
		default:
			break;
		}
		v->i[k] = x;
		v->f[k] = (double)x;
	}
}

static void copy_elem(pb_value *dst, int64_t k, const pb_value *src, int64_t j)
{
	set_elem(dst, k, src->f[j], src->i[j], is_float(src->dtype));
}

static void attach(pb_sx *c, int k, pb_value *v)
{
	pb_tensor *o = pb_sx_out(c, k);
	if (!o || !v) {
		pb_value_free(v);
		return;
	}
	pb_value_free(o->value);
	o->value = v;
}

/* Row-major strides of dims. */
static void strides_of(int rank, const int64_t *dims, int64_t *st)
{
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		st[i] = s;
		s *= dims[i];
	}
}

/* Flat index in a broadcast operand for the multi-index idx of the output. */
static int64_t bcast_offset(const int64_t *idx, int out_rank, const pb_value *v)
{
	int64_t st[PB_MAX_RANK], off = 0;
	strides_of(v->rank, v->dims, st);
	for (int i = 0; i < v->rank; i++) {
		int oi = i + out_rank - v->rank;
		off += (v->dims[i] == 1 ? 0 : idx[oi]) * st[i];
	}
	return off;
}

static void next_index(int64_t *idx, int rank, const int64_t *dims)
{
	for (int i = rank - 1; i >= 0; i--) {
		if (++idx[i] < dims[i])
			return;
		idx[i] = 0;
	}
}

/* ---------------------------------------------------------------- element-wise */

enum {
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_DIV,
	OP_MOD,
	OP_POW,
	OP_MAX,
	OP_MIN,
	OP_EQ,
	OP_LT,
	OP_GT,
	OP_LE,
	OP_GE,
	OP_AND,
	OP_OR,
	OP_XOR,
	OP_WHERE,
	OP_BITAND,
	OP_BITOR,
	OP_BITXOR
};

static const struct {
	const char *name;
	int op;
} binops[] = {{"Add", OP_ADD},           {"Sub", OP_SUB},
              {"Mul", OP_MUL},           {"Div", OP_DIV},
              {"Mod", OP_MOD},           {"Pow", OP_POW},
              {"Max", OP_MAX},           {"Min", OP_MIN},
              {"Sum", OP_ADD},           {"Equal", OP_EQ},
              {"Less", OP_LT},           {"Greater", OP_GT},
              {"LessOrEqual", OP_LE},    {"GreaterOrEqual", OP_GE},
              {"And", OP_AND},           {"Or", OP_OR},
              {"Xor", OP_XOR},           {"Where", OP_WHERE},
              {"BitwiseAnd", OP_BITAND}, {"BitwiseOr", OP_BITOR},
              {"BitwiseXor", OP_BITXOR}, {NULL, 0}};

static int64_t imod(int64_t a, int64_t b, int fmod_mode)
{
	if (b == 0)
		return 0;
	int64_t r = a % b;
	if (!fmod_mode && r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}

static int64_t ipow(int64_t a, int64_t b)
{
	if (b < 0)
		return a == 1 ? 1 : (a == -1 ? (b % 2 ? -1 : 1) : 0);
	/* Square-and-multiply with wrap-around (as a fixed-width runtime). */
	uint64_t r = 1, base = (uint64_t)a;
	for (uint64_t e = (uint64_t)b; e; e >>= 1) {
		if (e & 1)
			r *= base;
		base *= base;
	}
	return (int64_t)r;
}

/* One step of a binary op; the result goes to out element k. */
static void binop(pb_value *out, int64_t k, int op, const pb_value *a, int64_t ia,
                  const pb_value *b, int64_t ib, int fmod_mode)
{
	int fl = is_float(a->dtype) || is_float(b->dtype);
	double x = a->f[ia], y = b->f[ib];
	int64_t p = a->i[ia], q = b->i[ib];
	switch (op) {
	case OP_EQ:
		set_elem(out, k, 0, fl ? x == y : p == q, 0);
		return;
	case OP_LT:
		set_elem(out, k, 0, fl ? x < y : p < q, 0);
		return;
	case OP_GT:
		set_elem(out, k, 0, fl ? x > y : p > q, 0);
		return;
	case OP_LE:
		set_elem(out, k, 0, fl ? x <= y : p <= q, 0);
		return;
	case OP_GE:
		set_elem(out, k, 0, fl ? x >= y : p >= q, 0);
		return;
	case OP_AND:
		set_elem(out, k, 0, (p != 0) && (q != 0), 0);
		return;
	case OP_OR:
		set_elem(out, k, 0, (p != 0) || (q != 0), 0);
		return;
	case OP_XOR:
		set_elem(out, k, 0, (p != 0) != (q != 0), 0);
		return;
	case OP_BITAND:
		set_elem(out, k, 0, p & q, 0);
		return;
	case OP_BITOR:
		set_elem(out, k, 0, p | q, 0);
		return;
	case OP_BITXOR:
		set_elem(out, k, 0, p ^ q, 0);
		return;
	default:
		break;
	}
	if (is_float(out->dtype)) {
		double r;
		switch (op) {
		case OP_ADD:
			r = x + y;
			break;
		case OP_SUB:
			r = x - y;
			break;
		case OP_MUL:
			r = x * y;
			break;
		case OP_DIV:
			r = x / y;
			break;
		case OP_MOD:
			r = fmod_mode ? fmod(x, y) : x - y * floor(x / y);
			break;
		case OP_POW:
			r = pow(x, y);
			break;
		case OP_MAX:
			r = x > y ? x : y;
			break;
		default:
			r = x < y ? x : y;
			break;
		}
		set_elem(out, k, r, 0, 1);
	} else {
		int64_t r;
		switch (op) {
		case OP_ADD:
			r = (int64_t)((uint64_t)p + (uint64_t)q);
			break;
		case OP_SUB:
			r = (int64_t)((uint64_t)p - (uint64_t)q);
			break;
		case OP_MUL:
			r = (int64_t)((uint64_t)p * (uint64_t)q);
			break;
		case OP_DIV:
			r = (q == 0 || (p == INT64_MIN && q == -1)) ? 0 : p / q;
			break;
		case OP_MOD:
			r = (q == -1) ? 0 : imod(p, q, fmod_mode);
			break;
		case OP_POW:
			r = fl ? (int64_t)pow(x, y) : ipow(p, q);
			break;
		case OP_MAX:
			r = p > q ? p : q;
			break;
		default:
			r = p < q ? p : q;
			break;
		}
		set_elem(out, k, 0, r, 0);
	}
}

static int eval_binary(pb_sx *c, int op)
{
	int nin = c->n->n_inputs;
	if (nin < 1)
		return 0;
	for (int i = 0; i < nin; i++)
		if (!pb_sx_val(c, i))
			return 0;
	int fmod_mode = (int)pb_node_attr_int(c->n, "fmod", 0);
	if (op == OP_WHERE) {
		if (nin != 3)
			return 0;
		const pb_value *cond = pb_sx_val(c, 0), *x = pb_sx_val(c, 1), *y = pb_sx_val(c, 2);
		int r;
		int64_t d[PB_MAX_RANK];
		if (!pb_sx_broadcast(cond->rank, cond->dims, x->rank, x->dims, &r, d) ||
		    !pb_sx_broadcast(r, d, y->rank, y->dims, &r, d))
			return 0;
		pb_value *o = out_value(c, 0, x->dtype, r, d);
		if (!o)
			return 0;
		int64_t idx[PB_MAX_RANK] = {0};
		for (int64_t k = 0; k < o->numel; k++) {
			const pb_value *src = cond->i[bcast_offset(idx, r, cond)] ? x : y;
			copy_elem(o, k, src, bcast_offset(idx, r, src));
			next_index(idx, r, d);
		}
		attach(c, 0, o);
		return 1;
	}
	/* Fold left over the inputs (variadic Sum/Max/Min; binary otherwise). */
	pb_value *acc = pb_value_copy(pb_sx_val(c, 0));
	if (!acc)
		return 0;
	if (nin == 1) {
		pb_value *o = out_value(c, 0, acc->dtype, acc->rank, acc->dims);
		for (int64_t k = 0; o && k < o->numel; k++)
			copy_elem(o, k, acc, k);
		pb_value_free(acc);
		attach(c, 0, o);
		return 1;
	}
	for (int i = 1; i < nin; i++) {
		const pb_value *b = pb_sx_val(c, i);
		int r;
		int64_t d[PB_MAX_RANK];
		if (!pb_sx_broadcast(acc->rank, acc->dims, b->rank, b->dims, &r, d)) {
			pb_value_free(acc);
			return 0;
		}
		pb_value *o = out_value(c, 0, acc->dtype, r, d);
		if (!o) {
			pb_value_free(acc);
			return 0;
		}
		int64_t idx[PB_MAX_RANK] = {0};
		for (int64_t k = 0; k < o->numel; k++) {
			binop(o, k, op, acc, bcast_offset(idx, r, acc), b, bcast_offset(idx, r, b),
			      fmod_mode);
			next_index(idx, r, d);
		}
		pb_value_free(acc);
		acc = o;
	}
	attach(c, 0, acc);
	return 1;
}

static double round_even(double x)
{
	double r = nearbyint(x); /* default rounding mode: half to even */
	return r;
}

static int eval_unary(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0);
	if (!x)
		return 0;
	const char *op = c->n->op;
	pb_value *o = out_value(c, 0, x->dtype, x->rank, x->dims);
	if (!o)
		return 0;
	int fl = is_float(x->dtype);
	for (int64_t k = 0; k < x->numel; k++) {
		double f = x->f[k];
		int64_t i = x->i[k];
		int64_t neg = (int64_t)(0 - (uint64_t)i); /* wraps like the runtime */
		if (strcmp(op, "Neg") == 0) {
			set_elem(o, k, -f, neg, fl);
		} else if (strcmp(op, "Abs") == 0) {
			set_elem(o, k, fabs(f), i < 0 ? neg : i, fl);
		} else if (strcmp(op, "Floor") == 0) {
			set_elem(o, k, floor(f), i, fl);
		} else if (strcmp(op, "Ceil") == 0) {
			set_elem(o, k, ceil(f), i, fl);
		} else if (strcmp(op, "Round") == 0) {
			set_elem(o, k, round_even(f), i, fl);
		} else if (strcmp(op, "Sqrt") == 0) {
			set_elem(o, k, sqrt(f), 0, 1);
		} else if (strcmp(op, "Reciprocal") == 0) {
			set_elem(o, k, 1.0 / f, 0, 1);
		} else if (strcmp(op, "Relu") == 0) {
			set_elem(o, k, f > 0 ? f : 0, i > 0 ? i : 0, fl);
		} else if (strcmp(op, "Sign") == 0) {
			set_elem(o, k, (f > 0) - (f < 0), (i > 0) - (i < 0), fl);
		} else if (strcmp(op, "Not") == 0) {
			set_elem(o, k, 0, !i, 0);
		} else if (strcmp(op, "Exp") == 0) {
			set_elem(o, k, exp(f), 0, 1);
		} else if (strcmp(op, "Log") == 0) {
			set_elem(o, k, log(f), 0, 1);
		} else {
			/* Identity, Dropout (inference), Cast, CastLike */
			copy_elem(o, k, x, k);
		}
	}
	attach(c, 0, o);
	return 1;
}

static int eval_clip(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0);
	if (!x)
		return 0;
	double lo = -INFINITY, hi = INFINITY;
	pb_tensor *tmin = pb_sx_in(c, 1), *tmax = pb_sx_in(c, 2);
	if (tmin) {
		if (!tmin->value || tmin->value->numel < 1)
			return 0;
		lo = tmin->value->f[0];
	} else if (c->n->n_inputs < 2) {
		lo = pb_node_attr_float(c->n, "min", -INFINITY);
	}
	if (tmax) {
		if (!tmax->value || tmax->value->numel < 1)
			return 0;
		hi = tmax->value->f[0];
	} else if (c->n->n_inputs < 3) {
		hi = pb_node_attr_float(c->n, "max", INFINITY);
	}
	pb_value *o = out_value(c, 0, x->dtype, x->rank, x->dims);
	if (!o)
		return 0;
	for (int64_t k = 0; k < x->numel; k++) {
		double f = x->f[k];
		f = f < lo ? lo : (f > hi ? hi : f);
		set_elem(o, k, f, 0, 1); /* guarded conversion for integer outputs */
	}
	attach(c, 0, o);
	return 1;
}

/* ---------------------------------------------------------------- data movement */

/* Same data, new shape (Reshape, Squeeze, Unsqueeze, Flatten): the output
 * tensor's shape must already be fully known. */
static int eval_reshape_like(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0);
	pb_tensor *o = pb_sx_out(c, 0);
	if (!x || !o || o->rank < 0 || pb_tensor_numel(o) != x->numel)
		return 0;
	pb_value *v = out_value(c, 0, x->dtype, o->rank, o->dims);
	if (!v)
		return 0;
	for (int64_t k = 0; k < x->numel; k++)
		copy_elem(v, k, x, k);
	attach(c, 0, v);
	return 1;
}

static int eval_shape(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0), *o = pb_sx_out(c, 0);
	if (!x || x->rank < 0 || !o || o->rank != 1 || o->dims[0] < 0)
		return 0;
	int64_t s = pb_sx_clamp(pb_node_attr_int(c->n, "start", 0));
	if (s < 0)
		s += x->rank;
	if (s < 0)
		s = 0;
	for (int64_t k = 0; k < o->dims[0]; k++)
		if (s + k >= x->rank || x->dims[s + k] < 0)
			return 0;
	pb_value *v = pb_value_new(PB_DT_INT64, 1, o->dims);
	if (!v)
		return 0;
	for (int64_t k = 0; k < o->dims[0]; k++)
		set_elem(v, k, 0, x->dims[s + k], 0);
	attach(c, 0, v);
	return 1;
}

static int eval_size(pb_sx *c)
{
	pb_tensor *x = pb_sx_in(c, 0);
	int64_t n = x ? pb_tensor_numel(x) : -1;
	if (n < 0)
		return 0;
	pb_value *v = pb_value_new(PB_DT_INT64, 0, NULL);
	if (!v)
		return 0;
	set_elem(v, 0, 0, n, 0);
	attach(c, 0, v);
	return 1;
}

static int eval_constant(pb_sx *c)
{
	for (int i = 0; i < c->n->n_attrs; i++) {
		const pb_attr *a = &c->n->attrs[i];
		pb_value *v = NULL;
		if (strcmp(a->name, "value") == 0 && a->t) {
			v = pb_value_copy(a->t);
		} else if (strcmp(a->name, "value_float") == 0) {
			v = pb_value_new(PB_DT_FLOAT, 0, NULL);
			if (v)
				set_elem(v, 0, a->f, 0, 1);
		} else if (strcmp(a->name, "value_int") == 0) {
			v = pb_value_new(PB_DT_INT64, 0, NULL);
			if (v)
				set_elem(v, 0, 0, a->i, 0);
		} else if (strcmp(a->name, "value_floats") == 0 ||
		           strcmp(a->name, "value_ints") == 0) {
			int64_t n = a->n;
			int fl = a->name[6] == 'f';
			v = pb_value_new(fl ? PB_DT_FLOAT : PB_DT_INT64, 1, &n);
			for (int k = 0; v && k < a->n; k++)
				set_elem(v, k, fl ? a->floats[k] : 0, fl ? 0 : a->ints[k], fl);
		}
		if (v) {
			attach(c, 0, v);
			return 1;
		}
	}
	return 0;
}

static int eval_constant_of_shape(pb_sx *c)
{
	pb_tensor *o = pb_sx_out(c, 0);
	if (!o || pb_tensor_numel(o) < 0 || !pb_sx_val(c, 0))
		return 0;
	const pb_attr *a = pb_node_attr(c->n, "value");
	pb_value *v = out_value(c, 0, PB_DT_FLOAT, o->rank, o->dims);
	if (!v)
		return 0;
	for (int64_t k = 0; k < v->numel; k++) {
		if (a && a->t && a->t->numel >= 1)
			copy_elem(v, k, a->t, 0);
		else
			set_elem(v, k, 0, 0, 0);
	}
	attach(c, 0, v);
	return 1;
}

static int eval_range(pb_sx *c)
{
	const pb_value *s = pb_sx_val(c, 0), *l = pb_sx_val(c, 1), *d = pb_sx_val(c, 2);
	pb_tensor *o = pb_sx_out(c, 0);
	if (!s || !l || !d || !o || o->rank != 1 || o->dims[0] < 0)
		return 0;
	pb_value *v = out_value(c, 0, s->dtype, 1, o->dims);
	if (!v)
		return 0;
	for (int64_t k = 0; k < v->numel; k++) {
		if (is_float(s->dtype))
			set_elem(v, k, s->f[0] + (double)k * d->f[0], 0, 1);
		else
			set_elem(v, k, 0,
			         (int64_t)((uint64_t)s->i[0] + (uint64_t)k * (uint64_t)d->i[0]), 0);
	}
	attach(c, 0, v);
	return 1;
}

static int eval_gather(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0), *idx = pb_sx_val(c, 1);
	pb_tensor *o = pb_sx_out(c, 0);
	if (!x || !idx || !o || pb_tensor_numel(o) < 0 || x->rank < 1)
		return 0;
	int axis = pb_sx_axis(pb_node_attr_int(c->n, "axis", 0), x->rank);
	if (axis < 0)
		return 0;
	int64_t outer = pb_sx_prod(x->dims, 0, axis),
	        inner = pb_sx_prod(x->dims, axis + 1, x->rank);
	int64_t n = x->dims[axis];
	pb_value *v = out_value(c, 0, x->dtype, o->rank, o->dims);
	if (!v || v->numel != outer * idx->numel * inner) {
		pb_value_free(v);
		return 0;
	}
	int64_t k = 0;
	for (int64_t a = 0; a < outer; a++)
		for (int64_t j = 0; j < idx->numel; j++) {
			int64_t ix = idx->i[j] < 0 ? idx->i[j] + n : idx->i[j];
			if (ix < 0 || ix >= n) {
				pb_value_free(v);
				return 0;
			}
			for (int64_t b = 0; b < inner; b++)
				copy_elem(v, k++, x, (a * n + ix) * inner + b);
		}
	attach(c, 0, v);
	return 1;
}

static int eval_concat(pb_sx *c)
{
	pb_tensor *o = pb_sx_out(c, 0);
	if (!o || pb_tensor_numel(o) < 0 || o->rank < 1)
		return 0;
	for (int i = 0; i < c->n->n_inputs; i++)
		if (pb_sx_in(c, i) && !pb_sx_val(c, i))
			return 0;
	int axis = pb_sx_axis(pb_node_attr_int(c->n, "axis", 0), o->rank);
	if (axis < 0)
		return 0;
	const pb_value *first = NULL;
	for (int i = 0; i < c->n->n_inputs && !first; i++)
		first = pb_sx_val(c, i);
	if (!first)
		return 0;
	pb_value *v = out_value(c, 0, first->dtype, o->rank, o->dims);
	if (!v)
		return 0;
	int64_t outer = pb_sx_prod(o->dims, 0, axis), k = 0;
	for (int64_t a = 0; a < outer; a++)
		for (int i = 0; i < c->n->n_inputs; i++) {
			const pb_value *x = pb_sx_val(c, i);
			if (!x)
				continue;
			if (x->rank != o->rank) {
				pb_value_free(v);
				return 0;
			}
			int64_t chunk = pb_sx_prod(x->dims, axis, x->rank);
			for (int64_t b = 0; b < chunk && k < v->numel; b++)
				copy_elem(v, k++, x, a * chunk + b);
		}
	if (k != v->numel) {
		pb_value_free(v);
		return 0;
	}
	attach(c, 0, v);
	return 1;
}

/* Generic strided copy: out[idx] = x[sum((start[i] + idx[i]*step[i]) * st[i])]. */
static pb_value *strided(pb_sx *c, const pb_value *x, const int64_t *start, const int64_t *step,
                         int rank, const int64_t *dims)
{
	pb_value *v = out_value(c, 0, x->dtype, rank, dims);
	if (!v)
		return NULL;
	int64_t st[PB_MAX_RANK], idx[PB_MAX_RANK] = {0};
	strides_of(x->rank, x->dims, st);
	for (int64_t k = 0; k < v->numel; k++) {
		int64_t off = 0;
		for (int i = 0; i < rank; i++)
			off += (start[i] + idx[i] * step[i]) * st[i];
		if (off < 0 || off >= x->numel) {
			pb_value_free(v);
			return NULL;
		}
		copy_elem(v, k, x, off);
		next_index(idx, rank, dims);
	}
	return v;
}

static int eval_slice(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0);
	pb_tensor *o = pb_sx_out(c, 0);
	if (!x || !o || o->rank != x->rank || pb_tensor_numel(o) < 0)
		return 0;
	int64_t st[MAXL], en[MAXL], ax[MAXL], sp[MAXL];
	int ns = 0, ne = 0, na = 0, np = 0;
	if (c->n->n_inputs >= 2) {
		if (pb_sx_ints(c, 1, NULL, st, MAXL, &ns) != 1 ||
		    pb_sx_ints(c, 2, NULL, en, MAXL, &ne) != 1 ||
		    pb_sx_ints(c, 3, NULL, ax, MAXL, &na) < 0 ||
		    pb_sx_ints(c, 4, NULL, sp, MAXL, &np) < 0)
			return 0;
	} else {
		pb_sx_ints(c, 99, "starts", st, MAXL, &ns);
		pb_sx_ints(c, 99, "axes", ax, MAXL, &na);
	}
	int64_t start[PB_MAX_RANK], step[PB_MAX_RANK];
	for (int i = 0; i < x->rank; i++) {
		start[i] = 0;
		step[i] = 1;
	}
	for (int k = 0; k < ns; k++) {
		int a = na ? pb_sx_axis(ax[k], x->rank) : k;
		if (a < 0)
			return 0;
		int64_t s = st[k], dim = x->dims[a], stp = np ? sp[k] : 1;
		if (s < 0)
			s += dim;
		if (stp > 0)
			s = s < 0 ? 0 : (s > dim ? dim : s);
		else
			s = s < 0 ? -1 : (s > dim - 1 ? dim - 1 : s);
		start[a] = s;
		step[a] = stp;
	}
	pb_value *v = strided(c, x, start, step, o->rank, o->dims);
	if (!v)
		return 0;
	attach(c, 0, v);
	return 1;
}

static int eval_transpose(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0);
	pb_tensor *o = pb_sx_out(c, 0);
	if (!x || !o || o->rank != x->rank || pb_tensor_numel(o) != x->numel)
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
	pb_value *v = out_value(c, 0, x->dtype, o->rank, o->dims);
	if (!v)
		return 0;
	int64_t st[PB_MAX_RANK], idx[PB_MAX_RANK] = {0};
	strides_of(x->rank, x->dims, st);
	for (int64_t k = 0; k < v->numel; k++) {
		int64_t off = 0;
		for (int i = 0; i < n; i++)
			off += idx[i] * st[pb_sx_axis(perm[i], n)];
		copy_elem(v, k, x, off);
		next_index(idx, o->rank, o->dims);
	}
	attach(c, 0, v);
	return 1;
}

static int eval_expand(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0);
	pb_tensor *o = pb_sx_out(c, 0);
	if (!x || !pb_sx_val(c, 1) || !o || pb_tensor_numel(o) < 0)
		return 0;
	pb_value *v = out_value(c, 0, x->dtype, o->rank, o->dims);
	if (!v)
		return 0;
	int64_t idx[PB_MAX_RANK] = {0};
	for (int64_t k = 0; k < v->numel; k++) {
		copy_elem(v, k, x, bcast_offset(idx, o->rank, x));
		next_index(idx, o->rank, o->dims);
	}
	attach(c, 0, v);
	return 1;
}

static int eval_tile(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0);
	pb_tensor *o = pb_sx_out(c, 0);
	if (!x || !pb_sx_val(c, 1) || !o || o->rank != x->rank || pb_tensor_numel(o) < 0)
		return 0;
	pb_value *v = out_value(c, 0, x->dtype, o->rank, o->dims);
	if (!v)
		return 0;
	int64_t st[PB_MAX_RANK], idx[PB_MAX_RANK] = {0};
	strides_of(x->rank, x->dims, st);
	for (int64_t k = 0; k < v->numel; k++) {
		int64_t off = 0;
		for (int i = 0; i < x->rank; i++)
			off += (x->dims[i] ? idx[i] % x->dims[i] : 0) * st[i];
		copy_elem(v, k, x, off);
		next_index(idx, o->rank, o->dims);
	}
	attach(c, 0, v);
	return 1;
}

static int eval_split(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0);
	if (!x || x->rank < 1)
		return 0;
	int axis = pb_sx_axis(pb_node_attr_int(c->n, "axis", 0), x->rank);
	if (axis < 0)
		return 0;
	int64_t off = 0;
	for (int k = 0; k < c->n->n_outputs; k++) {
		pb_tensor *o = pb_sx_out(c, k);
		if (!o || o->rank != x->rank || pb_tensor_numel(o) < 0)
			return 0;
		int64_t start[PB_MAX_RANK] = {0};
		start[axis] = off;
		off += o->dims[axis];
		pb_value *v = pb_value_new(o->dtype ? o->dtype : x->dtype, o->rank, o->dims);
		if (!v)
			return 0;
		int64_t st[PB_MAX_RANK], idx[PB_MAX_RANK] = {0};
		strides_of(x->rank, x->dims, st);
		for (int64_t e = 0; e < v->numel; e++) {
			int64_t p = 0;
			for (int i = 0; i < x->rank; i++)
				p += (start[i] + idx[i]) * st[i];
			if (p >= x->numel) {
				pb_value_free(v);
				return 0;
			}
			copy_elem(v, e, x, p);
			next_index(idx, o->rank, o->dims);
		}
		attach(c, k, v);
	}
	return 1;
}

/* Reductions over a set of axes (ReduceProd/Sum/Max/Min/Mean). */
static int eval_reduce(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0);
	pb_tensor *o = pb_sx_out(c, 0);
	if (!x || !o || pb_tensor_numel(o) < 0)
		return 0;
	int64_t axes[MAXL];
	int n = 0;
	if (pb_sx_ints(c, 1, "axes", axes, MAXL, &n) < 0)
		return 0;
	int red[PB_MAX_RANK] = {0};
	if (n == 0) {
		if (pb_node_attr_int(c->n, "noop_with_empty_axes", 0))
			return eval_unary(c);
		for (int i = 0; i < x->rank; i++)
			red[i] = 1;
	}
	for (int k = 0; k < n; k++) {
		int a = pb_sx_axis(axes[k], x->rank);
		if (a < 0)
			return 0;
		red[a] = 1;
	}
	/* Output index (with kept dims of size 1) for each input element. */
	int64_t kd[PB_MAX_RANK], kst[PB_MAX_RANK];
	for (int i = 0; i < x->rank; i++)
		kd[i] = red[i] ? 1 : x->dims[i];
	strides_of(x->rank, kd, kst);
	int64_t m = pb_sx_prod(kd, 0, x->rank);
	if (m != pb_tensor_numel(o))
		return 0;
	const char *op = c->n->op;
	int kind = strcmp(op, "ReduceProd") == 0   ? 1
	           : strcmp(op, "ReduceMax") == 0  ? 2
	           : strcmp(op, "ReduceMin") == 0  ? 3
	           : strcmp(op, "ReduceMean") == 0 ? 4
	                                           : 0;
	double *acc = malloc((size_t)(m ? m : 1) * sizeof *acc);
	int64_t *iacc = malloc((size_t)(m ? m : 1) * sizeof *iacc);
	if (!acc || !iacc) {
		free(acc);
		free(iacc);
		return 0;
	}
	for (int64_t k = 0; k < m; k++) {
		acc[k] = kind == 1 ? 1 : kind == 2 ? -INFINITY : kind == 3 ? INFINITY : 0;
		iacc[k] = kind == 1 ? 1 : kind == 2 ? INT64_MIN : kind == 3 ? INT64_MAX : 0;
	}
	int64_t idx[PB_MAX_RANK] = {0};
	for (int64_t e = 0; e < x->numel; e++) {
		int64_t k = 0;
		for (int i = 0; i < x->rank; i++)
			k += (red[i] ? 0 : idx[i]) * kst[i];
		double f = x->f[e];
		int64_t v = x->i[e];
		switch (kind) {
		case 1:
			acc[k] *= f;
			iacc[k] = (int64_t)((uint64_t)iacc[k] * (uint64_t)v);
			break;
		case 2:
			acc[k] = f > acc[k] ? f : acc[k];
			iacc[k] = v > iacc[k] ? v : iacc[k];
			break;
		case 3:
			acc[k] = f < acc[k] ? f : acc[k];
			iacc[k] = v < iacc[k] ? v : iacc[k];
			break;
		default:
			acc[k] += f;
			iacc[k] = (int64_t)((uint64_t)iacc[k] + (uint64_t)v);
			break;
		}
		next_index(idx, x->rank, x->dims);
	}
	pb_value *v = out_value(c, 0, x->dtype, o->rank, o->dims);
	int64_t cnt = m ? x->numel / m : 0;
	for (int64_t k = 0; v && k < m; k++) {
		if (is_float(v->dtype))
			set_elem(v, k, kind == 4 && cnt ? acc[k] / (double)cnt : acc[k], 0, 1);
		else
			set_elem(v, k, 0, kind == 4 && cnt ? iacc[k] / cnt : iacc[k], 0);
	}
	free(acc);
	free(iacc);
	if (!v)
		return 0;
	attach(c, 0, v);
	return 1;
}

/* NonZero: indices of the non-zero elements, [rank, count] int64. */
static int eval_nonzero(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0);
	if (!x)
		return 0;
	int64_t cnt = 0;
	for (int64_t k = 0; k < x->numel; k++)
		cnt += x->f[k] != 0 || x->i[k] != 0;
	int r = x->rank ? x->rank : 1;
	int64_t d[2] = {x->rank, cnt};
	pb_value *v = pb_value_new(PB_DT_INT64, 2, d);
	if (!v)
		return 0;
	int64_t idx[PB_MAX_RANK] = {0}, j = 0;
	for (int64_t k = 0; k < x->numel; k++) {
		if (x->f[k] != 0 || x->i[k] != 0) {
			for (int i = 0; i < x->rank; i++)
				set_elem(v, i * cnt + j, 0, idx[i], 0);
			j++;
		}
		next_index(idx, x->rank, x->dims);
	}
	(void)r;
	attach(c, 0, v);
	return 1;
}

/* Compress: the slices along axis (or the flattened elements) whose
 * condition is true. */
static int eval_compress(pb_sx *c)
{
	const pb_value *x = pb_sx_val(c, 0), *cond = pb_sx_val(c, 1);
	if (!x || !cond)
		return 0;
	const pb_attr *ax = pb_node_attr(c->n, "axis");
	int axis = ax ? pb_sx_axis(ax->i, x->rank) : -1;
	if (ax && axis < 0)
		return 0;
	int64_t n = ax ? x->dims[axis] : x->numel, keep = 0;
	for (int64_t k = 0; k < n && k < cond->numel; k++)
		keep += cond->i[k] != 0;
	int64_t d[PB_MAX_RANK];
	int r = ax ? x->rank : 1;
	if (ax)
		memcpy(d, x->dims, sizeof d);
	d[ax ? axis : 0] = keep;
	pb_value *v = out_value(c, 0, x->dtype, r, d);
	if (!v)
		return 0;
	int64_t outer = ax ? pb_sx_prod(x->dims, 0, axis) : 1;
	int64_t inner = ax ? pb_sx_prod(x->dims, axis + 1, x->rank) : 1, e = 0;
	for (int64_t a = 0; a < outer; a++)
		for (int64_t k = 0; k < n && k < cond->numel; k++)
			if (cond->i[k])
				for (int64_t b = 0; b < inner; b++)
					copy_elem(v, e++, x, (a * n + k) * inner + b);
	attach(c, 0, v);
	return 1;
}

/* ---------------------------------------------------------------- dispatch */

typedef int (*eval_fn)(pb_sx *c);

static const struct {
	const char *op;
	eval_fn fn;
} evals[] = {{"Constant", eval_constant},
             {"Shape", eval_shape},
             {"Size", eval_size},
             {"Identity", eval_unary},
             {"Cast", eval_unary},
             {"CastLike", eval_unary},
             {"Neg", eval_unary},
             {"Abs", eval_unary},
             {"Floor", eval_unary},
             {"Ceil", eval_unary},
             {"Round", eval_unary},
             {"Sqrt", eval_unary},
             {"Reciprocal", eval_unary},
             {"Relu", eval_unary},
             {"Sign", eval_unary},
             {"Not", eval_unary},
             {"Exp", eval_unary},
             {"Log", eval_unary},
             {"Clip", eval_clip},
             {"Reshape", eval_reshape_like},
             {"Squeeze", eval_reshape_like},
             {"Unsqueeze", eval_reshape_like},
             {"Flatten", eval_reshape_like},
             {"ConstantOfShape", eval_constant_of_shape},
             {"Range", eval_range},
             {"Gather", eval_gather},
             {"Concat", eval_concat},
             {"Slice", eval_slice},
             {"Transpose", eval_transpose},
             {"Expand", eval_expand},
             {"Tile", eval_tile},
             {"Split", eval_split},
             {"ReduceProd", eval_reduce},
             {"ReduceSum", eval_reduce},
             {"ReduceMax", eval_reduce},
             {"ReduceMin", eval_reduce},
             {"ReduceMean", eval_reduce},
             {"NonZero", eval_nonzero},
             {"Compress", eval_compress},
             {NULL, NULL}};

int pb_shape_eval_supported(const char *op)
{
	for (int i = 0; evals[i].op; i++)
		if (strcmp(evals[i].op, op) == 0)
			return 1;
	for (int i = 0; binops[i].name; i++)
		if (strcmp(binops[i].name, op) == 0)
			return 1;
	return 0;
}

void pb_shape_eval(pb_sx *c)
{
	const char *op = c->n->op;
	if (strcmp(op, "Dropout") == 0) {
		/* Inference mode: the output is the input (the mask is data). */
		pb_tensor *training = pb_sx_in(c, 2);
		if (!training ||
		    (training->value && training->value->numel >= 1 && training->value->i[0] == 0))
			eval_unary(c);
		return;
	}
	for (int i = 0; evals[i].op; i++)
		if (evals[i].op[0] == op[0] && strcmp(evals[i].op, op) == 0) {
			evals[i].fn(c);
			return;
		}
	for (int i = 0; binops[i].name; i++)
		if (binops[i].name[0] == op[0] && strcmp(binops[i].name, op) == 0) {
			eval_binary(c, binops[i].op);
			return;
		}
}
