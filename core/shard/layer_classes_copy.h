/*
 * shard/layer_classes_copy.h — a copy of a graph's repeated layers
 * (layer_classes.h), for callers that find them once and edit a copy per
 * problem (layer_classes_copy.c).
 */
#ifndef PB_SHARD_LAYER_CLASSES_COPY_H
#define PB_SHARD_LAYER_CLASSES_COPY_H

#include "shard/layer_classes.h"

/* dst = a copy of src; free with pb_layer_classes_free. */
int pb_layer_classes_copy(const pb_layer_classes *src, pb_layer_classes *dst, pb_error *err);

#endif
