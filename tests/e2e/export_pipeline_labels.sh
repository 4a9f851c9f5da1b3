#!/usr/bin/env bash
# export_pipeline_labels.sh — every box of a pipeline plan's SVG is named by
# module path (issue 37.6). A generated 6-block GPT (names h0.ln_1,
# h0.residual_1, h0.ln_2, ...) on cluster-4x8, `pipeline --batch 32 --train
# --stages 4`, exported collapsed to about 60 boxes: the runs the plan's
# stages cut across modules (h0.residual_1 with h0.ln_2; embed.tokens with
# embed.positions) were labelled "nodes 23-24" and "nodes 0-1"; now they are
# named by the module their nodes share (h0, embed), and no box is named by
# node numbers. The SVG is well-formed XML.
# Usage: export_pipeline_labels.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: export_pipeline_labels.sh PARTBENCH}")
root=$(pwd)
tmp=$(mktemp -d /tmp/pb_pipelabels.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
cd "$tmp" || exit 1
"$bin" gen gpt --layers 6 --hidden 256 --heads 4 --seq 128 --vocab 1000 -o gpt6.onnx >/dev/null ||
	fail "gen gpt failed"
cat >exp.lua <<'LUA'
pb.cmd("pipeline --batch 32 --train --stages 4")
pb.cmd("export --collapse always --max-boxes 60 -o pipe.svg")
LUA
"$bin" run exp.lua gpt6.onnx --layout "$root/layouts/cluster-4x8.lua" --allow-write . >out.txt 2>&1 ||
	fail "run failed: $(tail -3 out.txt)"
xmllint --noout pipe.svg || fail "pipe.svg is not well-formed XML"
grep -q 'plan: pipeline by milp, 4 stages' pipe.svg || fail "pipe.svg is not the pipeline plan's"
boxes=$(grep -c '\[[0-9]* ops:' pipe.svg)
[ "$boxes" -gt 0 ] || fail "no collapsed boxes in pipe.svg"
if grep -qE '>nodes [0-9]+&#45;[0-9]+<' pipe.svg; then
	fail "boxes named by node numbers: $(grep -oE '>nodes [0-9]+&#45;[0-9]+<' pipe.svg | tr '\n' ' ')"
fi
# the box of h0.residual_1 and h0.ln_2, the box of embed.tokens and embed.positions
grep -A1 -E '>h0</text>' pipe.svg | grep -q '\[2 ops: Add x1 LayerNormalization x1\]' ||
	fail "no box 'h0' holding h0.residual_1 and h0.ln_2"
grep -A1 -E '>embed</text>' pipe.svg | grep -q '\[2 ops: Add x1 Gather x1\]' ||
	fail "no box 'embed' holding embed.tokens and embed.positions"
echo "ok: export_pipeline_labels ($boxes collapsed boxes, all named by module)"
