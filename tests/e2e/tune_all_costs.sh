#!/usr/bin/env bash
# tune_all_costs.sh — issue 42 item 4 on a small model: `tune MODEL --all
# --baselines` accounts for every node (tuned in a kernel shape, or listed
# with the reason it is not), measures OpenBLAS on every shape and sums both
# model kernel times; a second run with --resume reuses the log (nothing
# tuned again); and the log fed to `partition --costs` replaces exactly the
# tuned nodes' MACs/rate by their measured times in the plan.
# tests/data/tune_skip.onnx (gen_tune_skip.py): a 3x3 conv, a dilated 3x3
# conv (refused), a depthwise conv, a MatMul, Relu, GlobalAveragePool, Flatten.
# Usage: tune_all_costs.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=${1:?usage: tune_all_costs.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_tune_all_costs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
model=tests/data/tune_skip.onnx

"$bin" info $model --json >"$tmp/info.json" || fail "info"
# a budget a 10x slower sanitized build stays far from: the shapes are tiny
"$bin" tune $model --all --baselines --trials 3 --reps 1 --budget 30 --log "$tmp/t.jsonl" --json \
	>"$tmp/all.json" 2>"$tmp/err" || fail "tune --all --baselines: $(cat "$tmp/err")"
python3 - "$tmp/info.json" "$tmp/all.json" <<'PY' || fail "--all: nodes, OpenBLAS, totals"
import json, sys
info, d = (json.load(open(p)) for p in sys.argv[1:3])
names = [n["name"] for n in info["nodes"]]
assert d["nodes"] == len(names) == 7, d["nodes"]
tuned = [n for s in d["shapes"] for n in s["nodes"]]
skipped = {s["node"]: s for s in d["not_tuned"]}
# every node exactly once: in a tuned shape or in not_tuned
assert sorted(tuned + list(skipped)) == sorted(names), (tuned, list(skipped))
assert sorted(tuned) == ["conv", "depthwise", "fc"], tuned
assert "dilated" in skipped["dilated"]["why"] and skipped["dilated"]["op"] == "Conv", skipped
for n in ("relu", "gap", "flatten"):
    assert skipped[n]["op"] in skipped[n]["why"] and "no tuned kernel" in skipped[n]["why"], skipped[n]
assert d["untunable_nodes"] == 1
# the kernels' FLOPs from the shapes themselves (2 x MACs): independent of the tuner
want = {"conv2d:1,4,10,10,8,3,3,1,1": 2 * 8 * 4 * 9 * 100,
        "conv2d:1,8,10,10,8,3,3,1,1,8": 2 * 8 * 1 * 9 * 100, "gemm:1,5,8": 2 * 5 * 8}
assert {s["key"]: s["flops"] for s in d["shapes"]} == want, d["shapes"]
for s in d["shapes"]:
    assert s["measurements"] == 3 and s["best_gflops"] > 0, s
    assert s["openblas_gflops"] > 0 and s["openblas_core"], s
tuned_s = sum(s["flops"] / (s["best_gflops"] * 1e9) for s in d["shapes"])
blas_s = sum(s["flops"] / (s["openblas_gflops"] * 1e9) for s in d["shapes"])
assert abs(d["model_seconds"] - tuned_s) <= 1e-9 * tuned_s
assert abs(d["openblas_model_seconds"] - blas_s) <= 1e-9 * blas_s and d["openblas_shapes"] == 3
assert abs(d["tuned_vs_openblas"] - blas_s / tuned_s) <= 1e-9 * blas_s / tuned_s
assert d["measurements"] == 9
PY
"$bin" tune $model --all --baselines --trials 3 --reps 1 --log "$tmp/t.jsonl" --resume >"$tmp/all.txt" \
	2>/dev/null || fail "tune --all text"
grep -q "^not tuned: dilated (Conv): .*dilated convolution" "$tmp/all.txt" ||
	fail "the text report does not name the dilated conv and why"
grep -q "^not tuned: 3 nodes of operators without a tuned kernel.*Flatten 1, GlobalAveragePool 1, Relu 1" \
	"$tmp/all.txt" || fail "the text report does not count the other operators"
grep -q "^OpenBLAS (.* kernels, 1 thread) on all 3 kernel shapes: .*tuned / OpenBLAS speed" "$tmp/all.txt" ||
	fail "the text report lacks the OpenBLAS sum"

# the log is the cache: --resume tunes nothing and appends nothing, and the
# OpenBLAS figures come back from the summary lines
n=$(wc -l <"$tmp/t.jsonl")
"$bin" tune $model --all --baselines --trials 3 --reps 1 --log "$tmp/t.jsonl" --resume --json \
	>"$tmp/again.json" 2>/dev/null || fail "resume"
[ "$(wc -l <"$tmp/t.jsonl")" = "$n" ] || fail "--resume of a finished log appended lines"
python3 - "$tmp/all.json" "$tmp/again.json" <<'PY' || fail "--resume did not reuse the log"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert b["tuned"] == 0 and b["logged"] == 3, b
assert [s["openblas_gflops"] for s in a["shapes"]] == [s["openblas_gflops"] for s in b["shapes"]]
PY

# partition --costs: on one core the group's compute time is MACs / mac_rate
# for the nodes not tuned plus the measured time of the tuned ones
cat >"$tmp/one.lua" <<'LUA'
return { kind = "manycore", name = "one", cores = 1, mac_rate = 1.0e9,
         memory = 1024 * 1024 * 1024, bandwidth = 1.0e9, mesh = { rows = 1, cols = 1 } }
LUA
"$bin" partition $model --layout "$tmp/one.lua" --json >"$tmp/plain.json" 2>/dev/null || fail "partition"
"$bin" partition $model --layout "$tmp/one.lua" --costs "$tmp/t.jsonl" --json >"$tmp/costs.json" \
	2>"$tmp/err" || fail "partition --costs: $(cat "$tmp/err")"
grep -q "measured times from .* for 3 node(s)" "$tmp/err" || fail "partition --costs: $(cat "$tmp/err")"
python3 - "$tmp/plain.json" "$tmp/costs.json" "$tmp/all.json" "$tmp/info.json" <<'PY' || fail "--costs in the plan"
import json, sys
plain, costs, d, info = (json.load(open(p)) for p in sys.argv[1:5])
macs = {n["name"]: n["macs"] for n in info["nodes"]}
tuned_macs = sum(macs[n] for s in d["shapes"] for n in s["nodes"])
assert tuned_macs == sum(s["flops"] for s in d["shapes"]) / 2
pc, cc = plain["groups"][0]["compute"], costs["groups"][0]["compute"]
assert abs(pc - sum(macs.values()) / 1e9) <= 1e-12, pc
want = pc - tuned_macs / 1e9 + d["model_seconds"]
assert abs(cc - want) <= 1e-6 * want, (cc, want)
assert cc != pc and costs["max_time"] != plain["max_time"]
PY

if [ "$fails" != 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "tune_all_costs e2e: ok"
