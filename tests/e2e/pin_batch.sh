#!/usr/bin/env bash
# `pin --plan FILE` on a shard plan made at another batch than the model
# file's (`shard --batch 8`): the edit runs on the model at the plan's batch
# (plan.model_batch), as `shard` left its session. A 2-block GPT made at
# batch 1 over the 16 devices of layouts/cluster-2x8.lua at batch 8: the
# plan's own spec of h0.attn.q.matmul splits the batch ('rep,b0'), which is
# no candidate at batch 1 (a batch of 1 cannot be split 8 ways); pinning it
# to the spec it already has must change nothing (step time and memory equal
# the plan's), and pinning another candidate must give the figures of a
# fresh `shard --batch 8` run with that pin (the same MILP, solved from
# scratch: the fresh run's plan is pinned through the session, not the file).
set -u
bin=${1:?usage: pin_batch.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_pinbatch_e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3
lay=layouts/cluster-2x8.lua
"$bin" gen gpt --layers 2 --hidden 256 --heads 4 --seq 64 --vocab 1000 -o "$tmp/g.onnx" \
	>/dev/null || fail "gen gpt"
"$bin" shard "$tmp/g.onnx" --layout $lay --batch 8 -o "$tmp/p.json" >/dev/null ||
	fail "shard --batch 8"
spec=$($py -c "
import json,sys
d=json.load(open(sys.argv[1]))
print([o['strategy'] for o in d['detail']['ops'] if o['name']=='h0.attn.q.matmul'][0])" "$tmp/p.json")
case "$spec" in *b0*) ;; *) fail "the plan's spec '$spec' does not split the batch (test premise)" ;; esac
out=$("$bin" pin "$tmp/g.onnx" --layout $lay --plan "$tmp/p.json" --node h0.attn.q.matmul \
	--spec "$spec" --json -o "$tmp/q.json" 2>&1) || fail "pin to its own spec: $out"
$py - "$tmp/p.json" "$tmp/q.json" <<'PY' || fail "pin to its own spec changed the plan"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for k in ("step_time", "memory_per_device"):
    x, y = a["detail"][k], b["detail"][k]
    assert abs(x - y) <= 1e-9 * max(abs(x), 1e-30), (k, x, y)
assert b.get("model_batch") == 8, b.get("model_batch")
PY
# another candidate: the file's pin equals the session's (shard then pin in one script)
"$bin" pin "$tmp/g.onnx" --layout $lay --plan "$tmp/p.json" --node h0.attn.q.matmul \
	--spec rep,rep -o "$tmp/r.json" >/dev/null 2>&1 || fail "pin rep,rep on the file"
cat >"$tmp/s.lua" <<LUA
pb.cmd("shard --batch 8")
pb.cmd("pin --node h0.attn.q.matmul --spec rep,rep -o $tmp/s.json")
LUA
"$bin" run "$tmp/s.lua" "$tmp/g.onnx" --layout $lay --allow-write "$tmp" >/dev/null 2>&1 ||
	fail "shard + pin in a script"
$py - "$tmp/r.json" "$tmp/s.json" <<'PY' || fail "pin on the file differs from pin in the session"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for k in ("step_time", "memory_per_device"):
    x, y = a["detail"][k], b["detail"][k]
    assert abs(x - y) <= 1e-9 * max(abs(x), 1e-30), (k, x, y)
PY
[ "$fails" -eq 0 ] && echo "pin_batch: ok"
exit $((fails > 0))
