#!/usr/bin/python3
"""gen_identity_resnet.py — writes a small ResNet-like model twice, for the
tests of the partition's layers (docs/partition.md, "Layers"):

  identity_resnet.onnx        as torchvision exports write it: every weight
                              and bias reaches its Conv/Gemm through an
                              Identity of the initializer, the 14 Identity
                              nodes first in the file (weight copies);
  identity_resnet_plain.onnx  the same network with the weights read
                              directly.

Both flatten with the shape arithmetic of torch exports (Shape, Gather,
Unsqueeze, Concat and three Constant nodes feeding a Reshape), which shape
inference evaluates. The network is the same, so both have the same 16
layers: stem Conv, Relu; block 1 Conv, Relu, Conv, Add, Relu; block 2 Conv
(stride 2), Relu, Conv, shortcut Conv, Add, Relu; GlobalAveragePool,
Reshape, Gemm. Nodes: 37 and 23 (16 layers + 14 weight copies + 7
nodes of shape arithmetic, and 16 + 7). Weights are small deterministic values.
Usage: python3 gen_identity_resnet.py [OUTDIR]"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def build(identity):
    rng = np.random.default_rng(7)
    inits, copies, nodes = [], [], []

    def weight(name, *shape):
        inits.append(nh.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name))
        if not identity:
            return name
        copies.append(h.make_node("Identity", [name], [name + "_copy"],
                                  name="Identity_%d" % len(copies)))
        return name + "_copy"

    def conv(x, y, cin, cout, k, stride, name):
        w, b = weight(name + ".weight", cout, cin, k, k), weight(name + ".bias", cout)
        nodes.append(h.make_node("Conv", [x, w, b], [y], name="/" + name + "/Conv",
                                 kernel_shape=[k, k], strides=[stride, stride],
                                 pads=[k // 2] * 4))

    def relu(x, y, name):
        nodes.append(h.make_node("Relu", [x], [y], name=name))

    conv("x", "c0", 3, 16, 3, 1, "conv1")
    relu("c0", "r0", "/relu/Relu")
    conv("r0", "c1", 16, 16, 3, 1, "layer1.conv1")
    relu("c1", "r1", "/layer1/relu/Relu")
    conv("r1", "c2", 16, 16, 3, 1, "layer1.conv2")
    nodes.append(h.make_node("Add", ["c2", "r0"], ["a1"], name="/layer1/Add"))
    relu("a1", "r2", "/layer1/relu_1/Relu")
    conv("r2", "c3", 16, 32, 3, 2, "layer2.conv1")
    relu("c3", "r3", "/layer2/relu/Relu")
    conv("r3", "c4", 32, 32, 3, 1, "layer2.conv2")
    conv("r2", "sc", 16, 32, 1, 2, "layer2.downsample")
    nodes.append(h.make_node("Add", ["c4", "sc"], ["a2"], name="/layer2/Add"))
    relu("a2", "r4", "/layer2/relu_1/Relu")
    nodes.append(h.make_node("GlobalAveragePool", ["r4"], ["gap"], name="/avgpool/GlobalAveragePool"))
    # torch.flatten as exported: Reshape(gap, Concat(Unsqueeze(Shape(gap)[0]), [-1]))
    nodes += [
        h.make_node("Shape", ["gap"], ["shp"], name="/Shape"),
        h.make_node("Constant", [], ["zero"], name="/Constant",
                    value=nh.from_array(np.array(0, np.int64))),
        h.make_node("Gather", ["shp", "zero"], ["n"], name="/Gather", axis=0),
        h.make_node("Constant", [], ["ax"], name="/Constant_1",
                    value=nh.from_array(np.array([0], np.int64))),
        h.make_node("Unsqueeze", ["n", "ax"], ["n1"], name="/Unsqueeze"),
        h.make_node("Constant", [], ["m1"], name="/Constant_2",
                    value=nh.from_array(np.array([-1], np.int64))),
        h.make_node("Concat", ["n1", "m1"], ["tshape"], name="/Concat", axis=0),
        h.make_node("Reshape", ["gap", "tshape"], ["flat"], name="/Reshape"),
    ]
    fw, fb = weight("fc.weight", 10, 32), weight("fc.bias", 10)
    nodes.append(h.make_node("Gemm", ["flat", fw, fb], ["y"], name="/fc/Gemm", transB=1))
    graph = h.make_graph(copies + nodes, "identity_resnet" if identity else "plain_resnet",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 32, 32])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 10])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)],
                         producer_name="gen_identity_resnet.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
onnx.save(build(True), os.path.join(out, "identity_resnet.onnx"))
onnx.save(build(False), os.path.join(out, "identity_resnet_plain.onnx"))
