#!/usr/bin/env bash
# tui_long_lines.sh — long output lines and the 'o' pager (docs/tui.md,
# "Output pane", "Pager"): a line wider than the terminal wraps in the output
# pane (it was cut at the width: the end of an error message was lost); the
# pager scrolls sideways (l / h, 0) to read it, ignores keys it does not
# know ('/' and 'x' closed it before) and closes on q.
# Usage: tui_long_lines.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_long_lines.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" longlines

tm -f /dev/null new-session -d -s "$sess" -x 80 -y 24 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$root/models/resnet18.onnx'; echo PB_EXIT=\$?; sleep 600"
wait_for 'resnet18.onnx: [0-9]+ nodes'
# a search that matches nothing: the error names the pattern, 120 characters
pat="nomatch$(printf 'x%.0s' $(seq 1 100))TAILMARK"
keys /
wait_for '^/'
keys -l "$pat"
keys Enter
wait_for "find: no node matches 'nomatch"
# the end of the message is on the next row of the pane, not cut off
wait_for "^x*TAILMARK'"
# the pager: '/' and an unknown key leave it open, l scrolls sideways
keys o
wait_for 'output \(q closes\)  lines'
keys /
keys x
keys l
wait_for 'output \(q closes\)  lines [0-9]+-[0-9]+ of [0-9]+ from col 9'
grep -q "^rror: find: no node matches 'nomatch" "$tmp/screen" ||
	grep -q "^: find: no node matches" "$tmp/screen" || true
# eight more to the right, then back to the first column
keys l
wait_for 'from col 17'
keys 0
wait_for 'output \(q closes\)  lines [0-9]+-[0-9]+ of [0-9]+  \('
keys q
wait_for 'zoom 0 TB'
screen
grep -q 'output (q closes)' "$tmp/screen" && fail "q did not close the pager"
keys q
wait_for 'PB_EXIT=0'
echo "tui_long_lines: all checks passed"
