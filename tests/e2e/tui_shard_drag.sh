#!/usr/bin/env bash
# tui_shard_drag.sh — a shard plan's operator is pinned in the workbench
# (issue 37 item 3): on a generated 2-block GPT (hidden 256) x cluster-1x8,
# `:shard`, the inspector lists the selected MatMul's candidate specs; the
# MatMul's box dragged onto the 'k' row (raw X10 mouse reports through tmux)
# pins it: the plan becomes shard/manual, the node's spec is 'k' in the saved
# plan, and the step time and memory before -> after equal a fresh batch
# `shard` + `pin --json` of the same node and spec. `u` restores shard/milp's
# step time, Ctrl-R the pinned one. Without a mouse, ']' / '[' and '=' pin the
# row under the cursor ('m', compared with the batch pin the same way). Under
# a Lua candidate_filter refusing 'n', the row is marked and dropping on it is
# refused naming the rule, the plan unchanged. Rows are read from the screen.
# Usage: tui_shard_drag.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_shard_drag.sh PARTBENCH}")
root=$(pwd)
layout=$root/layouts/cluster-1x8.lua
node=h0.mlp.fc.matmul
. "$(dirname "$0")/lib/tui_tmux.sh" sharddrag
model=$tmp/gpt2.onnx
"$bin" gen gpt --layers 2 --hidden 256 --heads 4 --seq 128 --vocab 1000 -o "$model" >/dev/null ||
	fail "gen gpt"

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
# spec_row LABEL: "X Y" of the inspector's candidate row of LABEL (the rows
# below 'specs (op time, mem/dev)', each '[>][*]LABEL time mem')
spec_row() {
	screen
	python3 - "$tmp/screen" "$1" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
top = next(y for y, l in enumerate(lines) if 'specs (op time' in l)
x0 = lines[top].index('specs (')
for y in range(top + 1, len(lines)):
    m = re.match(r'[ >][ *](\S+)\s', lines[y][x0:])
    if not m:
        break
    if m.group(1) == sys.argv[2]:
        print(x0 + 3, y)
        break
PY
}
# mouse BUTTON X Y: an X10 mouse report (button 0 press, 3 release)
mouse() {
	keys -l "$(printf "\033[M$(printf '\\%03o\\%03o\\%03o' $((32 + $1)) $((33 + $2)) $((33 + $3)))")"
}
# the batch figures of pinning $node to SPEC on a fresh shard plan, as the
# edit's lines print them ("step_time A -> B", "memory_per_device A -> B")
# (after pinning it to PREV first, when given)
batch_lines() {
	local plan=$tmp/fresh.json
	"$bin" shard "$model" --layout "$layout" -o "$plan" >/dev/null || fail "batch shard"
	if [ -n "${2:-}" ]; then
		"$bin" pin "$model" --layout "$layout" --plan "$plan" --node $node --spec "$2" \
			-o "$tmp/prev.json" >/dev/null || fail "batch pin $2"
		plan=$tmp/prev.json
	fi
	"$bin" pin "$model" --layout "$layout" --plan "$plan" --node $node --spec "$1" \
		>"$tmp/batch.txt" || fail "batch pin"
	grep -E '^  (step_time|memory_per_device) ' "$tmp/batch.txt" | sed 's/  */ /g'
}
# check_edit SPEC [PREV]: the screen's last edit lines equal the batch
# pin's, and the saved plan gives $node the spec SPEC
check_edit() {
	batch_lines "$1" "${2:-}" >"$tmp/want"
	[ "$(wc -l <"$tmp/want")" = 2 ] || fail "batch pin printed no figures: $(cat "$tmp/batch.txt")"
	screen
	grep -E '^  (step_time|memory_per_device) ' "$tmp/screen" | tail -2 | sed 's/  */ /g' >"$tmp/got"
	diff "$tmp/want" "$tmp/got" >/dev/null || fail "figures $(cat "$tmp/got") != batch $(cat "$tmp/want")"
	rm -f "$tmp/s.json"
	cmd "save $tmp/s.json"
	local end=$((SECONDS + limit))
	until [ -s "$tmp/s.json" ] || [ $SECONDS -ge $end ]; do sleep 0.1; done
	python3 - "$tmp/s.json" "$1" <<'PY' || fail "saved plan: $node is not $1"
import json, sys
p = json.load(open(sys.argv[1]))['plan']
op = [o for o in p['detail']['ops'] if o['name'] == 'h0.mlp.fc.matmul'][0]
assert op['strategy'] == sys.argv[2], op
assert p['method'] == 'manual'
PY
}

tm -f /dev/null new-session -d -s "$sess" -x 160 -y 45 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$model' --layout '$layout'; echo PB_EXIT=\$?; sleep 600"
wait_for 'gpt2.onnx: [0-9]+ nodes'
cmd 'shard'
wait_for 'plan shard/milp'
title0=$(tm capture-pane -p -t "$sess" | head -1 | grep -oE 'step_time [0-9.]+ [a-z]+')
cmd "view select $node"
wait_for "Node [0-9]+/[0-9]+: MatMul"
wait_for 'specs \(op time'
wait_for '\[\]=:pin drag:pin'

# drag the MatMul's box onto the 'k' row
box=$(at "MatMul $node")
[ -n "$box" ] || fail "no box 'MatMul $node' on screen"
row=$(spec_row k)
[ -n "$row" ] || fail "no candidate row 'k'"
set -- $box
mouse 0 "$1" "$2"
wait_for "sel [0-9]+ $node"
set -- $row
mouse 3 "$1" "$2"
wait_for 'plan shard/manual'
wait_for "for scheme 8 with 1 pinned spec"
check_edit k
wait_for "[>][*]k "

# undo, redo
keys u
wait_for "plan shard/milp, [0-9]+ groups, $title0"
keys C-r
wait_for 'plan shard/manual'

# the keys: the cursor to 'm', '=' pins it
for i in 1 2 3 4 5 6 7 8; do
	screen
	grep -qE '>[ *]m ' "$tmp/screen" && break
	keys '['
	sleep 0.2
done
wait_for '>[ *]m '
keys '='
wait_for "[>][*]m "
check_edit m k

# a Lua candidate filter refusing 'n': marked, and the drop refused naming it
cat >"$tmp/no_n.lua" <<'EOF'
pb.heuristic{ name = "no_n", kind = "candidate_filter",
  fn = function(node, c) return c.label ~= "n" end }
EOF
cmd "source $tmp/no_n.lua"
cmd "view select $node"
wait_for ' n +[0-9.]+ [a-z]+ +[0-9.]+ [A-Z]*B rule'
box=$(at "MatMul $node")
row=$(spec_row n)
set -- $box
mouse 0 "$1" "$2"
wait_for "sel [0-9]+ $node"
set -- $row
mouse 3 "$1" "$2"
wait_for "spec 'n' of node '$node' is refused by the rule 'no_n \\(Lua candidate_filter\\)'"
wait_for "[>][*]m "
cmd 'q!'
wait_for 'PB_EXIT=0'
echo "ok: tui_shard_drag"
