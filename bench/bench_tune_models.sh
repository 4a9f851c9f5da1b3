#!/usr/bin/env bash
# bench_tune_models.sh — issue 42 item 4: whole models tuned (`tune MODEL
# --all --baselines`: every kernel shape tuned, OpenBLAS at its best dispatch
# measured on each, single thread) and then partitioned with and without the
# log as --costs. Per model: the --all report (text and JSON), a second run
# with --resume (must tune nothing: the log is the cache) and the two plans.
# One model at a time, niced: the machine is shared.
# Usage: bench/bench_tune_models.sh BUILD_DIR OUT_DIR [TRIALS] [BUDGET_S]
#   models: resnet18, bert_base_like (models/) and mnasnet1_0 (bench/gen_mnasnet.py)
set -eu
build=${1:?usage: bench_tune_models.sh BUILD_DIR OUT_DIR [TRIALS] [BUDGET_S]}
out=${2:?usage: bench_tune_models.sh BUILD_DIR OUT_DIR [TRIALS] [BUDGET_S]}
trials=${3:-64}
budget=${4:-300}
pb=$build/partbench
mkdir -p "$out"
/usr/bin/python3 "$(dirname "$0")/gen_mnasnet.py" "$out/mnasnet1_0.onnx"
for m in models/resnet18.onnx "$out/mnasnet1_0.onnx" models/bert_base_like.onnx; do
	n=$(basename "$m" .onnx)
	log=$out/$n.tune.jsonl
	rm -f "$log"
	/usr/bin/time -f "%U %S user+sys s" -o "$out/$n.time" nice -n 10 "$pb" tune "$m" --all \
		--baselines --trials "$trials" --budget "$budget" --log "$log" >"$out/$n.all.txt" 2>/dev/null
	nice -n 10 "$pb" tune "$m" --all --baselines --trials "$trials" --budget "$budget" --log "$log" \
		--resume --json >"$out/$n.all.json" 2>/dev/null
	nice -n 10 "$pb" partition "$m" --layout layouts/manycore-16.lua --json -o "$out/$n.plain.plan.json" \
		>"$out/$n.plain.json"
	nice -n 10 "$pb" partition "$m" --layout layouts/manycore-16.lua --costs "$log" --json \
		-o "$out/$n.costs.plan.json" >"$out/$n.costs.json"
	echo "$n: $(tail -n +2 "$out/$n.all.txt" | grep -E '^(OpenBLAS|[0-9]+ kernel)')"
done
