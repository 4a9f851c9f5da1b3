#!/usr/bin/env bash
# tui_map_title.sh — a map plan's figures say what they are (issue 37.6). The
# title showed "max_time 4.846 ms" (the pipelined time of a stream of 16
# inputs) next to a groups table whose times are per input (0.303 ms): the
# title now reads "4.846 ms pipelined for a stream of 16 inputs", its gap
# "on one input" (the bound is one input's serial time), and the table's
# footer "time per input". Both figures are checked against the batch
# `map` report of the same model and layout (resnet18 on hetero.lua):
# its "stream of 16 inputs: ... pipelined T" and its busiest backend's
# "busy B per input".
# Usage: tui_map_title.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_map_title.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" maptitle

"$bin" map "$root/models/resnet18.onnx" --layout "$root/layouts/hetero.lua" >"$tmp/map.txt" 2>&1 ||
	fail "map failed: $(tail -3 "$tmp/map.txt")"
stream=$(grep -oE '^stream of [0-9]+ inputs' "$tmp/map.txt" | grep -oE '[0-9]+')
piped=$(grep -oE '^stream of [0-9]+ inputs: serial [0-9.]+ [mu]?s, pipelined [0-9.]+ [mu]?s' "$tmp/map.txt" |
	sed 's/.*pipelined //')
[ -n "$stream" ] && [ -n "$piped" ] || fail "no stream line in the map report: $(cat "$tmp/map.txt")"
# the bottleneck backend's busy time per input, in ms as the groups table prints it
busy=$(grep -E 'busy [0-9.]+ [mu]?s per input +\(bottleneck\)' "$tmp/map.txt" |
	grep -oE 'busy [0-9.]+ [mu]?s' | awk '{ v = $2; if ($3 == "us") v /= 1000; else if ($3 == "s") v *= 1000; printf "%.3f", v }')
[ -n "$busy" ] || fail "no bottleneck backend in the map report"

tm -f /dev/null new-session -d -s "$sess" -x 200 -y 45 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$root/models/resnet18.onnx' --layout '$root/layouts/hetero.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for 'resnet18.onnx: [0-9]+ nodes'
cmd 'map'
# the report may open the pager over the whole screen, title included
wait_for 'plan map/|q closes' $((limit * 3))
sleep 0.3
screen
grep -q 'q closes' "$tmp/screen" && keys q
wait_for "plan map/[a-z-]+, [0-9]+ groups?, $piped pipelined for a stream of $stream inputs"
grep -q 'max_time' <(head -n 1 "$tmp/screen") && fail "the title still says max_time: $(head -n 1 "$tmp/screen")"
grep -qE 'best found \(gap [0-9.]+% on one input\)' <(head -n 1 "$tmp/screen") ||
	fail "the title's gap does not say it is one input's: $(head -n 1 "$tmp/screen")"
wait_for 'time per input +\* bottleneck'
# the bottleneck row of the groups table: its time is the report's per-input busy time
grep -E "│[0-9]+ .* $busy .*\*" "$tmp/screen" >/dev/null ||
	fail "the bottleneck backend's row does not show $busy ms per input"
cmd 'q!'
wait_for 'PB_EXIT=0'
echo "ok: tui_map_title ($piped for $stream inputs, $busy ms per input)"
