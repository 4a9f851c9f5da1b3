#!/usr/bin/env bash
# tui_branch_color.sh — the workbench's branch colour mode (issue 18.3),
# driven through tmux: tests/data/branch_kinds.dot (a graph with every kind
# of parallel-branch group), key c cycles group -> op -> branch; the status
# line then names the kinds with their group counts, the boxes carry their
# group's kind, and the next c leaves the mode (colour none). A clean exit.
# Usage: tui_branch_color.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_branch_color.sh PARTBENCH}")
root=$(pwd)
model=$root/tests/data/branch_kinds.dot
. "$(dirname "$0")/lib/tui_tmux.sh" branch

tm -f /dev/null new-session -d -s "$sess" -x 160 -y 40 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$model'; echo PB_EXIT=\$?; sleep 600"
wait_for 'branch_kinds.dot: [0-9]+ nodes'
wait_for '[0-9]+ boxes'
# the mode is absent before the key
grep -q 'branch: parent_child' "$tmp/screen" && fail "branch legend shown before the mode"

keys c
wait_for 'colour by op'
keys c
wait_for 'colour by branch'
# the legend names every kind with its group count; the graph has each kind
wait_for 'branch: parent_child [1-9][0-9]* parent [1-9][0-9]* child [1-9][0-9]* source [1-9][0-9]* sink [1-9][0-9]* local [0-9]+, \+fused'
# boxes carry their group's kind in the top border
grep -qE '[┌+](parent_child|parent|child|source|sink|local)\+?' "$tmp/screen" ||
	fail "no box labelled with a kind"

keys c
wait_for 'colour by none'
screen
grep -q 'branch: parent_child' "$tmp/screen" && fail "branch legend stayed after leaving the mode"

keys q
wait_for 'PB_EXIT=0'
echo "ok: tui_branch_color"
