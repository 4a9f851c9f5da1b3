/*
 * shard/cluster.h — a cluster of identical devices and its grouping schemes.
 *
 * A `cluster` layout (layouts/cluster-*.lua) gives nodes x devices per node,
 * the device memory and FLOP rate (optionally scaled by device_efficiency,
 * the achieved fraction of that rate), optionally the device memory's
 * bandwidth (device_memory_bw_gbs: memory-bound operators), and the bandwidth/latency of the links
 * inside a node and between nodes. A grouping scheme factorises the device
 * count into ordered factors (16 = 2x8 = 4x4 = 8x2 = 2x4x2 ...); every factor
 * is one axis of a device mesh. Devices are numbered row-major over the axes,
 * the last axis varying fastest, and consecutive numbers share a node, so an
 * axis is intra-node when (product of the axes after it) x (its size) divides
 * the node size (every group of the axis inside one node), inter-node
 * otherwise.
 */
#ifndef PB_SHARD_CLUSTER_H
#define PB_SHARD_CLUSTER_H

#include "util/error.h"
#include "hw.h"
#include "shard/grad_overlap.h"

#define PB_MESH_MAX_AXES 4

typedef struct pb_link {
	double bw;      /* bytes per second */
	double latency; /* seconds (alpha of the alpha-beta model) */
} pb_link;

/* The default fraction of a device's memory a plan may use: vLLM's
 * --gpu-memory-utilization default (docs.vllm.ai engine arguments), the
 * published headroom for the CUDA context, NCCL's buffers and the PyTorch
 * caching allocator's fragmentation (docs/shard.md "Memory headroom"). */
#define PB_MEMORY_USABLE 0.9

typedef struct pb_cluster {
	char *name;
	int nodes;
	int devices_per_node;
	int n_devices;
	double memory;        /* bytes per device a plan may use: device_memory_gb x
	                       * device_memory_usable (the planning limit) */
	double memory_device; /* bytes per device (device_memory_gb) */
	double memory_usable; /* device_memory_usable: the fraction plans may use
	                       * (default PB_MEMORY_USABLE, docs/shard.md) */
	double flops;         /* FLOP/s per device the cost model uses: peak x efficiency */
	double peak_flops;    /* device_tflops of the layout, FLOP/s */
	double efficiency;    /* device_efficiency of the layout (default 1) */
	double mem_bw;        /* device memory bytes/s (device_memory_bw_gbs; 0 = not modelled):
	                       * an operator takes the longer of its FLOPs at `flops` and its
	                       * bytes at mem_bw (the roofline model) */
	double grad_bucket;   /* bytes per gradient bucket of the data-parallel all-reduce
	                       * overlapped with the backward pass (grad_bucket_mb x 2^20,
	                       * default PB_GRAD_BUCKET_MB; 0 = not overlapped:
	                       * shard/grad_overlap.h) */
	int p2p_overlap;      /* 1: pipeline point-to-point transfers overlapped with compute
	                       * where the schedule allows (pb_pipeline_p2p_step; layouts: 1,
	                       * shard --p2p-overlap off: 0) */
	pb_link intra, inter;
} pb_cluster;

typedef struct pb_mesh {
	int n_axes;
	int size[PB_MESH_MAX_AXES];
	int stride[PB_MESH_MAX_AXES]; /* device-number stride of each axis */
	int inter[PB_MESH_MAX_AXES];  /* 1 when the axis crosses nodes */
	pb_link link[PB_MESH_MAX_AXES];
	char name[48]; /* "2x8" */
} pb_mesh;

/* Reads a kind="cluster" layout; errors name the file and field. */
int pb_cluster_from_hw(const pb_hw *hw, pb_cluster *out, pb_error *err);
void pb_cluster_free(pb_cluster *c);

/* Builds the mesh of an ordered factor list (factors >= 2, product = devices). */
int pb_cluster_mesh_init(pb_mesh *m, const pb_cluster *c, const int *factors, int n, pb_error *err);
/* Parses "4x4" / "16" into a mesh. */
int pb_cluster_mesh_parse(pb_mesh *m, const pb_cluster *c, const char *text, pb_error *err);

/* Enumerates grouping schemes with at most max_axes factors. Ordered
 * factorisations are generated; a scheme whose axes are a permutation of an
 * earlier one with the same (size, link) per axis is a mirror duplicate (the
 * candidate strategies are the same up to renaming the axes) and is dropped;
 * its name and the kept scheme go to dropped[] ("4x2=2x4") when given.
 * Returns the number of schemes written (at most cap). */
int pb_cluster_mesh_schemes(const pb_cluster *c, int max_axes, pb_mesh *out, int cap,
                            char (*dropped)[64], int *n_dropped, int dropped_cap);

#endif
