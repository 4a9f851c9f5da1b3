"""gen_add_relu_chains.py N OUT.onnx — N independent Add -> Relu chains on 1x32
float inputs (no MACs at all): the greedy-baseline case of bench/RESULTS.md
(2026-11-26). Needs the onnx package (/usr/bin/python3)."""
import sys, onnx
from onnx import helper, TensorProto
n = int(sys.argv[1]); out = sys.argv[2]
nodes, inputs, outputs = [], [], []
for i in range(n):
    x, b, s, y = f"x{i}", f"b{i}", f"s{i}", f"y{i}"
    inputs += [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 32]),
               helper.make_tensor_value_info(b, TensorProto.FLOAT, [1, 32])]
    nodes += [helper.make_node("Add", [x, b], [s], name=f"add{i}"),
              helper.make_node("Relu", [s], [y], name=f"relu{i}")]
    outputs.append(helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 32]))
g = helper.make_graph(nodes, "chains", inputs, outputs)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, out)
