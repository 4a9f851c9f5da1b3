#!/usr/bin/env bash
# bench_tui.sh — speed of the workbench, measured on the real binary inside a
# private tmux server (120x40) with PB_TUI_TIMING (docs/tui.md):
#  - time to first frame (start-up incl. model load and the instant layout)
#    and to the first frame with Graphviz dot's layout, for resnet18,
#    bert_base_like and swin_t (median of RUNS starts);
#  - time from key to finished redraw while moving a layer back and forth
#    between two groups with '>' / '<' on bert_base_like (each key runs
#    'boundary G ±1', re-evaluates the plan and redraws), and for panning.
# Usage: bench/bench_tui.sh [PARTBENCH] [RUNS]    (from the repository root)
set -u
bin=$(realpath "${1:-build/partbench}")
runs=${2:-3}
root=$(pwd)
sock=pbbench-$$
tm() { tmux -L "$sock" "$@"; }
tmp=$(mktemp -d /tmp/pb_bench_tui.XXXXXX)
trap 'tm kill-server 2>/dev/null; rm -rf "$tmp"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'; }
stats() { # prints median p95 max of the numbers on stdin
	sort -n | awk '{a[NR]=$1} END {if (!NR) {print "- - -"; exit}
		p=int(NR*0.95+0.5); if (p<1) p=1; printf "%.2f %.2f %.2f (n=%d)\n", a[int((NR+1)/2)], a[p], a[NR], NR}'
}
wait_log() { # wait_log PATTERN FILE SECONDS
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt $end ]; do
		grep -q "$1" "$2" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
wait_screen() {
	local end=$((SECONDS + $2))
	while [ $SECONDS -lt $end ]; do
		tm capture-pane -p -t "$sess" 2>/dev/null | grep -qE "$1" && return 0
		sleep 0.05
	done
	return 1
}
n_sess=0
start() { # start MODEL LAYOUT LOG: a new session (killing the last one could end the server)
	n_sess=$((n_sess + 1))
	sess=pb$n_sess
	tm -f /dev/null new-session -d -s "$sess" -x 120 -y 40 \
		"env LANG=C.UTF-8 PB_TUI_TIMING='$3' '$bin' '$root/$1' --layout '$root/$2'; sleep 600"
}

echo "# bench_tui: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -m), runs=$runs"
printf "%-20s %8s %16s %14s %8s\n" model nodes first_frame_ms dot_frame_ms boxes
for m in resnet18 bert_base_like swin_t; do
	: >"$tmp/ff" && : >"$tmp/df"
	for r in $(seq "$runs"); do
		log=$tmp/$m.$r.log
		start "models/$m.onnx" layouts/manycore-16.lua "$log"
		wait_log dot_frame_ms "$log" 120 || echo "  ($m run $r: no dot frame within 120 s)"
		tm send-keys -t "$sess" q
		sleep 0.3
		awk '/^first_frame_ms/{print $2}' "$log" >>"$tmp/ff"
		awk '/^dot_frame_ms/{print $2}' "$log" >>"$tmp/df"
		boxes=$(awk '/^dot_frame_ms/{print $4}' "$log")
	done
	nodes=$("$bin" info "models/$m.onnx" 2>/dev/null | tail -1 | grep -oE '[0-9]+ nodes' | cut -d' ' -f1)
	printf "%-20s %8s %16s %14s %8s\n" "$m" "$nodes" "$(median <"$tmp/ff")" "$(median <"$tmp/df")" "$boxes"
done

# moving a layer on bert_base_like
log=$tmp/drag.log
start models/bert_base_like.onnx layouts/manycore-16.lua "$log"
wait_log dot_frame_ms "$log" 120
tm send-keys -t "$sess" E
wait_screen 'plan partition/exact' 60 || echo "  (no exact plan)"
tm send-keys -t "$sess" : 'view select 400' Enter
sleep 0.5
: >"$log.keys"
for i in $(seq 30); do
	tm send-keys -t "$sess" '>'
	sleep 0.15
	tm send-keys -t "$sess" '<'
	sleep 0.15
done
for i in $(seq 20); do
	tm send-keys -t "$sess" l
	sleep 0.1
	tm send-keys -t "$sess" h
	sleep 0.1
done
sleep 0.5
tm send-keys -t "$sess" q
sleep 0.3
echo
echo "key to finished redraw on bert_base_like (ms): median p95 max"
printf "  move a layer (> <, boundary G ±1): %s\n" \
	"$(awk '$1=="key_frame_ms" && ($4==62 || $4==60) {print $2}' "$log" | stats)"
printf "  pan (l h, view pan):               %s\n" \
	"$(awk '$1=="key_frame_ms" && ($4==108 || $4==104) {print $2}' "$log" | stats)"
