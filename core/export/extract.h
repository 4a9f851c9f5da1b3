/*
 * export/extract.h — a plan's parts as runnable ONNX models (docs/extract.md).
 *
 * A plan assigns nodes to groups (core groups, pipeline stages, backend
 * aggregates). pb_extract_split turns the groups into parts in execution
 * order, each with exactly the tensors it consumes from earlier parts or the
 * model's inputs and the tensors later parts or the model's outputs need.
 * pb_extract_write then writes one ONNX model per part (the source's node,
 * initializer and value-info messages copied byte for byte, see
 * extract_onnx.c) and DIR/manifest.json, into a temporary directory renamed
 * to DIR at the end.
 */
#ifndef PB_EXPORT_EXTRACT_H
#define PB_EXPORT_EXTRACT_H

#include <jansson.h>

#include "model/graph.h"
#include "plan.h"
#include "util/error.h"

typedef struct pb_extract_part {
	int group;       /* plan group this part runs */
	int *nodes;      /* node ids, ascending (topological) */
	int n_nodes;     /* includes the constant nodes copied in (see n_copied) */
	int n_copied;    /* unassigned constant nodes copied into this part */
	int *inputs;     /* tensor ids it receives (model inputs or earlier parts') */
	int *input_from; /* per input: the part producing it, -1 for a model input */
	int n_inputs;
	int *outputs; /* tensor ids later parts or the model's outputs need */
	int n_outputs;
} pb_extract_part;

typedef struct pb_extract_split_t {
	pb_extract_part *parts; /* in execution order */
	int n_parts;
} pb_extract_split_t;

/* Parts of plan on g, one per group that holds a computing node. Constant
 * nodes (pb_graph_constant_nodes: weight copies, Constant, shape math on
 * constants) and unassigned ones (group -1) are copied into every part that
 * consumes them; a plan whose
 * groups depend on each other in a circle, or with no group, is an error
 * naming src. */
int pb_extract_split(const pb_graph *g, const pb_plan *plan, const char *src,
                     pb_extract_split_t **out, pb_error *err);
void pb_extract_split_free(pb_extract_split_t *s);

/* Loads a plan JSON for g and checks that it is this model's plan: its
 * node_names (when present) must be g's node names. */
int pb_extract_load_plan(const pb_graph *g, const char *path, pb_plan **out, pb_error *err);

typedef struct pb_extract_opts {
	int force;          /* replace a non-empty DIR */
	int structure_only; /* missing external weights files are allowed */
} pb_extract_opts;

typedef struct pb_extract_report {
	int n_parts;
	int n_files;         /* .onnx files written */
	double cross_bytes;  /* bytes flowing between parts (one input) */
	const char *weights; /* "inline", "linked", "copied", "absent", "none" */
	json_t *manifest;    /* the manifest written (owned by the report) */
} pb_extract_report;

/* Writes DIR/part<k>.onnx and DIR/manifest.json for plan on g (g->path is
 * the source ONNX file). plan_src names the plan in messages. */
int pb_extract_write(const pb_graph *g, const pb_plan *plan, const char *plan_src, const char *dir,
                     const pb_extract_opts *o, pb_extract_report *rep, pb_error *err);
void pb_extract_report_free(pb_extract_report *rep);

#endif
