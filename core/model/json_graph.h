/*
 * json_graph.h — partbench's own JSON graph format (docs/formats.md): the
 * reader (a linked Graph; shapes_given when the file is a complete snapshot)
 * and the writer (everything needed to rebuild an identical Graph).
 */
#ifndef PB_MODEL_JSON_GRAPH_H
#define PB_MODEL_JSON_GRAPH_H

#include <stddef.h>

#include "model/graph.h"

int pb_json_graph_read(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err);
int pb_json_graph_read_buffer(const char *text, size_t len, const char *name,
                              const pb_load_opts *opts, pb_graph **out, pb_error *err);
int pb_json_graph_save(const pb_graph *g, const char *path, pb_error *err);

#endif
