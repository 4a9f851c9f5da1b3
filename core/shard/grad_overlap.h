/*
 * shard/grad_overlap.h — the data-parallel gradient all-reduce overlapped
 * with the backward pass in buckets (docs/megatron.md "Overlap").
 *
 * PyTorch DDP (Li et al. 2020, "PyTorch Distributed: Experiences on
 * Accelerating Data Parallel Training", VLDB 13(12), section 3.2.3) and
 * Megatron-LM's DistributedDataParallel group the gradients into buckets of
 * bucket_cap_mb (default 25 MB) and start a bucket's all-reduce as soon as
 * the backward pass has produced all of its gradients. Model: the backward
 * pass of length T produces the gradients evenly, so bucket i of n
 * (n = ceil(gradient bytes / bucket bytes)) is ready at i T / n; the
 * all-reduces (G in total, G / n each) run one after another on the
 * communication stream. The last finishes at max_i (i T / n + (n - i + 1) G / n),
 * a linear function of i, so at i = 1 or i = n:
 *   exposed = max(G / n, G - T (n - 1) / n)
 * (the last bucket's all-reduce when the backward pass hides the others,
 * else what the backward pass cannot hide); overlapped = G - exposed.
 * n = 1 (bucket of 0 bytes: overlap off, or the gradients fit one bucket):
 * exposed = G.
 */
#ifndef PB_SHARD_GRAD_OVERLAP_H
#define PB_SHARD_GRAD_OVERLAP_H

/* PyTorch DDP's bucket_cap_mb default (MiB: 25 x 2^20 bytes). */
#define PB_GRAD_BUCKET_MB 25.0

/* Buckets of `bytes` gradient bytes at bucket_bytes per bucket (0: one). */
long pb_grad_overlap_buckets(double bytes, double bucket_bytes);
/* Exposed seconds of G seconds of all-reduce in n buckets behind a backward
 * pass of T seconds (formula above). */
double pb_grad_overlap_exposed(double G, double T, long n);
/* The backward pass's share of a training step's compute: backward = 2 x
 * forward (Narayanan et al. 2021, section 5.1: 3 passes' FLOPs), and full
 * recomputation runs the forward again inside the backward pass (4 passes,
 * 3 of them in the backward). */
double pb_grad_overlap_backward_share(int recompute_full);

#endif
