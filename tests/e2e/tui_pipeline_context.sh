#!/usr/bin/env bash
# tui_pipeline_context.sh — a pipeline boundary edit keeps the workbench's
# context (issue 37.4): a generated 6-block GPT on cluster-4x8,
# `:pipeline --batch 32 --train --stages 4`, a node of stage 2 selected,
# `<` twice. Each `<` moves the stage 2/3 boundary (chunk 2 gives a node to
# chunk 3: 54 -> 53 -> 52 nodes here, counted from the first message), the
# plan becomes pipeline/manual (not closed: no "closed the plan" message),
# the selection stays on the node, and `u` twice gives back pipeline/milp.
# Usage: tui_pipeline_context.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_pipeline_context.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" pipectx
"$bin" gen gpt --layers 6 --hidden 256 --heads 4 --seq 128 --vocab 1000 -o "$tmp/gpt6.onnx" >/dev/null ||
	fail "gen gpt failed"

tm -f /dev/null new-session -d -s "$sess" -x 170 -y 45 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$tmp/gpt6.onnx' --layout '$root/layouts/cluster-4x8.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for 'gpt6.onnx: [0-9]+ nodes'
wait_for '[0-9]+ boxes'
cmd 'pipeline --batch 32 --train --stages 4'
wait_for 'plan pipeline/milp, 4 groups' $((limit * 12))
sleep 0.5
screen
grep -q 'q closes' "$tmp/screen" && keys q
cmd 'view select 100'
wait_for 'node 100 h3\.attn\.v_heads \(Reshape\) in group 2'

keys '<'
wait_for 'plan pipeline/manual, 4 groups' $((limit * 6))
wait_for 'chunk 2 \(stage 2\) \[([0-9]+) nodes, [0-9.]+ us\] -> \[[0-9]+ nodes'
n0=$(grep -oE 'chunk 2 \(stage 2\) \[[0-9]+ nodes' "$tmp/screen" | tail -1 | grep -oE '[0-9]+ nodes' | grep -oE '[0-9]+')
wait_for 'sel 100 h3\.attn\.v_heads'
keys '<'
n2=$((n0 - 2))
wait_for "chunk 2 \(stage 2\) \[$((n0 - 1)) nodes, [0-9.]+ us\] -> \[$n2 nodes" $((limit * 6))
wait_for 'sel 100 h3\.attn\.v_heads'
grep -q 'closed the plan' "$tmp/screen" && fail "an edit said the plan was closed"
grep -q 'plan pipeline/manual' "$tmp/screen" || fail "the edited plan lost its name"

keys u
sleep 0.3
keys u
wait_for 'plan pipeline/milp, 4 groups'
cmd 'q!'
wait_for 'PB_EXIT=0'
echo "ok: tui_pipeline_context"
