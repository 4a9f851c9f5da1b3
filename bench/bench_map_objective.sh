#!/usr/bin/env bash
# bench_map_objective.sh — map --objective latency vs throughput (issue 36.3)
# on the bundled models (or the ONNX files given) and the hetero layouts.
# Per row: the mapping's serial time per input and pipelined period (the
# busiest backend or link per input), the backends it uses, the best
# single-backend mapping for the objective, the label of the objective's
# figure, and the CPU time (user+sys) of the map command.
# Usage: bench/bench_map_objective.sh PARTBENCH [MODEL.onnx ...]
set -eu
bin=${1:?usage: bench_map_objective.sh PARTBENCH [MODEL ...]}
shift
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(models/*.onnx)
tmp=$(mktemp -d /tmp/pb_benchmapobj.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "| model | layout | objective | serial/input (ms) | period/input (ms) | backends used | best single backend (ms) | x vs single | label | CPU (s) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in "${models[@]}"; do
	for l in layouts/hetero.lua layouts/hetero-fpga-conv.lua; do
		for o in latency throughput; do
			/usr/bin/time -f "%U %S" -o "$tmp/time" "$bin" map "$m" --layout "$l" \
				--objective $o --json >"$tmp/r.json" 2>"$tmp/err" || {
				echo "| $(basename "$m") | $(basename "$l") | $o | error: $(head -1 "$tmp/err") |"
				continue
			}
			python3 - "$tmp/r.json" "$tmp/time" "$m" "$l" "$o" <<'PY'
import json, sys, os
r = json.load(open(sys.argv[1]))
u, s = open(sys.argv[2]).read().split()[-2:]
o = sys.argv[5]
used = {}
for n in r["nodes"]:
    if n["backend"]:
        used[n["backend"]] = used.get(n["backend"], 0) + 1
fig = r["period_per_input"] if o == "throughput" else r["serial_time_per_input"]
best = r.get("best_single_backend")
single = r["single_backend"][best] if best else None
lab = r["period_label"] if o == "throughput" else r
words = "optimal" if lab["optimal"] else "best found, gap %.1f%%" % (100 * lab["gap"]) if lab.get("gap") is not None else "best found, no bound"
print("| %s | %s | %s | %.4f | %.4f | %s | %s | %s | %s | %.2f |" % (
    os.path.basename(sys.argv[3]), os.path.basename(sys.argv[4]), o,
    r["serial_time_per_input"] * 1e3, r["period_per_input"] * 1e3,
    " ".join("%s:%d" % kv for kv in sorted(used.items())),
    "%s %.4f" % (best, single * 1e3) if best else "none",
    "%.3f" % (single / fig) if best else "-", words, float(u) + float(s)))
PY
		done
	done
done
