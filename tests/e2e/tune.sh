#!/usr/bin/env bash
# tune.sh — the `tune` command's CLI contract: exit codes and messages for bad
# shapes / nodes / logs, --json fields (with and without --baselines), a model
# node, and --resume continuing from a log. Small shapes and budgets only.
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
for k in random_best_gflops sa_best_gflops exhaustive_best_gflops exhaustive_measurements openblas_gflops; do
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

if [ "$fails" != 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "tune e2e: ok"
