#!/usr/bin/python3
"""gen_tiny_convs.py — writes tests/data/tiny_convs.onnx: a small CNN whose
kernels tune in milliseconds (also under AddressSanitizer), for the tests of
`tune --all` and its MPI runs. 8 Conv/Gemm/MatMul nodes, 5 distinct kernel
shapes: conv 3->8 3x3 (stem), three conv 8->8 3x3 sharing one shape, conv
8->16 3x3 stride 2, conv 8->16 1x1 stride 2 (shortcut), and a Gemm 256->10
plus a MatMul of the same 1x256x10 shape (shared). Weights are zeros: the
tuner measures its own operands. Usage: python3 gen_tiny_convs.py [OUT]"""
import sys
import onnx
from onnx import TensorProto, helper

def w(name, *shape):
    n = 1
    for d in shape:
        n *= d
    return helper.make_tensor(name, TensorProto.FLOAT, list(shape), [0.0] * n)

nodes, inits = [], []
def conv(x, y, cin, cout, k, stride, pad, name):
    inits.append(w(name + ".w", cout, cin, k, k))
    nodes.append(helper.make_node("Conv", [x, name + ".w"], [y], name=name,
                                  kernel_shape=[k, k], strides=[stride, stride],
                                  pads=[pad] * 4))

conv("x", "c0", 3, 8, 3, 1, 1, "stem")
nodes.append(helper.make_node("Relu", ["c0"], ["r0"], name="relu0"))
conv("r0", "c1", 8, 8, 3, 1, 1, "block.conv1")
nodes.append(helper.make_node("Relu", ["c1"], ["r1"], name="relu1"))
conv("r1", "c2", 8, 8, 3, 1, 1, "block.conv2")
nodes.append(helper.make_node("Add", ["c2", "r0"], ["a2"], name="add"))
conv("a2", "c3", 8, 8, 3, 1, 1, "block.conv3")
conv("c3", "c4", 8, 16, 3, 2, 1, "down.conv")
conv("c3", "c5", 8, 16, 1, 2, 0, "down.shortcut")
nodes.append(helper.make_node("Add", ["c4", "c5"], ["a5"], name="add2"))
nodes.append(helper.make_node("Flatten", ["a5"], ["f"], name="flatten", axis=1))
inits.append(w("fc.w", 10, 256))
inits.append(w("fc.b", 10))
nodes.append(helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["g"], name="fc", transB=1))
inits.append(w("head.w", 256, 10))
nodes.append(helper.make_node("MatMul", ["f", "head.w"], ["m"], name="head"))
nodes.append(helper.make_node("Add", ["g", "m"], ["y"], name="out"))
graph = helper.make_graph(nodes, "tiny_convs",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="partbench tests/data/gen_tiny_convs.py")
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1] if len(sys.argv) > 1 else "tests/data/tiny_convs.onnx")
