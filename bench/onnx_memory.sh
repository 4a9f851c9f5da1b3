#!/usr/bin/env bash
# onnx_memory.sh — peak RSS of `partbench info` on ONNX models, measured with
# /usr/bin/time -v, against the budget of issue 2: at most 2x the file size
# plus 20 MB (the model with all weights inline is the interesting case).
# `partbench --help` is measured too: the process's own baseline (shared
# libraries: igraph, Graphviz, Lua, xgboost, OpenBLAS, ...).
#
# usage: bench/onnx_memory.sh [BINARY] [MODEL...]
set -euo pipefail
bin=${1:-build/partbench}
shift || true
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(models/squeezenet1_1-weights.onnx models/squeezenet1_1.onnx)

rss_kb() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}'; }

base=$(rss_kb "$bin" --help)
printf '%-40s %10s %12s %12s %s\n' model "file MB" "peak RSS MB" "budget MB" verdict
printf '%-40s %10s %12.1f %12s %s\n' "(partbench --help)" - "$(echo "$base / 1024" | bc -l)" - baseline
status=0
for m in "${models[@]}"; do
	size=$(stat -c %s "$m")
	rss=$(rss_kb "$bin" info "$m")
	budget=$(echo "(2 * $size + 20 * 1048576) / 1048576" | bc -l)
	rssmb=$(echo "$rss / 1024" | bc -l)
	ok=$(echo "$rssmb <= $budget" | bc -l)
	verdict=$([ "$ok" = 1 ] && echo ok || echo OVER)
	[ "$ok" = 1 ] || status=1
	printf '%-40s %10.1f %12.1f %12.1f %s\n' "$m" "$(echo "$size / 1048576" | bc -l)" \
		"$rssmb" "$budget" "$verdict"
done
exit $status
