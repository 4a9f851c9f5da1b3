/*
 * model/gen_gpt.h — a structure-only GPT-style decoder as an ONNX model
 * (gen_gpt.c), for tests and benchmarks of the strategy search at LLM scale:
 * no weights are stored (every weight is an initializer with external data
 * that does not exist), so a 96-layer, 175 B-parameter model is a few
 * hundred kilobytes.
 *
 * Graph (GPT-2 / Megatron-LM layout, pre-LayerNorm):
 *   ids [B,S] int64 -> Gather(wte [V,H]) + wpe [S,H]
 *   L x block: LayerNorm -> Q,K,V = MatMul [H,H] + bias -> Reshape [B,S,A,H/A]
 *              -> Transpose -> MatMul (QK^T) -> Mul (1/sqrt(d)) -> Softmax
 *              -> MatMul (V) -> Transpose -> Reshape [B,S,H] -> MatMul [H,H]
 *              + bias -> Add (residual) -> LayerNorm -> MatMul [H,4H] + bias
 *              -> Gelu -> MatMul [4H,H] + bias -> Add (residual)
 *   LayerNorm -> Reshape [B*S,H] -> Gemm(x, wte, transB) = logits [B*S,V]
 * The language-model head reuses the embedding table wte (tied weights, as
 * GPT-2 and Megatron-LM): one parameter used by two operators. Reshapes use
 * 0 / -1 so that `--batch` can change B. The causal mask and dropout are
 * omitted (element-wise, no parameters). Parameters:
 *   L (12 H^2 + 13 H) + V H + S H + 2 H
 * (Narayanan et al. 2021 count 12 L H^2 (1 + 13/(12H) + (V+S)/(12LH))).
 */
#ifndef PB_MODEL_GEN_GPT_H
#define PB_MODEL_GEN_GPT_H

#include <stddef.h>

#include "util/error.h"

typedef struct pb_gpt_spec {
	long layers, hidden, heads, seq, vocab, batch;
	int fp16; /* weights and activations in float16 (else float32) */
} pb_gpt_spec;

/* layers 12, hidden 768, heads 12, seq 1024, vocab 50257, batch 1, fp32. */
void pb_gpt_spec_default(pb_gpt_spec *s);
/* Checks the sizes (positive, hidden divisible by heads, bounded); err names
 * the offending field. */
int pb_gpt_spec_check(const pb_gpt_spec *s, pb_error *err);
/* Parameter count of the generated model (formula above). */
double pb_gpt_params(const pb_gpt_spec *s);
/* FLOPs of one training step on `batch` sequences as Narayanan et al. 2021
 * count them (eq. 3, GEMMs only, with activation recomputation):
 * 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). The yardstick of
 * bench/bench_megatron.sh: predicted TFLOP/s = this / step time / devices. */
double pb_gpt_train_flops(const pb_gpt_spec *s, double batch);
/* Number of operators of the generated model. */
long pb_gpt_node_count(const pb_gpt_spec *s);

/* The serialised ModelProto (malloc'd, *len bytes). */
int pb_gen_gpt_bytes(const pb_gpt_spec *s, unsigned char **out, size_t *len, pb_error *err);
/* Writes it to path (atomically). */
int pb_gen_gpt_write(const pb_gpt_spec *s, const char *path, pb_error *err);

#endif
