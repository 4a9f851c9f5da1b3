#!/usr/bin/env bash
# shard --pipeline auto|off: the data x tensor x pipeline configurations are
# compared with the operator-level schemes under one cost model, and the best
# configuration's plan becomes the plan (saved with -o, loaded back).
set -u
bin=${1:?usage: shard_pipeline.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_shpipe.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3

# 1. resnet18 on one 8-device node: operator-level wins; pipelines of 2, 4, 8 stages listed.
"$bin" shard models/resnet18.onnx --layout layouts/cluster-1x8.lua --batch 32 --opt-level 2 \
	--pipeline auto --json -o "$tmp/r.plan.json" >"$tmp/r.json" 2>"$tmp/err" || fail "resnet18: $(cat "$tmp/err")"
$py - "$tmp/r.json" "$tmp/r.plan.json" <<'PY' || fail "resnet18 --pipeline auto report"
import json, sys
d = json.load(open(sys.argv[1])); plan = json.load(open(sys.argv[2]))
assert sorted({c["pp"] for c in d["configurations"]}) == [1, 2, 4, 8], d["configurations"]
best = d["best_overall"]
times = [c["step_time"] for c in d["configurations"] if c["fits"]]
assert abs(best["step_time"] - min(times)) <= 1e-12 * min(times), (best, times)
assert best["step_time"] == d["best"]["step_time"], (best, d["best"])
assert best["kind"] == ("operator-level" if d["best"]["pp"] == 1 else "pipeline")
assert plan["kind"] == ("shard" if best["kind"] == "operator-level" else "pipeline"), plan["kind"]
assert abs(plan["metrics"]["step_time"] - best["step_time"]) <= 1e-9 * best["step_time"]
PY

# 2. bert training on 4x8 with a batch of 32: a pipeline beats every
#    operator-level scheme, and the saved plan is the pipeline plan.
"$bin" shard models/bert_base_like.onnx --layout layouts/cluster-4x8.lua --opt-level 3 --train \
	--batch 32 --max-axes 1 --pipeline auto --json -o "$tmp/b.plan.json" >"$tmp/b.json" 2>"$tmp/err" \
	|| fail "bert: $(cat "$tmp/err")"
$py - "$tmp/b.json" "$tmp/b.plan.json" <<'PY' || fail "bert --pipeline auto report"
import json, sys
d = json.load(open(sys.argv[1])); plan = json.load(open(sys.argv[2]))
best = d["best_overall"]
assert best["kind"] == "pipeline", best
assert best["step_time"] < d["step_time"], (best, d["step_time"])
assert plan["kind"] == "pipeline", plan["kind"]
b = d["best"]
stages = int(plan["metrics"]["stages"])
assert stages == b["pp"] and best["scheme"].startswith("%d stages" % stages), (best["scheme"], stages)
# the kept plan: the best row's with its chunk boundaries polished (never slower)
kept = d["polish"]["step_time"]
assert abs(plan["metrics"]["step_time"] - kept) <= 1e-9 * kept, (plan["metrics"], d["polish"])
assert kept <= best["step_time"] * (1 + 1e-9)
assert abs(d["polish"]["step_time_before"] - best["step_time"]) <= 1e-9 * best["step_time"]
# the plan is the configuration's: dp, tp, m, schedule, one part per chunk with its specs
det = plan["detail"]
assert (det["dp"], det["tp"], det["pp"], det["microbatches"], det["pipeline_schedule"]) == \
    (b["grouping_dp"], b["grouping_tp"], b["pp"], b["microbatches"], b["schedule"]), (det, b)
assert len(det["stages"]) == len(plan["groups"]) >= b["pp"]
assert all(all("strategy" in o for o in st["ops"]) for st in det["stages"])
assert sum(1 for st in det["stages"] if st["ops"]) >= 2
ids = sorted(o["id"] for st in det["stages"] for o in st["ops"])
assert len(ids) == len(set(ids)), "an operator in two chunks"
for st in det["stages"]:
    for o in st["ops"]:
        assert plan["assignment"][o["id"]] == st["chunk"], (o, st["chunk"])
PY

# 3. off (the default) adds nothing; a bad value is a usage error.
"$bin" shard models/resnet18.onnx --layout layouts/cluster-1x8.lua --opt-level 2 --json >"$tmp/off.json" \
	|| fail "off"
$py -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "pipelines" not in d' "$tmp/off.json" \
	|| fail "off: pipelines in the report"
"$bin" shard models/resnet18.onnx --layout layouts/cluster-1x8.lua --pipeline sometimes >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "bad --pipeline value: exit code"
grep -q "auto or off" "$tmp/err" || fail "bad --pipeline value: message"

# 4. --jobs: worker processes give the serial report (ops, collectives,
#    per-scheme step times, incumbents' objectives); --jobs 0 is refused.
"$bin" shard models/resnet18.onnx --layout layouts/cluster-2x8.lua --opt-level 2 --jobs 1 --json \
	>"$tmp/j1.json" || fail "jobs 1"
"$bin" shard models/resnet18.onnx --layout layouts/cluster-2x8.lua --opt-level 2 --jobs 3 --json \
	>"$tmp/j3.json" || fail "jobs 3"
$py - "$tmp/j1.json" "$tmp/j3.json" <<'PY' || fail "jobs: parallel report differs from serial"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert len(a["schemes"]) >= 3
for k in ("ops", "collectives", "scheme", "step_time", "memory_per_device"):
    assert a[k] == b[k], k
for x, y in zip(a["schemes"], b["schemes"]):
    assert (x["scheme"], x["status"], x.get("step_time")) == (y["scheme"], y["status"], y.get("step_time"))
assert [(e["scheme"], e["objective"]) for e in a["incumbents"]] == \
    [(e["scheme"], e["objective"]) for e in b["incumbents"]]
PY
"$bin" shard models/resnet18.onnx --layout layouts/cluster-1x8.lua --jobs 0 >/dev/null 2>&1
[ $? -eq 1 ] || fail "--jobs 0: exit code"

# 5. --pad: resnet18 on 1x8 with batch 12 (12 does not divide by 8, nor do
#    the 7x7/14x14 maps): padded splits win (~78 us against ~109 us), and the
#    task lists show padded shapes with their pad amounts.
"$bin" shard models/resnet18.onnx --layout layouts/cluster-1x8.lua --batch 12 --pad --json \
	--emit-tasks "$tmp/tasks" >"$tmp/pad.json" || fail "pad"
"$bin" shard models/resnet18.onnx --layout layouts/cluster-1x8.lua --batch 12 --json >"$tmp/nopad.json" \
	|| fail "no pad"
$py - "$tmp/pad.json" "$tmp/nopad.json" "$tmp/tasks" <<'PY' || fail "pad: report or tasks"
import json, sys, glob
p, n = (json.load(open(f)) for f in sys.argv[1:3])
assert p["step_time"] < 0.9 * n["step_time"], (p["step_time"], n["step_time"])
padded = [o for o in p["ops"] if o.get("pad", 1) > 1]
assert padded
assert not any("pad" in o for o in n["ops"])
seen = 0
for f in glob.glob(sys.argv[3] + "/device_*.json"):
    for op in json.load(open(f))["ops"]:
        for t in op["inputs"] + op["outputs"]:
            if "pad" in t:
                seen += 1
                assert len(t["pad"]) == len(t["shape"]) == len(t["padded_shape"])
                for k, (l, pd, full) in enumerate(zip(t["shape"], t["pad"], t["padded_shape"])):
                    assert 0 <= pd <= l and full % l == 0 and t["offset"][k] + l <= full
assert seen
PY

# 6. pipeline --pad: the stages' sharding may pad too (same model and batch:
#    faster than without).
"$bin" pipeline models/resnet18.onnx --layout layouts/cluster-1x8.lua --batch 12 --stages 2 \
	--pad --json >"$tmp/ppad.json" || fail "pipeline --pad"
"$bin" pipeline models/resnet18.onnx --layout layouts/cluster-1x8.lua --batch 12 --stages 2 \
	--json >"$tmp/pnopad.json" || fail "pipeline without --pad"
$py - "$tmp/ppad.json" "$tmp/pnopad.json" <<'PY' || fail "pipeline --pad: not used"
import json, sys
p, n = (json.load(open(f)) for f in sys.argv[1:3])
assert p["step_time"] < 0.95 * n["step_time"], (p["step_time"], n["step_time"])
PY

# 7. Without --batch, the search plans the model's own batch (8 here).
"$bin" shard models/resnet18.onnx --layout layouts/cluster-1x8.lua --input input.1=8,3,224,224 \
	--pipeline auto --json >"$tmp/nobatch.json" || fail "shard --pipeline auto without --batch"
$py - "$tmp/nobatch.json" <<'PY' || fail "--pipeline auto without --batch: not the model's batch"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dtp_search"]["batch"] == 8, d["dtp_search"]
assert all(8 % c["microbatches"] == 0 for c in d["configurations"])
PY

# Generated GPT (gen gpt): --layers auto (default) gives the table of --layers off
# with a smaller MILP; bad sizes and a bad --layers value exit 2 and 1 (usage) with a message.
"$bin" gen gpt --layers 6 --hidden 128 --heads 8 --seq 64 --vocab 1000 -o "$tmp/gpt.onnx" >/dev/null \
	|| fail "gen gpt"
for L in auto off; do
	"$bin" shard "$tmp/gpt.onnx" --layout layouts/cluster-1x8.lua --train --batch 8 --layers $L \
		--json >"$tmp/gpt_$L.json" 2>"$tmp/err" || fail "shard gpt --layers $L: $(cat "$tmp/err")"
done
$py - "$tmp/gpt_auto.json" "$tmp/gpt_off.json" <<'PY' || fail "shard gpt --layers auto vs off"
import json, sys
a = json.load(open(sys.argv[1])); o = json.load(open(sys.argv[2]))
assert len(a["schemes"]) == len(o["schemes"])
for x, y in zip(a["schemes"], o["schemes"]):
    assert abs(x["step_time"] - y["step_time"]) <= 1e-9 * y["step_time"], (x, y)
    assert x["milp"]["cols"] < y["milp"]["cols"], (x["milp"], y["milp"])
b = a["best"]  # the plan in dp x tp x pp terms
assert b["pp"] == 1 and b["microbatches"] == 1, b  # dp, tp: Megatron's, or null when mixed
assert (b["dp"] * b["tp"] == 8) if b["degrees"] == "megatron" else (b["dp"], b["tp"]) == (None, None), b
assert b["step_time"] == a["step_time"] and b["fits"] == a["feasible"], b
assert b["memory"] == a["memory_per_device"], b
PY
# pipeline compares itself with the plan `shard` gives (its default -O 0), under the
# pipeline's memory model (weights + gradients): the same step time.
"$bin" pipeline "$tmp/gpt.onnx" --layout layouts/cluster-2x8.lua --train --batch 8 --json \
	>"$tmp/pipe.json" 2>"$tmp/err" || fail "pipeline gpt: $(cat "$tmp/err")"
"$bin" shard "$tmp/gpt.onnx" --layout layouts/cluster-2x8.lua --train --batch 8 --optimizer none \
	--recompute none --json >"$tmp/sh.json" 2>"$tmp/err" || fail "shard gpt 2x8: $(cat "$tmp/err")"
$py - "$tmp/pipe.json" "$tmp/sh.json" <<'PY' || fail "pipeline's operator-level row is not shard's plan"
import json, sys
p = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
op = [r for r in p["schemes"] if r["kind"] == "operator-level"][0]
assert abs(op["step_time"] - s["step_time"]) <= 1e-9 * s["step_time"], (op, s["step_time"])
PY
"$bin" gen gpt --hidden 100 --heads 3 -o "$tmp/bad.onnx" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "multiple of heads" "$tmp/err" || fail "gen gpt bad heads: $(cat "$tmp/err")"
"$bin" shard "$tmp/gpt.onnx" --layout layouts/cluster-1x8.lua --layers sometimes >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "layers must be auto or off" "$tmp/err" || fail "shard --layers bad: $(cat "$tmp/err")"

# data x tensor x pipeline (issue 21): --pipeline auto lists every dp x tp x pp = 16 with
# micro-batches and schedules; `best` is the fastest that fits; fixing all five values
# evaluates that configuration to the same numbers; the fixing options are checked.
"$bin" gen gpt --layers 6 --hidden 256 --heads 4 --seq 64 --vocab 4000 -o "$tmp/g6.onnx" >/dev/null ||
	fail "gen gpt 6 layers"
# (its -o plan is the one loaded back below: one search for both, issue 40.7)
"$bin" shard "$tmp/g6.onnx" --layout layouts/cluster-2x8.lua --train --batch 16 --pipeline auto \
	-o "$tmp/g6.plan.json" --json >"$tmp/dtp.json" 2>"$tmp/err" || fail "dtp search: $(cat "$tmp/err")"
$py - "$tmp/dtp.json" >"$tmp/fixed.args" <<'PY' || fail "dtp search: configurations / best"
import json, sys
d = json.load(open(sys.argv[1]))
cf = d["configurations"]
trip = {(c["dp"], c["tp"], c["pp"]) for c in cf}
want = {(a, b, 16 // (a * b)) for a in (1, 2, 4, 8, 16) for b in (1, 2, 4, 8, 16) if 16 % (a * b) == 0}
assert trip == want, sorted(want - trip)
sch = {c["schedule"] for c in cf if c["pp"] > 1}  # interleaved:V, V >= 3 where the layers allow
assert {"1f1b", "interleaved:2"} <= sch and all(x == "1f1b" or x.startswith("interleaved:") for x in sch), sch
b = d["best"]
for k in ("dp", "tp", "pp", "microbatches", "schedule", "step_time", "memory", "fits", "kind"):
    assert k in b, k
ok = [c for c in cf if c["fits"]]
assert b["step_time"] == min(c["step_time"] for c in ok), b
pick = [c for c in cf if c["pp"] == 4 and c["schedule"] == "1f1b" and c["dp"] == 2][0]
print(pick["dp"], pick["tp"], pick["pp"], pick["microbatches"], pick["schedule"], repr(pick["step_time"]), repr(pick["memory"]))
PY
read -r fdp ftp fpp fm fs ft fmem <"$tmp/fixed.args"
"$bin" shard "$tmp/g6.onnx" --layout layouts/cluster-2x8.lua --train --batch 16 --dp "$fdp" --tp "$ftp" \
	--pp "$fpp" --microbatches "$fm" --schedule "$fs" --json >"$tmp/fix.json" 2>"$tmp/err" ||
	fail "dtp fixed: $(cat "$tmp/err")"
$py - "$tmp/fix.json" "$ft" "$fmem" <<'PY' || fail "dtp fixed configuration differs from the free search"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["configurations"]) == 1, d["configurations"]
b = d["best"]
assert abs(b["step_time"] - float(sys.argv[2])) <= 1e-9 * b["step_time"], (b, sys.argv[2])
assert abs(b["memory"] - float(sys.argv[3])) <= 1e-9 * b["memory"], (b, sys.argv[3])
PY
"$bin" shard "$tmp/g6.onnx" --layout layouts/cluster-2x8.lua --train --batch 16 --pp 2 --dp 4 \
	>"$tmp/fix.txt" 2>"$tmp/err" || fail "dtp text: $(cat "$tmp/err")"
grep -q "data x tensor x pipeline" "$tmp/fix.txt" && grep -qE "^\* +4 +2 +2 " "$tmp/fix.txt" ||
	fail "dtp text table: $(cat "$tmp/fix.txt")"
# The text report lists operators and collectives only for the plan kept: when a
# pipeline wins, the operator-level best is summarised, not listed.
"$bin" shard "$tmp/g6.onnx" --layout layouts/cluster-2x8.lua --train --batch 16 --pipeline auto \
	>"$tmp/auto.txt" 2>"$tmp/err" || fail "dtp text auto: $(cat "$tmp/err")"
"$bin" shard "$tmp/g6.onnx" --layout layouts/cluster-2x8.lua --train --batch 16 \
	>"$tmp/off.txt" 2>"$tmp/err" || fail "dtp text off: $(cat "$tmp/err")"
$py - "$tmp/dtp.json" "$tmp/auto.txt" "$tmp/off.txt" <<'PY' || fail "text report lists the plan kept"
import json, sys
pp = json.load(open(sys.argv[1]))["best"]["pp"]
auto, off = open(sys.argv[2]).read(), open(sys.argv[3]).read()
assert pp > 1, "this model's best is expected to be a pipeline"
assert "collectives (" not in auto and "operators (specs" not in auto, "auto lists the operator-level plan"
assert "a pipeline below is the plan kept" in auto and "best overall: pipeline" in auto
assert "collectives (" in off and "operators (specs" in off and "plan kept" not in off
PY
"$bin" shard "$tmp/g6.onnx" --layout layouts/cluster-2x8.lua --train --batch 16 --dp 3 >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "do not multiply to the 16 devices" "$tmp/err" || fail "--dp 3: $(cat "$tmp/err")"
"$bin" shard "$tmp/g6.onnx" --layout layouts/cluster-2x8.lua --train --schedule gpipe >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "schedule must be 1f1b" "$tmp/err" || fail "--schedule gpipe: $(cat "$tmp/err")"

# The best configuration's plan (-o): loads back with the same step time, in the
# session too; --pp fixed saves its plan as well; extract cuts it into parts.
# (the --pipeline auto plan: written by the search at the top of this part)
cp "$tmp/dtp.json" "$tmp/g6.json"
"$bin" shard "$tmp/g6.onnx" --layout layouts/cluster-2x8.lua --train --batch 16 --pp 2 \
	--schedule interleaved:2 -o "$tmp/g6pp.plan.json" --json >"$tmp/g6pp.json" 2>"$tmp/err" ||
	fail "dtp --pp 2 -o: $(cat "$tmp/err")"
for n in g6 g6pp; do
	cat >"$tmp/load_$n.lua" <<LUA
pb.cmd("plan --load $tmp/$n.plan.json")
print(string.format("%.12g %s", pb.plan().metrics.step_time, pb.plan().kind))
LUA
	"$bin" run "$tmp/load_$n.lua" "$tmp/g6.onnx" --layout layouts/cluster-2x8.lua >"$tmp/load_$n.txt" 2>&1 ||
		fail "plan --load $n: $(cat "$tmp/load_$n.txt")"
	$py - "$tmp/$n.json" "$tmp/load_$n.txt" "$tmp/$n.plan.json" <<'PY' || fail "$n: loaded plan is not the best configuration's"
import json, sys
d = json.load(open(sys.argv[1])); t, kind = open(sys.argv[2]).read().split()
plan = json.load(open(sys.argv[3]))
b = d["best"]
assert kind == ("pipeline" if b["pp"] > 1 else "shard"), (kind, b)
# the kept plan is the best row's after the boundary polish (-o writes it)
want = d["polish"]["step_time"] if "polish" in d else b["step_time"]
assert want <= b["step_time"] * (1 + 1e-9), (want, b["step_time"])
assert abs(float(t) - want) <= 1e-9 * want, (t, want, b["step_time"])
if b["pp"] > 1:
    assert plan["detail"]["pipeline_schedule"] == b["schedule"], plan["detail"]
    # every stage (chunk) carries its MACs and node range (the table and SVG legend)
    assert all(gr["macs"] > 0 and 0 <= gr["first_node"] <= gr["last_node"] for gr in plan["groups"]), plan["groups"]
    V = int(b["schedule"].split(":")[1]) if ":" in b["schedule"] else 1
    assert len(plan["groups"]) == b["pp"] * V, (len(plan["groups"]), b)
PY
done
grep -q '"pipeline_schedule": "interleaved:2"' "$tmp/g6pp.plan.json" || fail "--pp 2 interleaved plan"
"$bin" extract "$tmp/g6.onnx" --plan "$tmp/g6pp.plan.json" -o "$tmp/g6parts" --structure-only \
	>/dev/null 2>"$tmp/err" || fail "extract of the dtp plan: $(cat "$tmp/err")"
[ "$(ls "$tmp"/g6parts/part*.onnx | wc -l)" -eq 4 ] || fail "extract: $(ls "$tmp/g6parts")"

if [ $fails -eq 0 ]; then echo "shard --pipeline: 1 passed, 0 failed"; else echo "shard --pipeline: 0 passed, 1 failed"; fi
exit $fails
