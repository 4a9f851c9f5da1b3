#!/usr/bin/env bash
# The Megatron-LM reproduction (docs/megatron.md) on its calibration row: row 1
# of Table 1 of Narayanan et al. 2021 (1.7 B parameters, 24 layers, hidden
# 2304, 24 heads, 32 GPUs = 4 DGX A100 nodes, batch 512, dp 32, measured
# 137 TFLOP/s per GPU). The prediction is computed here by partbench (gen gpt
# for the FLOP count of eq. 3, shard for the step time), never written in:
#   1. layouts/cluster-a100.lua with 4 nodes gives 32 devices;
#   2. the paper's configuration (scheme 32, full recomputation) predicts
#      137 TFLOP/s within 2% (the layout's device_efficiency was calibrated on
#      this row; a cost-model change that moves it needs a new calibration);
#   3. bench_megatron.sh's calibration mode gives the layout's efficiency back;
#   4. partbench's own plan is never predicted slower than the paper's;
#   5. a device_efficiency out of (0, 1] is refused naming the field.
set -u
bin=${1:?usage: megatron.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_megatron_e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3

sed 's/^local nodes = .*/local nodes = 4/' layouts/cluster-a100.lua >"$tmp/a100.lua"
"$bin" gen gpt --layers 24 --hidden 2304 --heads 24 --seq 2048 --vocab 51200 --fp16 \
	-o "$tmp/r1.onnx" --json >"$tmp/gen.json" || fail "gen gpt"
"$bin" shard "$tmp/r1.onnx" --layout "$tmp/a100.lua" --train --batch 512 --scheme 32 \
	--recompute full --jobs 1 --json >"$tmp/b.json" 2>"$tmp/err" || fail "paper config: $(cat "$tmp/err")"
"$bin" shard "$tmp/r1.onnx" --layout "$tmp/a100.lua" --train --batch 512 --jobs 1 \
	--json >"$tmp/a.json" 2>"$tmp/err" || fail "own plan: $(cat "$tmp/err")"
$py - "$tmp/gen.json" "$tmp/b.json" "$tmp/a.json" <<'PY' || fail "row 1 prediction"
import json, sys
gen, b, a = (json.load(open(f)) for f in sys.argv[1:4])
assert b["devices"] == 32, b["devices"]
F = gen["train_flops_per_sequence"] * 512
pred = F / b["step_time"] / 32 / 1e12
print("row 1: paper configuration predicted %.1f TFLOP/s (measured 137), own plan %.1f (%s)"
      % (pred, F / a["step_time"] / 32 / 1e12, a["scheme"]))
assert abs(pred - 137) <= 0.02 * 137, pred
assert b["feasible"], "the paper's configuration fits 80 GB"
assert a["step_time"] <= b["step_time"] * (1 + 1e-9), (a["step_time"], b["step_time"])
PY

# 10 bisection steps (the bench's 22 took 13.5 of this test's 14.8 s CPU):
# the interval shrinks to 0.95 / 1024 = 0.0009, 0.14% of 0.6742, inside the
# 1% checked below (issue 40.7)
MEGA_CALIBRATE=1 MEGA_CAL_STEPS=10 bash bench/bench_megatron.sh "$(dirname "$bin")" >"$tmp/cal.txt" 2>&1 || fail "calibration: $(cat "$tmp/cal.txt")"
$py - "$tmp/cal.txt" layouts/cluster-a100.lua <<'PY' || fail "calibration gives the layout's efficiency"
import re, sys
got = float(re.search(r"^device_efficiency = ([0-9.]+)", open(sys.argv[1]).read(), re.M).group(1))
have = float(re.search(r"^  device_efficiency = ([0-9.]+)", open(sys.argv[2]).read(), re.M).group(1))
assert abs(got - have) <= 0.01 * have, (got, have)
PY

sed 's/^  device_efficiency = .*/  device_efficiency = 1.5,/' "$tmp/a100.lua" >"$tmp/bad.lua"
"$bin" shard "$tmp/r1.onnx" --layout "$tmp/bad.lua" --train --batch 512 --scheme 32 >"$tmp/out" 2>&1
rc=$?
[ $rc = 2 ] || fail "device_efficiency 1.5: exit $rc, want 2"
grep -q "bad.lua.*device_efficiency" "$tmp/out" || fail "device_efficiency 1.5: $(cat "$tmp/out")"

[ $fails = 0 ] && echo "megatron: all passed"
exit $fails
