/*
 * shard/act_saved.h — which activations a training step stores for the
 * backward pass, and sequence parallelism (issue 38 item 3).
 *
 * Stored activations follow Korthikanti et al. 2022, "Reducing Activation
 * Recomputation in Large Transformer Models" (MLSys 2023, arXiv:2205.05198),
 * section 4.1: a tensor is kept when the backward pass needs it — the
 * activation input of a product with a trained weight (x of x W, for dW),
 * both inputs of a product of two activations (Q and K of Q K^T, the
 * softmax output and V of the attention over values), the input of a layer
 * norm and of a non-linearity such as GeLU, the output of a softmax; the
 * graph's outputs (the loss's input). Additions, reshapes, transposes and
 * products with a constant keep nothing. Operators not known here keep all
 * their activation inputs. On a pre-LayerNorm decoder layer without dropout
 * (`gen gpt`) that is s b h (32 + 2 a s / h) bytes in fp16: the paper's
 * s b h (34 + 5 a s / h) less the dropout masks (2 s b h + a s^2 b) and the
 * softmax dropout's output (2 a s^2 b, which here is the softmax's).
 *
 * Sequence parallelism (the paper's section 4.2.2; Megatron-LM
 * --sequence-parallel): the operators between the tensor-parallel products
 * (layer norms, residual and bias additions, dropout) run on 1/t of the
 * sequence, so their tensors, which tensor parallelism leaves replicated
 * over the t devices, are held split: a stored output of such an operator
 * (not a product with a weight, not a softmax) that a strategy replicates
 * along mesh axes is held divided by those axes' sizes. The all-reduce of
 * the row-parallel product becomes a reduce-scatter and the copy before
 * the column-parallel one an all-gather: the same volume (the paper's
 * section 4.2.2), so the communication is not changed; the operators' own
 * compute is not divided either (conservative: they are memory-bound and
 * small). The paper's per-layer memory with tensor parallelism t is then
 * s b h (34 + 5 a s / h) / t instead of s b h (10 + 24 / t + 5 a s / (h t)).
 */
#ifndef PB_SHARD_ACT_SAVED_H
#define PB_SHARD_ACT_SAVED_H

#include "model/graph.h"

enum { PB_SEQPAR_OFF = 0, PB_SEQPAR_ON = 1, PB_SEQPAR_AUTO = 2 };
extern const char *const pb_seq_parallel_names[3]; /* "off", "on", "auto" */

/* "on", "off" or "auto" into *mode; PB_EUSAGE naming the option otherwise. */
int pb_act_saved_seq_parallel_parse(const char *s, int *mode, pb_error *err);

/* Bit j of the result: output j of node v is stored for the backward pass
 * (tkind: PB_TKIND_* per tensor, tensor_kind.h). */
unsigned pb_act_saved_outputs(const pb_graph *g, const unsigned char *tkind, int v);

/* 1 when sequence parallelism holds node v's replicated outputs split. */
int pb_act_saved_seq_parallel_op(const pb_graph *g, const unsigned char *tkind, int v);

#endif
