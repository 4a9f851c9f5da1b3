#!/usr/bin/env bash
# cli_symbolic_plans.sh — `shard`, `shard --pipeline auto`, `pipeline` and
# `map` on an ONNX model whose input dims are symbolic (batch, H, W, weights
# in initializers): every cost is 0 until --input gives the sizes, so the
# plans cost 0 s. Each command says so on stderr, naming the model and the
# input, as `partition` does (tests/e2e/cli_symbolic_dims.sh); before they
# printed plans of 0 s without a word ("0.000 ms per step"). `shard --batch
# 4` sets only dim 0: H and W are still unknown, and it says so. With
# --input given nothing is said.
# Usage: cli_symbolic_plans.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=${1:?usage: cli_symbolic_plans.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_symplans.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
/usr/bin/python3 - "$tmp/symconv.onnx" <<'PY' || { echo "FAIL: python3 onnx"; exit 1; }
import sys
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
nodes = [h.make_node('Conv', ['x', 'cw'], ['c1'], pads=[1, 1, 1, 1], name='conv'),
         h.make_node('Relu', ['c1'], ['r1'], name='relu'),
         h.make_node('GlobalAveragePool', ['r1'], ['p'], name='pool'),
         h.make_node('Flatten', ['p'], ['f'], name='flat'),
         h.make_node('Gemm', ['f', 'fw'], ['y'], transB=1, name='fc')]
inits = [nh.from_array(np.ones((16, 3, 3, 3), np.float32), 'cw'),
         nh.from_array(np.ones((10, 16), np.float32), 'fw')]
g = h.make_graph(nodes, 'symconv', [h.make_tensor_value_info('x', T.FLOAT, ['batch', 3, 'H', 'W'])],
                 [h.make_tensor_value_info('y', T.FLOAT, ['batch', 10])], inits)
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 13)]), sys.argv[1])
PY
warn='symconv.onnx: costs unknown (input dims without a value: x=batch,3,H,W); rerun with --input'
run() { # run NAME ARGS...: the command warns about the symbolic dims
	local name=$1
	shift
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err" || { fail "$name: $(cat "$tmp/err")"; return; }
	grep -q -- "$warn" "$tmp/err" || fail "$name: no warning about the symbolic dims: $(cat "$tmp/err")"
}
m=$tmp/symconv.onnx
run shard shard "$m" --layout layouts/cluster-2x8.lua -j 1
run "shard --pipeline auto" shard "$m" --layout layouts/cluster-2x8.lua --pipeline auto -j 1
run pipeline pipeline "$m" --layout layouts/cluster-2x8.lua
run map map "$m" --layout layouts/hetero.lua
"$bin" shard "$m" --layout layouts/cluster-2x8.lua --batch 4 -j 1 >"$tmp/out" 2>"$tmp/err" ||
	fail "shard --batch 4: $(cat "$tmp/err")"
grep -q 'symconv.onnx: costs unknown (input dims without a value: x=4,3,' "$tmp/err" ||
	fail "shard --batch 4: no warning about H and W: $(cat "$tmp/err")"
for c in "shard --layout layouts/cluster-2x8.lua -j 1" "pipeline --layout layouts/cluster-2x8.lua" \
	"map --layout layouts/hetero.lua"; do
	# shellcheck disable=SC2086
	"$bin" ${c%% *} "$m" --input x=2,3,32,32 ${c#* } >"$tmp/out" 2>"$tmp/err" || fail "$c --input: $(cat "$tmp/err")"
	grep -q 'costs unknown' "$tmp/err" && fail "$c: a warning with --input given: $(cat "$tmp/err")"
done
[ $fails -eq 0 ] && echo "ok: cli_symbolic_plans"
exit $fails
