/*
 * shard/tensor_kind.h — what a tensor is to the strategy search: shape or
 * index data (meta), an activation (computed from the model's inputs), or a
 * parameter (a weight from the file). strategy_problem.c classifies; the
 * stored-activation rules (act_saved.h) read the classes.
 */
#ifndef PB_SHARD_TENSOR_KIND_H
#define PB_SHARD_TENSOR_KIND_H

enum { PB_TKIND_META = 0, PB_TKIND_ACT = 1, PB_TKIND_PARAM = 2 };

#endif
