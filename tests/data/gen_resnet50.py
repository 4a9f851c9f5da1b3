#!/usr/bin/python3
"""gen_resnet50.py — writes ResNet-50 (He et al. 2016, the torchvision layout:
7x7 stem, max pool, bottleneck stages of 3, 4, 6, 3 blocks, widths 64..512 x4,
batch norm folded into the convolutions, global average pool, Flatten, Gemm)
as ONNX for the partition tests of rules (tests/e2e/partition_rules.sh): no
bundled model is this deep a residual network. The weights are external
initializers without bytes (as `partbench gen gpt` writes them): shapes
only, so the file is small; partbench needs no values to partition.
Usage: python3 gen_resnet50.py OUT.onnx"""
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h


def main(out):
    inits, nodes = [], []

    def weight(name, *shape):
        t = h.make_tensor_value_info(name, T.FLOAT, list(shape))
        p = onnx.TensorProto()
        p.name = name
        p.data_type = T.FLOAT
        p.dims.extend(shape)
        p.data_location = onnx.TensorProto.EXTERNAL
        e = p.external_data.add()
        e.key, e.value = "location", "absent.bin"
        inits.append(p)
        del t
        return name

    def conv(x, cin, cout, k, stride, name):
        w, b = weight(name + ".weight", cout, cin, k, k), weight(name + ".bias", cout)
        y = name + "_out"
        nodes.append(h.make_node("Conv", [x, w, b], [y], name="/" + name + "/Conv",
                                 kernel_shape=[k, k], strides=[stride, stride],
                                 pads=[k // 2] * 4))
        return y

    def relu(x, name):
        nodes.append(h.make_node("Relu", [x], [name + "_relu"], name="/" + name + "/Relu"))
        return name + "_relu"

    x = relu(conv("input", 3, 64, 7, 2, "conv1"), "conv1")
    nodes.append(h.make_node("MaxPool", [x], ["pool"], name="/maxpool/MaxPool",
                             kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = "pool", 64
    for stage, (blocks, width) in enumerate([(3, 64), (4, 128), (6, 256), (3, 512)]):
        for b in range(blocks):
            stride = 2 if b == 0 and stage > 0 else 1
            n = "layer%d.%d" % (stage + 1, b)
            y = relu(conv(x, cin, width, 1, 1, n + ".conv1"), n + ".conv1")
            y = relu(conv(y, width, width, 3, stride, n + ".conv2"), n + ".conv2")
            y = conv(y, width, width * 4, 1, 1, n + ".conv3")
            sc = x if b > 0 else conv(x, cin, width * 4, 1, stride, n + ".downsample")
            nodes.append(h.make_node("Add", [y, sc], [n + "_add"], name="/" + n + "/Add"))
            x, cin = relu(n + "_add", n), width * 4
    nodes.append(h.make_node("GlobalAveragePool", [x], ["gap"], name="/avgpool/GlobalAveragePool"))
    nodes.append(h.make_node("Flatten", ["gap"], ["flat"], name="/Flatten", axis=1))
    w, b = weight("fc.weight", 1000, 2048), weight("fc.bias", 1000)
    nodes.append(h.make_node("Gemm", ["flat", w, b], ["output"], name="/fc/Gemm", transB=1))
    g = h.make_graph(nodes, "resnet50", [h.make_tensor_value_info("input", T.FLOAT, [1, 3, 224, 224])],
                     [h.make_tensor_value_info("output", T.FLOAT, [1, 1000])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="gen_resnet50.py")
    onnx.save(m, out)


if __name__ == "__main__":
    main(sys.argv[1])
