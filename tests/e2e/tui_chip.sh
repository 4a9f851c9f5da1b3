#!/usr/bin/env bash
# tui_chip.sh — the workbench's chip view (docs/tui.md, "Chip view";
# docs/mesh.md), driven through tmux on tests/data/identity_resnet.onnx x
# layouts/manycore-16-mesh.lua: `H` before any plan says there is no placed
# plan; after `partition --place snake` the side column draws the 4x4 mesh,
# one cell per core showing its group, and the cells equal the plan's
# placement (read back through Lua); selecting a node in the graph reverses
# the cells of its group and no other; a click on a cell selects a node of
# that cell's group; `move-core` redraws the moved core and `u` restores it;
# dragging a core onto a neighbouring group's core runs the same move-core;
# `H` hides the view again. A clean exit.
# Usage: tui_chip.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_chip.sh PARTBENCH}")
root=$(pwd)
model=$root/tests/data/identity_resnet.onnx
. "$(dirname "$0")/lib/tui_tmux.sh" chip

# cells: the chip's 16 cells from a capture with escapes (tmux capture-pane
# -e), row-major, each "G" or "G!" when drawn reversed (SGR 7); "none" when
# no chip is on screen.
cells() {
	tm capture-pane -e -p -t "$sess" >"$tmp/screen_e" 2>/dev/null
	python3 - "$tmp/screen_e" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
top = [i for i, l in enumerate(lines) if 'Chip 4x4' in l]
if not top:
    print('none')
    sys.exit(0)
out = []
for r in range(4):
    side = lines[top[0] + 1 + 2 * r].rsplit('\u2502', 1)[1]
    rev, text = False, []
    for m in re.finditer(r'\x1b\[([0-9;]*)m|([^\x1b])', side):
        if m.group(2) is not None:
            text.append((m.group(2), rev))
            continue
        codes = [int(c) if c else 0 for c in m.group(1).split(';')]
        for c in codes:
            if c in (0, 27):
                rev = False
            elif c == 7:
                rev = True
    for c in range(4):
        cell = text[3 * c:3 * c + 2]
        g = ''.join(ch for ch, _ in cell).strip()
        out.append(g + ('!' if any(rv for ch, rv in cell if ch != ' ') else ''))
print(' '.join(out))
PY
}
# placement: the plan's placement as Lua reads it, row-major
# (a fresh tag per call, so an earlier answer is never read)
placement() {
	local nq=$RANDOM$RANDOM
	cmd "lua return \"placement$nq: \" .. table.concat(pb.plan().detail.mesh.placement, \" \")"
	wait_for "^placement$nq: [0-9 ]+\$" >&2
	grep -E "^placement$nq: [0-9 ]+\$" "$tmp/screen" | tail -1 | sed "s/^placement$nq: //"
}
# mouse BUTTON X Y: an X10 mouse report (button 0 press, 3 release)
mouse() {
	keys -l "$(printf "\033[M$(printf '\\%03o\\%03o\\%03o' $((32 + $1)) $((33 + $2)) $((33 + $3)))")"
}
strip_rev() { echo "$1" | tr -d '!'; }
# only_rev G: 0 when the cells reversed are exactly those of group G
only_rev() {
	local c
	for c in $(cells); do
		case $c in
		"$1!") ;;
		*! | "$1") return 1 ;;
		esac
	done
}
# wait_rev G WHAT: polls until only_rev G, else fails naming WHAT
wait_rev() {
	local end=$((SECONDS + limit))
	until only_rev "$1"; do
		[ $SECONDS -lt $end ] || fail "$2: reversed cells are not exactly group $1's: $(cells)"
		sleep 0.1
	done
}

tm -f /dev/null new-session -d -s "$sess" -x 160 -y 45 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$model' --layout '$root/layouts/manycore-16-mesh.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for 'identity_resnet.onnx: [0-9]+ nodes'
wait_for '[0-9]+ boxes'
grep -q 'Chip' "$tmp/screen" && fail "chip view shown before H"

keys H
wait_for 'no placed plan'
cmd 'partition -m greedy --place snake'
wait_for 'plan partition/greedy, 4 groups'
wait_for 'Chip 4x4 xy, I/O \(0,0\)'
wait_for 'links \. : \* # of max [0-9.]+ MB'
pl=$(placement)
got=$(strip_rev "$(cells)")
[ "$got" = "$pl" ] || fail "chip cells '$got' differ from the placement '$pl'"

# graph -> chip: a node of group 2 reverses exactly the cells of group 2
cmd 'lua local a = pb.plan().assignment; for i = 1, #a do if a[i] == 2 then return "node2: " .. (i - 1) end end'
wait_for '^node2: [0-9]+$'
n2=$(grep -E '^node2: ' "$tmp/screen" | tail -1 | sed 's/^node2: //')
cmd "view select $n2"
wait_for "sel $n2 "
wait_rev 2 "node $n2 (group 2) selected"

# chip -> graph: a click on the cell at row 3 col 0 selects a node of its group
g=$(echo "$pl" | cut -d' ' -f13)
screen
set -- $(python3 - "$tmp/screen" <<'PY'
import sys
lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
y = [i for i, l in enumerate(lines) if 'Chip 4x4' in l][0]
print(lines[y].index('Chip'), y)
PY
)
cx=$1 cy=$2
mouse 0 $((cx + 1)) $((cy + 1 + 2 * 3))
mouse 3 $((cx + 1)) $((cy + 1 + 2 * 3))
# (the keys and clicks are read in order; poll: the status line showed
# sel $n2 before the click)
end=$((SECONDS + limit))
while :; do
	screen
	sel=$(grep -oE 'sel [0-9]+ ' "$tmp/screen" | tail -1 | tr -dc '0-9')
	[ -n "$sel" ] && [ "$sel" != "$n2" ] && break
	[ $SECONDS -lt $end ] || fail "the click did not change the selection"
	sleep 0.1
done
cmd "lua return \"group: \" .. pb.plan().assignment[$sel + 1]"
wait_for '^group: [0-9]+$'
grep -qE "^group: $g\$" "$tmp/screen" || fail "the click on a core of group $g selected node $sel of another group"
wait_rev "$g" "after the click on a core of group $g"

# an edit on the chip: core (1,3) of group 0 to its neighbour group 1; undo
set -- $pl
[ "$8" = 0 ] && [ "$7" = 1 ] || fail "snake placement changed: $pl (the move below assumes (1,3)=0, (1,2)=1)"
cmd 'move-core 1 3 1'
wait_for 'placed max\(t\)'
pl2=$(placement)
got=$(strip_rev "$(cells)")
[ "$(echo "$pl2" | cut -d' ' -f8)" = 1 ] || fail "move-core did not move core (1,3): $pl2"
[ "$got" = "$pl2" ] || fail "after move-core, chip cells '$got' differ from the placement '$pl2'"
keys u
wait_for '^undo: '
pl3=$(placement)
[ "$pl3" = "$pl" ] || fail "undo: placement $pl3, expected $pl"
got=$(strip_rev "$(cells)")
[ "$got" = "$pl" ] || fail "after undo, chip cells '$got' differ from the placement '$pl'"

# the same move by mouse: drag core (1,3) onto (1,2), a core of group 1
mouse 0 $((cx + 3 * 3 + 1)) $((cy + 1 + 2 * 1))
mouse 3 $((cx + 3 * 2 + 1)) $((cy + 1 + 2 * 1))
# the edit's message, a second time (the typed move-core gave the first)
end=$((SECONDS + limit))
until screen && [ "$(grep -c 'core (1,3): group 0 (5 -> 4 cores) -> group 1' "$tmp/screen")" -ge 2 ]; do
	[ $SECONDS -lt $end ] || fail "the drag ran no move-core"
	sleep 0.1
done
pl4=$(placement)
[ "$pl4" = "$pl2" ] || fail "drag (1,3) onto (1,2): placement $pl4, expected $pl2 (as move-core 1 3 1)"
got=$(strip_rev "$(cells)")
[ "$got" = "$pl4" ] || fail "after the drag, chip cells '$got' differ from the placement '$pl4'"
cmd 'undo'

keys H
end=$((SECONDS + limit))
until [ "$(cells)" = none ]; do
	[ $SECONDS -lt $end ] || fail "chip view stayed after the second H"
	sleep 0.1
done
screen
grep -q 'Groups (partition' "$tmp/screen" || fail "groups table gone after hiding the chip"

cmd 'q!'
wait_for 'PB_EXIT=0'
echo "ok: tui_chip"
