#!/usr/bin/env python3
"""gen_noname.py — tests/data/densenet121_noname.onnx: models/densenet121.onnx
with every node name removed (name "" as some exporters and hand-written
graphs leave them), so that nothing carries a module path. Used by
tests/e2e/tui_screen_blocks.sh (the first screen opens at the structural
block level, Enter expands) and tests/unit/test_blocks.c.
Run from the repository root: /usr/bin/python3 tests/data/gen_noname.py
"""
import onnx

m = onnx.load("models/densenet121.onnx", load_external_data=False)
for n in m.graph.node:
    n.name = ""
# no stored intermediate shapes: they follow from the input
del m.graph.value_info[:]
# the weights stay external and absent (as in models/): only the structure
# is read
onnx.save(m, "tests/data/densenet121_noname.onnx")
