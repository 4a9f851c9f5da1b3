/*
 * onnx_load.h — reads an ONNX model (ModelProto, protobuf) into a linked
 * Graph: nodes, tensors, attributes, initializers, the file's value_info
 * shapes and small constant values (onnx_load.c documents the decoding).
 *
 * A reader only builds the Graph (pb_builder_finish: linked, topologically
 * numbered, input overrides applied); it neither infers shapes nor prices
 * nodes. Users call the load module (load.h), which reads and then analyses.
 */
#ifndef PB_MODEL_ONNX_LOAD_H
#define PB_MODEL_ONNX_LOAD_H

#include <stddef.h>

#include "model/graph.h"

int pb_onnx_read(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err);
int pb_onnx_read_buffer(const void *data, size_t len, const char *name, const pb_load_opts *opts,
                        pb_graph **out, pb_error *err);

#endif
