#!/usr/bin/python3
"""bench/gen_inception_v3.py — writes an Inception-v3-shaped ONNX graph for the MILP bench.

    /usr/bin/python3 bench/gen_inception_v3.py [OUT]     (default /tmp/inception_v3_like.onnx)

No model of this size is bundled (models/ has googlenet with 179 nodes and
densenet121 with 623), so this script builds one with the layer structure of
torchvision's Inception v3 (Szegedy et al. 2016): the stem, Mixed_5b-5d
(InceptionA), 6a (B), 6b-6e (C, 7x7 factorised), 7a (D), 7b-7c (E), global
pooling and the classifier, each convolution exported unfused as
Conv + BatchNormalization + Relu, input 1x3x299x299. That gives 313 nodes,
close to the 316 of a real export. Weights are initializers whose bytes are
declared external (a file that does not exist): partbench counts their size
from the dims, and the model file stays small. Costs and partitions are
those of this synthetic graph, not of a trained network.
"""
import sys

import onnx
from onnx import TensorProto, helper

nodes, inits = [], []
count = [0]


def weight(name, dims):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "inception_v3_like.weights"
    inits.append(t)
    return name


def fresh(prefix):
    count[0] += 1
    return "%s_%d" % (prefix, count[0])


def conv(x, cin, cout, k, stride=1, pad=(0, 0)):
    """Conv + BatchNormalization + Relu; k = (kh, kw), pad = (ph, pw)."""
    kh, kw = k
    name = fresh("conv")
    w = weight(name + ".w", [cout, cin, kh, kw])
    y = name + "_out"
    nodes.append(helper.make_node("Conv", [x, w], [y], name=name, kernel_shape=[kh, kw],
                                  strides=[stride, stride],
                                  pads=[pad[0], pad[1], pad[0], pad[1]]))
    bn = name + "_bn"
    params = [weight(bn + "." + p, [cout]) for p in ("scale", "bias", "mean", "var")]
    nodes.append(helper.make_node("BatchNormalization", [y] + params, [bn + "_out"], name=bn))
    r = name + "_relu"
    nodes.append(helper.make_node("Relu", [bn + "_out"], [r + "_out"], name=r))
    return r + "_out"


def pool(x, kind, k, stride, pad=0):
    name = fresh(kind.lower())
    nodes.append(helper.make_node(kind, [x], [name + "_out"], name=name, kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[pad] * 4))
    return name + "_out"


def concat(xs):
    name = fresh("concat")
    nodes.append(helper.make_node("Concat", xs, [name + "_out"], name=name, axis=1))
    return name + "_out"


def block_a(x, cin, pool_features):
    b1 = conv(x, cin, 64, (1, 1))
    b5 = conv(conv(x, cin, 48, (1, 1)), 48, 64, (5, 5), pad=(2, 2))
    b3 = conv(x, cin, 64, (1, 1))
    b3 = conv(conv(b3, 64, 96, (3, 3), pad=(1, 1)), 96, 96, (3, 3), pad=(1, 1))
    bp = conv(pool(x, "AveragePool", 3, 1, 1), cin, pool_features, (1, 1))
    return concat([b1, b5, b3, bp]), 224 + pool_features


def block_b(x, cin):
    b3 = conv(x, cin, 384, (3, 3), stride=2)
    bd = conv(conv(x, cin, 64, (1, 1)), 64, 96, (3, 3), pad=(1, 1))
    bd = conv(bd, 96, 96, (3, 3), stride=2)
    bp = pool(x, "MaxPool", 3, 2)
    return concat([b3, bd, bp]), 384 + 96 + cin


def block_c(x, cin, c7):
    b1 = conv(x, cin, 192, (1, 1))
    b7 = conv(conv(x, cin, c7, (1, 1)), c7, c7, (1, 7), pad=(0, 3))
    b7 = conv(b7, c7, 192, (7, 1), pad=(3, 0))
    bd = conv(conv(x, cin, c7, (1, 1)), c7, c7, (7, 1), pad=(3, 0))
    bd = conv(conv(bd, c7, c7, (1, 7), pad=(0, 3)), c7, c7, (7, 1), pad=(3, 0))
    bd = conv(bd, c7, 192, (1, 7), pad=(0, 3))
    bp = conv(pool(x, "AveragePool", 3, 1, 1), cin, 192, (1, 1))
    return concat([b1, b7, bd, bp]), 768


def block_d(x, cin):
    b3 = conv(conv(x, cin, 192, (1, 1)), 192, 320, (3, 3), stride=2)
    b7 = conv(conv(x, cin, 192, (1, 1)), 192, 192, (1, 7), pad=(0, 3))
    b7 = conv(conv(b7, 192, 192, (7, 1), pad=(3, 0)), 192, 192, (3, 3), stride=2)
    bp = pool(x, "MaxPool", 3, 2)
    return concat([b3, b7, bp]), 320 + 192 + cin


def block_e(x, cin):
    b1 = conv(x, cin, 320, (1, 1))
    b3 = conv(x, cin, 384, (1, 1))
    b3 = concat([conv(b3, 384, 384, (1, 3), pad=(0, 1)), conv(b3, 384, 384, (3, 1), pad=(1, 0))])
    bd = conv(conv(x, cin, 448, (1, 1)), 448, 384, (3, 3), pad=(1, 1))
    bd = concat([conv(bd, 384, 384, (1, 3), pad=(0, 1)), conv(bd, 384, 384, (3, 1), pad=(1, 0))])
    bp = conv(pool(x, "AveragePool", 3, 1, 1), cin, 192, (1, 1))
    return concat([b1, b3, bd, bp]), 2048


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/inception_v3_like.onnx"
    x = conv("input", 3, 32, (3, 3), stride=2)
    x = conv(x, 32, 32, (3, 3))
    x = conv(x, 32, 64, (3, 3), pad=(1, 1))
    x = pool(x, "MaxPool", 3, 2)
    x = conv(x, 64, 80, (1, 1))
    x = conv(x, 80, 192, (3, 3))
    x = pool(x, "MaxPool", 3, 2)
    c = 192
    for pf in (32, 64, 64):
        x, c = block_a(x, c, pf)
    x, c = block_b(x, c)
    for c7 in (128, 160, 160, 192):
        x, c = block_c(x, c, c7)
    x, c = block_d(x, c)
    for _ in range(2):
        x, c = block_e(x, c)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap_out"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap_out"], ["flat_out"], name="flatten", axis=1))
    fw, fb = weight("fc.w", [1000, c]), weight("fc.b", [1000])
    nodes.append(helper.make_node("Gemm", ["flat_out", fw, fb], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(
        nodes, "inception_v3_like",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 299, 299])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="partbench bench/gen_inception_v3.py")
    onnx.save(model, out)
    print("%s: %d nodes" % (out, len(nodes)))


if __name__ == "__main__":
    main()
