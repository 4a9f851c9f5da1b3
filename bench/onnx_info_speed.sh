#!/usr/bin/env bash
# onnx_info_speed.sh — `partbench info` end to end against ONNX's Python shape
# inference on the same model, in the same run, interleaved (so both see the
# same machine load). Prints per-run wall times and the ratio of medians.
#
# usage: bench/onnx_info_speed.sh [BINARY] [MODEL] [RUNS]
# BASELINE=OLD_BINARY also times an older partbench in the same loop (for
# before/after figures measured under the same load).
# The Python side is the command of issue 2 with load_external_data=False:
# the bundled models' weights are deliberately absent, and onnx.load() would
# otherwise stop with FileNotFoundError before inferring anything.
# Times are read from bash's $EPOCHREALTIME (no process is started to read
# the clock, so the figures hold only the measured command); without bash 5
# the script falls back to date(1), which adds its own start-up to each run.
set -euo pipefail
bin=${1:-build/partbench}
model=${2:-models/swin_t.onnx}
runs=${3:-11}
py=${PYTHON:-/usr/bin/python3}
base=${BASELINE:-}
pycmd='import onnx,sys; onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1], load_external_data=False))'

if [ -n "${EPOCHREALTIME:-}" ]; then
	now() { t=${EPOCHREALTIME/,/.}; }
else
	now() { t=$(date +%s.%N); }
fi
pb_times=() py_times=() base_times=()
for ((i = 0; i < runs; i++)); do
	now; t0=$t
	"$bin" info "$model" > /dev/null
	now; t1=$t
	"$py" -c "$pycmd" "$model"
	now; t2=$t
	pb_times+=("$(echo "$t1 - $t0" | bc -l)")
	py_times+=("$(echo "$t2 - $t1" | bc -l)")
	if [ -n "$base" ]; then
		now; t3=$t
		"$base" info "$model" > /dev/null
		now; t4=$t
		base_times+=("$(echo "$t4 - $t3" | bc -l)")
	fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
pbm=$(median "${pb_times[@]}")
pym=$(median "${py_times[@]}")
printf 'model %s, %d runs each (interleaved)\n' "$model" "$runs"
printf 'partbench info : median %.4f s  (runs: %s)\n' "$pbm" "$(printf '%.3f ' "${pb_times[@]}")"
printf 'python onnx    : median %.4f s  (runs: %s)\n' "$pym" "$(printf '%.3f ' "${py_times[@]}")"
printf 'speed-up       : %.1fx\n' "$(echo "$pym / $pbm" | bc -l)"
if [ -n "$base" ]; then
	bm=$(median "${base_times[@]}")
	printf 'baseline %s : median %.4f s  (runs: %s)\n' "$base" "$bm" "$(printf '%.3f ' "${base_times[@]}")"
	printf 'baseline speed-up: %.1fx\n' "$(echo "$pym / $bm" | bc -l)"
fi
