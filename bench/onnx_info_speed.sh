#!/usr/bin/env bash
# onnx_info_speed.sh — `partbench info` end to end against ONNX's Python shape
# inference on the same model, in the same run, interleaved (so both see the
# same machine load). Prints per-run wall times and the ratio of medians.
#
# usage: bench/onnx_info_speed.sh [BINARY] [MODEL] [RUNS]
# The Python side is the command of issue 2 with load_external_data=False:
# the bundled models' weights are deliberately absent, and onnx.load() would
# otherwise stop with FileNotFoundError before inferring anything.
set -euo pipefail
bin=${1:-build/partbench}
model=${2:-models/swin_t.onnx}
runs=${3:-11}
py=${PYTHON:-/usr/bin/python3}
pycmd='import onnx,sys; onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1], load_external_data=False))'

now() { date +%s.%N; }
pb_times=() py_times=()
for ((i = 0; i < runs; i++)); do
	t0=$(now); "$bin" info "$model" > /dev/null; t1=$(now)
	"$py" -c "$pycmd" "$model"; t2=$(now)
	pb_times+=("$(echo "$t1 - $t0" | bc -l)")
	py_times+=("$(echo "$t2 - $t1" | bc -l)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
pbm=$(median "${pb_times[@]}")
pym=$(median "${py_times[@]}")
printf 'model %s, %d runs each (interleaved)\n' "$model" "$runs"
printf 'partbench info : median %.4f s  (runs: %s)\n' "$pbm" "$(printf '%.3f ' "${pb_times[@]}")"
printf 'python onnx    : median %.4f s  (runs: %s)\n' "$pym" "$(printf '%.3f ' "${py_times[@]}")"
printf 'speed-up       : %.1fx\n' "$(echo "$pym / $pbm" | bc -l)"
