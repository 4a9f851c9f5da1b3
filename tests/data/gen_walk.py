#!/usr/bin/env python3
"""gen_walk.py — models for the TUI acceptance walk-through
(docs/tui-acceptance.md) that no other test opens, written to OUT
(default /tmp/pb_walk):
- mobilenet_v2_sym.onnx: models/mobilenet_v2.onnx with symbolic input dims
  (batch x 3 x height x width) and no stored intermediate shapes;
- constw.onnx: a small convnet whose weights are Constant nodes (as older
  exporters and hand-written graphs do) instead of initializers, with
  PyTorch-style module paths (/stage.N/conv/Conv).
inception_v3_like.onnx comes from bench/gen_inception_v3.py and a GPT with
thousands of nodes from `partbench gen gpt` (see the doc).
Usage (repository root): /usr/bin/python3 tests/data/gen_walk.py [OUT]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/pb_walk"
os.makedirs(out, exist_ok=True)

m = onnx.load("models/mobilenet_v2.onnx", load_external_data=False)
dims = m.graph.input[0].type.tensor_type.shape.dim
for d, p in zip(dims, ["batch", None, "height", "width"]):
    if p:
        d.ClearField("dim_value")
        d.dim_param = p
del m.graph.value_info[:]
onnx.save(m, os.path.join(out, "mobilenet_v2_sym.onnx"))

rng = np.random.default_rng(7)
nodes = []
prev, ch = "x", 3
for s in range(24):
    co = 8 + 8 * (s % 4)
    w = "/stage.%d/conv/w" % s
    b = "/stage.%d/conv/b" % s
    nodes.append(helper.make_node(
        "Constant", [], [w], name="/stage.%d/conv/Constant" % s,
        value=numpy_helper.from_array(
            rng.standard_normal((co, ch, 3, 3)).astype(np.float32), w)))
    nodes.append(helper.make_node(
        "Constant", [], [b], name="/stage.%d/conv/Constant_1" % s,
        value=numpy_helper.from_array(np.zeros(co, np.float32), b)))
    c = "/stage.%d/conv/Conv_out" % s
    nodes.append(helper.make_node("Conv", [prev, w, b], [c],
                                  name="/stage.%d/conv/Conv" % s, pads=[1, 1, 1, 1]))
    r = "/stage.%d/act/Relu_out" % s
    nodes.append(helper.make_node("Relu", [c], [r], name="/stage.%d/act/Relu" % s))
    if s % 2 == 1 and co == ch:
        a = "/stage.%d/Add_out" % s
        nodes.append(helper.make_node("Add", [r, prev], [a], name="/stage.%d/Add" % s))
        r = a
    prev, ch = r, co
g = helper.make_graph(
    nodes, "constw",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 64, 64])],
    [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
          os.path.join(out, "constw.onnx"))
print(out)
