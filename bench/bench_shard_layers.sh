#!/usr/bin/env bash
# bench_shard_layers.sh — strategy search time against layers and devices with
# repeated layers solved once (shard --layers auto, the default) and without
# (--layers off), on structure-only GPT decoders from `partbench gen gpt` and
# on bert_base_like. Serial (--jobs 1), nice'd; one run each, stopped after 300 s.
# BENCH_FROM=devices skips the sections before the device scaling;
# SKIP_OFF=1 skips the --layers off runs (minutes each).
# usage: bench/bench_shard_layers.sh [BUILD_DIR]
set -euo pipefail
B=${1:-build}
P="$B/partbench"
T=$(mktemp -d /tmp/pb_shlayers.XXXXXX)
trap 'rm -rf "$T"' EXIT
echo "== $(date -u '+%F %T UTC'), $(nproc) cores, $(uname -m)"
run() { # label, then the shard arguments
  local label=$1; shift
  /usr/bin/time -f "$label: %e s wall, %U s user" timeout 300 nice -n 10 "$P" shard "$@" --jobs 1 --json \
    >"$T/out.json" 2>"$T/err" || echo "$label: stopped after 300 s (timeout) or failed"
  tail -1 "$T/err"
  [ -s "$T/out.json" ] && python3 - "$T/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cols = max(r["milp"]["cols"] for r in d["schemes"] if r.get("milp"))
b = d.get("best", {})
print("   best %s step %.6g s, %d schemes, largest MILP %d columns, fits %s, dp %s tp %s" % (
    d["scheme"], d["step_time"], len(d["schemes"]), cols, d["feasible"], b.get("dp"), b.get("tp")))
PY
  true
}
if [ "${BENCH_FROM:-}" != devices ]; then
echo "== time vs layers: GPT hidden 2048, heads 16, seq 2048, vocab 50257, --train --batch 64, cluster-8x8"
for L in 12 24 48 96; do
  "$P" gen gpt --layers $L --hidden 2048 --heads 16 --seq 2048 --vocab 50257 -o "$T/gpt$L.onnx" >/dev/null
  run "L=$L layers auto" "$T/gpt$L.onnx" --layout layouts/cluster-8x8.lua --train --batch 64
done
for L in $([ -n "${SKIP_OFF:-}" ] || echo 12 24); do
  run "L=$L layers off" "$T/gpt$L.onnx" --layout layouts/cluster-8x8.lua --train --batch 64 --layers off
done
fi
[ -f "$T/gpt48.onnx" ] || "$P" gen gpt --layers 48 --hidden 2048 --heads 16 --seq 2048 --vocab 50257 -o "$T/gpt48.onnx" >/dev/null
echo "== time vs devices: GPT 48 layers (as above), --train --batch 64"
for c in 1x8 2x8 4x8 8x8; do
  run "48 layers on cluster-$c" "$T/gpt48.onnx" --layout layouts/cluster-$c.lua --train --batch 64
done
echo "== GPT-3-shaped: 96 layers, hidden 12288, heads 96, seq 2048, fp16, --train --batch 1536, cluster-128x8 (1,024 devices)"
"$P" gen gpt --layers 96 --hidden 12288 --heads 96 --seq 2048 --vocab 51200 --fp16 -o "$T/gpt3.onnx"
run "gpt3 1024 devices" "$T/gpt3.onnx" --layout layouts/cluster-128x8.lua --train --batch 1536
echo "== bert_base_like, cluster-2x8, --train --batch 8"
run "bert layers auto" models/bert_base_like.onnx --layout layouts/cluster-2x8.lua --train --batch 8
[ -n "${SKIP_OFF:-}" ] || run "bert layers off" models/bert_base_like.onnx --layout layouts/cluster-2x8.lua --train --batch 8 --layers off
echo "== bert_base_like, cluster-2x8, --max-axes 3 (inference, model batch)"
run "bert 3 axes layers auto" models/bert_base_like.onnx --layout layouts/cluster-2x8.lua --max-axes 3
