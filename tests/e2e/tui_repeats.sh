#!/usr/bin/env bash
# tui_repeats.sh — a line written again and again in a row takes one row of
# the output pane with its count (docs/tui.md, "Output pane"): `T` (repeat 100
# step) after the MILP proved resnet18's partition optimal printed 100 rows
# of "... proved optimal (done)" that pushed everything else out of the pane
# and the 'o' pager; now the pane shows it once, "… × N", and the pager too.
# RL's per-episode lines that differ only in the episode count share a row.
# Usage: tui_repeats.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_repeats.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" repeats

tm -f /dev/null new-session -d -s "$sess" -x 120 -y 40 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$root/models/resnet18.onnx' --layout '$root/layouts/manycore-16.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for 'resnet18.onnx: [0-9]+ nodes'
keys I
wait_for 'partition/milp attached'
# 100 steps: the MILP on resnet18 x 16 cores proves its optimum in far fewer
# (7 probes, one branch-and-bound node), so most steps repeat the last line
keys T
wait_for 'proved optimal \(done\)'
wait_for 's/S:step'
# the screen ends with the repeat finished: the count stops growing
prev=
for _ in $(seq 1 100); do
	screen
	now=$(grep -c 'proved optimal (done)' "$tmp/screen")
	cnt=$(grep -oE 'proved optimal \(done\)  … × [0-9]+' "$tmp/screen" | grep -oE '[0-9]+$')
	[ -n "$cnt" ] && [ "$cnt" = "$prev" ] && break
	prev=$cnt
	sleep 0.2
done
[ "$now" = 1 ] || fail "'proved optimal (done)' takes $now rows of the pane, not one"
[ -n "$cnt" ] && [ "$cnt" -ge 2 ] || fail "no '… × N' count (N >= 2) on the repeated line"
# the lines before the repeats are still in the pane (a 7-row pane)
grep -q 'partition/milp: .*probes' "$tmp/screen" || fail "the repeats pushed the earlier lines out"
# the pager shows the same single line with its count
keys o
wait_for 'output \(q closes\)'
# (polled: a capture taken while the pager is being drawn can hold a row of the
# pane under it; CI once saw 2 rows there, 1 on the screen printed after)
end=$((SECONDS + 10))
while screen && [ "$(grep -c 'proved optimal (done)' "$tmp/screen")" != 1 ] && [ $SECONDS -lt $end ]; do
	sleep 0.1
done
[ "$(grep -c 'proved optimal (done)' "$tmp/screen")" = 1 ] || fail "the pager has more than one row of the repeated line"
grep -qE "proved optimal \(done\)  … × $cnt" "$tmp/screen" || fail "the pager's count differs from the pane's ($cnt)"
keys q
wait_for 's/S:step'
# RL writes a line per episode that differs from the one before only in its
# episode count while the plan does not improve: such a line is counted on
# the row before it (which shows the newest count), so 100 episodes take a
# row per improvement, not 100 rows
keys R
wait_for 'partition/rl attached'
keys T
wait_for 'partition/rl: .*100 episodes'
wait_for 's/S:step'
keys o
wait_for 'output \(q closes\)'
keys G
sleep 0.3
screen
rows=$(grep -c '^partition/rl: .* episodes' "$tmp/screen")
total=$(LC_ALL=C.UTF-8 awk '/^partition\/rl: .* episodes/ {
	n = 1; if (match($0, /× [0-9]+$/)) n = substr($0, RSTART + 2) + 0; s += n }
	END { print s + 0 }' "$tmp/screen")
echo "note: 100 RL episodes on $rows rows"
[ "$total" = 100 ] || fail "the episode rows stand for $total lines, not 100"
[ "$rows" -lt 100 ] || fail "every episode took a row"
# consecutive rows differ in more than their episode count
prev=
while IFS= read -r l; do
	k=$(printf '%s\n' "$l" | sed -E 's/[0-9]+ episodes.*$//')
	[ "$k" != "$prev" ] || fail "two rows differ only in the episode count: $l"
	prev=$k
done < <(grep '^partition/rl: .* episodes' "$tmp/screen")
keys q
wait_for 's/S:step'
keys q
wait_for 'unsaved changes'
keys d
wait_for 'PB_EXIT=0'
echo "tui_repeats: all checks passed"
