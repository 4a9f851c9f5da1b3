#!/usr/bin/env bash
# tui_cancel_pipeline.sh — Esc stops a running `pipeline` (a 1000-layer GPT,
# 29,005 nodes, on cluster-2x8: about 6 s of planning) between the shard
# searches of its stages, its operator-level plan and its boundary polish.
# Before, the planner never looked at the cancel flag: it ran to its end and
# printed its whole report (split, polish, stages, schedules) seconds after
# the key, and only then said "cancelled". Now the output pane has no report
# of it, the plan stays as it was (none), and the workbench takes commands.
# Usage: tui_cancel_pipeline.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_cancel_pipeline.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" cancelpipe

"$bin" gen gpt --layers 1000 --hidden 256 --heads 4 --seq 64 --vocab 1000 -o "$tmp/g.onnx" \
	>/dev/null || fail "gen gpt"
tm -f /dev/null new-session -d -s "$sess" -x 160 -y 45 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$tmp/g.onnx' --layout '$root/layouts/cluster-2x8.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for 'g.onnx: [0-9]+ nodes' $((limit * 3))
cmd "pipeline"
wait_for 'pipeline +[0-9.]+ s \| Esc' $((limit * 3 / 2)) # the job runs
sleep 1
keys Escape
wait_for "cancelled 'pipeline' after" $((limit * 3))
keys o
wait_for 'output \(q closes\)'
grep -qE '^(split:|polish:|1F1B schedule)' "$tmp/screen" &&
	fail "the cancelled pipeline printed its report"
keys q
sleep 0.3
screen
grep -q 'plan pipeline' "$tmp/screen" && fail "the cancelled pipeline left a plan"
cmd "plan"
wait_for 'no plan|No plan|no current plan' 10
keys q
sleep 0.3
keys q
wait_for 'PB_EXIT=0' 20
echo "tui_cancel_pipeline: ok"
