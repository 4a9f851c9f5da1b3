/*
 * shard/strategy/strategy_problem.h — the strategy-selection problem of one
 * grouping scheme: its build and the evaluation of a chosen plan (its types
 * are strategy_types.h; the MILP below is solved by strategy_milp.h, bounded
 * by strategy_bound.h).
 *
 * Build: every operator that touches an activation (a tensor that depends on
 * a model input) gets its strategy menu (spec.h) combined over the mesh axes;
 * parameters and constants are not operators of the problem, their specs are
 * whatever the consuming strategy needs (each device loads its shard).
 * Shrinking: an operator that can follow its producer (element-wise,
 * reshape, transpose, softmax, normalisation, pooling, ...) shares its
 * producer's variables: for each strategy of the producer it takes its own
 * cheapest strategy given the producer's output spec (the conversion inside
 * the group is part of the group's cost). Costs per group strategy: compute
 * (FLOPs / sharing devices / rate, x3 in training), gradient all-reduces of
 * parameters replicated along an axis (training), the all-reduce of a partial
 * model output, and the conversions inside the group. Edge costs: the
 * resharding between a producer's output spec and the consumer's input spec
 * (x2 in training: the adjoint collective moves the same bytes backwards).
 *
 * MILP: x[g][s] binary, one-hot per group; for every edge and every pair
 * (a, b) of distinct producer/consumer specs a continuous y >= 0 whose row
 * and column sums equal the x's that pick a and b (with binary x this forces
 * y = product, so the objective is exact); memory per device <= limit.
 * Objective in microseconds.
 */
#ifndef PB_SHARD_PROBLEM_H
#define PB_SHARD_PROBLEM_H

#include "shard/strategy/strategy_types.h"

void pb_strategy_problem_opts_default(pb_shard_opts *o);
/* Training bytes per parameter byte held by a device: weights, gradients and
 * the optimizer state of a parameter of dtype size `elem` whose shard has r
 * replicas (ZeRO divides by r from stage 1, 2, 3). */
double pb_strategy_problem_train_param_factor(const pb_shard_opts *o, int elem, double r);
/* FLOPs of one operator: its cost.flops, or an estimate from shapes. */
double pb_strategy_problem_node_flops(const pb_graph *g, const pb_node *n);
/* The gradient synchronisation of one parameter shard of b bytes
 * replicated over d devices on link l, as the optimizer options o run it:
 * an all-reduce; under the distributed optimizer (ZeRO stages 1 and 2,
 * Megatron-LM's --use-distributed-optimizer) a reduce-scatter of the
 * gradients and, after each replica updates its 1/d, an all-gather of the
 * updated weights: the two phases of a ring all-reduce (Patarasuk and Yuan
 * 2009), (d-1)/d b / bandwidth each, and the all-reduce's one start-up
 * latency, half to each (Megatron-LM issues them per gradient bucket, not
 * per tensor, so a latency per tensor is already more than it pays): the
 * same time as the all-reduce, so --dist-opt auto solving with it costs no
 * time. Its seconds;
 * kinds[0..*n) the collectives (PB_COLL_*) and times[] theirs when given. */
double pb_strategy_problem_grad_sync(const pb_shard_opts *o, double b, int d, const pb_link *l,
                                     int *kinds, double *times, int *n);
/* 1 when tensor t is a trained parameter: a weight from the file (float,
 * read by an active operator) with at least two elements. A one-element
 * initializer is a constant of the graph (the attention's 1/sqrt(d) scale
 * of `gen gpt`, an epsilon): held with the weights but without a gradient,
 * its all-reduce nor optimizer state, as frameworks hold it (a Python float
 * or a buffer in Megatron-LM and PyTorch, not an nn.Parameter). */
int pb_strategy_problem_trainable(const pb_shard_problem *p, int t);
/* How many times a conversion of an input of node cons runs: 1 inference;
 * training 2 (the forward pass and the backward pass's conversion of the
 * gradient), 3 when cons is recomputed: its forward pass runs again from the
 * stored tensors, so the conversions on its inputs (a tensor-parallel
 * layer's all-reduces or all-gathers) run again too, as Megatron-LM's
 * recomputed layers repeat their forward all-reduces (Korthikanti et al.
 * 2022, section 5: the recomputed forward pass of a full recomputation). */
double pb_strategy_problem_comm_mult(const pb_shard_problem *p, int cons);
/* One device's time (s) for the whole operator n of fl FLOPs on cluster c
 * (the roofline: FLOPs at the rate, or bytes at the memory bandwidth); a
 * strategy's compute time is this / its share x padding x the passes. */
double pb_strategy_problem_node_time(const pb_cluster *c, const pb_node *n, double fl);
/* active[i] = 1 for operators that touch an activation (the problem's operators). */
void pb_strategy_problem_dynamic_nodes(const pb_graph *g, unsigned char *active);

int pb_strategy_problem_build(const pb_graph *g, const pb_cluster *c, const pb_mesh *m,
                              const pb_shard_opts *o, pb_shard_problem **out, pb_error *err);
void pb_strategy_problem_free(pb_shard_problem *p);

void pb_strategy_problem_result_free(pb_shard_result *r);

/* Least memory per device of any plan, as pb_strategy_problem_evaluate counts it: exact
 * in training (the memory is a sum over groups; tied groups take one
 * strategy), a lower bound in inference. */
double pb_strategy_problem_min_memory(const pb_shard_problem *p);
/* 1 when b is a with costs no lower: the same groups, strategies, picks,
 * ties and edges (spec maps), and every group strategy and every edge
 * conversion costs at least as much in b as in a (a recomputation choice
 * only adds compute, and the conversions of the recomputed forward pass).
 * Then no plan of b is cheaper than a's optimum without the memory limit. */
int pb_strategy_problem_costlier(const pb_shard_problem *a, const pb_shard_problem *b);

/* Cost, memory and feasibility of a choice per group (fills r except choice). */
void pb_strategy_problem_evaluate(const pb_shard_problem *p, const int *choice, pb_shard_result *r);
/* Strategy of node nid under a group choice, or -1 for inactive nodes. */
int pb_strategy_problem_node_strategy(const pb_shard_problem *p, const int *choice, int nid);
/* Bytes per device sequence parallelism saves in the plan (choice per
 * group): *act per micro-batch in flight (with mem_act), *once with the
 * weights (mem_param: full recomputation's working layer); 0 unless the
 * problem was built with it (opts.seq_parallel). */
void pb_strategy_problem_seq_parallel_saved(const pb_shard_problem *p, const int *choice,
                                            double *act, double *once);

#endif
