#!/usr/bin/python3
"""oracle_models.py — test tool: small ONNX models for the shape oracle and
the batch rewrite (tests/e2e/shape_oracle.sh), written into DIR.

Usage: oracle_models.py DIR

  vit_like.onnx      a ViT-style encoder exported at batch 1: patch Conv, a
                     Reshape to the constant [1, 16, 16] (the export's baked
                     batch, as torchvision's vit_b_16 has), attention heads
                     split by a constant [1, 16, 4, 4] and merged back by
                     [1, 16, 16], mean over tokens, a Gemm head.
  const_weights.onnx weights in Constant nodes (no initializers): MatMul,
                     Add, Relu, a Reshape to the Constant [1, 2, 4], Softmax.
  symbolic.onnx      input dims ['N', 3, 'H', 'W']: Conv, Relu, a Reshape to
                     Concat(Shape(x)[0], -1), Gemm.
  bad_reshape.onnx   a Reshape of 1x16 elements to the constant [3, 5]
                     (ONNX refuses it: 16 elements are not 15).
  shared_target.onnx one constant [1, 16] read by a Reshape of the batch and
                     by a Reshape of a weight: no sound rewrite at batch 4.
Weights are seeded random values, inline.
"""
import os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

rng = np.random.default_rng(7)


def w(name, *shape):
    return numpy_helper.from_array(
        (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32), name)


def ints(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def save(g, path, opset=13):
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)],
                          producer_name='oracle_models.py')
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def vit_like(path):
    N = helper.make_node
    nodes = [
        N('Conv', ['x', 'patch_w', 'patch_b'], ['patches'], name='/conv_proj/Conv',
          kernel_shape=[8, 8], strides=[8, 8]),
        N('Reshape', ['patches', 'tokens_shape'], ['tok_t'], name='/Reshape'),
        N('Transpose', ['tok_t'], ['tok'], name='/Transpose', perm=[0, 2, 1]),
        N('MatMul', ['tok', 'wq'], ['q'], name='/attn/q'),
        N('MatMul', ['tok', 'wk'], ['k'], name='/attn/k'),
        N('MatMul', ['tok', 'wv'], ['v'], name='/attn/v'),
        N('Reshape', ['q', 'heads_shape'], ['qh'], name='/attn/Reshape_q'),
        N('Reshape', ['k', 'heads_shape'], ['kh'], name='/attn/Reshape_k'),
        N('Reshape', ['v', 'heads_shape'], ['vh'], name='/attn/Reshape_v'),
        N('Transpose', ['qh'], ['qt'], name='/attn/Transpose_q', perm=[0, 2, 1, 3]),
        N('Transpose', ['kh'], ['kt'], name='/attn/Transpose_k', perm=[0, 2, 3, 1]),
        N('Transpose', ['vh'], ['vt'], name='/attn/Transpose_v', perm=[0, 2, 1, 3]),
        N('MatMul', ['qt', 'kt'], ['scores'], name='/attn/scores'),
        N('Softmax', ['scores'], ['probs'], name='/attn/Softmax', axis=-1),
        N('MatMul', ['probs', 'vt'], ['ctx'], name='/attn/ctx'),
        N('Transpose', ['ctx'], ['ctx_t'], name='/attn/Transpose_ctx', perm=[0, 2, 1, 3]),
        N('Reshape', ['ctx_t', 'merge_shape'], ['merged'], name='/attn/Reshape_merge'),
        N('Add', ['tok', 'merged'], ['res'], name='/Add'),
        N('ReduceMean', ['res'], ['pooled'], name='/ReduceMean', axes=[1], keepdims=0),
        N('Gemm', ['pooled', 'head_w', 'head_b'], ['y'], name='/heads/Gemm', transB=1),
    ]
    inits = [w('patch_w', 16, 3, 8, 8), w('patch_b', 16), ints('tokens_shape', [1, 16, 16]),
             w('wq', 16, 16), w('wk', 16, 16), w('wv', 16, 16),
             ints('heads_shape', [1, 16, 4, 4]), ints('merge_shape', [1, 16, 16]),
             w('head_w', 10, 16), w('head_b', 10)]
    g = helper.make_graph(
        nodes, 'vit_like',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 10])], inits)
    save(g, path)


def const_weights(path):
    N = helper.make_node

    def const(name, arr):
        return N('Constant', [], [name], name=name + '_node',
                 value=numpy_helper.from_array(arr, name))
    nodes = [
        const('w1', (rng.standard_normal((8, 8)) / 3).astype(np.float32)),
        const('b1', rng.standard_normal(8).astype(np.float32)),
        const('split_shape', np.array([1, 2, 4], dtype=np.int64)),
        N('MatMul', ['x', 'w1'], ['h'], name='mm'),
        N('Add', ['h', 'b1'], ['hb'], name='bias'),
        N('Relu', ['hb'], ['r'], name='relu'),
        N('Reshape', ['r', 'split_shape'], ['r3'], name='split'),
        N('Softmax', ['r3'], ['y'], name='softmax', axis=-1),
    ]
    g = helper.make_graph(
        nodes, 'const_weights',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 2, 4])])
    save(g, path)


def symbolic(path):
    N = helper.make_node
    nodes = [
        N('Conv', ['x', 'cw', 'cb'], ['c'], name='conv', kernel_shape=[3, 3], pads=[1, 1, 1, 1],
          strides=[2, 2]),
        N('Relu', ['c'], ['r'], name='relu'),
        N('GlobalAveragePool', ['r'], ['p'], name='gap'),
        N('Shape', ['p'], ['ps'], name='shape'),
        N('Gather', ['ps', 'zero'], ['n'], name='batch', axis=0),
        N('Unsqueeze', ['n', 'zero1'], ['n1'], name='unsq'),
        N('Concat', ['n1', 'minus1'], ['target'], name='target', axis=0),
        N('Reshape', ['p', 'target'], ['flat'], name='flatten'),
        N('Gemm', ['flat', 'fw', 'fb'], ['y'], name='fc', transB=1),
    ]
    inits = [w('cw', 8, 3, 3, 3), w('cb', 8), w('fw', 5, 8), w('fb', 5),
             numpy_helper.from_array(np.array(0, dtype=np.int64), 'zero'),
             ints('zero1', [0]), ints('minus1', [-1])]
    g = helper.make_graph(
        nodes, 'symbolic',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 3, 'H', 'W'])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 5])], inits)
    save(g, path)


def bad_reshape(path):
    g = helper.make_graph(
        [helper.make_node('Reshape', ['x', 's'], ['y'], name='/bad/Reshape')], 'bad',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [3, 5])], [ints('s', [3, 5])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 8
    onnx.save(m, path)  # onnx's checker does not look at element counts either


def shared_target(path):
    N = helper.make_node
    nodes = [N('Reshape', ['x', 's'], ['xr'], name='/x/Reshape'),
             N('Reshape', ['wt', 's'], ['wr'], name='/w/Reshape'),
             N('Add', ['xr', 'wr'], ['y'], name='/Add')]
    g = helper.make_graph(
        nodes, 'shared',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 4, 4])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 16])],
        [ints('s', [1, 16]), w('wt', 16)])
    save(g, path)


def main():
    d = sys.argv[1]
    vit_like(os.path.join(d, 'vit_like.onnx'))
    const_weights(os.path.join(d, 'const_weights.onnx'))
    symbolic(os.path.join(d, 'symbolic.onnx'))
    bad_reshape(os.path.join(d, 'bad_reshape.onnx'))
    shared_target(os.path.join(d, 'shared_target.onnx'))


if __name__ == '__main__':
    main()
