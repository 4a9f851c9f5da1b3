#!/usr/bin/env bash
# tui_top_runs.sh — a named graph with more top-level blocks than one screen
# of boxes takes (a 200-layer GPT: embed, h0 .. h199, lm_head: 202) opened
# as one box "nodes 0-5804" until Enter. It now opens as 16 runs of
# consecutive top-level blocks, labelled by their first and last block
# ("embed..h11" .. "h194..lm_head"); Enter on a run shows its blocks, the
# other runs stay.
# Usage: tui_top_runs.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_top_runs.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" toprun

"$bin" gen gpt --layers 200 --hidden 64 --heads 2 --seq 16 --vocab 100 -o "$tmp/g200.onnx" \
	>/dev/null || fail "gen gpt"
tm -f /dev/null new-session -d -s "$sess" -x 160 -y 45 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$tmp/g200.onnx' --layout '$root/layouts/manycore-16.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for '16 boxes'
grep -q 'embed\.\.h11 ' "$tmp/screen" || fail "no first run 'embed..h11'"
grep -q '║nodes 0-' "$tmp/screen" && fail "the whole graph is one box"
cmd "find lm_head"
wait_for 'h194\.\.lm_head '
keys Enter # opens the selected run: h194 .. h199, the final norm, lm_head
wait_for '║h199 +║'
n=$(grep -oE '[0-9]+ boxes' "$tmp/screen" | grep -oE '[0-9]+')
[ "${n:-0}" -gt 16 ] || fail "opening a run did not add boxes: ${n:-none}"
# the 15 other runs stay runs: far fewer boxes than the 202 blocks
[ "$n" -lt 40 ] || fail "the other runs opened too: $n boxes"
keys q
wait_for 'PB_EXIT=0'
echo "tui_top_runs: ok"
