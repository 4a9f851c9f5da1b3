/*
 * onnx_wire.h — hand-written decoders for ONNX's NodeProto and
 * ValueInfoProto (internal to the ONNX loader; onnx_wire.c explains the
 * contract). Each returns the decoded message, allocated from `a`, or NULL
 * when the bytes are not in the shape it handles (including malformed
 * input): the caller then decodes them with protobuf-c's unpack.
 */
#ifndef PB_ONNX_WIRE_H
#define PB_ONNX_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "onnx.pb-c.h"

Onnx__NodeProto *pb_onnx_wire_node(ProtobufCAllocator *a, const uint8_t *p, size_t len);
Onnx__ValueInfoProto *pb_onnx_wire_value_info(ProtobufCAllocator *a, const uint8_t *p, size_t len);

#endif
