#!/usr/bin/env bash
# bench_export.sh — `partbench export` of every bundled model with its exact
# many-core plan (manycore-16): wall time of the whole command (load, shape
# inference, collapse, Graphviz dot, SVG), dot's share, peak RSS, and what
# was drawn. Median of RUNS runs per model. Also --collapse never on the
# models where that is tolerable, to show what collapsing buys.
#
# usage: bench/bench_export.sh [BINARY] [RUNS]
set -euo pipefail
bin=${1:-build/partbench}
runs=${2:-5}
tmp=$(mktemp -d /tmp/pb_bench_export.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

run_one() { # MODEL EXTRA-ARGS...
	local model=$1
	shift
	local name
	name=$(basename "$model" .onnx)
	"$bin" partition "$model" --layout layouts/manycore-16.lua --method exact -o "$tmp/$name.json" >/dev/null
	local walls=() dots=() rss=()
	for ((i = 0; i < runs; i++)); do
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" export "$model" --plan "$tmp/$name.json" \
			-o "$tmp/$name.svg" --json "$@" >"$tmp/out.json"
		read -r w m <"$tmp/time"
		walls+=("$w")
		rss+=("$m")
		dots+=("$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layout_s"])' "$tmp/out.json")")
	done
	/usr/bin/python3 - "$tmp/out.json" "$name" "$(median "${walls[@]}")" "$(median "${dots[@]}")" \
		"$(median "${rss[@]}")" "$*" "$(stat -c %s "$tmp/$name.svg")" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
name, wall, dot, rss, extra, size = sys.argv[2:8]
print(f"| {name}{' ' + extra if extra else ''} | {j['nodes']} | {j['boxes']} | {j['hidden_boxes']} "
      f"| {j['clusters'] - 0} | {j['edges']} | {float(wall):.2f} | {float(dot):.3f} | {int(rss) / 1024:.1f} "
      f"| {int(size) / 1024:.0f} |")
PY
}

echo "runs per row: $runs; machine: $(nproc) cores, $(uname -m); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "| model | nodes | boxes drawn | constant boxes hidden | clusters | edges drawn | wall (s) | dot (s) | peak RSS (MB) | SVG (KB) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in resnet18 squeezenet1_1 mobilenet_v2 googlenet densenet121 bert_base_like swin_t; do
	run_one "models/$m.onnx"
done
for m in googlenet densenet121 bert_base_like; do
	run_one "models/$m.onnx" --collapse never
done
