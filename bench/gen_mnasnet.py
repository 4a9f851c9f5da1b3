#!/usr/bin/python3
"""gen_mnasnet.py — writes MnasNet-B1 1.0 (Tan et al. 2019; the torchvision
mnasnet1_0 layout: 3x3 stem s2 to 32, a depthwise-separable block to 16, six
stacks of inverted residuals (expansion, kernel, stride, repeats:
24 e3 k3 s2 x3, 40 e3 k5 s2 x3, 80 e6 k5 s2 x3, 96 e6 k3 s1 x2,
192 e6 k5 s2 x4, 320 e6 k3 s1 x1), 1x1 to 1280, global average pool, Gemm
to 1000; batch norm folded into the convolutions) as ONNX for the whole-model
tuning benchmark (bench/bench_tune_models.sh, issue 42 item 4): no bundled
model has 5x5 depthwise convolutions. Weights are external initializers
without bytes (shapes only; partbench needs no values to tune or partition).
Usage: python3 gen_mnasnet.py OUT.onnx"""
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

    def conv(x, cin, cout, k, stride, name, group=1):
        w = weight(name + ".weight", cout, cin // group, k, k)
        b = weight(name + ".bias", cout)
        y = name + "_out"
        nodes.append(h.make_node("Conv", [x, w, b], [y], name="/" + name + "/Conv",
                                 kernel_shape=[k, k], strides=[stride, stride],
                                 pads=[k // 2] * 4, group=group))
        return y

    def relu(x, name):
        nodes.append(h.make_node("Relu", [x], [name + "_relu"], name="/" + name + "/Relu"))
        return name + "_relu"

    x = relu(conv("input", 3, 32, 3, 2, "layers.0"), "layers.0")
    x = relu(conv(x, 32, 32, 3, 1, "layers.3", group=32), "layers.3")
    x, cin = conv(x, 32, 16, 1, 1, "layers.6"), 16
    stacks = [(24, 3, 2, 3, 3), (40, 5, 2, 3, 3), (80, 5, 2, 6, 3), (96, 3, 1, 6, 2),
              (192, 5, 2, 6, 4), (320, 3, 1, 6, 1)]
    for si, (cout, k, stride, exp, reps) in enumerate(stacks):
        for r in range(reps):
            s = stride if r == 0 else 1
            n = "layers.%d.%d" % (8 + si, r)
            mid = cin * exp
            y = relu(conv(x, cin, mid, 1, 1, n + ".layers.0"), n + ".layers.0")
            y = relu(conv(y, mid, mid, k, s, n + ".layers.3", group=mid), n + ".layers.3")
            y = conv(y, mid, cout, 1, 1, n + ".layers.6")
            if cin == cout and s == 1:
                nodes.append(h.make_node("Add", [y, x], [n + "_add"], name="/" + n + "/Add"))
                y = n + "_add"
            x, cin = y, cout
    x = relu(conv(x, 320, 1280, 1, 1, "layers.14"), "layers.14")
    nodes.append(h.make_node("GlobalAveragePool", [x], ["gap"], name="/GlobalAveragePool"))
    nodes.append(h.make_node("Flatten", ["gap"], ["flat"], name="/Flatten", axis=1))
    w, b = weight("classifier.1.weight", 1000, 1280), weight("classifier.1.bias", 1000)
    nodes.append(h.make_node("Gemm", ["flat", w, b], ["output"], name="/classifier/classifier.1/Gemm",
                             transB=1))
    g = h.make_graph(nodes, "mnasnet1_0",
                     [h.make_tensor_value_info("input", T.FLOAT, [1, 3, 224, 224])],
                     [h.make_tensor_value_info("output", T.FLOAT, [1, 1000])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="gen_mnasnet.py")
    onnx.save(m, out)


if __name__ == "__main__":
    main(sys.argv[1])
