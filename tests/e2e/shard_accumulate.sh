#!/usr/bin/env bash
# Gradient accumulation at pp = 1 (issue 38; docs/shard.md): `shard --dp D
# --tp T --pp 1 --microbatches M` is honoured (it was silently m = 1), as
# Megatron-LM and PyTorch DDP run it: the activations of one micro-batch are
# held, the gradients accumulated and all-reduced once per step. On a
# 2-layer GPT (h 256, seq 128, vocab 1000, fp16) over the 8 A100s of one node
# of layouts/cluster-a100.lua, dp 8, batch 32, m 4, the figures are computed
# by hand here:
#   parameters: wte 1000 x 256, wpe 128 x 256, per layer the two layer norms
#     (4h), q k v proj (4 (h^2 + h)), fc (4h^2 + 4h), mlp proj (4h^2 + h);
#     ln_f 2h: 1,868,800 fp16 values = 3,737,600 B in 36 tensors;
#   the gradient all-reduce, one ring per tensor (Thakur, Rabenseifner and
#     Gropp 2005): 36 x 5 us + 2 (n-1)/n x 3,737,600 B / 246 GB/s (NVLink,
#     the layout's intra_bw_gbs and intra_latency_us), n = 8;
#   step = m x (the operator-level plan of one micro-batch of 8 without its
#     all-reduce) + that all-reduce once;
#   memory = the operator-level plan of one micro-batch (not of 32).
set -u
bin=${1:?usage: shard_accumulate.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_accum_e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3

sed 's/^local nodes = .*/local nodes = 1/' layouts/cluster-a100.lua >"$tmp/a100.lua"
"$bin" gen gpt --layers 2 --hidden 256 --heads 4 --seq 128 --vocab 1000 --fp16 \
	-o "$tmp/g.onnx" >/dev/null || fail "gen gpt"
run() { "$bin" shard "$tmp/g.onnx" --layout "$tmp/a100.lua" --train --jobs 1 --json "$@"; }
run --batch 32 --dp 8 --tp 1 --pp 1 --microbatches 4 >"$tmp/acc.json" 2>"$tmp/err" ||
	fail "accumulation: $(cat "$tmp/err")"
run --batch 8 --scheme 8 >"$tmp/mb.json" 2>"$tmp/err" || fail "one micro-batch: $(cat "$tmp/err")"
run --batch 32 --scheme 8 >"$tmp/full.json" 2>"$tmp/err" || fail "whole batch: $(cat "$tmp/err")"
$py - "$tmp/acc.json" "$tmp/mb.json" "$tmp/full.json" <<'PY' || fail "accumulation figures"
import json, sys
acc, mb, full = (json.load(open(f)) for f in sys.argv[1:4])
b = acc["best"]
print("best:", {k: b[k] for k in ("dp", "tp", "pp", "microbatches", "schedule", "step_time",
                                  "grad_sync", "memory")})
assert (b["dp"], b["tp"], b["pp"], b["microbatches"]) == (8, 1, 1, 4), b
assert b["schedule"] == "accumulate" and b["kind"] == "accumulation", b
h, L, V, s = 256, 2, 1000, 128
per_layer = 4 * h + 4 * (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h)
values = V * h + s * h + L * per_layer + 2 * h
assert values == 1868800, values
tensors = 2 + 16 * L + 2
G = tensors * 5e-6 + 2 * 7 / 8 * 2 * values / 246e9
print("hand: all-reduce %.9g s, reported %.9g s" % (G, b["grad_sync"]))
assert abs(b["grad_sync"] - G) <= 1e-8 * G, (b["grad_sync"], G)
# one all-reduce per step, m micro-batches of compute
t_mb = mb["step_time"] - G
step = 4 * t_mb + G
print("hand: step %.9g s = 4 x %.9g + %.9g, reported %.9g" % (step, t_mb, G, b["step_time"]))
assert abs(b["step_time"] - step) <= 1e-8 * step, (b["step_time"], step)
assert abs(b["slowest_group"] - t_mb) <= 1e-8 * t_mb
# the activations of one micro-batch
assert abs(b["memory"] - mb["memory_per_device"]) <= 1e-8 * b["memory"], (b["memory"], mb)
assert b["memory"] < full["memory_per_device"], (b["memory"], full["memory_per_device"])
PY

# text report says it in words
"$bin" shard "$tmp/g.onnx" --layout "$tmp/a100.lua" --train --jobs 1 --batch 32 --dp 8 --tp 1 \
	--pp 1 --microbatches 4 >"$tmp/out" 2>&1 || fail "text: $(cat "$tmp/out")"
grep -q "best overall: dp 8 tp 1 pp 1, 4 micro-batches (gradient accumulation" "$tmp/out" ||
	fail "text report: $(tail -5 "$tmp/out")"

# micro-batches that do not divide the batch: refused with the reason
"$bin" shard "$tmp/g.onnx" --layout "$tmp/a100.lua" --train --batch 32 --dp 8 --tp 1 --pp 1 \
	--microbatches 3 >"$tmp/out" 2>&1
rc=$?
[ $rc = 1 ] || fail "--microbatches 3 of 32: exit $rc, want 1"
grep -q "3 micro-batches do not divide the batch 32" "$tmp/out" || fail "m 3: $(cat "$tmp/out")"

[ $fails = 0 ] && echo "shard_accumulate: all passed"
exit $fails
