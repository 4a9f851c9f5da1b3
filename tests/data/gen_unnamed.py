#!/usr/bin/env python3
"""gen_unnamed.py — tests/data/googlenet_unnamed.onnx: models/googlenet.onnx
with the module paths taken out of its node names (Paddle2ONNX style:
"p2o.Conv.12") and symbolic input dims (N x 3 x H x W), like PaddleOCR's det
model. Used by tests/e2e/tui_first_screen.sh (structural blocks, the
--input notice) and tests/unit/test_blocks.c.
Run from the repository root: /usr/bin/python3 tests/data/gen_unnamed.py
"""
import collections

import onnx

m = onnx.load("models/googlenet.onnx", load_external_data=False)
count = collections.Counter()
for n in m.graph.node:
    n.name = "p2o.%s.%d" % (n.op_type, count[n.op_type])
    count[n.op_type] += 1
dims = m.graph.input[0].type.tensor_type.shape.dim
for d, p in zip(dims, ["N", None, "H", "W"]):
    if p:
        d.ClearField("dim_value")
        d.dim_param = p
# no stored intermediate shapes: they follow from the input
del m.graph.value_info[:]
# the weights stay external and absent (as in models/): only the structure
# is read
onnx.save(m, "tests/data/googlenet_unnamed.onnx")
