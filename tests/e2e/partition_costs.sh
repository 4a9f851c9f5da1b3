#!/usr/bin/env bash
# partition --costs: measured kernel times from a real tuning run replace
# MACs/rate for the tuned nodes; the plan records the log and later edits
# (evaluate) use the same costs; a bad log is a clear error.
set -u
bin=${1:?usage: partition_costs.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_costs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
model=models/resnet18.onnx
layout=layouts/manycore-16.lua
py=/usr/bin/python3

"$bin" tune "$model" --node /layer1/layer1.0/conv1/Conv --trials 4 --reps 1 \
	--log "$tmp/tune.jsonl" >/dev/null 2>"$tmp/err" || fail "tune: $(cat "$tmp/err")"
[ -s "$tmp/tune.jsonl" ] || fail "tune wrote no log"

"$bin" partition "$model" --layout $layout --json >"$tmp/plain.json" || fail "partition"
"$bin" partition "$model" --layout $layout --costs "$tmp/tune.jsonl" --json -o "$tmp/plan.json" \
	>"$tmp/costs.json" 2>"$tmp/err" || fail "partition --costs: $(cat "$tmp/err")"
grep -q "measured times from .* for 4 node" "$tmp/err" || fail "no note on measured nodes: $(cat "$tmp/err")"
# The four 64x56x56 3x3 convolutions now cost their measured time: the
# optimum changes (this CPU core is not the layout's 1e11 MAC/s core).
$py - "$tmp/plain.json" "$tmp/costs.json" "$tmp/plan.json" "$tmp/tune.jsonl" <<'PY' || fail "costs did not change the plan as expected"
import json, sys
plain, costs, plan = (json.load(open(p)) for p in sys.argv[1:4])
assert abs(plain["max_time"] - costs["max_time"]) > 1e-9 * plain["max_time"], (plain["max_time"], costs["max_time"])
assert plan["detail"]["costs"] == sys.argv[4], plan["detail"].get("costs")
assert abs(costs["gap"]) < 1e-6, costs["gap"]
PY

# Edits of that plan are evaluated under the same costs.
cat >"$tmp/edit.lua" <<LUA
pb.cmd("plan --load $tmp/plan.json")
local before = pb.plan().metrics.max_time
pb.cmd("evaluate")
local after = pb.plan().metrics.max_time
assert(math.abs(before - after) <= 1e-9 * before, "evaluate changed max_time: " .. before .. " -> " .. after)
print("ok")
LUA
"$bin" run "$tmp/edit.lua" "$model" --layout $layout >"$tmp/out" 2>&1 || fail "evaluate under costs: $(cat "$tmp/out")"

"$bin" partition "$model" --layout $layout --costs "$tmp/missing.jsonl" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "missing log: exit code"
grep -q "missing.jsonl" "$tmp/err" || fail "missing log: message does not name the file"
echo '{"broken' >"$tmp/bad.jsonl"
echo '{"also": "broken"}' >>"$tmp/bad.jsonl"
"$bin" partition "$model" --layout $layout --costs "$tmp/bad.jsonl" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "bad log: exit code ($(cat "$tmp/err"))"

if [ $fails -eq 0 ]; then echo "partition --costs: 1 passed, 0 failed"; else echo "partition --costs: 0 passed, 1 failed"; fi
exit $fails
