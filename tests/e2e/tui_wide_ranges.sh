#!/usr/bin/env bash
# tui_wide_ranges.sh — the group table of a model with more than 10,000
# nodes: node ranges such as "10175-10899" are wider than the 9-character
# column, and the row's bottleneck/over-memory marks at its end were cut off
# by the pane's edge (a 400-layer GPT on chip16: every group over memory,
# rows 13-15 showed no '!'). The nodes column now takes the widest range
# (the label column gives way, on a narrow pane the MACs column), so every
# row keeps its marks, at 160x45 and at 80x24.
# Usage: tui_wide_ranges.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_wide_ranges.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" wide

"$bin" gen gpt --layers 400 --hidden 512 --heads 8 --seq 64 --vocab 1000 -o "$tmp/g400.onnx" \
	>/dev/null || fail "gen gpt"
check() { # check COLS ROWS: every visible group row ends in its marks
	tm -f /dev/null new-session -d -s "$sess" -x "$1" -y "$2" -c "$tmp" \
		"env LANG=C.UTF-8 '$bin' '$tmp/g400.onnx' --layout '$root/layouts/manycore-16.lua'; echo PB_EXIT=\$?; sleep 600"
	wait_for 'g400.onnx: [0-9]+ nodes'
	cmd "partition --method exact"
	wait_for 'plan partition/exact'
	cmd "find lm_head" # the last groups in view: select the last node
	wait_for '│15 .*-11604'
	# rows of the group table: '│' then the group number; all are over memory
	grep -E '│[0-9]+ +' "$tmp/screen" | grep -E '[0-9]+-[0-9]+' >"$tmp/rows"
	[ "$(wc -l <"$tmp/rows")" -ge 3 ] || fail "$1x$2: no group rows"
	while IFS= read -r r; do
		case "$r" in
		*'!'*) ;;
		*) fail "$1x$2: a group row without its over-memory mark: $r" ;;
		esac
	done <"$tmp/rows"
	grep -qE '│15 .*[0-9]{5}-11604 ' "$tmp/screen" || fail "$1x$2: the last range is cut"
	keys q
	wait_for 'd discard'
	keys d
	wait_for 'PB_EXIT=0'
	tm kill-session -t "$sess"
}
check 160 45
check 80 24
echo "tui_wide_ranges: ok"
