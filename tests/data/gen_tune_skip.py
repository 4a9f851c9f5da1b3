#!/usr/bin/python3
"""gen_tune_skip.py — writes tune_skip.onnx for tests/e2e/tune_all_costs.sh:
a small network whose Conv/MatMul nodes are of every kind `tune --all` meets
(a 3x3 convolution, a depthwise one, a MatMul) plus one it must refuse and
name (a dilated 3x3 convolution) and nodes of operators without a tuned
kernel (Relu, GlobalAveragePool, Flatten). Weights are external initializers
without bytes (shapes only).
Usage: python3 gen_tune_skip.py OUT.onnx"""
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h


def main(out):
    inits, nodes = [], []

    def weight(name, *shape):
        p = onnx.TensorProto()
        p.name = name
        p.data_type = T.FLOAT
        p.dims.extend(shape)
        p.data_location = onnx.TensorProto.EXTERNAL
        e = p.external_data.add()
        e.key, e.value = "location", "absent.bin"
        inits.append(p)
        return name

    nodes.append(h.make_node("Conv", ["x", weight("c1.w", 8, 4, 3, 3)], ["c1"], name="conv",
                             kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    nodes.append(h.make_node("Relu", ["c1"], ["r1"], name="relu"))
    nodes.append(h.make_node("Conv", ["r1", weight("c2.w", 8, 8, 3, 3)], ["c2"], name="dilated",
                             kernel_shape=[3, 3], pads=[2, 2, 2, 2], dilations=[2, 2]))
    nodes.append(h.make_node("Conv", ["c2", weight("c3.w", 8, 1, 3, 3)], ["c3"], name="depthwise",
                             kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8))
    nodes.append(h.make_node("GlobalAveragePool", ["c3"], ["gap"], name="gap"))
    nodes.append(h.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1))
    nodes.append(h.make_node("MatMul", ["flat", weight("fc.w", 8, 5)], ["y"], name="fc"))
    g = h.make_graph(nodes, "tune_skip", [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 10, 10])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 5])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="gen_tune_skip.py")
    onnx.save(m, out)


if __name__ == "__main__":
    main(sys.argv[1])
