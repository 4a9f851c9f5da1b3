/*
 * fuse.h — horizontal fusion of parallel branch groups (node-fusion method,
 * seed 004): rules for non-fusable nodes, the compute-cost model, the fusion
 * loop and its report.
 *
 * Flow: branch groups (branch.h) -> remove non-fusable nodes from every
 * sub-branch -> per group, repeatedly take the first unfused node of every
 * sub-branch, form combinations (one node per sub-branch, >= 2 nodes),
 * evaluate them with the cost model and fuse those that pay, verifying with
 * igraph that the contracted graph is still acyclic after every fusion ->
 * a NEW pb_graph whose fused nodes list their members.
 */
#ifndef PB_TRANSFORM_FUSE_H
#define PB_TRANSFORM_FUSE_H

#include <jansson.h>

#include "model/graph.h"
#include "hw.h"
#include "plan.h"
#include "session.h"
#include "transform/branch.h"

/* ---- which nodes may be fused ---- */

#define PB_FUSE_MAX_RULES 128

/* A rule callback (the Lua rule library plugs in here): returns 1 (fusable),
 * 0 (not fusable) or -1 (no opinion) for node `node` of g. */
typedef int (*pb_fuse_rule_fn)(void *ud, const pb_graph *g, int node);

typedef struct pb_fuse_rule {
	char key[96]; /* operator type ("MatMul") or node name */
	int by_name;  /* 1: key is a node name */
	int fusable;
} pb_fuse_rule;

typedef struct pb_fuse_rules {
	int n;
	pb_fuse_rule r[PB_FUSE_MAX_RULES];
	pb_fuse_rule_fn fn;
	void *fn_ud;
} pb_fuse_rules;

/* Defaults of the method: MatMul, Gemm and Conv are not fusable. */
void pb_fuse_rules_default(pb_fuse_rules *r);
/* Adds or replaces a rule for an operator type / a node name. */
int pb_fuse_rules_set_op(pb_fuse_rules *r, const char *op, int fusable, pb_error *err);
int pb_fuse_rules_set_node(pb_fuse_rules *r, const char *name, int fusable, pb_error *err);
void pb_fuse_rules_callback(pb_fuse_rules *r, pb_fuse_rule_fn fn, void *ud);
/* Precedence: node-name rule, then callback, then operator rule, then 1. */
int pb_fuse_rules_fusable(const pb_fuse_rules *r, const pb_graph *g, int node);
/* The session's rules, which the `fuse` command starts from: created with
 * the defaults on first use and freed with the session (NULL when out of
 * memory). */
pb_fuse_rules *pb_fuse_rules_of(pb_session *s);

/* ---- compute-cost model (docs/transform.md) ----
 * A kernel of e parallel elements runs in ceil(e / lanes) waves; a wave takes
 * the per-element work of its slowest member: (flops / e) / lane_flops.
 *   t(node)  = launch + max(waves * flops/e / lane_flops, bytes / bandwidth)
 *   t(fused) = launch + max(ceil(sum e / lanes) * max_i(flops_i/e_i) / lane_flops,
 *                          sum bytes / bandwidth)
 * Fusing k nodes saves (k-1) launches and fills idle lanes (occupancy), but
 * pays for imbalance between members. A combination is fused when
 * sum t(node) - t(fused) > min_gain. */
typedef struct pb_fuse_model {
	double launch;     /* s per kernel launch */
	double lanes;      /* elements the device processes at once */
	double lane_flops; /* FLOP/s of one lane */
	double bandwidth;  /* device memory B/s */
	double min_gain;   /* s; a fusion must save more than this */
	int max_members;   /* at most this many nodes per fused kernel */
} pb_fuse_model;

void pb_fuse_model_default(pb_fuse_model *m);
/* Reads the optional `fusion = { launch=, lanes=, lane_flops=, bandwidth=,
 * min_gain=, max_members= }` table of any layout; absent fields keep m's. */
int pb_fuse_model_from_hw(const pb_hw *hw, pb_fuse_model *m, pb_error *err);
double pb_fuse_node_time(const pb_fuse_model *m, const pb_graph *g, int node);
double pb_fuse_set_time(const pb_fuse_model *m, const pb_graph *g, const int *nodes, int n);
/* Fraction of lanes busy when the set runs as one kernel (0..1]. */
double pb_fuse_set_occupancy(const pb_fuse_model *m, const pb_graph *g, const int *nodes, int n);

/* ---- the fusion ---- */
typedef struct pb_fuse_opts {
	const pb_fuse_rules *rules; /* NULL = defaults */
	pb_fuse_model model;
	int verify_dag;     /* igraph acyclicity check of the fused graph (1) */
	int keep_constants; /* 0: folded constants (folded.h) are no kernels (default) */
} pb_fuse_opts;

void pb_fuse_opts_default(pb_fuse_opts *o);

typedef struct pb_fuse_result {
	pb_graph *fused;   /* the new graph (owned; take it by setting to NULL) */
	int *class_of;     /* original node -> node id in fused */
	int *fusion_of;    /* original node -> fusion index or -1 */
	int n_fusions;     /* fused nodes (>= 2 members) */
	int *fusion_group; /* fusion -> branch group index */
	int *fusion_size;  /* fusion -> member count */
	pb_branch_set *groups;
	unsigned char *fusable; /* per original node */
	unsigned char *folded;  /* per original node: load-time constant, no kernel */
	int n_folded;
	int nonfusable_removed; /* nodes dropped from sub-branches by the rules */
	int candidates;         /* fusable nodes in groups with >= 2 fusable sub-branches */
	int nodes_fused;        /* original nodes inside fused nodes */
	int fused_per_kind[PB_BRANCH_NKINDS];
	int launches_before, launches_after; /* kernels: folded constants excluded */
	double time_before, time_after;      /* modelled serial kernel time (s) */
	int dag_checks;                      /* igraph_is_dag calls made (1 if any fusion) */
	int rejected_cycle; /* combinations refused because they would close a cycle */
} pb_fuse_result;

int pb_fuse_run(const pb_graph *g, const pb_fuse_opts *o, pb_fuse_result **out, pb_error *err);
void pb_fuse_result_free(pb_fuse_result *r);

/* The report: groups per kind, nodes fused, launches and modelled time
 * before/after, the XLA-style baseline and the groups themselves. */
json_t *pb_fuse_report_json(const pb_graph *g, const pb_fuse_result *r, const pb_fuse_opts *o);
struct pb_label;
/* The label of the modelled time after fusion (util/proof_label.h): best
 * found (greedy fusion inside the branch groups) with the bound: every node
 * that no group can fuse at its own kernel time, the fusable ones of the
 * groups in the fewest kernels max_members allows, each costing its launch,
 * and together at least max(their work over all lanes, their bytes over the
 * bandwidth) (a kernel's max of the two is at least each, and its waves at
 * least its elements over the lanes). */
void pb_fuse_label(const pb_graph *g, const pb_fuse_result *r, const pb_fuse_opts *o,
                   struct pb_label *L);
/* A node's parts of the fusion model: work / (lanes x lane_flops) and bytes /
 * bandwidth (a kernel holding it costs at least their sum over its nodes). */
void pb_fuse_node_parts(const pb_fuse_model *m, const pb_graph *g, int v, double *compute,
                        double *memory);
/* A plan on the ORIGINAL graph: group per node = fusion (-1 unfused). */
pb_plan *pb_fuse_plan(const pb_graph *g, const pb_fuse_result *r, const pb_fuse_opts *o);
/* Hand edits of a "fuse" plan (fuse_edit.c): with < 0 takes node out of its
 * fusion group, else puts it into with's group (a new group when with is
 * unfused). Refused (PB_EUSAGE, the reason in err) for a load-time
 * constant, a node the rules do not let fuse, a path between the node and a
 * member, or a cycle between the contracted groups. */
typedef struct pb_fuse_edit_result {
	pb_plan *plan;                  /* the edited plan (method "manual"); the caller owns it */
	double time_before, time_after; /* modelled serial kernel time, whole plan */
	int launches_before, launches_after;
	char what[512]; /* from the two plans: the node's group before -> after */
} pb_fuse_edit_result;
int pb_fuse_edit(const pb_graph *g, const pb_plan *old, const pb_fuse_rules *rules,
                 const pb_fuse_model *m, int node, int with, pb_fuse_edit_result *res,
                 pb_error *err);

/* The branch groups as a plan (branch_plan.c): group per node = branch
 * group (-1 outside), labelled by kind; detail holds the kinds, the kind of
 * every group, counts per kind and which nodes were fused. */
pb_plan *pb_branch_plan(const pb_graph *g, const pb_fuse_result *r, const pb_fuse_opts *o);

/* ---- the conservative XLA-style baseline ----
 * Only producers whose single consumer is the same node are fused (the
 * siblings feeding one node), never across a fork. `candidates` counts the
 * fusable nodes in such sets of >= 2, `fused` those the same cost model
 * accepts. */
typedef struct pb_fuse_baseline {
	int sets;
	int candidates;
	int fused;
	int launches_after;
	double time_after;
} pb_fuse_baseline;

int pb_fuse_xla_baseline(const pb_graph *g, const pb_fuse_opts *o, pb_fuse_baseline *out,
                         pb_error *err);

#endif
