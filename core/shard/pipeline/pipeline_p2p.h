/*
 * shard/pipeline/pipeline_p2p.h — the time of one pipeline boundary transfer between
 * two device groups of dp x tp devices (the data x tensor x pipeline search).
 *
 * Megatron-LM's scatter/gather optimisation (Narayanan et al. 2021, SC21,
 * section 4.1): the tp ranks of a replica hold the same boundary tensor, so
 * each sends only 1/tp of it to its peer in the next stage over its own link
 * (every device sends bytes / (dp tp)), and the tp receivers re-materialise
 * the replica's whole tensor by an all-gather over NVLink. The transfer is
 * alpha + bytes / (dp tp) / beta on the link between the groups, plus the
 * all-gather of bytes / dp over the tp devices (pb_spec_coll_time on the intra-node
 * link when a replica's tp devices share a node); training sends activations
 * forward and their gradients backward: both parts twice. The interleaved
 * schedule makes V of these per micro-batch and device (section 2.2.2: its
 * communication grows by V), so the gather is paid per model chunk.
 */
#ifndef PB_SHARD_PIPELINE_P2P_H
#define PB_SHARD_PIPELINE_P2P_H

#include "shard/cluster.h"

/* One boundary's transfer time (s): `bytes` of the whole micro-batch cross
 * from the group starting at device first_a to the one at first_b, each of
 * dp x tp consecutive devices (tp fastest); 0 when bytes <= 0. */
double pb_pipeline_p2p_time(const pb_cluster *cl, int first_a, int first_b, int dp, int tp,
                            double bytes, int train);
/* The receive-side all-gather part of it alone (0 when tp = 1). */
double pb_pipeline_p2p_gather(const pb_cluster *cl, int dp, int tp, double bytes, int train);

/* A pipeline's step time without its gradient all-reduce: m micro-batches
 * on p stages, V model chunks per device (1: 1F1B), t the slowest group's
 * compute per micro-batch (all its chunks, forward and backward), P the
 * slowest boundary's transfer per micro-batch and chunk (pb_pipeline_p2p_time:
 * both directions in training), fwd the forward pass's share of t (1/3, or
 * 1/4 under full recomputation: pb_grad_overlap_backward_share).
 *
 * Not overlapped (Megatron-LM 2021: blocking sends and receives between the
 * passes), every slot pays its transfers:
 *     1F1B         K (t + P),        K = m + p - 1
 *     interleaved  K (t + V P),      K = m + (p - 1) / V
 * Overlapped (overlap = 1; asynchronous sends, as Megatron-LM's later
 * --overlap-p2p-communication): in the steady state a stage sends a
 * forward output while it runs the next backward pass and a gradient while
 * it runs the next forward pass, so per chunk and micro-batch only
 *     e = max(0, P/2 - b/V) + max(0, P/2 - f/V),   f = fwd t, b = t - f
 * is exposed (each direction's transfer beyond the pass it hides behind);
 * the fill and drain cannot hide theirs: the first micro-batch's forward
 * transfers and the last one's gradients cross the p - 1 boundaries with
 * nothing to overlap, (p - 1) P in all. So
 *     K (t + V e) + (p - 1) P
 * and never more than the non-overlapped step. *exposed (when given): the
 * transfer seconds in the step, the rest of K V P hidden. */
double pb_pipeline_p2p_step(int overlap, int m, int p, int V, double t, double P, double fwd,
                            double *exposed);

#endif
