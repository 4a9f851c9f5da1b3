#!/usr/bin/env bash
# tui_small_inspector.sh — the side pane on an 80x24 terminal: the node
# inspector has fewer rows than it has lines, and the lines that do not fit
# are left out. Before, its fixed header lines (group, block, MACs, params)
# were drawn past its last row, onto the objective row, whose shorter text
# left the end of the params line after it: "objective: no solver running
# 393 KB" on bert_base_like with an equal partition (a node in a block).
# Usage: tui_small_inspector.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_small_inspector.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" small

tm -f /dev/null new-session -d -s "$sess" -x 80 -y 24 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$root/models/bert_base_like.onnx' --layout '$root/layouts/manycore-16.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for 'bert_base_like.onnx: [0-9]+ nodes'
cmd "partition --method equal"
wait_for 'plan partition/equal'
wait_for 'in block emb'
# the objective row holds its text and nothing after it
grep -qE '│objective: no solver running *$' "$tmp/screen" ||
	fail "the objective row has more than its text"
# the inspector stops above the rule over the objective row
rule=$(grep -n '│objective:' "$tmp/screen" | cut -d: -f1)
above=$(sed -n "$((rule - 1))p" "$tmp/screen")
case "$above" in
*"│──"*) ;;
*) fail "the row above the objective is not its rule: $above" ;;
esac
# a taller terminal shows the lines that were left out
tm resize-window -t "$sess" -x 80 -y 40 2>/dev/null || tm resize-window -t "$sess" -x 80 -y 40
wait_for '│params ' 10
keys q
wait_for 'd discard'
keys d
wait_for 'PB_EXIT=0'
echo "tui_small_inspector: ok"
