/*
 * shape_rules.h — internal interface between the shape-inference driver
 * (shape.c), the per-operator shape rules (shape_ops.c, shape_nn.c,
 * shape_extra.c), the constant propagation of small tensors (shape_eval.c)
 * and the helpers they share (pb_sx_*, shape_sx.c). Not for other modules.
 * Calls go one way: driver -> rules and evaluation -> helpers.
 *
 * A rule reads the node's input tensors (shape, dtype, known value) and sets
 * its output tensors' dtype/rank/dims. Unknown dims are PB_DIM_UNKNOWN (-1);
 * a rank of -1 means "nothing inferred" and lets the driver fall back to the
 * file's value_info.
 */
#ifndef PB_SHAPE_RULES_H
#define PB_SHAPE_RULES_H

#include "model/graph.h"

typedef struct pb_sx {
	pb_graph *g;
	pb_node *n;
	int64_t opset;      /* default-domain opset version of the model */
	char conflict[384]; /* first inconsistency a rule found ("" if none) */
} pb_sx;

typedef int (*pb_shape_rule)(pb_sx *c);

typedef struct pb_shape_rule_entry {
	const char *op;
	pb_shape_rule rule;
} pb_shape_rule_entry;

/* Rule tables (NULL-terminated), one per operator family. */
extern const pb_shape_rule_entry pb_shape_rules_tensor[];
extern const pb_shape_rule_entry pb_shape_rules_nn[];
extern const pb_shape_rule_entry pb_shape_rules_extra[];

/* Largest dim (and |number| read from attributes or shape tensors) that
 * shape arithmetic accepts: 2^40. Anything larger is malformed input; the
 * clamp keeps every sum and product of a few such numbers inside int64. */
#define PB_SX_BIG ((int64_t)1 << 40)

/* Largest element count of one tensor: 2^48 (a petabyte of floats). More is
 * a malformed or hostile shape ([2^31, 2^31] from a Reshape of 4 elements);
 * the driver refuses it, naming the node. */
#define PB_SX_NUMEL_MAX ((int64_t)1 << 48)

/* a * b, or -1 when either is unknown (< 0) or the product exceeds PB_SX_BIG. */
int64_t pb_sx_mul(int64_t a, int64_t b);
/* v clamped to [-PB_SX_BIG, PB_SX_BIG]. */
int64_t pb_sx_clamp(int64_t v);
/* A double as a dim: floor(v) if 0 <= v <= PB_SX_BIG, else -1. */
int64_t pb_sx_dim(double v);

/* A rule found known dims that contradict each other (a Conv input with 6
 * channels for a weight made for 3, MatMul inner dims 768 vs 512, shapes
 * that do not broadcast): records the first such message; the driver turns
 * it into an error naming the node. Returns 0 (nothing inferred). */
int pb_sx_conflict(pb_sx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Input/output tensor i, NULL when absent or omitted. */
pb_tensor *pb_sx_in(const pb_sx *c, int i);
pb_tensor *pb_sx_out(const pb_sx *c, int i);
/* Known value of input i or NULL. */
const pb_value *pb_sx_val(const pb_sx *c, int i);
/* Sets a tensor's dtype (0 keeps it), rank and dims; t may be NULL. */
void pb_sx_set(pb_tensor *t, int dtype, int rank, const int64_t *dims);
/* Copies shape and dtype from src to t (t may be NULL). */
void pb_sx_same(pb_tensor *t, const pb_tensor *src);
/* Integer list from input i's value when the input is present, else from the
 * attribute `attr`. Returns 1 when found (count in *n), 0 when neither is
 * given, -1 when the input is present but its value is unknown. */
int pb_sx_ints(const pb_sx *c, int i, const char *attr, int64_t *out, int max, int *n);
/* pb_sx_ints for numbers that become dims (Reshape's shape, Expand,
 * ConstantOfShape, TopK's k): not clamped; one beyond +-2^40 is a conflict
 * naming what[k] (and 0 is returned, nothing inferred). */
int pb_sx_dims_arg(pb_sx *c, int i, const char *attr, const char *what, int64_t *out, int max,
                   int *n);
/* A conflict when tensor t has a dim beyond 2^40 or more than
 * PB_SX_NUMEL_MAX elements (known dims only; an overflow of int64 too).
 * Returns 1 when t is fine. */
int pb_sx_check_numel(pb_sx *c, const pb_tensor *t);
/* Numpy broadcast of two shapes; unknown dims stay unknown unless the other
 * side decides. Returns 0 on incompatible known dims. */
int pb_sx_broadcast(int ra, const int64_t *a, int rb, const int64_t *b, int *r, int64_t *out);
/* Normalises a possibly negative axis; -1 if out of range. */
int pb_sx_axis(int64_t axis, int rank);
/* Product of dims [from, to); -1 if any is unknown. */
int64_t pb_sx_prod(const int64_t *dims, int from, int to);

/* The batch rewrite (shape_batch.c): a trace of the batch axis through the
 * graph, NULL when --input changed no batch (or out of memory). The driver
 * calls before() ahead of each node's rule (it may rewrite a constant shape
 * operand, or record a conflict) and after() once its outputs are known. */
typedef struct pb_batch_trace pb_batch_trace;
pb_batch_trace *pb_shape_batch_new(pb_graph *g);
void pb_shape_batch_free(pb_batch_trace *bt);
void pb_shape_batch_before(pb_batch_trace *bt, pb_sx *c);
void pb_shape_batch_after(pb_batch_trace *bt, pb_sx *c);
/* After a conflict at node `failed`: the next reading of the latest
 * ambiguous Reshape, with what the nodes from it on did undone. Returns the
 * node to infer again from, or -1 when no reading is left. */
int pb_shape_batch_retry(pb_batch_trace *bt, int failed);

/* Constant propagation: computes the values of the node's outputs when the
 * inputs it needs are known and the result is small (shape_eval.c). */
void pb_shape_eval(pb_sx *c);
int pb_shape_eval_supported(const char *op);

#endif
