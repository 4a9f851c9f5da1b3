#!/usr/bin/env bash
# tui_workbench.sh — end-to-end test of the workbench: runs the real binary
# inside a private tmux server (fixed 120x40 window), sends keys and asserts
# on the captured screen. Covers: no-terminal refusal, opening resnet18 with
# a dot layout, a solver run, stepping a steppable solver and live training
# with cancel, moving a layer with keys and undoing it, a ':' command and the
# pager, '/' search, SVG export (checked with xmllint), save and reload of a
# session, refusal of a too small terminal and recovery, NO_COLOR + ASCII,
# and a clean exit (status 0).
# Usage: tui_workbench.sh PATH/TO/partbench   (run from the repository root)
set -u
# the timeouts only guard against hangs: x10 under the sanitizers (issue 40.7)
hang=1
[ -n "${PB_SANITIZED:-}" ] && hang=10
bin=$(realpath "${1:?usage: tui_workbench.sh PARTBENCH}")
root=$(pwd)
model=$root/models/resnet18.onnx
layout=$root/layouts/manycore-16.lua
sock=pbtest-$$
sess=pb
tm() { tmux -L "$sock" "$@"; }
tmp=$(mktemp -d /tmp/pb_tui.XXXXXX)
cleanup() {
	tm kill-server 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
# sanitizer builds are several times slower
limit=20
[ -n "${PB_SANITIZED:-}" ] && limit=90

fail() {
	echo "FAIL: $*"
	echo "---- screen ----"
	tm capture-pane -p -t "$sess" 2>/dev/null
	exit 1
}

screen() { tm capture-pane -p -t "$sess" >"$tmp/screen" 2>/dev/null; }

# wait_for REGEX [SECONDS]: polls the screen until REGEX matches.
wait_for() {
	local end=$((SECONDS + ${2:-$limit}))
	while [ $SECONDS -lt $end ]; do
		screen && grep -qE -- "$1" "$tmp/screen" && return 0
		sleep 0.1
	done
	fail "timed out waiting for /$1/"
}

# wait_gone REGEX: polls until REGEX no longer matches.
wait_gone() {
	local end=$((SECONDS + limit))
	while [ $SECONDS -lt $end ]; do
		screen && ! grep -qE -- "$1" "$tmp/screen" && return 0
		sleep 0.1
	done
	fail "timed out waiting for /$1/ to disappear"
}

keys() { tm send-keys -t "$sess" "$@"; }
# cmd TEXT: types a ':' command and runs it.
cmd() {
	keys :
	wait_for '^:'
	keys -l "$1"
	keys Enter
}

# settle: waits until two captures 0.2 s apart are equal (a frame is complete).
settle() {
	local end=$((SECONDS + limit))
	screen
	while [ $SECONDS -lt $end ]; do
		cp "$tmp/screen" "$tmp/prev"
		sleep 0.2
		screen
		cmp -s "$tmp/screen" "$tmp/prev" && return 0
	done
}

# row G: the partition table row of group G (text after the canvas divider).
row() {
	settle
	sed -n 's/^.*│\('"$1"' \{1,2\}[a-z].*\)$/\1/p' "$tmp/screen" | head -1
}

# ---- 1. without a terminal the workbench refuses, quickly, with exit 1
timeout $((10 * hang)) "$bin" "$model" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || fail "without a tty: exit $rc, expected 1"
grep -q "needs a terminal" "$tmp/err" || fail "without a tty: no clear message"

# ---- 2. open resnet18: title, boxes, dot layout
tm -f /dev/null new-session -d -s "$sess" -x 120 -y 40 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$model' --layout '$layout'; echo PB_EXIT=\$?; sleep 600"
wait_for 'resnet18.onnx: [0-9]+ nodes'
wait_for 'boxes, dot [0-9.]+ s'
grep -q '┌' "$tmp/screen" || fail "no box-drawing characters on the canvas"
grep -q 'no plan yet' "$tmp/screen" || fail "partition table should say there is no plan"

# ---- 3. a solver from its key: the table fills, one group is the bottleneck
keys E
wait_for 'plan partition/exact, [0-9]+ groups'
wait_for '^.*│[0-9]+ .*\*'
before=$(row 0)
[ -n "$before" ] || fail "no table row for group 0"
# the pack heuristic from its key, then back to the exact plan
keys P
wait_for 'plan partition/pack, [0-9]+ groups'
keys u
wait_for 'plan partition/exact'

# ---- 4. move a layer with a key, then undo (node 16 is the stem Conv, layer
# 0: the 16 weight copies before it go with the layers that read them)
cmd 'view select 16'
wait_for 'sel 16 '
keys '>'
wait_for 'groups 0-1 \[cores [0-9]+-[0-9]+ layers'
wait_for 'plan partition/manual'
after=$(row 0)
[ "$after" != "$before" ] || fail "group 0's row did not change after moving a layer: $after"
keys u
wait_for 'plan partition/exact'
[ "$(row 0)" = "$before" ] || fail "undo did not restore group 0: '$(row 0)' vs '$before'"

# ---- 4b. mouse: drag a box of group 1 onto a box of group 0 (xterm X10 mouse
# reports typed into the pane), which runs 'boundary 0 +N'; then undo
mouse() { # mouse BUTTONCHAR X Y (0-based cell)
	keys -l "$(printf '\033[M%s%b%b' "$1" "\\$(printf %o $((33 + $2)))" "\\$(printf %o $((33 + $3)))")"
}
settle
first1=$(sed -n 's/^.*│1  *[a-z][a-z ,0-9-]* \([0-9]*\)-[0-9]* .*$/\1/p' "$tmp/screen" | head -1)
[ -n "$first1" ] || fail "no node range for group 1 in the table"
cmd "view select $first1"
wait_for "sel $first1 "
# box tops "┌N" give the positions (characters, not bytes: the locale is UTF-8)
pos() { LC_ALL=C.UTF-8 awk -v pat="┌$1─" '{i = index($0, pat); if (i) {print length(substr($0, 1, i - 1)), NR - 1; exit}}' "$tmp/screen"; }
# Under ASan and load the press once selected nothing (1 run in 6; likely a
# layout finishing after the screen was read, which re-fits the canvas and
# moves the boxes): wait for dot to be done, read the positions, press, and
# check that the press selected the box (its node line is printed once
# more: a line equal to the one before it is counted on it, "… × N");
# otherwise read the positions again and retry, at most three times.
sel_lines() {
	screen
	LC_ALL=C.UTF-8 awk -v pat="^node $first1 .* in group 1" '$0 ~ pat {
		n = 1; if (match($0, /× [0-9]+$/)) n = substr($0, RSTART + 2) + 0; s += n }
		END { print s + 0 }' "$tmp/screen"
}
pressed=0
for try in 1 2 3; do
	wait_for 'boxes, dot [0-9.]+ s'
	settle
	p1=$(pos 1)
	p0=$(pos 0)
	[ -n "$p1" ] && [ -n "$p0" ] || break
	n0=$(sel_lines)
	set -- $p1
	mouse ' ' $(($1 + 2)) $(($2 + 1))
	end=$((SECONDS + 5))
	while [ $SECONDS -lt $end ] && [ "$(sel_lines)" -le "$n0" ]; do sleep 0.1; done
	if [ "$(sel_lines)" -gt "$n0" ]; then
		set -- $p0
		mouse '#' $(($1 + 2)) $(($2 + 1))
		pressed=1
		break
	fi
	echo "note: the press on node $first1 (try $try) selected nothing; reading the screen again"
done
if [ $pressed = 1 ]; then
	wait_for 'plan partition/manual'
	wait_for 'groups 0-1 \[cores [0-9]+-[0-9]+ layers'
	keys u
	wait_for 'plan partition/exact'
elif [ -z "$p1" ] || [ -z "$p0" ]; then
	fail "boxes of groups 0 and 1 are not both on screen around node $first1"
else
	fail "three presses on node $first1's box selected nothing"
fi

# ---- 5. ':' commands: short output in the pane, long output in the pager
cmd 'layout'
wait_for 'layout chip16 \(manycore\) from'
cmd 'lua return 6 * 7'
wait_for '^42$'
# the rest of a ':lua' line is code as typed: quotes and spaces stay
cmd 'lua print("lua  " .. "sees quotes")'
wait_for '^lua  sees quotes$'
echo 'print("sourced " .. 7 * 6)' >"$tmp/s.lua"
cmd 'source s.lua'
wait_for '^sourced 42$'
cmd 'help'
wait_for 'output \(q closes\)'
wait_for '^  repeat +run a command N times'
keys q
wait_gone 'output \(q closes\)'
keys '?'
wait_for 'help \(q closes\)'
wait_for '^  Left +view pan -8 0 +show or change the view'
keys q
wait_gone 'help \(q closes\)'
# Tab completion from the command table
keys :
wait_for '^:'
keys -l 'repe'
keys Tab
wait_for '^:repeat$'
keys Escape
wait_gone '^:repeat'
# ... and --method values from the partition method registry
keys :
wait_for '^:'
keys -l 'partition --method mi'
keys Tab
wait_for '^:partition --method milp'
keys C-u
keys -l 'partition --method='
keys Tab
wait_for 'equal exact greedy local milp pack rl'
keys Escape
wait_gone '^:partition'

# ---- 6. '/' search by regex
keys /
wait_for '^/'
keys -l 'layer3.*conv2'
keys Enter
wait_for "[0-9]+ match(es)? for 'layer3.\*conv2'; selected ([0-9]+)"
sel=$(grep -oE "selected [0-9]+" "$tmp/screen" | tail -1 | cut -d' ' -f2)
wait_for "sel $sel "
keys n
wait_for "sel [0-9]+ "

# ---- 7. step a solver and train live; Esc cancels (other keys navigate)
if "$bin" partition "$model" --layout "$layout" --method rl --episodes 1 >/dev/null 2>&1; then
	# enough episodes that the solver cannot finish (and end the repeat) before
	# the cancelling key arrives, however fast or slow the machine is
	cmd 'partition --method rl --start --episodes 100000000'
	wait_for 'partition/rl attached'
	keys s
	wait_for 'objective \(partition/rl, [0-9]+ steps\)'
	cmd 'repeat 100000 step'
	wait_for 'Esc/Ctrl-C cancel'
	keys z
	keys Escape
	wait_for 'repeat: cancelled after [0-9]+ of 100000'
	# the MILP steps show the incumbent and the proven bound
	cmd 'partition --method milp --start'
	wait_for 'partition/milp attached'
	keys S
	wait_for 'objective \(partition/milp, [0-9]+ steps\)'
	wait_for 'last [0-9.]+ [mu]?s  best [0-9.]+ [mu]?s  bound ([0-9.]+ [mu]?s|—)'
else
	echo "note: 'partition --method rl' is not available; stepping local search instead"
	cmd 'partition --method local --start'
	wait_for 'plan partition/local'
	keys s
	wait_for 'objective \(partition/local, [0-9]+ steps\)'
	keys T
	wait_for 'objective \(partition/local, [0-9]{2,} steps\)'
fi

# ---- 8. export the view (with the exact plan) to SVG
keys E
wait_for 'plan partition/exact'
keys x
wait_for 'wrote partbench\.svg'
[ -s "$tmp/partbench.svg" ] || fail "export did not write partbench.svg"
xmllint --noout "$tmp/partbench.svg" || fail "partbench.svg is not well-formed XML"
# the issue's own words: ':export out.svg'
cmd 'export out.svg'
wait_for 'wrote out\.svg'
xmllint --noout "$tmp/out.svg" || fail ":export out.svg did not write well-formed XML"

# ---- 9. save, change, load: the saved plan comes back
saved=$(row 0)
cmd 'save s.json'
wait_for 'session saved to s.json'
wait_gone '\[\+\] unsaved'
# nothing unsaved: Ctrl-C asks whether to quit; n stays
keys C-c
wait_for 'quit partbench\? \(y/n\)'
keys n
wait_gone 'quit partbench'
cmd 'view select 16'
keys '>'
wait_for 'plan partition/manual'
[ "$(row 0)" != "$saved" ] || fail "moving a layer did not change group 0"
cmd 'load s.json'
wait_for 'session loaded from s.json'
wait_for 'plan partition/exact'
[ "$(row 0)" = "$saved" ] || fail "load did not restore group 0: '$(row 0)' vs '$saved'"

# ---- 10. too small a terminal is refused with a message, then recovers
tm resize-window -t "$sess" -x 70 -y 20
wait_for 'needs at least 80x24'
tm resize-window -t "$sess" -x 120 -y 40
wait_for 'resnet18.onnx: [0-9]+ nodes'

# ---- 10b. 64 cores: long group labels ("cores 48-63") are shortened, not cut
cmd "layout $root/layouts/manycore-64.lua"
wait_for 'layout chip64'
cmd 'partition --method exact'
wait_for 'plan partition/exact, [0-9]+ groups'
settle
grep -qE '│[0-9]+ +c [0-9]+-[0-9]+ ' "$tmp/screen" || fail "64-core labels not shown as 'c A-B'"
grep -qE '│[0-9]+ +cores [0-9]+-[0-9]?( |$)' "$tmp/screen" && fail "a 'cores A-B' label is cut"

# ---- 11. a larger model opens collapsed; Enter opens a block, Backspace closes it
cmd "open $root/models/bert_base_like.onnx"
wait_for 'bert_base_like.onnx: [0-9]+ nodes'
wait_for '║'
nodes=$(grep -oE 'bert_base_like.onnx: [0-9]+' "$tmp/screen" | head -1 | grep -oE '[0-9]+$')
boxes=$(grep -oE '\| [0-9]+ boxes' "$tmp/screen" | grep -oE '[0-9]+')
[ "$boxes" -lt "$nodes" ] || fail "bert_base_like is not collapsed: $boxes boxes for $nodes nodes"
cmd 'view select 0'
wait_for 'sel 0 '
keys Enter
wait_gone "\\| $boxes boxes"
opened=$(grep -oE '\| [0-9]+ boxes' "$tmp/screen" | grep -oE '[0-9]+')
[ "$opened" -gt "$boxes" ] || fail "Enter did not open the block ($opened vs $boxes boxes)"
keys BSpace
wait_for "\\| $boxes boxes"

# ---- 12. quit: the session has unsaved changes (a layout and a plan since
# the load), so q asks; c stays, d discards and quits
wait_for '\[\+\] unsaved'
keys q
wait_for 'unsaved changes: s save to s.json and quit, d discard and quit, c cancel'
keys c
wait_for 'quit cancelled'
keys q
wait_for 'unsaved changes'
keys d
wait_for 'PB_EXIT=0'

# ---- 13. NO_COLOR and a non-UTF-8 locale: ASCII boxes, group numbers shown
sess=pb2 # a second session: killing the only one could end the server
tm new-session -d -s "$sess" -x 80 -y 24 -c "$tmp" \
	"env NO_COLOR=1 LANG=C LC_ALL=C '$bin' '$model' --layout '$layout' --no-mouse; echo PB_EXIT=\$?; sleep 600"
wait_for 'resnet18.onnx'
wait_for 'mouse off'
keys E
wait_for 'plan partition/exact'
wait_for '\+[0-9]+\*?-+\+'
# Ctrl-C with nothing running asks before quitting (here: what to do with
# the unsaved plan)
keys C-c
wait_for 'unsaved changes'
keys c
wait_for 'quit cancelled'
keys q
wait_for 'unsaved changes'
keys d
wait_for 'PB_EXIT=0'
echo "tui_workbench: all checks passed"
