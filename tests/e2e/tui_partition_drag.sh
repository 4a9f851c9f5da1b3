#!/usr/bin/env bash
# tui_partition_drag.sh — a mouse drag across a partition boundary moves
# layers, not nodes (docs/partition.md, "Layers"). On
# tests/data/identity_resnet.onnx the exact plan's last group holds layers
# 11-15 (Add, Relu, pool, Reshape, Gemm = nodes 25, 26, 27, 35, 36) and the
# flatten's shape arithmetic between them (nodes 28-34, load-time constants
# that go with the Reshape). Dragging the Reshape's box onto a box of the
# previous group moves the layers up to the Reshape: 4, leaving the Gemm.
# Before, the drag counted nodes (35 - 25 + 1 = 11) and moved 11 layers.
# Usage: tui_partition_drag.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_partition_drag.sh PARTBENCH}")
root=$(pwd)
model=$root/tests/data/identity_resnet.onnx
. "$(dirname "$0")/lib/tui_tmux.sh" pdrag
# at TEXT: "X Y" (0-based cell) of the first screen line containing TEXT
at() {
	screen
	python3 - "$tmp/screen" "$1" <<'PY'
import sys
for y, l in enumerate(open(sys.argv[1], encoding='utf-8').read().split('\n')):
    x = l.find(sys.argv[2])
    if x >= 0:
        print(x + 1, y)
        break
PY
}
# mouse BUTTON X Y: an X10 mouse report (button 0 press, 3 release)
mouse() {
	keys -l "$(printf "\033[M$(printf '\\%03o\\%03o\\%03o' $((32 + $1)) $((33 + $2)) $((33 + $3)))")"
}

tm -f /dev/null new-session -d -s "$sess" -x 200 -y 70 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$model' --layout '$root/layouts/manycore-16.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for 'identity_resnet.onnx: [0-9]+ nodes'
cmd 'partition --method exact'
wait_for 'plan partition/exact, 6 groups'
wait_for '[0-9]+ boxes'
cmd 'view pan 0 40'
settle() { sleep 0.5; }
settle
from=$(at 'Reshape Reshape')
to=$(at 'Conv layer2.conv2')
[ -n "$from" ] && [ -n "$to" ] || fail "the Reshape's and layer2.conv2's boxes are not both on screen"
set -- $from $to
mouse 0 "$1" "$2"
wait_for 'sel 35 '
mouse 3 "$3" "$4"
# the edit's message comes from the two plans: layers 11-14 moved into group 4
wait_for 'layers 9-10, cores 15-15 layers 11-15\] -> groups 4-5 \[cores 11-14 layers 9-14, cores 15-15 layers 15-15\]'
wait_for 'plan partition/manual'
cmd 'lua local p = pb.plan(); return p.assignment[36] .. " " .. p.assignment[37] .. " " .. p.assignment[30]'
wait_for '^4 5 4$'
cmd 'q!'
wait_for 'PB_EXIT=0'
echo "ok: tui_partition_drag"
