#!/usr/bin/env bash
# tune.sh — the `tune` command's CLI contract: exit codes and messages for bad
# shapes / nodes / logs, --json fields (with and without --baselines), a model
# node, and --resume continuing from a log; --all (whole model, resumable,
# --budget). Small shapes and budgets only.
# Usage: tune.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=${1:?usage: tune.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_tune_e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() {
	local want=$1 what=$2
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" != "$want" ]; then
		fail "$what: exit $got, expected $want: $*"
		sed 's/^/    /' "$tmp/err" | head -5
	fi
}
field() { python3 -c "import json,sys; d=json.load(open('$tmp/out')); print(d$1)"; }

expect 1 "no operator" -- "$bin" tune
expect 1 "bad op" -- "$bin" tune --op fft --shape 4,4,4
grep -q "gemm or conv2d" "$tmp/err" || fail "bad op message"
expect 1 "bad gemm shape" -- "$bin" tune --op gemm --shape 4,4
grep -q "M,N,K" "$tmp/err" || fail "bad gemm shape message"
expect 1 "resume without log" -- "$bin" tune --op gemm --shape 4,4,4 --resume
expect 2 "missing model" -- "$bin" tune "$tmp/nope.onnx" --node x
expect 2 "unknown node" -- "$bin" tune models/resnet18.onnx --node /no/such/Conv
grep -q "no node named" "$tmp/err" || fail "unknown node message"
expect 2 "untunable node" -- "$bin" tune models/resnet18.onnx --node /relu/Relu
grep -q "tunable nodes are Conv, Gemm and MatMul" "$tmp/err" || fail "untunable message"
printf 'not json\n{}\n' >"$tmp/bad.jsonl"
expect 2 "malformed log" -- "$bin" tune --op gemm --shape 8,8,8 --trials 2 --log "$tmp/bad.jsonl" --resume
grep -q "bad.jsonl:1" "$tmp/err" || fail "malformed log message names file:line"

expect 0 "gemm json" -- "$bin" tune --op gemm --shape 12,20,9 --trials 6 --reps 1 --json --log "$tmp/t.jsonl"
for k in best_gflops best_config measurements; do
	field "['$k']" >/dev/null 2>&1 || fail "json lacks $k"
done
[ "$(field "['measurements']")" = 6 ] || fail "measurements != 6"
[ "$(wc -l <"$tmp/t.jsonl")" = 6 ] || fail "log has $(wc -l <"$tmp/t.jsonl") lines, expected 6"

expect 0 "resume" -- "$bin" tune --op gemm --shape 12,20,9 --trials 9 --reps 1 --json --log "$tmp/t.jsonl" --resume
[ "$(field "['resumed']")" = 6 ] || fail "resume did not read 6 measurements"
[ "$(field "['measurements']")" = 9 ] || fail "resume did not continue to 9"
[ "$(wc -l <"$tmp/t.jsonl")" = 9 ] || fail "resume did not append 3 lines"

expect 0 "conv baselines" -- "$bin" tune --op conv2d --shape 1,3,6,6,4,3,3,1,1 --trials 5 --reps 1 --baselines --json
for k in random_best_gflops sa_best_gflops exhaustive_best_gflops exhaustive_measurements openblas_gflops openblas_core openblas_detected tuned_vs_openblas; do
	field "['$k']" >/dev/null 2>&1 || fail "json lacks $k"
done
python3 - "$tmp/out" <<'PY' || fail "baseline figures inconsistent"
import json, sys
d = json.load(open(sys.argv[1]))
ex = d["exhaustive_best_gflops"]
assert d["exhaustive_measurements"] == d["legal_configs"]
for k in ("best_gflops", "random_best_gflops", "sa_best_gflops"):
    assert 0 < d[k] <= ex, k
PY

expect 0 "model node" -- "$bin" tune models/bert_base_like.onnx --node /blocks/layers.0/self_attn/MatMul_1 --trials 3 --reps 1 --json --log "$tmp/m.jsonl"
[ "$(field "['key']")" = "gemm:128,128,64" ] || fail "attention MatMul shape: $(field "['key']")"
[ "$(field "['batch']")" = 12 ] || fail "attention MatMul batch"
cp "$tmp/out" "$tmp/tuned.json"

# per-node times from the log: the 12 layers share the attention shape
expect 1 "times without log" -- "$bin" tune models/bert_base_like.onnx --times
expect 2 "times with missing log" -- "$bin" tune models/bert_base_like.onnx --times --log "$tmp/none.jsonl"
grep -q "none.jsonl" "$tmp/err" || fail "missing log message names the file"
expect 0 "times" -- "$bin" tune models/bert_base_like.onnx --times --log "$tmp/m.jsonl" --json
python3 - "$tmp/out" "$tmp/tuned.json" <<'PY' || fail "per-node times inconsistent with the tuned GFLOP/s"
import json, sys
d = json.load(open(sys.argv[1])); t = json.load(open(sys.argv[2]))
assert d["measured_nodes"] == 12, d["measured_nodes"]
assert d["tunable_nodes"] > 12 and len(d["missing"]) == d["tunable_nodes"] - 12
want = t["batch"] * t["flops"] / (t["best_gflops"] * 1e9)
for n in d["nodes"]:
    assert n["key"] == "gemm:128,128,64" and n["name"].endswith("self_attn/MatMul_1"), n
    assert abs(n["seconds"] - want) <= 1e-5 * want, (n["seconds"], want)
PY

# --all: every distinct kernel shape of a model once, into one log that
# --times (and so --costs) reads; resumable from the log; --budget.
# tests/data/tiny_convs.onnx: its kernels tune in milliseconds.
tiny=tests/data/tiny_convs.onnx
expect 1 "all without log" -- "$bin" tune $tiny --all
grep -q "needs --log" "$tmp/err" || fail "all without log message"
expect 1 "all with node" -- "$bin" tune $tiny --all --node stem --log "$tmp/a.jsonl"
expect 1 "budget without all" -- "$bin" tune --op gemm --shape 4,4,4 --budget 3
expect 1 "bad budget" -- "$bin" tune $tiny --all --log "$tmp/a.jsonl" --budget -1
grep -q "budget" "$tmp/err" || fail "bad budget message"
expect 2 "all onto a model file" -- "$bin" tune $tiny --all --trials 2 --reps 1 --log models/resnet18.onnx
grep -q "not a tuning log" "$tmp/err" || fail "all refuses a --log that is not a log"
expect 0 "all" -- "$bin" tune $tiny --all --trials 3 --reps 1 --log "$tmp/a.jsonl" --json
cp "$tmp/out" "$tmp/all.json"
check_log() { # LOG TRIALS: one summary line per shape, TRIALS measurements each
	python3 - "$1" "$2" "$tmp/all.json" <<'PY'
import json, sys, collections
lines = [json.loads(l) for l in open(sys.argv[1])]
trials = int(sys.argv[2]); rep = json.load(open(sys.argv[3]))
keys = {s["key"] for s in rep["shapes"]}
summ = collections.Counter(l["key"] for l in lines if l["method"] == "shape")
meas = collections.Counter(l["key"] for l in lines if l["method"] != "shape")
assert set(summ) == keys and all(v == 1 for v in summ.values()), summ
assert set(meas) == keys and all(v == trials for v in meas.values()), meas
nodes = [n for l in lines if l["method"] == "shape" for n in l["nodes"]]
assert len(nodes) == len(set(nodes)) == 8, len(nodes)   # tiny_convs: 6 Conv, a Gemm, a MatMul
for l in lines:
    if l["method"] == "shape":
        assert l["best_gflops"] > 0 and l["measurements"] == trials, l
PY
}
python3 - "$tmp/all.json" <<'PY' || fail "--all report"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["shapes"]) == 5 and d["tuned"] == 5 and d["missing"] == [], d
assert abs(sum(s["share"] for s in d["shapes"]) - 1) < 1e-9
shared = [s for s in d["shapes"] if s["key"] == "conv2d:1,8,8,8,8,3,3,1,1"][0]
assert len(shared["nodes"]) == 3, shared   # the block's three 3x3 convolutions share one kernel
gemm = [s for s in d["shapes"] if s["key"] == "gemm:1,10,256"][0]
assert sorted(gemm["nodes"]) == ["fc", "head"], gemm   # Gemm and MatMul of one shape
PY
check_log "$tmp/a.jsonl" 3 || fail "--all log: shapes and measurements"
expect 0 "times after all" -- "$bin" tune $tiny --times --log "$tmp/a.jsonl" --json
[ "$(field "['measured_nodes']")" = 8 ] || fail "--times does not find all 8 nodes in the --all log"
n_before=$(wc -l <"$tmp/a.jsonl")
expect 0 "resume all, nothing left" -- "$bin" tune $tiny --all --trials 3 --reps 1 --log "$tmp/a.jsonl" --resume --json
[ "$(field "['logged']")" = 5 ] && [ "$(field "['tuned']")" = 0 ] || fail "resume of a finished log tuned again"
[ "$(wc -l <"$tmp/a.jsonl")" = "$n_before" ] || fail "resume of a finished log appended lines"
# an interrupted run: the first 9 lines (two shapes done), the next one cut in the middle
head -9 "$tmp/a.jsonl" >"$tmp/cut.jsonl"
head -c 40 <(sed -n 10p "$tmp/a.jsonl") >>"$tmp/cut.jsonl"
expect 0 "resume an interrupted --all" -- "$bin" tune $tiny --all --trials 3 --reps 1 --log "$tmp/cut.jsonl" --resume --json
check_log "$tmp/cut.jsonl" 3 || fail "resumed --all log: shapes and measurements"
[ "$(field "['logged']")" -ge 1 ] || fail "resume did not keep the finished shapes"
expect 0 "budget" -- "$bin" tune $tiny --all --budget 1 --trials 100000 --reps 1 --log "$tmp/b.jsonl" --json
python3 - "$tmp/b.jsonl" <<'PY' || fail "--budget shares"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])]
s = [l for l in s if l["method"] == "shape"]
assert len(s) == 5
assert sum(l["budget_seconds"] for l in s) <= 1 + 5e-3 + 1e-9
big = max(s, key=lambda l: l["share"])
assert big["budget_seconds"] == max(l["budget_seconds"] for l in s)
assert all(l["best_gflops"] > 0 for l in s)   # every shape got a valid measurement
PY

if [ "$fails" != 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "tune e2e: ok"
