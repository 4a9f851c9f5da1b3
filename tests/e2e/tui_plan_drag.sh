#!/usr/bin/env bash
# tui_plan_drag.sh — mouse drag on a fuse plan (issue 18.1), driven through
# tmux with raw X10 mouse sequences: tests/data/branch_kinds.dot, `:fuse`;
# dragging a fused box onto empty canvas runs fuse-out (the node leaves its
# group, cost before/after printed), dragging it onto a box with a path to it
# is refused with the reason and leaves the plan, onto its former partner's
# box runs fuse-in. Box positions are read from the screen, not assumed.
# Usage: tui_plan_drag.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_plan_drag.sh PARTBENCH}")
root=$(pwd)
model=$root/tests/data/branch_kinds.dot
. "$(dirname "$0")/lib/tui_tmux.sh" drag
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
# drag FROM_TEXT X Y
drag() {
	local xy
	xy=$(at "$1")
	[ -n "$xy" ] || fail "no box '$1' on screen"
	set -- $xy "$2" "$3"
	mouse 0 "$1" "$2"
	wait_for "node [0-9]+ s1b"
	mouse 3 "$3" "$4"
}

tm -f /dev/null new-session -d -s "$sess" -x 160 -y 40 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$model'; echo PB_EXIT=\$?; sleep 600"
wait_for 'branch_kinds.dot: [0-9]+ nodes'
cmd 'fuse'
wait_for 'plan fuse/branch-groups'
wait_for '[0-9]+ boxes'

# fuse-out: s1b onto empty canvas (the far right of the canvas, row 1)
drag 'Relu s1b' 100 1
wait_for "took 's1b' out of its fusion group"
wait_for 'plan fuse/manual'
wait_for 'launches +[0-9]+ -> [0-9]+'

# refused: onto Input s2, whose group holds s1, a predecessor of s1b
xy=$(at 'Input s2')
drag 'Relu s1b' $xy
wait_for "fuse-in: 's1b' and 's1' are not parallel \\(a path joins them\\)"
screen
grep -q "put 's1b'" "$tmp/screen" && fail "a refused edit changed the plan"

# fuse-in: back with s2b
xy=$(at 'Relu s2b')
drag 'Relu s1b' $xy
wait_for "put 's1b' into the fusion group of 's2b'"
wait_for 'launches +17 -> 16'
cmd 'q!'
wait_for 'PB_EXIT=0'
echo "ok: tui_plan_drag"
