/*
 * export/onnx_parts.h — the source ONNX file seen as byte ranges, and the
 * encoding of one part as a new ModelProto (internal to export/).
 *
 * The file is read whole; its ModelProto and GraphProto framing is walked
 * (protobuf wire format) to record where each field sits. A part is then
 * written as protobuf by concatenation: the source's NodeProto, TensorProto
 * and ValueInfoProto messages are copied byte for byte (so attributes,
 * weights, doc strings and fields this build does not know stay exact), the
 * ModelProto's own fields (IR version, opset imports, producer, metadata,
 * local functions) are copied except the graph and training_info, and only
 * the graph framing, its name and the value infos the source lacks for a
 * cut tensor are encoded here.
 */
#ifndef PB_EXPORT_ONNX_PARTS_H
#define PB_EXPORT_ONNX_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "export/extract.h"
#include "util/strmap.h"

typedef struct pb_onnx_range {
	size_t start, end; /* the whole field: key, length and payload */
} pb_onnx_range;

typedef struct pb_onnx_init {
	pb_onnx_range r;
	char *name;
	char *location; /* external data file, NULL when inline */
} pb_onnx_init;

typedef struct pb_onnx_src {
	const char *path;
	uint8_t *data;
	size_t len;
	int64_t ir_version;
	pb_onnx_range *top; /* ModelProto fields other than graph and training_info */
	int n_top;
	size_t graph_at; /* index in top[] before which the graph goes */
	char *graph_name;
	pb_onnx_range *nodes; /* in file order */
	int n_nodes;
	pb_onnx_init *inits;
	int n_inits;
	pb_onnx_range *vinfo; /* graph inputs, outputs, value_info */
	char **vinfo_name;
	int *vinfo_kind; /* 11 input, 12 output, 13 value_info */
	int n_vinfo;
	pb_strmap *init_index;  /* name -> inits[] */
	pb_strmap *vinfo_index; /* name -> vinfo[] (first one: input, then output, value_info) */
	int n_sparse;           /* sparse_initializer fields */
} pb_onnx_src;

/* Reads and indexes the ONNX file at path. */
int pb_onnx_src_open(const char *path, pb_onnx_src **out, pb_error *err);
void pb_onnx_src_free(pb_onnx_src *s);

/* The part's ModelProto in *buf (malloc'd, *len bytes). */
int pb_onnx_part_encode(const pb_onnx_src *s, const pb_graph *g, const pb_extract_part *p, int k,
                        uint8_t **buf, size_t *len, pb_error *err);

#endif
