/*
 * tune/ort_profile.h — measured per-node times from an ONNX Runtime profile
 * (`--costs ort_profile.json`; docs/extract.md says how to write one).
 *
 * ONNX Runtime, with profiling enabled, writes a Chrome trace: a JSON array
 * of events; each node run is {"cat": "Node", "name": "NODE_kernel_time",
 * "dur": microseconds, "args": {"op_name": ...}}, each inference one
 * {"cat": "Session", "name": "model_run"}. A node's time is the sum of its
 * kernel events over the runs divided by the number of runs.
 */
#ifndef PB_TUNE_ORT_PROFILE_H
#define PB_TUNE_ORT_PROFILE_H

#include "model/graph.h"
#include "util/error.h"

/* 1 when the file at path looks like an ONNX Runtime profile (its first
 * non-blank byte opens a JSON array, or it is {"traceEvents": ...}); a tuning
 * log is JSON lines, one object each. */
int pb_ort_profile_sniff(const char *path);

/* times[g->n_nodes] in seconds (NAN for nodes the profile lacks: ORT removes
 * Identity copies and fuses some nodes); *n_found = nodes that got a time.
 * Events are matched by node name; a fused node named after its output
 * tensor (ORT's NCHWc and fusion passes: "TENSOR_nchwc") goes to that
 * tensor's producer. A file that is not a profile, without node events, or
 * most of whose node events name no node of g (another model's profile) is
 * an error naming the file. */
int pb_ort_profile_times(const pb_graph *g, const char *path, double *times, int *n_found,
                         pb_error *err);

#endif
