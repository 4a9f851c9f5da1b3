/*
 * load.h — opening a model file: the one place that knows the formats and
 * the order of the analysis.
 *
 *   read   (model/: onnx_load, dot_load, json_graph) → a linked Graph
 *   infer  shapes (shape/shape.h), unless the file states them or
 *          opts->skip_shapes
 *   cost   every node (shape/cost.h)
 *   stated costs of the file override the computed ones (DOT, JSON)
 *   totals over the nodes
 *
 * pb_graph_load picks the format by extension (.onnx, .dot/.gv, .json), then
 * by the first non-blank byte ('{' JSON, a DOT keyword or comment, else
 * ONNX). The per-format entry points and pb_graph_build (for graphs made
 * with pb_builder by transformations and tests) end in the same analysis.
 * All of them return a Graph ready for every solver, or an error naming the
 * file and the problem; the Graph is freed on failure.
 */
#ifndef PB_LOAD_H
#define PB_LOAD_H

#include <stddef.h>

#include "model/graph.h"

int pb_graph_load(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err);

int pb_onnx_load(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err);
int pb_onnx_load_buffer(const void *data, size_t len, const char *name, const pb_load_opts *opts,
                        pb_graph **out, pb_error *err);
int pb_dot_load(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err);
int pb_dot_load_buffer(const char *text, size_t len, const char *name, const pb_load_opts *opts,
                       pb_graph **out, pb_error *err);
int pb_json_graph_load(const char *path, const pb_load_opts *opts, pb_graph **out, pb_error *err);
int pb_json_graph_load_buffer(const char *text, size_t len, const char *name,
                              const pb_load_opts *opts, pb_graph **out, pb_error *err);

/* pb_builder_finish, then the analysis. Consumes the builder. */
int pb_graph_build(pb_builder *b, const pb_load_opts *opts, pb_graph **out, pb_error *err);

/* The analysis of a linked Graph (infer → cost → stated costs → totals).
 * On failure *gp is freed and set to NULL. */
int pb_graph_analyse(pb_graph **gp, const pb_load_opts *opts, pb_error *err);

#endif
