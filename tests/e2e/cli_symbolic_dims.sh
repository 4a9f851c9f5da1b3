#!/usr/bin/env bash
# cli_symbolic_dims.sh — `partition` on an ONNX model whose input dims are
# symbolic (batch, seq) and whose weights are Constant nodes: every cost is 0
# until --input gives the sizes, so max(t) = 0 s. The command says so on
# stderr, naming the model and the input, and says nothing once --input is
# given (before, the plan of 0 s came without a word).
# Usage: cli_symbolic_dims.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=${1:?usage: cli_symbolic_dims.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_symdims.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
/usr/bin/python3 - "$tmp/sym.onnx" <<'PY' || fail "python3 onnx"
import sys
import onnx
from onnx import helper as h, TensorProto as T
nodes, prev = [], 'x'
for i in range(4):
    w = h.make_tensor('w%d' % i, T.FLOAT, [32, 32], [0.0] * 1024)
    nodes.append(h.make_node('Constant', [], ['w%d' % i], value=w, name='const%d' % i))
    nodes.append(h.make_node('MatMul', [prev, 'w%d' % i], ['m%d' % i], name='blk%d/mm' % i))
    prev = 'm%d' % i
g = h.make_graph(nodes, 'sym', [h.make_tensor_value_info('x', T.FLOAT, ['batch', 'seq', 32])],
                 [h.make_tensor_value_info(prev, T.FLOAT, None)])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 13)]), sys.argv[1])
PY
"$bin" partition "$tmp/sym.onnx" --layout layouts/manycore-16.lua >"$tmp/out" 2>"$tmp/err" ||
	fail "partition: $(cat "$tmp/err")"
grep -q 'sym.onnx: costs unknown (input dims without a value: x=batch,seq,32); rerun with --input' \
	"$tmp/err" || fail "no warning about the symbolic dims: $(cat "$tmp/err")"
"$bin" partition "$tmp/sym.onnx" --input x=2,8,32 --layout layouts/manycore-16.lua >"$tmp/out" \
	2>"$tmp/err" || fail "partition --input: $(cat "$tmp/err")"
grep -q 'costs unknown' "$tmp/err" && fail "warning with --input given: $(cat "$tmp/err")"
grep -q 'max(t) = 0 s' "$tmp/out" && fail "--input given, still max(t) = 0 s"
echo "ok: cli_symbolic_dims"
