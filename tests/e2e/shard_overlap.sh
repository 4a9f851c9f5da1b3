#!/usr/bin/env bash
# The data-parallel gradient all-reduce overlapped with the backward pass in
# buckets (issue 38; docs/megatron.md "Overlap"), as PyTorch DDP (Li et al.
# 2020, VLDB 13(12), section 3.2.3; bucket_cap_mb 25) and Megatron-LM's
# DistributedDataParallel run it. On the 2-layer GPT of shard_accumulate.sh
# (h 256, seq 128, vocab 1000, fp16; 1,868,800 values = 3,737,600 B of
# gradients per device at dp 8, all reduced in 36 rings: G = 201.80 us by
# hand) over one A100 node, batch 256, 4 micro-batches, --recompute none:
#   buckets n = ceil(3,737,600 B / bucket): 25 MiB -> 1 (nothing to hide),
#     1 MiB -> 4;
#   exposed E = max(G / n, G - T (n - 1) / n), T the backward pass of the
#     last micro-batch = 2/3 of its compute (backward = 2 x forward);
#   step = 4 x t + E, t the operator-level plan of one micro-batch (64
#     sequences) less G; --bucket-mb 0 gives E = G (the step before).
set -u
bin=${1:?usage: shard_overlap.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_overlap_e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3

sed 's/^local nodes = .*/local nodes = 1/' layouts/cluster-a100.lua >"$tmp/a100.lua"
"$bin" gen gpt --layers 2 --hidden 256 --heads 4 --seq 128 --vocab 1000 --fp16 \
	-o "$tmp/g.onnx" >/dev/null || fail "gen gpt"
run() { "$bin" shard "$tmp/g.onnx" --layout "$tmp/a100.lua" --train --jobs 1 --json \
	--recompute none "$@"; }
acc="--batch 256 --dp 8 --tp 1 --pp 1 --microbatches 4"
run $acc >"$tmp/d.json" 2>"$tmp/err" || fail "default bucket: $(cat "$tmp/err")"
run $acc --bucket-mb 1 >"$tmp/b1.json" 2>"$tmp/err" || fail "1 MiB: $(cat "$tmp/err")"
run $acc --bucket-mb 0 >"$tmp/b0.json" 2>"$tmp/err" || fail "no overlap: $(cat "$tmp/err")"
run --batch 64 --scheme 8 >"$tmp/mb.json" 2>"$tmp/err" || fail "micro-batch: $(cat "$tmp/err")"
$py - "$tmp/d.json" "$tmp/b1.json" "$tmp/b0.json" "$tmp/mb.json" <<'PY' || fail "overlap figures"
import json, math, sys
d, b1, b0, mb = (json.load(open(f))["best"] if i < 3 else json.load(open(f))
                 for i, f in enumerate(sys.argv[1:5]))
values = 1868800
G = 36 * 5e-6 + 2 * 7 / 8 * 2 * values / 246e9
t = mb["step_time"] - G          # one micro-batch without its all-reduce
T = 2 / 3 * t                    # its backward pass
for name, b, n in (("25 MiB", d, 1), ("1 MiB", b1, math.ceil(2 * values / 2**20)), ("0", b0, 1)):
    assert (b["dp"], b["tp"], b["pp"], b["microbatches"]) == (8, 1, 1, 4), b
    assert abs(b["grad_sync"] - G) <= 1e-8 * G, (name, b["grad_sync"], G)
    E = G if n == 1 else max(G / n, G - T * (n - 1) / n)
    step = 4 * t + E
    print("%s: buckets %d (reported %d), exposed %.6g s (reported %.6g), overlapped %.6g, "
          "step %.9g (reported %.9g)" % (name, n, b["grad_buckets"], E, b["grad_exposed"],
                                         b["grad_overlapped"], step, b["step_time"]))
    assert b["grad_buckets"] == n, (name, b["grad_buckets"], n)
    assert abs(b["grad_exposed"] - E) <= 1e-6 * E, (name, b["grad_exposed"], E)
    assert abs(b["grad_exposed"] + b["grad_overlapped"] - G) <= 1e-8 * G
    assert abs(b["step_time"] - step) <= 1e-6 * step, (name, b["step_time"], step)
assert b1["grad_overlapped"] > 0 and b1["step_time"] < b0["step_time"]
assert d["step_time"] == b0["step_time"]
PY

# the text report names exposed and overlapped communication
"$bin" shard "$tmp/g.onnx" --layout "$tmp/a100.lua" --train --jobs 1 --recompute none $acc \
	--bucket-mb 1 >"$tmp/out" 2>&1 || fail "text: $(cat "$tmp/out")"
grep -Eq "gradient all-reduce: [0-9.]+ ms exposed in the step, [0-9.]+ ms overlapped with the backward pass \(4 buckets of 1 MiB" \
	"$tmp/out" || fail "text report: $(tail -5 "$tmp/out")"

# a bad bucket size: usage error naming the option
"$bin" shard "$tmp/g.onnx" --layout "$tmp/a100.lua" --train $acc --bucket-mb -1 \
	>"$tmp/out" 2>&1
rc=$?
[ $rc = 1 ] || fail "--bucket-mb -1: exit $rc, want 1"
grep -q "bucket-mb" "$tmp/out" || fail "--bucket-mb -1: $(cat "$tmp/out")"
# and in a layout: bad input naming the file and the field
sed 's/^local nodes = .*/local nodes = 1/; s/device_efficiency = /grad_bucket_mb = -3, device_efficiency = /' \
	layouts/cluster-a100.lua >"$tmp/bad.lua"
"$bin" shard "$tmp/g.onnx" --layout "$tmp/bad.lua" --train $acc >"$tmp/out" 2>&1
rc=$?
[ $rc = 2 ] || fail "grad_bucket_mb -3: exit $rc, want 2"
grep -q "bad.lua.*grad_bucket_mb" "$tmp/out" || fail "grad_bucket_mb -3: $(cat "$tmp/out")"

[ $fails = 0 ] && echo "shard_overlap: all passed"
exit $fails
