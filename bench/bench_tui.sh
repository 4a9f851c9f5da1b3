#!/usr/bin/env bash
# bench_tui.sh — speed of the workbench, measured on the real binary inside a
# private tmux server (120x40) with PB_TUI_TIMING (docs/tui.md):
#  - time to first frame (start-up incl. model load and the instant layout)
#    and to the first frame with Graphviz dot's layout, for resnet18,
#    bert_base_like and swin_t (median of RUNS starts);
#  - time from key to finished redraw while moving a layer back and forth
#    between two groups with '>' / '<' on bert_base_like (each key runs
#    'boundary G ±1', re-evaluates the plan and redraws), and for panning.
#  - the longest gaps between two frames while a job runs (every command
#    that is not navigation runs in slices, docs/tui.md "Jobs"): p50/p99/max
#    of PB_TUI_TIMING's job_frame_ms for each solver and long operation on
#    swin_t x manycore-64 and an Inception-v3-sized model (313 nodes, made by
#    bench/gen_inception_v3.py); a job still running after JOB_SECONDS is
#    cancelled with Esc (the cancel's own frames included), and the time the
#    workbench took from reading Esc to the job's end (wall / CPU, its own
#    message); one more MILP row is cancelled as soon as its root LP shows.
# Usage: bench/bench_tui.sh [PARTBENCH] [RUNS] [all|jobs]   (from the repository root)
#        JOB_SECONDS=8 by default; JOB_FILTER=TEXT runs only the job rows whose
#        "model command" contains TEXT (e.g. JOB_FILTER='swin_t map').
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
	local m=$1
	case $m in /*) ;; *) m=$root/$m ;; esac
	tm -f /dev/null new-session -d -s "$sess" -x 120 -y 40 \
		"env LANG=C.UTF-8 PB_TUI_TIMING='$3' '$bin' '$m' --layout '$root/$2'; sleep 600"
}

echo "# bench_tui: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -m), runs=$runs"
part=${3:-all}
if [ "$part" = all ]; then
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
tm send-keys -t "$sess" q && sleep 0.2 && tm send-keys -t "$sess" d # unsaved: discard
sleep 0.3
echo
echo "key to finished redraw on bert_base_like (ms): median p95 max"
printf "  move a layer (> <, boundary G ±1): %s\n" \
	"$(awk '$1=="key_frame_ms" && ($4==62 || $4==60) {print $2}' "$log" | stats)"
printf "  pan (l h, view pan):               %s\n" \
	"$(awk '$1=="key_frame_ms" && ($4==108 || $4==104) {print $2}' "$log" | stats)"
fi

# ---- frame gaps while jobs run
job_secs=${JOB_SECONDS:-8}
pstats() { # p50 p99 max (n) of the numbers on stdin
	sort -n | awk '{a[NR]=$1} END {if (!NR) {print "- - - (n=0)"; exit}
		p=int(NR*0.99+0.5); if (p<1) p=1; printf "%8.1f %8.1f %8.1f  (n=%d)\n", a[int((NR+1)/2)], a[p], a[NR], NR}'
}
job() { # job MODEL LAYOUT COMMAND [REGEX]: runs COMMAND from the ':' line, prints the
	# gaps; with REGEX it is cancelled once REGEX is on screen (e.g. the MILP's stage)
	local log=$tmp/job.$n_sess.log t0 label="$3"
	[ -n "${4:-}" ] && label="$3 (Esc at /$4/)"
	case "$(basename "$1" .onnx) $label" in *${JOB_FILTER:-}*) ;; *) return 0 ;; esac
	start "$1" "$2" "$log"
	wait_log dot_frame_ms "$log" 120 || true
	sleep 0.3
	tm send-keys -t "$sess" :
	sleep 0.2
	tm send-keys -t "$sess" -l "$3"
	sleep 0.2
	tm send-keys -t "$sess" Enter
	t0=$SECONDS
	local state=done
	# done: a frame was logged since the start and the busy line is gone
	# (a job that holds the screen shows neither until its first slice ends)
	while ! grep -q job_frame_ms "$log" || tm capture-pane -p -t "$sess" | grep -q 'Esc/Ctrl-C cancel'; do
		if [ $state = done ] && { { [ -z "${4:-}" ] && [ $((SECONDS - t0)) -ge "$job_secs" ]; } ||
			{ [ -n "${4:-}" ] && tm capture-pane -p -t "$sess" | grep -qE "$4"; }; }; then
			tm send-keys -t "$sess" Escape
			state=cancelled
		fi
		[ $((SECONDS - t0)) -ge $((job_secs + 120)) ] && { state=stuck; break; }
		sleep 0.1
	done
	[ -n "${JOB_LOGS:-}" ] && cp "$log" "$JOB_LOGS/$(basename "$1" .onnx).$n_sess.log"
	# a cancel's latency as the workbench measured it (tui/jobs.c): from reading
	# Esc to the job's end, wall / this process's CPU
	local lat=-
	if [ $state = cancelled ]; then
		sleep 0.3
		tm capture-pane -p -t "$sess" >"$tmp/screen"
		lat=$(grep -oE 'stopped [0-9]+ ms after the key, [0-9]+ ms CPU' "$tmp/screen" |
			tail -1 | awk '{print $2 "/" $7}')
		# no message at all: the job ended before it read Esc
		grep -q "^cancelled '" "$tmp/screen" || state=done
		[ -n "$lat" ] || lat=-
	fi
	printf "  %-16s %-52s %-9s %s  %s\n" "$(basename "$1" .onnx)" "$label" "$state" \
		"$(awk '$1=="job_frame_ms" {print $2}' "$log" | pstats)" "$lat"
	# long output opens the pager after the job (its frames count: the pager is a mode of the one loop, tui/mode_pager.c)
	tm capture-pane -p -t "$sess" | grep -q '(q closes)' && tm send-keys -t "$sess" q && sleep 0.2
	tm send-keys -t "$sess" ':'
	sleep 0.2
	tm send-keys -t "$sess" -l 'q!'
	sleep 0.2
	tm send-keys -t "$sess" Enter
	sleep 0.3
}
inc=$tmp/inception_v3_like.onnx
/usr/bin/python3 bench/gen_inception_v3.py "$inc" >/dev/null
echo
echo "frame gaps while a job runs (ms; jobs still running after ${job_secs} s are cancelled with Esc)"
printf "  %-16s %-52s %-9s %8s %8s %8s  %-7s %s\n" model command state p50 p99 max n \
	"cancel ms (wall/CPU)"
for m in models/swin_t.onnx "$inc"; do
	for c in "partition --method exact" "partition --method greedy" "partition --method pack" \
		"partition --method local" "partition --method milp" "partition --method rl --seconds 5" \
		"fuse" "map --layout $root/layouts/hetero.lua" "export -o $tmp/x.svg" "open $(realpath "$m")"; do
		job "$m" layouts/manycore-64.lua "$c"
	done
	# the MILP cancelled inside GLPK's root LP (its progress names the stage)
	job "$m" layouts/manycore-64.lua "partition --method milp" 'milp: root LP: '
	job "$m" layouts/manycore-64.lua "shard --layout $root/layouts/cluster-2x8.lua -j 1"
	job "$m" layouts/manycore-64.lua "pipeline --layout $root/layouts/cluster-2x8.lua"
done
