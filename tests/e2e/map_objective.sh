#!/usr/bin/env bash
# map --objective and --costs (issue 36.3, 36.4). Throughput: on resnet18
# with layouts/hetero-fpga-conv.lua (the FPGA is the fastest conv engine)
# the throughput mapping uses several backends, its period equals the one
# recomputed here from the JSON's aggregates and buffers (the busiest
# backend's aggregate times or the busiest link's transfers per input), and
# beats the best single-backend mapping it names; the latency mapping's
# period is no better. --costs with an ONNX Runtime profile (tests/ort) of
# squeezenet on this CPU: the measured op types' CPU time is the profile's,
# their priorities are ranked by the per-backend times the report lists (Conv:
# the GPU's 1.4e13 FLOP/s beat the FPGA's 4e12, where the layout's table put
# the FPGA first), the others say "layout"; the same from a tuning log of one
# Conv (tune --node). Bad options: exit 1 or 2.
set -u
bin=${1:?usage: map_objective.sh PARTBENCH}
root=$PWD
tmp=$(mktemp -d /tmp/pb_mapobj.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3

check_period() { # report.json: period recomputed, several backends, beats one backend
	$py - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
busy, link = {}, {}
for a in r["aggregates"]:
    busy[a["backend"]] = busy.get(a["backend"], 0) + a["time"]
for b in r["buffers"]:
    k = (b["from_backend"], b["to_backend"])
    link[k] = link.get(k, 0) + b["transfer_time"]
period = max(list(busy.values()) + list(link.values()))
assert abs(period - r["period_per_input"]) <= 1e-9 * period, (period, r["period_per_input"])
if sys.argv[2] == "mixed":
    assert len(busy) >= 2, busy
    best = r["best_single_backend"]
    assert best is not None
    single = r["single_backend"][best]
    assert single == min(v for v in r["single_backend"].values() if v is not None)
    assert r["period_per_input"] < single, (r["period_per_input"], single)
    assert r["objective"] == "throughput" and r["assignment"] == "throughput"
    lab = r["period_label"]
    assert lab["bound"] <= r["period_per_input"] * (1 + 1e-12)
    assert lab["optimal"] or "multi-start descent" in lab["restricted_by"]
print(r["period_per_input"])
PY
}

m=models/resnet18.onnx
for l in layouts/hetero-fpga-conv.lua; do
	"$bin" map $m --layout $l --objective throughput --json >"$tmp/thr.json" 2>"$tmp/err" ||
		fail "map --objective throughput on $l: $(cat "$tmp/err")"
	"$bin" map $m --layout $l --json >"$tmp/lat.json" 2>"$tmp/err" ||
		fail "map (latency) on $l: $(cat "$tmp/err")"
	pt=$(check_period "$tmp/thr.json" mixed) || fail "throughput mapping on $l"
	pl=$(check_period "$tmp/lat.json" any) || fail "latency mapping's period on $l"
	$py -c "import sys; assert float(sys.argv[1]) <= float(sys.argv[2])" "$pt" "$pl" ||
		fail "throughput period $pt above the latency mapping's $pl on $l"
done
"$bin" map $m --layout layouts/hetero.lua --objective throughput >"$tmp/txt" 2>&1 ||
	fail "map text: $(cat "$tmp/txt")"
grep -q "^objective: throughput; period per input" "$tmp/txt" || fail "no objective line"
grep -q "^best single backend: " "$tmp/txt" || fail "no single-backend line"

# bad input: usage errors exit 1, bad files 2
"$bin" map $m --layout layouts/hetero.lua --objective fast >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "latency or throughput" "$tmp/err" || fail "--objective fast: $(cat "$tmp/err")"
"$bin" map $m --layout layouts/hetero.lua --objective throughput --priority >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "--priority --objective throughput accepted"
"$bin" map $m --layout layouts/hetero.lua --costs "$tmp/none.json" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "none.json" "$tmp/err" || fail "missing --costs file: $(cat "$tmp/err")"
echo '[{"cat":"Session","name":"model_run","dur":1}]' >"$tmp/empty.json"
"$bin" map $m --layout layouts/hetero.lua --costs "$tmp/empty.json" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "empty.json" "$tmp/err" || fail "profile without nodes: $(cat "$tmp/err")"

# --costs from an ONNX Runtime profile
run=$root/tests/ort/run_parts.js
if [ ! -d "$root/tests/ort/node_modules/onnxruntime-node" ]; then
	echo "FAIL: tests/ort/node_modules is missing: run 'make deps' (npm ci --ignore-scripts in tests/ort)"
	exit 1
fi
sq=models/squeezenet1_1-weights.onnx
node "$run" profile $sq "$tmp/prof.json" --runs 3 >/dev/null 2>"$tmp/err" ||
	fail "ORT profile: $(cat "$tmp/err")"
"$bin" map $sq --layout layouts/hetero.lua --costs-backend tpu --costs "$tmp/prof.json" \
	>/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "tpu" "$tmp/err" || fail "--costs-backend tpu: $(cat "$tmp/err")"
"$bin" map $sq --layout layouts/hetero.lua --priority --json >"$tmp/plain.json" || fail "map"
"$bin" map $sq --layout layouts/hetero.lua --priority --costs "$tmp/prof.json" --json \
	>"$tmp/costs.json" 2>"$tmp/err" || fail "map --costs: $(cat "$tmp/err")"
$py - "$tmp/prof.json" "$tmp/plain.json" "$tmp/costs.json" <<'PY' || fail "--costs priorities"
import json, sys
ev = json.load(open(sys.argv[1]))
runs = sum(1 for e in ev if e.get("cat") == "Session" and e.get("name") == "model_run")
tot = {}
for e in ev:
    n = e.get("name", "")
    if e.get("cat") == "Node" and n.endswith("_kernel_time"):
        tot[n[:-12]] = tot.get(n[:-12], 0) + e["dur"] * 1e-6 / runs
plain, costs = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
src = {o["op"]: o for o in costs["priority_source"]}
conv = src["Conv"]
assert conv["source"] == "measured" and conv["file"] == sys.argv[1], conv
names = [n["name"] for n in costs["nodes"] if n["op"] == "Conv"]
want = sum(tot[k] for k in names if k in tot)
assert conv["nodes_measured"] == sum(1 for k in names if k in tot)
assert abs(conv["measured_seconds"] - want) <= 1e-6 * want, (conv["measured_seconds"], want)
# the cpu's modelled total for Conv is now the measured one
assert abs(conv["modelled_seconds_per_backend"]["cpu"] - want) <= 1e-9 * want
for o in costs["priority_source"]:
    t, p = o["modelled_seconds_per_backend"], o["priority"]
    if o["source"] == "measured":  # ranked by the listed times
        for b in p:
            assert p[b] == 1 + sum(1 for c in t if t[c] < t[b]), o
# the layout puts the FPGA first for Conv; by time (FLOP/s) the GPU is
pconv = next(n for n in plain["nodes"] if n["op"] == "Conv")["priority"]
cconv = next(n for n in costs["nodes"] if n["op"] == "Conv")["priority"]
assert pconv["fpga"] == 1 and pconv["gpu"] == 2, pconv
assert cconv["gpu"] == 1 and cconv["fpga"] == 2, cconv
# the priority rule follows: Conv nodes leave the FPGA
pb = {n["backend"] for n in plain["nodes"] if n["op"] == "Conv"}
cb = {n["backend"] for n in costs["nodes"] if n["op"] == "Conv"}
assert pb == {"fpga"} and cb == {"gpu"}, (pb, cb)
PY
"$bin" map $sq --layout layouts/hetero.lua --costs "$tmp/prof.json" >"$tmp/txt" 2>&1 ||
	fail "map --costs text"
grep -Eq "^  Conv +measured +cpu [0-9]+  gpu 1  fpga 2" "$tmp/txt" ||
	fail "text: Conv's source: $(grep Conv "$tmp/txt")"

# --costs from a tuning log: one Conv of squeezenet tuned on this CPU; Conv
# is measured (the node tune --times lists, its seconds), Relu keeps the
# layout's table (fpga first)
node=/features/features.3/squeeze/Conv
"$bin" tune $sq --node $node --trials 4 --log "$tmp/t.jsonl" >/dev/null 2>"$tmp/err" ||
	fail "tune: $(cat "$tmp/err")"
"$bin" tune $sq --times --log "$tmp/t.jsonl" --json >"$tmp/times.json" || fail "tune --times"
"$bin" map $sq --layout layouts/hetero.lua --costs "$tmp/t.jsonl" --json >"$tmp/tc.json" \
	2>"$tmp/err" || fail "map --costs tune log: $(cat "$tmp/err")"
$py - "$tmp/times.json" "$tmp/tc.json" "$tmp/t.jsonl" <<'PY' || fail "--costs tune log"
import json, sys
t, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
src = {o["op"]: o for o in r["priority_source"]}
conv, relu = src["Conv"], src["Relu"]
want = sum(n["seconds"] for n in t["nodes"] if n["op"] == "Conv")
assert conv["source"] == "measured" and conv["file"] == sys.argv[3], conv
assert conv["nodes_measured"] == 1 and conv["nodes"] == 26, conv
assert abs(conv["measured_seconds"] - want) <= 1e-9 * want, (conv["measured_seconds"], want)
assert relu["source"] == "layout" and relu["priority"]["fpga"] == 1, relu
assert r["costs_backend"] == "cpu"
PY
[ $fails -eq 0 ] || exit 1
echo "map_objective: ok"
