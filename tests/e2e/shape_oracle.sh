#!/usr/bin/env bash
# The shape oracle (issue 35.3): partbench's shape of every node output equals
# ONNX Runtime's, at batch 1 and at batch 4, on the bundled models small
# enough to run whole (squeezenet1_1-weights with its weights, resnet18,
# mobilenet_v2, googlenet with random ones) and generated ones: a GPT decoder
# (gen gpt), a ViT-style encoder with the batch-1 Reshape targets of an
# export, weights in Constant nodes, symbolic input dims
# (tests/ort/oracle_models.py). At batch 4 ORT runs the model with the
# constants partbench lists as rewritten re-encoded from that list
# (tests/ort/shape_oracle.py). PB_ORACLE_ALL=1 adds densenet121,
# bert_base_like and swin_t (minutes and GBs of activations).
# Then: a Reshape of 16 elements to [3, 5] is refused (exit 2, the file, the
# node, the shapes and the rule); a constant shared by the batch and a weight
# has no sound rewrite (exit 2, why); extract at batch 4 writes parts whose
# chain ORT runs to the rewritten model's outputs.
set -u
bin=${1:?usage: shape_oracle.sh PARTBENCH}
root=$PWD
tmp=$(mktemp -d /tmp/pb_shape_oracle.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3
ort=$root/tests/ort
if [ ! -d "$ort/node_modules/onnxruntime-node" ]; then
	echo "FAIL: tests/ort/node_modules is missing: run 'make deps' (npm ci --ignore-scripts in tests/ort)"
	exit 1
fi

oracle() { # MODEL BATCH [--dim N=V ...]
	$py "$ort/shape_oracle.py" "$bin" "$@" --tmp "$tmp" >"$tmp/o.out" 2>&1 ||
		fail "$(cat "$tmp/o.out")"
	head -1 "$tmp/o.out"
}

$py "$ort/oracle_models.py" "$tmp" || fail "oracle_models.py"
"$bin" gen gpt --layers 2 --hidden 64 --heads 4 --seq 16 --vocab 100 -o "$tmp/gpt.onnx" \
	>/dev/null || fail "gen gpt"

models="models/squeezenet1_1-weights.onnx models/resnet18.onnx models/mobilenet_v2.onnx
	models/googlenet.onnx $tmp/gpt.onnx $tmp/vit_like.onnx $tmp/const_weights.onnx
	$tmp/symbolic.onnx"
[ "${PB_ORACLE_ALL:-0}" = 1 ] &&
	models="$models models/densenet121.onnx models/bert_base_like.onnx models/swin_t.onnx"
for m in $models; do
	for b in 1 4; do
		oracle "$m" "$b" --dim H=20 --dim W=24
	done
done
# the ViT-style export at batch 4: its five baked targets are rewritten
"$bin" info "$tmp/vit_like.onnx" --input x=4,3,32,32 >"$tmp/vit.txt" 2>&1 ||
	fail "vit_like at batch 4: $(cat "$tmp/vit.txt")"
grep -q "/conv_proj/Conv .* 4x16x4x4" "$tmp/vit.txt" || fail "vit_like: conv: $(cat "$tmp/vit.txt")"
grep -q "^ *[0-9]*  /Reshape .* 4x16x16 " "$tmp/vit.txt" ||
	fail "vit_like: /Reshape is not 4x16x16: $(grep Reshape "$tmp/vit.txt")"
grep -q "5 constant entries rewritten" "$tmp/vit.txt" || fail "vit_like: rewrites: $(cat "$tmp/vit.txt")"
grep -q "/Reshape (Reshape): 'tokens_shape'\[0\] 1 -> 4" "$tmp/vit.txt" ||
	fail "vit_like: the rewrite of /Reshape is not listed: $(cat "$tmp/vit.txt")"

# a constraint violation: refused, naming the file, the node, the shapes and the rule
"$bin" info "$tmp/bad_reshape.onnx" >"$tmp/bad.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "bad_reshape: exit $rc, expected 2"
grep -q "bad_reshape.onnx: node '/bad/Reshape' (Reshape): Reshape keeps the element count: input 'x' is 1x16 (16 elements), the target 3x5 has another count" \
	"$tmp/bad.out" || fail "bad_reshape: $(cat "$tmp/bad.out")"
# no sound rewrite: refused, saying why
"$bin" info "$tmp/shared_target.onnx" --input x=4,4,4 >"$tmp/shared.out" 2>&1
rc=$?
[ $rc = 2 ] || fail "shared_target: exit $rc, expected 2"
grep -q "node '/w/Reshape' (Reshape): 's' is also read by '/x/Reshape'.*no sound rewrite" \
	"$tmp/shared.out" || fail "shared_target: $(cat "$tmp/shared.out")"
"$bin" info "$tmp/shared_target.onnx" >/dev/null 2>&1 || fail "shared_target at batch 1 refused"

# extract at batch 4 writes the rewritten constants: ORT runs the chain of parts
"$bin" partition "$tmp/vit_like.onnx" --input x=4,3,32,32 --layout layouts/manycore-16.lua \
	-o "$tmp/plan.json" >/dev/null 2>&1 || fail "partition vit_like"
"$bin" extract "$tmp/vit_like.onnx" --input x=4,3,32,32 --plan "$tmp/plan.json" \
	-o "$tmp/parts" >/dev/null 2>"$tmp/err" || fail "extract vit_like: $(cat "$tmp/err")"
$py "$ort/shape_oracle.py" "$bin" "$tmp/vit_like.onnx" 4 --tmp "$tmp" --save "$tmp/vit4.onnx" \
	>/dev/null || fail "vit_like --save"
(cd "$ort" && node run_parts.js check "$tmp/vit4.onnx" "$tmp/parts") >"$tmp/chain.out" 2>&1 ||
	fail "extract vit_like at batch 4: the ORT chain: $(cat "$tmp/chain.out")"
grep -q '"shape":\[4,10\]' "$tmp/chain.out" || fail "chain output: $(cat "$tmp/chain.out")"

[ $fails = 0 ] && echo "shape_oracle: all passed"
exit $((fails > 0))
