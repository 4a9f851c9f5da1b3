/*
 * dot_load.h — reads a Graphviz DOT graph (hand-made graphs with stated
 * costs and shapes, docs/formats.md) into a linked Graph through cgraph.
 *
 * DOT states its shapes (or has none): the Graph comes back with
 * shapes_given set, so the load module (load.h) skips shape inference and
 * only prices the nodes the file does not price.
 */
#ifndef PB_MODEL_DOT_LOAD_H
#define PB_MODEL_DOT_LOAD_H

#include <stddef.h>

#include "model/graph.h"

int pb_dot_read(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err);
int pb_dot_read_buffer(const char *text, size_t len, const char *name, const pb_load_opts *opts,
                       pb_graph **out, pb_error *err);

#endif
