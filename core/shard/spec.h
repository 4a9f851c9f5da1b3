/*
 * shard/spec.h — sharding specs (dist_spec) and the per-operator menu of
 * valid (inputs, output) spec combinations.
 *
 * A spec says, for one tensor and one mesh axis, how the tensor is laid out
 * over the devices of that axis: split along dimension k into d equal parts
 * (code k >= 0), replicated (PB_SPEC_R) or partial (PB_SPEC_P: full shape, a
 * sum still to be reduced). A strategy of an operator gives one spec per
 * input slot and output slot and per mesh axis, and whether the axis really
 * divides the work. The menu per operator family is in spec.c (matmul/gemm/
 * conv batch, row, column and contraction splits; aligned element-wise
 * splits; reductions, softmax, normalisations; reshape/transpose with a
 * dimension mapping; replicate for everything else).
 */
#ifndef PB_SHARD_SPEC_H
#define PB_SHARD_SPEC_H

#include "model/graph.h"
#include "shard/cluster.h"

#define PB_SPEC_R (-1)
#define PB_SPEC_P (-2)
#define PB_SHARD_MAX_IN 8
#define PB_SHARD_MAX_OUT 4

/* One strategy for one axis. */
typedef struct pb_strat1 {
	signed char in[PB_SHARD_MAX_IN];
	signed char out[PB_SHARD_MAX_OUT];
	unsigned char divides; /* 1 when the devices of the axis share the work */
	int group_div;         /* grouped conv: the group count must divide too (0 = none) */
	char label[12];        /* "rep", "b0", "m", "n", "k", "d2", ... */
} pb_strat1;

/* One strategy for a whole mesh: one pb_strat1 per axis, flattened. */
typedef struct pb_strat {
	signed char in[PB_SHARD_MAX_IN][PB_MESH_MAX_AXES];
	signed char out[PB_SHARD_MAX_OUT][PB_MESH_MAX_AXES];
	int share;      /* devices that share the work (product over dividing axes) */
	double pad;     /* padding factor of the local work (1 = every split divides;
	                 * --pad: the largest pb_spec_pad_factor of its tensors) */
	char label[40]; /* per-axis labels joined by ',' */
} pb_strat;

/* Per-axis menu of node `nid` (no divisibility check; replicate first).
 * dyn_in has bit i set when input slot i carries an activation (not a
 * parameter or constant); partial specs only pass through activations.
 * Returns the count (at most cap). */
int pb_spec_menu(const pb_graph *g, int nid, unsigned dyn_in, pb_strat1 *out, int cap);
/* Combines the per-axis menus into mesh strategies, keeping those where every
 * split dimension divides by the product f of the axes splitting it. With pad,
 * a dimension n >= f that does not divide is split too: ceil(n/f) per device,
 * the last parts padded (not on Reshape/Flatten/Squeeze/Unsqueeze, whose
 * dimension mapping needs exact blocks; docs/shard.md). Returns the count (at
 * most cap). */
int pb_spec_combine(const pb_graph *g, int nid, const pb_mesh *m, const pb_strat1 *menu, int n_menu,
                    int pad, pb_strat *out, int cap);

/* Local shape of a tensor under a spec tuple (one code per axis): ceil(n/f)
 * along a dimension split f ways (padded when f does not divide n). */
void pb_spec_local_dims(const pb_tensor *t, const signed char *spec, const pb_mesh *m,
                        int64_t *dims);
/* Padded size over real size of a tensor under a spec: the product over split
 * dimensions of ceil(n/f) f / n (1 when every split divides). */
double pb_spec_pad_factor(const pb_tensor *t, const signed char *spec, const pb_mesh *m);
/* Factor by which the tensor's bytes shrink on one device. */
double pb_spec_shrink(const signed char *spec, const pb_mesh *m);
/* 1 when op is an elementwise operator (its output shards like its inputs). */
int pb_spec_is_elementwise(const char *op);
/* "S1", "R", "P" per axis joined by ',' into buf. */
char *pb_spec_str(const signed char *spec, int n_axes, char *buf, size_t len);

/* Collectives. */
enum {
	PB_COLL_NONE = 0,
	PB_COLL_ALLGATHER,
	PB_COLL_ALLREDUCE,
	PB_COLL_REDUCESCATTER,
	PB_COLL_ALLTOALL
};
const char *pb_spec_coll_name(int kind);
/* alpha + factor * bytes / beta on one link, for a collective over d devices
 * where `bytes` is the full (unsplit on that axis) buffer:
 *   all-gather (d-1)/d, all-reduce 2(d-1)/d, reduce-scatter (d-1)/d,
 *   all-to-all (d-1)/d^2. */
double pb_spec_coll_time(int kind, double bytes, int d, const pb_link *l);

typedef struct pb_coll {
	int kind, axis;
	double bytes; /* buffer bytes on that axis (full along the axis) */
	double time;
} pb_coll;

/* Cost (seconds) of turning a tensor of `bytes` laid out as `from` into `to`,
 * axis by axis from axis 0; each axis's buffer is the tensor divided by the
 * other axes' splits of the layout current at that moment. Writes the
 * collectives (up to PB_MESH_MAX_AXES) when colls is non-NULL. */
double pb_spec_reshard_cost(const pb_mesh *m, double bytes, const signed char *from,
                            const signed char *to, pb_coll *colls, int *n_colls);
/* The same for tensor t, whose buffers are padded: bytes x the larger pad
 * factor of the two layouts. */
double pb_spec_reshard_cost_tensor(const pb_mesh *m, const pb_tensor *t, const signed char *from,
                                   const signed char *to, pb_coll *colls, int *n_colls);

#endif
