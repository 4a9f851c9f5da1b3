/*
 * tune/space.h — operator shapes and the search space Λ = Λ1 × … × Λn.
 *
 * A configuration is a vector of value indices (idx[i] into params[i]).
 * The order of the parameters is the order in which the policy decides them
 * (one MDP step per parameter). Spaces are enumerable: configurations map to
 * and from a linear id in [0, size).
 */
#ifndef PB_TUNE_SPACE_H
#define PB_TUNE_SPACE_H

#include <jansson.h>
#include <stdint.h>

#include "util/error.h"
#include "model/graph.h"
#include "tune/kernels.h"

enum { PB_TUNE_GEMM = 0, PB_TUNE_CONV2D = 1 };

#define PB_TUNE_MAX_PARAMS 12
#define PB_TUNE_MAX_VALUES 8
#define PB_TUNE_MAX_FEATURES 24

typedef struct pb_tune_shape {
	int op;             /* PB_TUNE_GEMM or PB_TUNE_CONV2D */
	int m, n, k;        /* gemm: C[m][n] = A[m][k] B[k][n] */
	int batch;          /* gemm: independent repetitions (batched MatMul), >= 1 */
	pb_conv_shape conv; /* conv2d */
} pb_tune_shape;

typedef struct pb_tune_param {
	const char *name;
	int n_values;
	int values[PB_TUNE_MAX_VALUES];
} pb_tune_param;

typedef struct pb_tune_space {
	pb_tune_shape shape;
	int n_params;
	pb_tune_param params[PB_TUNE_MAX_PARAMS];
} pb_tune_space;

/* Parses "--op gemm --shape M,N,K" / "--op conv2d --shape N,C,H,W,K,R,S,stride,pad". */
int pb_tune_shape_parse(const char *op, const char *spec, pb_tune_shape *out, pb_error *err);
/* Shape of a Conv / Gemm / MatMul node from its graph tensors. */
int pb_tune_shape_from_node(const pb_graph *g, int node, pb_tune_shape *out, pb_error *err);
/* Canonical key "gemm:M,N,K" / "conv2d:N,C,H,W,K,R,S,stride,pad" (batch excluded). */
void pb_tune_shape_key(const pb_tune_shape *s, char *buf, size_t len);
const char *pb_tune_op_name(int op);
/* Floating-point operations of one kernel call (2 * MACs, batch excluded). */
double pb_tune_shape_flops(const pb_tune_shape *s);

void pb_tune_space_init(pb_tune_space *sp, const pb_tune_shape *shape);
double pb_tune_space_size(const pb_tune_space *sp);
/* Linear id <-> index vector (mixed radix, first parameter slowest). */
void pb_tune_space_decode(const pb_tune_space *sp, int64_t id, int *idx);
int64_t pb_tune_space_encode(const pb_tune_space *sp, const int *idx);
/* Kernel configurations of an index vector. */
void pb_tune_space_gemm_cfg(const pb_tune_space *sp, const int *idx, pb_gemm_cfg *c);
void pb_tune_space_conv_cfg(const pb_tune_space *sp, const int *idx, pb_conv_cfg *c);
/* Static legality (no run needed); why gets the reason when illegal. */
int pb_tune_space_legal(const pb_tune_space *sp, const int *idx, char *why, size_t len);
/* Number of legal configurations (enumerates the space). */
int64_t pb_tune_space_count_legal(const pb_tune_space *sp);
/* Cost-model features of a configuration; returns their count. */
int pb_tune_space_features(const pb_tune_space *sp, const int *idx, float *f);
/* {"vec": 8, "mr": 6, ...} */
json_t *pb_tune_space_config_json(const pb_tune_space *sp, const int *idx);
/* Reads a configuration object back (all parameters required, values must
 * be in the space); 0 on success, -1 otherwise. */
int pb_tune_space_config_from_json(const pb_tune_space *sp, const json_t *o, int *idx);
/* "vec=8 mr=6 ..." */
void pb_tune_space_config_str(const pb_tune_space *sp, const int *idx, char *buf, size_t len);

#endif
