/*
 * plan.h — a Plan: the plain data that solvers, humans and scripts change.
 *
 * Every problem kind (partition, shard, pipeline, map, fuse) expresses its
 * result in the same generic shape so that views (TUI, SVG, tables) need not
 * know the kind:
 *  - group[node]: the group each node belongs to (core group, stage, backend
 *    aggregate, fusion group), -1 for none;
 *  - groups[]: one record per group with a label and generic metrics;
 *  - metrics: named numbers (max_time, reward, optimum, gap, step_time, ...);
 *  - detail: kind-specific JSON (arranged_core, per-op specs, schedule, ...),
 *    owned by the plan.
 * Plans round-trip through JSON (docs/formats.md).
 */
#ifndef PB_PLAN_H
#define PB_PLAN_H

#include <jansson.h>

#include "util/error.h"

struct pb_graph;

typedef struct pb_plan_group {
	char *label;    /* "cores 0-3", "stage 1", "gpu#2" */
	int first_unit; /* first core/device/backend index, -1 if n/a */
	int n_units;    /* number of cores/devices in the group */
	double time;    /* modelled time of the group (s) */
	double compute; /* compute part of time (s) */
	double routing; /* communication part (s) */
	double storage; /* bytes per core/device */
	double macs;
	int first_node, last_node; /* node range (contiguous plans), -1 if n/a */
	int bottleneck;            /* 1 for the slowest group */
	int over_memory;           /* 1 when storage exceeds the limit */
} pb_plan_group;

typedef struct pb_plan {
	char *kind;   /* "partition", "shard", "pipeline", "map", "fuse" */
	char *method; /* "exact", "rl", "milp", "manual", ... */
	int n_nodes;
	int *group; /* n_nodes entries */
	int n_groups;
	pb_plan_group *groups;
	int n_metrics;
	char **metric_names;
	double *metric_values;
	json_t *detail; /* JSON object, never NULL */
	/* dim 0 of the model inputs the plan was made at (its shapes and costs:
	 * `--batch B`, a pipeline's micro-batch B/m); 0 = not recorded */
	long model_batch;
} pb_plan;

pb_plan *pb_plan_new(const char *kind, const char *method, int n_nodes);
pb_plan *pb_plan_copy(const pb_plan *p);
void pb_plan_free(pb_plan *p);
void pb_plan_set_method(pb_plan *p, const char *method);
/* Appends a group (label copied); returns its index. */
int pb_plan_add_group(pb_plan *p, const pb_plan_group *g);
void pb_plan_clear_groups(pb_plan *p);
/* From the node assignment (p->group): each group's MACs, and its node range
 * where no other group's node lies between its first and last (nodes of no
 * group may); first_node = last_node = -1 otherwise and for an empty group.
 * For plans whose builders know only the groups' times (pipeline stages and
 * chunks). */
void pb_plan_fill_node_ranges(pb_plan *p, const struct pb_graph *g);
void pb_plan_set_metric(pb_plan *p, const char *name, double v);
struct pb_label;
/* The label's metrics (util/proof_label.h): "optimal" (0/1), and "bound"
 * and "gap" when a bound is known (what the workbench and the SVG show). */
void pb_plan_set_label(pb_plan *p, const struct pb_label *L);
/* Returns dflt when absent. */
double pb_plan_metric(const pb_plan *p, const char *name, double dflt);
int pb_plan_has_metric(const pb_plan *p, const char *name);

/* Moves the boundary between groups k and k+1 by delta nodes in node order
 * (the topological order): delta > 0 moves the first delta nodes of group
 * k+1 into k, delta < 0 the last -delta nodes of k into k+1. Every node
 * between them in order moves too, so an edge that went forward still does
 * (pipeline stages). group_out gets the new group per node; refused
 * (PB_EUSAGE, the reason) when a group does not exist or would be empty. */
int pb_plan_move_boundary(const pb_plan *p, int k, int delta, int *group_out, pb_error *err);

/* Dim 0 of the graph's first input, 0 when it has none (or it is not a
 * positive number): what a plan's model_batch is compared with. */
long pb_plan_graph_batch(const struct pb_graph *g);

/* JSON form (docs/formats.md). node_names may be NULL; when given, the
 * assignment is also written by node name, and loading checks the names. */
json_t *pb_plan_to_json(const pb_plan *p, const char *const *node_names);
int pb_plan_from_json(const json_t *j, const char *src, int n_nodes, pb_plan **out, pb_error *err);
/* Atomic save: write to PATH.tmp, fsync, rename. */
int pb_plan_save(const pb_plan *p, const char *const *node_names, const char *path, pb_error *err);
int pb_plan_load(const char *path, int n_nodes, pb_plan **out, pb_error *err);

#endif
