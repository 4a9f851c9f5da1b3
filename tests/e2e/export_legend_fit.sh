#!/usr/bin/env bash
# export_legend_fit.sh — every text of an SVG export's legend fits in its
# table cell as a browser here draws it (issue 37.6: the name column ran
# into the time column: 'cores 8-15' spans 42.4 pt in DejaVu Sans, the face
# fontconfig gives Helvetica here, in a 45 pt cell whose text starts 3.6 pt
# in). The widths come from the font file fontconfig picks for each text's
# font-family (lib/svg_text_fit.py reads its TTF advance widths), not from
# Graphviz's estimate. A partition plan (resnet18 x manycore-16, greedy) and
# a pipeline plan (a generated 4-block GPT x cluster-4x8), both exported.
# Usage: export_legend_fit.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: export_legend_fit.sh PARTBENCH}")
root=$(pwd)
fit=$root/tests/e2e/lib/svg_text_fit.py
tmp=$(mktemp -d /tmp/pb_legendfit.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
command -v fc-match >/dev/null || { echo "skip: no fc-match"; exit 77; }
cd "$tmp" || exit 1
cat >part.lua <<'LUA'
pb.cmd("partition --method greedy")
pb.cmd("export -o part.svg")
LUA
"$bin" run part.lua "$root/models/resnet18.onnx" --layout "$root/layouts/manycore-16.lua" \
	--allow-write . >out.txt 2>&1 || fail "partition export failed: $(tail -3 out.txt)"
"$bin" gen gpt --layers 4 --hidden 256 --heads 4 --seq 128 --vocab 1000 -o g4.onnx >/dev/null ||
	fail "gen gpt failed"
cat >pipe.lua <<'LUA'
pb.cmd("pipeline --batch 16 --train --stages 4")
pb.cmd("export -o pipe.svg")
LUA
"$bin" run pipe.lua g4.onnx --layout "$root/layouts/cluster-4x8.lua" --allow-write . >out.txt 2>&1 ||
	fail "pipeline export failed: $(tail -3 out.txt)"
for f in part pipe; do
	xmllint --noout $f.svg || fail "$f.svg is not well-formed XML"
	python3 "$fit" $f.svg legend >fit.txt || fail "$f.svg legend: $(cat fit.txt)"
	echo "$f.svg: $(tail -1 fit.txt)"
done
echo "ok: export_legend_fit"
