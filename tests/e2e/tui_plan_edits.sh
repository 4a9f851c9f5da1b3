#!/usr/bin/env bash
# tui_plan_edits.sh — a hand edit of a map plan in the workbench (issue 18.1),
# driven through tmux: resnet18 on layouts/hetero.lua, `:map --priority`,
# `:backend --node ... --to gpu` (the node moves, the cost before/after is
# printed, the plan becomes map/manual), undo with `u` (map/priority again),
# a refused edit saying why, and a clean exit.
# Usage: tui_plan_edits.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_plan_edits.sh PARTBENCH}")
root=$(pwd)
model=$root/models/resnet18.onnx
layout=$root/layouts/hetero.lua
. "$(dirname "$0")/lib/tui_tmux.sh" edit
# close_pager: long output opens the pager; q closes it.
close_pager() {
	sleep 0.3
	screen
	if grep -q 'q closes' "$tmp/screen"; then
		keys q
		sleep 0.3
	fi
}

tm -f /dev/null new-session -d -s "$sess" -x 140 -y 40 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$model' --layout '$layout'; echo PB_EXIT=\$?; sleep 600"
wait_for 'resnet18.onnx: [0-9]+ nodes'

cmd 'map --priority --timeline 0'
wait_for 'stream of 16 inputs: serial 18\.[0-9]+ ms'
close_pager
wait_for 'plan map/priority'

cmd 'backend --node /layer1/layer1.0/relu/Relu --to gpu'
wait_for "moved '/layer1/layer1.0/relu/Relu' fpga -> gpu \(1 node\)"
wait_for 'serial_time +18\.[0-9]+ ms -> [0-9.]+ ms'
close_pager
wait_for 'plan map/manual'

keys u
wait_for 'plan map/priority'

cmd 'backend --node /fc/Gemm --to fpga'
wait_for 'does not support op Gemm'
close_pager
grep -q 'plan map/priority' "$tmp/screen" || fail "a refused edit changed the plan"

cmd 'q!'
wait_for 'PB_EXIT=0'
echo "ok: tui_plan_edits"
