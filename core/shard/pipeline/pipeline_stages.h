/*
 * shard/pipeline/pipeline_stages.h — pipeline stages: key-operator interval split (MILP),
 * the exact DP reference for chains, micro-batch choice and bubble, and the
 * GPipe / 1F1B schedules.
 *
 * Stage split (the method): key operators (MatMul/Gemm/Conv/ConvTranspose/
 * Einsum, or every operator when there are none) have costs c; total C is cut
 * into p equal intervals; a key operator v with key-ancestor cost A and
 * key-descendant cost D may go to stages [interval(A + c_v), interval(C - D -
 * c_v)] (the interval of its earliest end and of its latest start), widened
 * by `slack` stages on each side; other operators get the union of the ranges
 * of the key operators next to them. A MILP then picks one stage per
 * operator inside its range with no activation edge going backwards:
 * first minimising the slowest stage (binary z[v][k], T >= stage cost), then,
 * with T fixed, the bytes crossing stage boundaries (a tensor that skips a
 * stage is forwarded through it and counts once per boundary).
 */
#ifndef PB_SHARD_PIPELINE_H
#define PB_SHARD_PIPELINE_H

#include <jansson.h>
#include <stdio.h>

#include "model/graph.h"

typedef struct pb_pipe_split {
	int p;
	int *stage;         /* per node; -1 for nodes outside the problem */
	double *stage_cost; /* per stage: sum of operator costs */
	double max_cost;    /* slowest stage */
	double cross_bytes; /* bytes x boundaries crossed */
	int n_key;
	long cols, rows; /* MILP size */
	int optimal;
} pb_pipe_split;

/* cost[v] >= 0 per node (< 0 = not part of the problem, e.g. constants);
 * bytes of activation edges come from the graph. */
int pb_pipeline_stages_split_milp(const pb_graph *g, const double *cost, int p, int slack,
                                  double time_limit, pb_pipe_split *out, pb_error *err);
/* Exact DP over the topological order of the nodes with cost >= 0:
 * contiguous segments minimising the slowest stage, then the crossing bytes. */
int pb_pipeline_stages_split_dp(const pb_graph *g, const double *cost, int p, pb_pipe_split *out,
                                pb_error *err);
/* A given split (a hand edit): stage_of[v] for every node with cost >= 0;
 * refused when a node has no stage or an activation edge goes backwards. */
int pb_pipeline_stages_split_given(const pb_graph *g, const double *cost, int p,
                                   const int *stage_of, pb_pipe_split *out, pb_error *err);
void pb_pipeline_stages_split_free(pb_pipe_split *s);
/* Both with rules (partition/chain/chain_rules.h, from Lua `cut` and `stage`
 * rules; NULL = none; made for g's nodes): `cut = "forbid"` after node v keeps
 * v's successors in its stage, `cut = "force"` puts them in later stages (in
 * the DP: the next node of the chain), a pin puts the node in that stage. The
 * MILP then lets every node take any stage (the key-operator ranges would
 * make pins infeasible). Rules no split obeys: an error (PB_EINPUT). */
struct pb_part_rules;
int pb_pipeline_stages_split_dp_rules(const pb_graph *g, const double *cost, int p,
                                      const struct pb_part_rules *rules, pb_pipe_split *out,
                                      pb_error *err);
int pb_pipeline_stages_split_milp_rules(const pb_graph *g, const double *cost, int p, int slack,
                                        double time_limit, const struct pb_part_rules *rules,
                                        pb_pipe_split *out, pb_error *err);
/* The first Lua rule a split breaks (stage per node, cost >= 0 = part of
 * the problem) that the split `before` obeys (NULL: any broken rule), as the
 * MILP reads them: `cut = "forbid"` after u with a consumer v in another
 * stage, `cut = "force"` after u with a consumer in the same stage, a pin to
 * another stage. Returns 0 when none (or no rules), else 1 with msg =
 * "rule 'NAME' (cut=forbid): ...", naming the nodes and their stages. */
int pb_pipeline_stages_split_rule_broken(const pb_graph *g, const double *cost, const int *stage,
                                         const int *before, const struct pb_part_rules *rules,
                                         char *msg, size_t len);
/* 1 when every node with cost >= 0 has at most one such predecessor and one
 * such successor (a chain). */
int pb_pipeline_stages_is_chain(const pb_graph *g, const double *cost);

/* Smallest m dividing B with (p-1)/(m+p-1) <= max_bubble (B if none). */
int pb_pipeline_stages_microbatches(long batch, int p, double max_bubble);

/* 1 when a pipeline plan (step time, fits memory) beats an operator-level
 * plan: a plan that fits always beats one over memory; otherwise the faster
 * one wins, the pipeline on a tie. op_time = INFINITY: not solved. */
int pb_pipeline_stages_prefer(double pipe_time, int pipe_fits, double op_time, int op_fits);

/* Timeline of a schedule: per stage the (micro-batch, F/B, start, end)
 * slots, stage time tf forward and tb backward (tb = 0 for inference). */
json_t *pb_pipeline_stages_schedule(const char *kind, int p, int m, double tf, double tb);

/* Text timeline of one schedule from pb_pipeline_stages_schedule: one row per stage,
 * three characters per `unit` seconds (the forward slot), "F<mb>" /
 * "B<mb>" where a pass starts, " . " where the stage idles; rows are cut
 * after max_units units ("..."). */
void pb_pipeline_stages_schedule_text(FILE *f, const json_t *sched, double unit, int max_units);

#endif
