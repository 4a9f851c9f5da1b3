#!/usr/bin/env bash
# bench_tune.sh — RLTune vs random search, simulated annealing and exhaustive
# search at equal numbers of hardware measurements, on operator shapes of
# resnet18 and bert_base_like, plus the OpenBLAS roof. Real measurements.
# Usage: bench/bench_tune.sh [BUILD_DIR] [SEEDS] [OUT_DIR]
#   PB_BENCH_EXTRA='name|op|shape|node' adds a shape (e.g. resnet18.conv1|conv2d|1,3,224,224,64,7,7,2,3|/conv1/Conv)
#   (run from the repository root; prints a Markdown table)
set -eu
build=${1:-build}
seeds=${2:-"1"}
out=${3:-$(mktemp -d /tmp/pb_bench_tune.XXXXXX)}
mkdir -p "$out"
bin=$build/partbench
# name | op | shape | source node
shapes="
bert.attn_out|gemm|128,768,768|/blocks/layers.0/self_attn/Gemm
bert.ffn1|gemm|128,3072,768|/blocks/layers.0/linear1/MatMul
resnet18.layer1.conv|conv2d|1,64,56,56,64,3,3,1,1|/layer1/layer1.0/conv1/Conv
resnet18.layer3.conv|conv2d|1,256,14,14,256,3,3,1,1|/layer3/layer3.0/conv2/Conv
${PB_BENCH_EXTRA:-}"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for line in $shapes; do
	IFS='|' read -r name op shape node <<<"$line"
	legal=$(nice "$bin" tune --op "$op" --shape "$shape" --trials 1 --reps 1 --json 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["legal_configs"])')
	trials=$((legal / 10))
	for seed in $seeds; do
		echo "$name seed $seed: trials $trials of $legal, load $(cut -d" " -f1 /proc/loadavg), $(date -u +%H:%M:%S)" >&2
		nice "$bin" tune --op "$op" --shape "$shape" --trials "$trials" --seed "$seed" \
			--baselines --json --log "$out/$name.s$seed.jsonl" >"$out/$name.s$seed.json" 2>/dev/null
	done
done
python3 - "$out" $seeds <<'PY'
import json, os, sys
out, seeds = sys.argv[1], sys.argv[2:]
rows = {}
for f in sorted(os.listdir(out)):
    if not f.endswith(".json"):
        continue
    name, seed = f[:-5].rsplit(".s", 1)
    rows.setdefault(name, []).append(json.load(open(os.path.join(out, f))))
def at(trace, n):
    return trace[min(n, len(trace)) - 1] if trace else 0
print("| shape | key | legal | T (10%) | RLTune best | RL @T/2 | random | SA (cost model) | exhaustive | RL/exh | OpenBLAS | model acc | fits | RL s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, runs in rows.items():
    for d in runs:
        T = d["measurements"]; ex = d["exhaustive_best_gflops"]
        print(f"| {name} | {d['key']} | {d['legal_configs']} | {T} | {d['best_gflops']:.1f} | "
              f"{at(d['traces']['rl'], T // 2):.1f} | {d['random_best_gflops']:.1f} | "
              f"{d['sa_best_gflops']:.1f} | {ex:.1f} ({d['exhaustive_measurements']}) | "
              f"{d['best_gflops'] / ex:.3f} | {d['openblas_gflops']:.1f} | "
              f"{d['model_accuracy']:.2f} | {d['model_fits']} | {d['rl_seconds']:.0f} |")
PY
echo "raw JSON and logs: $out" >&2
