#!/usr/bin/env bash
# --costs with an ONNX Runtime profile: ORT (tests/ort) profiles
# squeezenet1_1-weights on this CPU; the per-node mean times partbench reads
# from it equal those computed here from the trace; partition uses them (the
# plan records the profile, its optimum changes); another model's profile, a
# trace without node events and a broken file are clear errors (exit 2).
# layout --calibrate fits mac_rate to the same profile.
set -u
bin=${1:?usage: extract_profile.sh PARTBENCH}
root=$PWD
tmp=$(mktemp -d /tmp/pb_ortprof.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3
run=$root/tests/ort/run_parts.js
if [ ! -d "$root/tests/ort/node_modules/onnxruntime-node" ]; then
	echo "FAIL: tests/ort/node_modules is missing: run 'make deps' (npm ci --ignore-scripts in tests/ort)"
	exit 1
fi
model=models/squeezenet1_1-weights.onnx
layout=layouts/manycore-16.lua

node "$run" profile $model "$tmp/prof.json" --runs 3 >/dev/null 2>"$tmp/err" ||
	fail "ORT profile: $(cat "$tmp/err")"

# partbench's per-node times (tune --times reads what --costs reads) against
# the trace: mean kernel time per run, by node name
"$bin" tune $model --times --log "$tmp/prof.json" --json >"$tmp/times.json" 2>"$tmp/err" ||
	fail "tune --times: $(cat "$tmp/err")"
$py - "$tmp/prof.json" "$tmp/times.json" <<'PY' || fail "per-node times differ from the trace"
import json, sys
ev = json.load(open(sys.argv[1]))
runs = sum(1 for e in ev if e.get("cat") == "Session" and e.get("name") == "model_run")
assert runs == 3, runs
tot = {}
for e in ev:
    n = e.get("name", "")
    if e.get("cat") == "Node" and n.endswith("_kernel_time"):
        tot[n[:-12]] = tot.get(n[:-12], 0) + e["dur"] * 1e-6
got = json.load(open(sys.argv[2]))
assert got["measured_nodes"] >= 50, got["measured_nodes"]
convs = [n for n in got["nodes"] if n["op"] == "Conv"]
assert len(convs) == 26, len(convs)
for n in convs:
    want = tot[n["name"]] / runs
    assert abs(n["seconds"] - want) <= 1e-6 * max(want, 1e-9) + 1e-9, (n["name"], n["seconds"], want)
PY

"$bin" partition $model --layout $layout --json >"$tmp/plain.json" || fail "partition"
"$bin" partition $model --layout $layout --costs "$tmp/prof.json" --json -o "$tmp/plan.json" \
	>"$tmp/costs.json" 2>"$tmp/err" || fail "partition --costs profile: $(cat "$tmp/err")"
grep -q "measured times from .* for [0-9]* node" "$tmp/err" || fail "no note: $(cat "$tmp/err")"
$py - "$tmp/plain.json" "$tmp/costs.json" "$tmp/plan.json" "$tmp/prof.json" <<'PY' || fail "profile costs not used"
import json, sys
plain, costs, plan = (json.load(open(p)) for p in sys.argv[1:4])
assert abs(plain["max_time"] - costs["max_time"]) > 1e-9 * plain["max_time"]
assert plan["detail"]["costs"] == sys.argv[4]
PY

# layout --calibrate: the fitted mac_rate is least squares through the origin
# of the measured times on the MACs (recomputed here from the trace and info)
"$bin" info $model --json >"$tmp/info.json" || fail "info"
"$bin" layout $layout --calibrate "$tmp/prof.json" --model $model --json >"$tmp/cal.json" \
	2>"$tmp/err" || fail "layout --calibrate: $(cat "$tmp/err")"
$py - "$tmp/prof.json" "$tmp/info.json" "$tmp/cal.json" <<'PY' || fail "calibration differs from the least-squares fit"
import json, sys
ev = json.load(open(sys.argv[1]))
runs = sum(1 for e in ev if e.get("cat") == "Session" and e.get("name") == "model_run")
tot = {}
for e in ev:
    n = e.get("name", "")
    if e.get("cat") == "Node" and n.endswith("_kernel_time"):
        tot[n[:-12]] = tot.get(n[:-12], 0) + e["dur"] * 1e-6 / runs
macs = {n["name"]: n["macs"] for n in json.load(open(sys.argv[2]))["nodes"]}
pairs = [(macs[k], t) for k, t in tot.items() if k in macs and macs[k] > 0]
s = sum(m * t for m, t in pairs) / sum(m * m for m, t in pairs)
cal = json.load(open(sys.argv[3]))
assert abs(cal["mac_rate_fit"] - 1 / s) <= 1e-6 / s, (cal["mac_rate_fit"], 1 / s)
assert cal["mac_rate"] == 1e11 and cal["mac_nodes"] == len(pairs)
ops = {o["op"]: o for o in cal["ops"]}
assert ops["Relu"]["predicted"] == 0 and ops["Relu"]["error"] == -1
assert abs(sum(o["measured"] for o in cal["ops"]) - sum(tot[k] for k in tot if k in macs)) < 1e-9
PY
"$bin" layout $layout --calibrate "$tmp/prof.json" --model $model | grep -q "fitted" ||
	fail "layout --calibrate: no text report"

expect_bad() { # NAME PATTERN CMD...
	local name=$1 pat=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ $rc -eq 2 ] || fail "$name: exit $rc, expected 2 ($(cat "$tmp/err"))"
	grep -q -- "$pat" "$tmp/err" || fail "$name: message lacks '$pat': $(cat "$tmp/err")"
}
expect_bad "another model's profile" "a profile of another model" \
	"$bin" partition models/resnet18.onnx --layout $layout --costs "$tmp/prof.json"
echo '[{"cat": "Session", "name": "model_run", "dur": 5}]' >"$tmp/empty.json"
expect_bad "no node events" "no node events" \
	"$bin" partition $model --layout $layout --costs "$tmp/empty.json"
head -c 300 "$tmp/prof.json" >"$tmp/cut.json"
expect_bad "cut profile" "not an ONNX Runtime profile" \
	"$bin" partition $model --layout $layout --costs "$tmp/cut.json"

# the wrong kind of layout is a usage error (exit 1), as for partition
"$bin" layout layouts/cluster-1x8.lua --calibrate "$tmp/prof.json" --model $model 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "needs a 'manycore' layout" "$tmp/err" ||
	fail "calibrate a cluster layout: $(cat "$tmp/err")"

if [ $fails -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "extract_profile: ok"
