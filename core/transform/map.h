/*
 * map.h — multi-backend mapping (seed 003): which backend runs each node,
 * aggregation of connected same-backend nodes, buffers between backends and
 * a pipelined-execution model over a stream of inputs.
 *
 * The `hetero` layout (layouts/hetero.lua, docs/transform.md):
 *   backends = { { name = "gpu", launch = 8e-6, flops = 1.2e13,
 *                  bandwidth = 6e11,
 *                  ops = { ["*"] = 2, Conv = 1, MatMul = { priority = 1,
 *                          speed = 0.9 } } }, ... },
 *   transfer = { { from = "cpu", to = "gpu", bandwidth = 1.2e10,
 *                  latency = 1e-5 }, ... }
 * An op entry is a priority (1 = best) or { priority =, speed = }; "*"
 * matches every op the backend does not name. speed scales the backend's
 * FLOP/s for that op. A missing transfer pair uses the reverse direction.
 */
#ifndef PB_TRANSFORM_MAP_H
#define PB_TRANSFORM_MAP_H

#include <stdio.h>

#include <jansson.h>

#include "model/graph.h"
#include "hw.h"
#include "plan.h"

#define PB_MAP_MAX_BACKENDS 32

typedef struct pb_backend_op {
	char *op;
	int priority;
	double speed;
	double time_scale; /* measured / modelled time (map_costs.c); 1 from the layout */
} pb_backend_op;

typedef struct pb_backend {
	char *name;
	double launch;    /* s per launch of the backend */
	double flops;     /* FLOP/s */
	double bandwidth; /* memory B/s */
	int n_ops;
	pb_backend_op *ops;
	int has_any; /* "*" entry present */
	pb_backend_op any;
} pb_backend;

typedef struct pb_hetero {
	char *path;
	int n;
	pb_backend *b;
	double *xfer_bw;  /* n x n, B/s (diagonal unused) */
	double *xfer_lat; /* n x n, s */
} pb_hetero;

int pb_hetero_parse(const pb_hw *hw, pb_hetero **out, pb_error *err);
void pb_hetero_free(pb_hetero *h);
/* Priority of op on backend b (0 = unsupported); speed factor in *speed. */
int pb_hetero_support(const pb_hetero *h, int b, const char *op, double *speed);

typedef struct pb_map_opts {
	int buffers;        /* slots per cross-backend buffer (>= 1) */
	int stream;         /* inputs in the modelled stream (>= 1) */
	int keep_constants; /* 1: map folded constants like any node */
	const int *force;   /* per node: backend index it must run on, -1 = choose
	                       (NULL = none; Lua backend rules, checked by the caller) */
	int transfer_aware; /* 1: weigh transfers against priority (map_assign.c), and
	                       keep the priority rule's plan as the baseline beside it */
	int objective;      /* PB_MAP_LATENCY (serial time per input) or
	                       PB_MAP_THROUGHPUT (pipelined period, map_throughput.c) */
	int enum_limit;     /* transfer-aware, both objectives: enumerate every assignment
	                       when there are at most this many (0 = PB_MAP_ENUM_LIMIT,
	                       < 0 = never) */
	int no_sim;         /* 1: skip the pipelined simulation (search evaluations) */
} pb_map_opts;

enum { PB_MAP_LATENCY = 0, PB_MAP_THROUGHPUT = 1 };
#define PB_MAP_ENUM_LIMIT 4096

/* The seed's priority rule, run as the baseline of a transfer-aware map. */
typedef struct pb_map_baseline {
	int valid;
	double serial_input, serial_time, pipelined_time;
	int launches_after, n_buffers;
	double run_seconds; /* wall time of the baseline mapping */
	double period;      /* its pipelined period (pb_map_period) */
} pb_map_baseline;

typedef struct pb_map_edge {
	int from, to; /* aggregates */
	double bytes;
	double time; /* transfer time, 0 between aggregates of one backend */
	int buffer;  /* 1 when the backends differ (a buffer is placed) */
} pb_map_edge;

typedef struct pb_map_event {
	int input;
	int task; /* aggregate index, or n_agg + edge index for transfers */
	double start, end;
} pb_map_event;

#define PB_MAP_SWEEP 4

typedef struct pb_map_result {
	int n_nodes, n_backends;
	int *prio;             /* n_nodes x n_backends priorities, 0 = unsupported */
	int *backend;          /* chosen backend per node, -1 for folded constants */
	unsigned char *folded; /* load-time constants (folded.h): no backend, no aggregate */
	int n_folded;
	double *node_time; /* on the chosen backend */
	int n_agg;
	int *agg; /* node -> aggregate (numbered by first node), -1 if folded */
	int *agg_backend;
	int *agg_first, *agg_last, *agg_size;
	double *agg_time; /* launch + compute */
	double *agg_compute, *agg_macs;
	int n_edges;
	pb_map_edge *edges;
	int launches_before, launches_after;
	int buffers, stream;
	double serial_input;                      /* one input, everything in sequence */
	double serial_time;                       /* stream of `stream` inputs run serially */
	double pipelined_time;                    /* makespan of the stream with `buffers` slots */
	double sweep[PB_MAP_SWEEP];               /* makespan with 1..PB_MAP_SWEEP slots */
	double backend_busy[PB_MAP_MAX_BACKENDS]; /* per input */
	int bottleneck;                           /* most loaded backend (or link: -1) */
	int n_events;
	pb_map_event *events; /* the pipelined schedule, every task */
	int transfer_aware;   /* the backends were chosen by map_assign.c */
	int moved;            /* nodes whose backend differs from the priority rule's */
	int kept_priority;    /* transfer-aware modelled no faster: priority plan kept */
	pb_map_baseline base; /* the priority rule's figures (transfer_aware only) */
	double run_seconds;   /* wall time of pb_map_run (with the baseline when transfer-aware) */
	/* Throughput model (map_throughput.c): the steady-state period per input
	 * with enough buffer slots = the load of the busiest resource, a backend
	 * (its aggregates' launches and compute) or a directed link (its
	 * transfers); period_resource names it (backend index, or
	 * n_backends + from * n_backends + to for a link). */
	double period;
	int period_resource;
	double period_lp; /* pb_map_period_lp of the problem (0 = not computed) */
	int objective;
	int enumerated;     /* throughput: every assignment evaluated (optimal) */
	double assignments; /* how many assignments exist (allowed backends per node) */
	int candidates;     /* throughput: candidate assignments evaluated */
	int single_best;    /* best single-backend mapping for the objective, -1 none */
	double single_value[PB_MAP_MAX_BACKENDS]; /* objective per single backend, INFINITY
	                                             when it cannot run every node */
} pb_map_result;

/* A lower bound on the period of every assignment (map_bound.c): the LP
 * relaxation min T, sum_b x_vb = 1 per mapped node over its allowed
 * backends, sum_v t(v, b) x_vb <= T per backend (GLPK). */
int pb_map_period_lp(const pb_graph *g, const pb_hetero *h, const pb_map_result *r,
                     const int *force, double *lb, pb_error *err);
/* The period of a mapped result (fills r->period and r->period_resource; map.c). */
void pb_map_period(pb_map_result *r, const pb_hetero *h);
/* The objective's figure of r: serial time per input, or the period. */
double pb_map_objective_value(const pb_map_result *r, int objective);
/* Throughput choice (map_throughput.c): rewrites r->backend and
 * r->node_time with the assignment of least period found (every assignment
 * when at most o->enum_limit exist: r->enumerated = 1), never leaving a
 * supported or forced backend. */
int pb_map_assign_throughput(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o,
                             pb_map_result *r, pb_error *err);
/* Every assignment mapped and the least figure of o->objective kept
 * (r->enumerated = 1) when there are at most o->enum_limit; else r is left
 * as it is (r->enumerated = 0). */
int pb_map_assign_exact(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o,
                        pb_map_result *r, pb_error *err);
/* The objective's figure when every node runs alone on backend b (INFINITY
 * when b cannot run some node, or a Lua rule forces one elsewhere). */
int pb_map_single_backend(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, int b,
                          double *value, pb_error *err);

/* Priorities from measurements (map_costs.c). times[v] = measured seconds of
 * node v on backend `backend` (NAN = none). For every operator type with a
 * measured node that backend supports: its entry's time_scale becomes
 * measured / modelled (summed over the type's measured nodes), and the
 * type's priorities on every supporting backend are re-ranked by the
 * type's modelled time there (1 = fastest; equal times share a rank).
 * Other types keep the layout's table. The returned report (JSON array,
 * one object per operator type of g: op, source "measured" or "layout",
 * nodes measured, scale, priority and time per backend) is the caller's. */
int pb_map_costs_apply(const pb_graph *g, pb_hetero *h, int backend, const double *times,
                       const char *source, json_t **report, pb_error *err);
/* The report of pb_map_costs_apply as a table, one line per operator type. */
void pb_map_costs_print(FILE *out, const pb_hetero *h, const json_t *report, const char *backend);

/* The map command's mapping (map_run.c): the objective's assignment, the priority
 * rule's baseline, every single-backend mapping and the period's LP bound. */
int pb_map_run(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, pb_map_result **out,
               pb_error *err);
/* The mapping of one assignment (map.c), below every search. pb_map_begin checks
 * o, allocates *out, folds constants and marks every node with the priority rule's
 * backend (o->force where that backend runs it); a search may then rewrite
 * r->backend and r->node_time. pb_map_finish aggregates that assignment, prices the
 * transfers, computes the period and (unless o->no_sim) simulates; t0 (pb_map_now
 * at the start) gives r->run_seconds; on error r is still the caller's.
 * pb_map_fixed: both, no search (o->force is the assignment where allowed). */
int pb_map_begin(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, pb_map_result **out,
                 pb_error *err);
int pb_map_finish(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, pb_map_result *r,
                  double t0, pb_error *err);
int pb_map_fixed(const pb_graph *g, const pb_hetero *h, const pb_map_opts *o, pb_map_result **out,
                 pb_error *err);
/* CLOCK_MONOTONIC in seconds. */
double pb_map_now(void);
/* Time of node v on backend b (its priority's speed factor applied; hetero.c). */
double pb_map_node_time(const pb_graph *g, const pb_hetero *h, int b, int v);
/* Transfer-aware choice (map_assign.c): rewrites r->backend and
 * r->node_time from the priority choice by descending the modelled serial
 * time (node and region moves), never leaving a supported or forced
 * backend; counts the changed nodes in r->moved. */
int pb_map_assign_transfer(const pb_graph *g, const pb_hetero *h, const int *force,
                           pb_map_result *r, pb_error *err);
void pb_map_result_free(pb_map_result *r);

/* Pipelined list schedule of the aggregate graph (pipeline.c): fills
 * *makespan and, when events != NULL, every task's start/end. */
int pb_map_simulate(const pb_map_result *r, const pb_hetero *h, int buffers, int stream,
                    double *makespan, pb_map_event **events, int *n_events, pb_error *err);

/* Hand edit of a "map" plan (map_edit.c): node (with region, its whole
 * aggregate) moves to backend b, every other node keeps the plan's backend,
 * and the mapping is redone (aggregates, buffers, pipelined model). Refused
 * (PB_EUSAGE with the reason) for another plan kind or layout, a load-time
 * constant, an unsupported op, no change, or a moved node that a Lua
 * `backend` rule the plan obeys puts on another backend (rule_backend[v]:
 * that backend, -1 none, rule_name[v] the rule; both NULL: no rules). what:
 * the nodes whose backend changed and the aggregates, from the two
 * mappings. */
int pb_map_edit(const pb_graph *g, const pb_hetero *h, const pb_plan *old, int node, int b,
                int region, const int *rule_backend, const char *const *rule_name,
                pb_map_result **out, char *what, size_t what_len, pb_error *err);

struct pb_label;
/* The label of the serial time per input (util/proof_label.h): best found
 * (priority rule, or its transfer-aware local descent) with the bound
 * sum over the mapped nodes of their fastest supported backend's time + the
 * least launch: every aggregate costs its launch plus its nodes' times, and
 * transfers cost >= 0. */
void pb_map_label(const pb_graph *g, const pb_hetero *h, const pb_map_result *r,
                  struct pb_label *L);
/* The label of the period (throughput objective): optimal when every
 * assignment was evaluated, else best found with the bound max(r->period_lp;
 * sum over mapped nodes of their least time + launch, spread over the
 * backends; the largest single node's least time + launch). */
void pb_map_period_label(const pb_graph *g, const pb_hetero *h, const pb_map_result *r,
                         struct pb_label *L);
json_t *pb_map_report_json(const pb_graph *g, const pb_hetero *h, const pb_map_result *r);
/* kind "map": group per node = aggregate (-1 for folded constants); groups
 * labelled by backend name, the first aggregate of every used backend
 * first; detail.schedule holds the pipelined compute timeline of the first
 * PB_MAP_PLAN_INPUTS inputs, one row per used backend (plot timeline). */
#define PB_MAP_PLAN_INPUTS 4
pb_plan *pb_map_plan(const pb_graph *g, const pb_hetero *h, const pb_map_result *r);
/* Human summary and a text timeline of the first `timeline` inputs. */
void pb_map_print(FILE *out, const pb_graph *g, const pb_hetero *h, const pb_map_result *r,
                  int timeline);

#endif
