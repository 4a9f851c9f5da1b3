/*
 * graph.h — the immutable computation graph every part of partbench reads.
 *
 * A Graph is built once by a loader (ONNX, DOT, JSON) through pb_builder and
 * is never mutated afterwards. Transformations (fusion, backend aggregation)
 * build a new Graph.
 *
 * Invariants after pb_builder_finish():
 *  - node ids are dense 0..n_nodes-1 and follow a deterministic topological
 *    order: Kahn's algorithm with a min-heap on file order, so a file that is
 *    already topologically sorted keeps its order (igraph checks acyclicity
 *    and names a node on a cycle);
 *  - every tensor has at most one producer node; node inputs/outputs refer to
 *    tensor ids (-1 for an omitted optional input);
 *  - preds/succs are deduplicated node ids, sorted ascending;
 *  - shapes and costs are NOT filled here: the load module (core/load.h) runs
 *    shape inference (shape/shape.h) and costing (shape/cost.h) on the linked
 *    graph. The Graph neither loads nor prices itself.
 */
#ifndef PB_GRAPH_H
#define PB_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Element types use ONNX TensorProto.DataType numbers. */
enum {
	PB_DT_UNDEFINED = 0,
	PB_DT_FLOAT = 1,
	PB_DT_UINT8 = 2,
	PB_DT_INT8 = 3,
	PB_DT_UINT16 = 4,
	PB_DT_INT16 = 5,
	PB_DT_INT32 = 6,
	PB_DT_INT64 = 7,
	PB_DT_STRING = 8,
	PB_DT_BOOL = 9,
	PB_DT_FLOAT16 = 10,
	PB_DT_DOUBLE = 11,
	PB_DT_UINT32 = 12,
	PB_DT_UINT64 = 13,
	PB_DT_COMPLEX64 = 14,
	PB_DT_COMPLEX128 = 15,
	PB_DT_BFLOAT16 = 16
};
/* Bytes per element (0 for undefined/string). */
int pb_dtype_size(int dtype);
const char *pb_dtype_name(int dtype);
int pb_dtype_is_float(int dtype);

#define PB_MAX_RANK 8
#define PB_DIM_UNKNOWN (-1)

/* Attribute types use ONNX AttributeProto.AttributeType numbers. */
enum {
	PB_ATTR_UNDEFINED = 0,
	PB_ATTR_FLOAT = 1,
	PB_ATTR_INT = 2,
	PB_ATTR_STRING = 3,
	PB_ATTR_TENSOR = 4,
	PB_ATTR_GRAPH = 5,
	PB_ATTR_FLOATS = 6,
	PB_ATTR_INTS = 7,
	PB_ATTR_STRINGS = 8
};

typedef struct pb_value pb_value;

typedef struct pb_attr {
	char *name;
	int type;
	double f;
	int64_t i;
	char *s;
	int n; /* element count for FLOATS/INTS/STRINGS */
	double *floats;
	int64_t *ints;
	char **strings;
	pb_value *t;        /* TENSOR attribute value (small tensors only), else NULL */
	int subgraph_nodes; /* GRAPH: node count of the subgraph (kept opaque) */
} pb_attr;

/* A known constant value (initializer, Constant, or evaluated shape math).
 * Held only for small tensors (numel <= PB_VALUE_MAX); both arrays filled. */
#define PB_VALUE_MAX 65536
struct pb_value {
	int dtype;
	int rank;
	int64_t dims[PB_MAX_RANK];
	int64_t numel;
	int64_t *i; /* integer view (floats truncated) */
	double *f;  /* floating view */
};

typedef struct pb_tensor {
	char *name;
	int dtype;
	int rank;                      /* -1 when unknown */
	int64_t dims[PB_MAX_RANK];     /* PB_DIM_UNKNOWN when unknown */
	char *dim_params[PB_MAX_RANK]; /* symbolic name or NULL */
	int producer;                  /* node id, -1 for inputs/initializers */
	int *consumers;                /* node ids (may repeat if used twice) */
	int n_consumers;
	unsigned is_initializer : 1; /* weights / constants from the file */
	unsigned is_input : 1;       /* a real model input */
	unsigned is_output : 1;      /* a model output */
	unsigned external_data : 1;  /* initializer whose bytes live elsewhere */
	unsigned batch_changed : 1;  /* an input whose dim 0 --input changed from the graph's
	                                batch_exported to batch_new (shape/shape_batch.c) */
	pb_value *value;             /* known value or NULL */
} pb_tensor;

/* Per-node cost figures (cost.c documents the conventions). */
typedef struct pb_cost {
	double macs;   /* multiply-accumulates (Conv, ConvT, Gemm, MatMul, Einsum) */
	double flops;  /* 2*macs for MAC ops; per-element count for the others */
	double params; /* elements of initializer inputs */
	double param_bytes;
	double out_bytes; /* bytes of all outputs (activations) */
	double in_bytes;  /* bytes of non-initializer inputs */
} pb_cost;

typedef struct pb_node {
	char *name;
	char *op;
	char *domain; /* "" for the default ONNX domain */
	pb_attr *attrs;
	int n_attrs;
	int *inputs; /* tensor ids, -1 = omitted optional input */
	int n_inputs;
	int *outputs; /* tensor ids */
	int n_outputs;
	int *preds; /* node ids, sorted, unique */
	int n_preds;
	int *succs;
	int n_succs;
	int file_order; /* position in the source file */
	int *members;   /* fused node: ids of original nodes (in its source graph) */
	int n_members;
	char **member_names;
	pb_cost cost;
	unsigned shape_known : 1; /* all outputs have a concrete shape */
} pb_node;

typedef struct pb_opset {
	char *domain;
	int64_t version;
} pb_opset;

/* One entry of a constant shape operand that shape inference rewrote for a
 * new batch (shape/shape_batch.c): node `node` reads constant tensor
 * `tensor`, whose entry `entry` was `from` (the exported batch) and is `to`. */
typedef struct pb_batch_rewrite {
	int node, tensor, entry;
	int64_t from, to;
} pb_batch_rewrite;

typedef struct pb_graph {
	char *path; /* file it was loaded from */
	char *name;
	char *format; /* "onnx", "dot", "json" */
	pb_node *nodes;
	int n_nodes;
	pb_tensor *tensors;
	int n_tensors;
	int *inputs; /* tensor ids of real model inputs */
	int n_inputs;
	int *outputs; /* tensor ids of model outputs */
	int n_outputs;
	pb_opset *opsets;
	int n_opsets;
	pb_cost total;        /* sums over nodes */
	int n_unknown_shapes; /* nodes whose output shape could not be inferred */
	struct pb_strmap *node_index;
	struct pb_strmap *tensor_index;
	/* The batch --input changed (dim 0 of the inputs marked batch_changed:
	 * from batch_exported, the file's, to batch_new; 0 when none changed)
	 * and the constant entries rewritten for it (shape/shape_batch.c). */
	int64_t batch_exported, batch_new;
	pb_batch_rewrite *rewrites;
	int n_rewrites;
	int shapes_given;     /* the file states every shape: no inference (DOT, JSON snapshot) */
	pb_cost *stated_cost; /* per node, costs the file states (NAN = infer); NULL once applied */
	void *userdata;       /* owned by the loader (e.g. protobuf message) */
	void (*userdata_free)(void *);
	/* Internal to graph.c: blocks holding the node names, node
	 * domains, attribute names and the inputs/outputs/preds/succs/consumers
	 * arrays (freed with the graph; never free or realloc those fields). */
	void *pool;
} pb_graph;

/* ---- queries ---- */
int pb_graph_find_node(const pb_graph *g, const char *name);   /* -1 if none */
int pb_graph_find_tensor(const pb_graph *g, const char *name); /* -1 if none */
const pb_attr *pb_node_attr(const pb_node *n, const char *name);
int64_t pb_node_attr_int(const pb_node *n, const char *name, int64_t dflt);
double pb_node_attr_float(const pb_node *n, const char *name, double dflt);
const char *pb_node_attr_str(const pb_node *n, const char *name, const char *dflt);
/* Bytes carried by the edge from node `from` to node `to` (sum of the tensors
 * that `from` produces and `to` consumes; 0 if not adjacent). */
double pb_graph_edge_bytes(const pb_graph *g, int from, int to);
/* Constant nodes compute only from constants: every input is an initializer
 * or the output of a constant node (Constant — the only node without inputs
 * that counts —, the Identity copies of weights
 * that exporters add, shape math on constants). A malloc'ed array of
 * n_nodes flags (1 = constant), or NULL when out of memory. Drawings leave
 * their edges out: they feed blocks all over the graph and hide the flow. */
unsigned char *pb_graph_constant_nodes(const pb_graph *g);
/* Bytes of one tensor (dtype size x numel; 0 if the shape is unknown). */
double pb_tensor_bytes(const pb_tensor *t);
int64_t pb_tensor_numel(const pb_tensor *t); /* -1 if unknown */
/* "1x3x224x224", "?x768" or "?" into buf. */
char *pb_tensor_shape_str(const pb_tensor *t, char *buf, size_t len);
/* Opset version for a domain ("" or "ai.onnx" = default), 0 if not declared. */
int64_t pb_graph_opset(const pb_graph *g, const char *domain);
/* Short display name: the last path component of an ONNX-style name. */
const char *pb_node_short_name(const pb_node *n);

void pb_graph_free(pb_graph *g);

/* ---- building (used by loaders and transformations) ---- */
typedef struct pb_builder pb_builder;

/* Input dimension overrides from the command line: "x=1,3,640,640". Each
 * dim is at most PB_INPUT_DIM_MAX; the rank must match the declared one. */
#define PB_INPUT_DIM_MAX ((long long)1 << 40)
typedef struct pb_input_override {
	char *name;
	int rank;
	int64_t dims[PB_MAX_RANK];
} pb_input_override;

typedef struct pb_load_opts {
	const pb_input_override *overrides;
	int n_overrides;
	int skip_shapes; /* do not run shape inference (tests) */
} pb_load_opts;

int pb_parse_input_override(const char *spec, pb_input_override *out, pb_error *err);
void pb_input_override_free(pb_input_override *o);

pb_builder *pb_builder_new(const char *path, const char *format);
/* Optional capacity hint for large graphs (fewer reallocations/rehashes). */
void pb_builder_reserve(pb_builder *b, int n_nodes, int n_tensors);
/* Declares (or returns) the tensor with that name. */
int pb_builder_tensor(pb_builder *b, const char *name);
pb_tensor *pb_builder_tensor_ptr(pb_builder *b, int id);
void pb_builder_set_shape(pb_builder *b, int tid, int dtype, int rank, const int64_t *dims,
                          char *const *dim_params);
/* Adds a node; inputs may contain NULL or "" for omitted optional inputs.
 * Returns the node's index in file order. Attributes are added afterwards. */
int pb_builder_node(pb_builder *b, const char *name, const char *op, const char *domain,
                    const char *const *inputs, int n_inputs, const char *const *outputs,
                    int n_outputs);
/* Appends an attribute (deep copy of *a) to node `nid` (file-order index). */
void pb_builder_attr(pb_builder *b, int nid, const pb_attr *a);
/* Fixed costs for graphs that state them (DOT/JSON); NAN fields are inferred. */
void pb_builder_node_cost(pb_builder *b, int nid, const pb_cost *c);
void pb_builder_node_members(pb_builder *b, int nid, const int *members, const char *const *names,
                             int n);
void pb_builder_input(pb_builder *b, int tid);
void pb_builder_output(pb_builder *b, int tid);
void pb_builder_initializer(pb_builder *b, int tid, int external);
/* Takes ownership of v. */
void pb_builder_value(pb_builder *b, int tid, pb_value *v);
void pb_builder_opset(pb_builder *b, const char *domain, int64_t version);
void pb_builder_name(pb_builder *b, const char *name);
void pb_builder_userdata(pb_builder *b, void *data, void (*free_fn)(void *));
/* Sorts, links and applies the input overrides; shapes and costs are left to
 * the load module (load.h: pb_graph_build = finish + analyse). Consumes the
 * builder (also on failure). */
int pb_builder_finish(pb_builder *b, const pb_load_opts *opts, pb_graph **out, pb_error *err);
void pb_builder_free(pb_builder *b);

/* ---- values ---- */
pb_value *pb_value_new(int dtype, int rank, const int64_t *dims);
pb_value *pb_value_copy(const pb_value *v);
void pb_value_free(pb_value *v);

#endif
