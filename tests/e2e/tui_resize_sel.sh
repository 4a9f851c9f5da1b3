#!/usr/bin/env bash
# tui_resize_sel.sh — a resize keeps the selection on the canvas (docs/tui.md,
# "Canvas"): the view kept its offset when the terminal shrank, so a box
# centred on a wide canvas ended up under the side pane. Now a resize
# re-centres on the selection when the new canvas does not show its box.
# Usage: tui_resize_sel.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_resize_sel.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" resize

tm -f /dev/null new-session -d -s "$sess" -x 200 -y 50 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$root/models/resnet18.onnx'; echo PB_EXIT=\$?; sleep 600"
wait_for 'resnet18.onnx: [0-9]+ nodes'
# left to right: the chain of boxes runs far wider than any canvas
keys L
wait_for 'zoom 0 LR'
wait_for 'boxes, dot [0-9.]+ s'
cmd 'find layer3.1/conv2'
wait_for 'sel [0-9]+ /layer3/layer3.1/conv2/Conv'
keys z
# col LABEL: the column (characters) where the box label starts, or nothing
col() { LC_ALL=C.UTF-8 awk -v pat="$1" '{i = index($0, pat); if (i) {print i - 1; exit}}' "$tmp/screen"; }
end=$((SECONDS + limit))
while :; do
	screen
	c=$(col 'Conv layer3.1.conv2')
	[ -n "$c" ] && [ "$c" -gt 64 ] && break
	[ $SECONDS -lt $end ] || fail "the selected box is not centred on the 200-column canvas (col '${c}')"
	sleep 0.1
done
echo "note: on 200 columns the selected box's label starts at column $c"
# 100 columns: the canvas is 63 wide (the side pane takes 36 + the divider)
tm resize-window -t "$sess" -x 100 -y 30
wait_for 'zoom 0 LR'
end=$((SECONDS + limit))
while :; do
	screen
	c=$(col 'Conv layer3.1.conv2')
	[ -n "$c" ] && [ "$c" -lt 63 ] && break
	[ $SECONDS -lt $end ] || fail "after the resize the selected box is not on the 63-column canvas (col '${c}')"
	sleep 0.1
done
echo "note: on 100 columns the label starts at column $c"
keys q
wait_for 'PB_EXIT=0'
echo "tui_resize_sel: all checks passed"
