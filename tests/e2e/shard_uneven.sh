#!/usr/bin/env bash
# shard --pipeline auto with uneven device groups (core/shard/dtp/dtp_uneven.c):
# a GPT whose head (196,608-word vocabulary, hidden 256) outweighs its blocks
# gets stages on different tensor degrees on cluster-4x8; the best row and
# the -o plan carry stage_tp / stage_devices, the text table marks the
# scheme, and the plan loads back with the row's step time. With
# --schedule interleaved the best is interleaved on uneven groups: chunk k
# of the plan on group k mod pp's devices, loading back with its step time.
# A GPT with a small vocabulary keeps an even best configuration.
set -u
bin=${1:?usage: shard_uneven.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_shuneven.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3

"$bin" gen gpt --layers 4 --hidden 256 --heads 4 --seq 64 --vocab 196608 -o "$tmp/gv.onnx" >/dev/null ||
	fail "gen gpt vocab 196608"
"$bin" shard "$tmp/gv.onnx" --layout layouts/cluster-4x8.lua --train --batch 16 --pipeline auto \
	--json -o "$tmp/gv.plan.json" >"$tmp/gv.json" 2>"$tmp/err" || fail "shard uneven: $(cat "$tmp/err")"
$py - "$tmp/gv.json" "$tmp/gv.plan.json" <<'PY' || fail "uneven best / plan"
import json, sys
d = json.load(open(sys.argv[1])); plan = json.load(open(sys.argv[2]))
b = d["best"]
assert b.get("uneven") is True, b
tp, dev = b["stage_tp"], b["stage_devices"]
assert len(tp) == len(dev) == b["pp"] and len(set(tp)) > 1, b
first = 0
for t, (a, z) in zip(tp, dev):
    assert a == first and z - a + 1 == b["dp"] * t, (tp, dev)
    first = z + 1
assert first == 32, dev
even = [c for c in d["configurations"] if c["fits"] and not c.get("uneven")]
assert even and all(b["step_time"] < c["step_time"] for c in even), b
assert abs(plan["metrics"]["step_time"] - b["step_time"]) <= 1e-9 * b["step_time"]
det = plan["detail"]
assert det["stage_tp"] == tp and det["stage_devices"] == dev, det
assert [s["devices"] for s in det["stages"]] == dev, det["stages"]
assert [(g["first_unit"], g["n_units"]) for g in plan["groups"]] == [(a, z - a + 1) for a, z in dev]
PY
cat >"$tmp/load.lua" <<LUA
pb.cmd("plan --load $tmp/gv.plan.json")
print(string.format("%.12g %s", pb.plan().metrics.step_time, pb.plan().kind))
LUA
"$bin" run "$tmp/load.lua" "$tmp/gv.onnx" --layout layouts/cluster-4x8.lua >"$tmp/load.txt" 2>&1 ||
	fail "plan --load: $(cat "$tmp/load.txt")"
$py - "$tmp/gv.json" "$tmp/load.txt" <<'PY' || fail "loaded uneven plan: $(cat "$tmp/load.txt")"
import json, sys
b = json.load(open(sys.argv[1]))["best"]
t, kind = open(sys.argv[2]).read().split()
assert kind == "pipeline" and abs(float(t) - b["step_time"]) <= 1e-9 * b["step_time"], (t, kind, b)
PY
"$bin" shard "$tmp/gv.onnx" --layout layouts/cluster-4x8.lua --train --batch 16 --pipeline auto \
	>"$tmp/gv.txt" 2>"$tmp/err" || fail "shard uneven text: $(cat "$tmp/err")"
grep -qE '^\* .* tp [0-9]+(\+[0-9]+)+ ' "$tmp/gv.txt" && grep -q "uneven device groups" "$tmp/gv.txt" ||
	fail "uneven text table: $(cat "$tmp/gv.txt")"

# interleaved on uneven groups
"$bin" shard "$tmp/gv.onnx" --layout layouts/cluster-4x8.lua --train --batch 16 --pipeline auto \
	--schedule interleaved --json -o "$tmp/gi.plan.json" >"$tmp/gi.json" 2>"$tmp/err" ||
	fail "shard uneven interleaved: $(cat "$tmp/err")"
$py - "$tmp/gi.json" "$tmp/gi.plan.json" <<'PY' || fail "uneven interleaved best / plan"
import json, sys
d = json.load(open(sys.argv[1])); plan = json.load(open(sys.argv[2]))
b = d["best"]
assert b.get("uneven") is True and b["schedule"].startswith("interleaved:"), b
p, V = b["pp"], int(b["schedule"].split(":")[1])
dev = b["stage_devices"]
assert len(dev) == p and len(set(b["stage_tp"])) > 1, b
even = [c for c in d["configurations"] if c["fits"] and not c.get("uneven")]
assert even and all(b["step_time"] < c["step_time"] for c in even), b
assert abs(plan["metrics"]["step_time"] - b["step_time"]) <= 1e-9 * b["step_time"]
st = plan["detail"]["stages"]
assert len(st) == p * V and len(plan["groups"]) == p * V, (len(st), p, V)
for k, s in enumerate(st):
    assert s["stage"] == k % p and s["devices"] == dev[k % p], (k, s["stage"], s["devices"])
slowest = max(sum(s["time"] for s in st if s["stage"] == g) for g in range(p))
assert abs(slowest - plan["detail"]["slowest_group"]) <= 1e-9 * slowest, slowest
PY
sed "s#gv.plan.json#gi.plan.json#" "$tmp/load.lua" >"$tmp/loadi.lua"
"$bin" run "$tmp/loadi.lua" "$tmp/gv.onnx" --layout layouts/cluster-4x8.lua >"$tmp/loadi.txt" 2>&1 ||
	fail "plan --load interleaved: $(cat "$tmp/loadi.txt")"
$py - "$tmp/gi.json" "$tmp/loadi.txt" <<'PY' || fail "loaded interleaved plan: $(cat "$tmp/loadi.txt")"
import json, sys
b = json.load(open(sys.argv[1]))["best"]
t, kind = open(sys.argv[2]).read().split()
assert kind == "pipeline" and abs(float(t) - b["step_time"]) <= 1e-9 * b["step_time"], (t, kind, b)
PY

# a small vocabulary: the best stays even
"$bin" gen gpt --layers 12 --hidden 256 --heads 4 --seq 64 --vocab 4000 -o "$tmp/g12.onnx" >/dev/null ||
	fail "gen gpt 12 layers"
"$bin" shard "$tmp/g12.onnx" --layout layouts/cluster-2x8.lua --train --batch 16 --pipeline auto \
	--json >"$tmp/g12.json" 2>"$tmp/err" || fail "shard g12: $(cat "$tmp/err")"
$py -c 'import json,sys; b=json.load(open(sys.argv[1]))["best"]; assert not b.get("uneven"), b' \
	"$tmp/g12.json" || fail "g12: an uneven best"

if [ $fails -eq 0 ]; then echo "shard uneven: 1 passed, 0 failed"; else echo "shard uneven: 0 passed, 1 failed"; fi
exit $fails
