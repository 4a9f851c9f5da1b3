#!/usr/bin/env bash
# Memory headroom (issue 38; docs/shard.md "Memory headroom"): a planned
# device uses at most device_memory_usable of its memory (default 0.9:
# vLLM's --gpu-memory-utilization default, left for the CUDA context,
# NCCL's buffers and the caching allocator's fragmentation); the report
# shows the limit and the margin. Figures by hand:
#   1. 80 GB A100s, default: limit 72e9 B, margin = 72e9 - the plan's memory;
#      device_memory_usable = 1: limit 80e9 B;
#   2. a 2-layer GPT (h 256) at batch 32, scheme 8, takes 53,469,200 B per
#      device with every tensor replicated (measured on 53b9763: pure data
#      parallelism, the plan a 56 MB device accepted); on 56 MB devices the
#      limit is 0.9 x 56e6 = 50.4e6 B: the plan found must stay under it, or
#      be reported as not fitting;
#   3. device_memory_usable outside (0, 1] is refused naming the file and
#      the field (exit 2).
set -u
bin=${1:?usage: shard_headroom.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_headroom_e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3

sed 's/^local nodes = .*/local nodes = 1/' layouts/cluster-a100.lua >"$tmp/a100.lua"
sed 's/^  device_memory_gb = 80, .*/  device_memory_gb = 80, device_memory_usable = 1,/' \
	"$tmp/a100.lua" >"$tmp/full.lua"
sed 's/^  device_memory_gb = 80, .*/  device_memory_gb = 0.056,/' "$tmp/a100.lua" >"$tmp/small.lua"
sed 's/^  device_memory_gb = 80, .*/  device_memory_gb = 80, device_memory_usable = 1.5,/' \
	"$tmp/a100.lua" >"$tmp/bad.lua"
"$bin" gen gpt --layers 2 --hidden 256 --heads 4 --seq 128 --vocab 1000 --fp16 \
	-o "$tmp/g.onnx" >/dev/null || fail "gen gpt"
for l in a100 full small; do
	"$bin" shard "$tmp/g.onnx" --layout "$tmp/$l.lua" --train --batch 32 --scheme 8 --jobs 1 \
		--json >"$tmp/$l.json" 2>"$tmp/err" || fail "$l: $(cat "$tmp/err")"
done
$py - "$tmp/a100.json" "$tmp/full.json" "$tmp/small.json" <<'PY' || fail "limits and margins"
import json, sys
a, f, s = (json.load(open(p)) for p in sys.argv[1:4])
assert a["memory_device"] == 80e9 and a["memory_usable"] == 0.9, a
assert abs(a["memory_limit"] - 72e9) <= 1, a["memory_limit"]
# --json prints 10 significant digits: 72e9 - 40,886,288 B shows as 7.195911371e10
assert abs(a["memory_margin"] - (72e9 - a["memory_per_device"])) <= 1e-9 * 72e9, a
assert abs(f["memory_limit"] - 80e9) <= 1 and f["memory_usable"] == 1, f["memory_limit"]
print("small: %.0f B of limit %.0f B, feasible %s" % (s["memory_per_device"], s["memory_limit"],
                                                     s["feasible"]))
assert abs(s["memory_limit"] - 50.4e6) <= 1, s["memory_limit"]
assert not s["feasible"] or s["memory_per_device"] <= 50.4e6, s["memory_per_device"]
assert s["feasible"] == (s["memory_margin"] >= 0), s
PY
"$bin" shard "$tmp/g.onnx" --layout "$tmp/a100.lua" --train --batch 32 --scheme 8 --jobs 1 \
	>"$tmp/out" 2>&1 || fail "text: $(cat "$tmp/out")"
grep -q "^memory limit: 72.0 GB = 90% of 80.0 GB per device (device_memory_usable); margin" \
	"$tmp/out" || fail "text margin: $(grep -i memory "$tmp/out")"
"$bin" shard "$tmp/g.onnx" --layout "$tmp/bad.lua" --train --batch 32 --scheme 8 >"$tmp/out" 2>&1
rc=$?
[ $rc = 2 ] || fail "device_memory_usable 1.5: exit $rc, want 2"
grep -q "bad.lua.*device_memory_usable" "$tmp/out" || fail "usable 1.5: $(cat "$tmp/out")"

[ $fails = 0 ] && echo "shard_headroom: all passed"
exit $fails
