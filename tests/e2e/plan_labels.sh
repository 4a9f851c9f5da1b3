#!/usr/bin/env bash
# Labels that are proven (issue 35): a plan is "optimal" only when proven for
# the problem as posed; a restricted search reports "best found" with a lower
# bound on the unrestricted problem and the gap. Checked on a generated GPT
# where shrinking loses (1 layer, hidden 64, 1x8, training: 100.65 us shrunk
# against 95.51 us unrestricted): the bound is checked against glpsol's
# optimum of every scheme's unrestricted MILP (--emit-lp), never against
# partbench's own figures; and every plan kind's --json carries optimal,
# bound, gap = (value - bound) / value and restricted_by.
set -u
bin=${1:?usage: plan_labels.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_labels.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3
L=layouts/cluster-1x8.lua

"$bin" gen gpt --layers 1 --hidden 64 --heads 2 --seq 16 --vocab 64 -o "$tmp/g.onnx" >/dev/null ||
	fail "gen gpt"
"$bin" shard "$tmp/g.onnx" --layout $L --train --shrink --json >"$tmp/shrink.json" ||
	fail "shard --shrink"
"$bin" shard "$tmp/g.onnx" --layout $L --train --json >"$tmp/default.json" || fail "shard"
# the unrestricted MILP of every scheme, solved by glpsol (objective in us)
schemes=$($py -c 'import json,sys; print(" ".join(s["scheme"] for s in json.load(open(sys.argv[1]))["schemes"]))' "$tmp/shrink.json")
[ -n "$schemes" ] || fail "no schemes in the report"
for s in $schemes; do
	"$bin" shard "$tmp/g.onnx" --layout $L --train --scheme "$s" --layers off \
		--emit-lp "$tmp/$s.lp" --json >/dev/null || fail "emit-lp $s"
	glpsol --lp "$tmp/$s.lp" -o "$tmp/$s.out" >/dev/null || fail "glpsol $s"
	grep -m1 '^Objective:' "$tmp/$s.out" | sed 's/.*= *\([0-9.eE+-]*\).*/\1/' >>"$tmp/opt.txt"
done
$py - "$tmp/shrink.json" "$tmp/default.json" "$tmp/opt.txt" <<'PY' || fail "shrink label"
import json, sys
sh, de = (json.load(open(p)) for p in sys.argv[1:3])
opt = min(float(x) for x in open(sys.argv[3]).read().split()) * 1e-6  # us -> s
# shrinking loses here: its plan is no optimum and must not say so
assert sh["step_time"] > opt * (1 + 1e-6), (sh["step_time"], opt)
assert sh["optimal"] is False, sh["optimal"]
assert "shrink" in sh["restricted_by"], sh["restricted_by"]
# a valid bound on the unrestricted problem, and the gap it gives
assert sh["bound"] is not None and sh["bound"] <= opt * (1 + 1e-9), (sh["bound"], opt)
assert abs(sh["gap"] - (sh["step_time"] - sh["bound"]) / sh["step_time"]) < 1e-9, sh["gap"]
assert sh["gap"] > 0
# the default search is the problem as posed: glpsol's optimum, proven
assert abs(de["step_time"] - opt) <= 1e-9 * opt, (de["step_time"], opt)
assert de["optimal"] is True and de["gap"] == 0, (de["optimal"], de["gap"])
assert de["bound"] <= opt * (1 + 1e-9)
assert "shrink" not in de["restricted_by"], de["restricted_by"]
# per scheme too: a scheme's bound never passes its own glpsol optimum
for s in sh["schemes"]:
    assert s["bound"] is None or s["bound"] <= s["step_time"] * (1 + 1e-9), s
PY

# every plan kind's --json: the four fields, and gap = (value - bound) / value
check() { # name value-key file
	$py - "$1" "$2" "$3" <<'PY' || fail "$1: label fields"
import json, math, sys
name, key, path = sys.argv[1:]
j = json.load(open(path))
for k in ("optimal", "bound", "gap", "restricted_by"):
    assert k in j, (name, "missing", k)
assert isinstance(j["optimal"], bool), (name, j["optimal"])
assert isinstance(j["restricted_by"], list), (name, j["restricted_by"])
v = j
for part in key.split("/"):  # "best/step_time": the dp x tp x pp best row's
    v = v[part]
b, g = j["bound"], j["gap"]
if b is not None:
    assert b <= v * (1 + 1e-9), (name, b, v)
    assert abs(g - (v - b) / v) < 1e-9, (name, g, v, b)
if j["optimal"]:
    assert g == 0, (name, g)
else:
    assert g is None or g > 0 or b is None, (name, g)
PY
}
"$bin" partition models/resnet18.onnx --layout layouts/manycore-16.lua --method greedy --json \
	>"$tmp/pg.json" && check "partition greedy" objective "$tmp/pg.json" || fail "partition greedy"
"$bin" partition models/resnet18.onnx --layout layouts/manycore-16.lua --json \
	>"$tmp/pe.json" && check "partition exact" objective "$tmp/pe.json" || fail "partition exact"
$py -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["optimal"] is True and j["restricted_by"] == [], j' \
	"$tmp/pe.json" || fail "partition exact is not labelled optimal"
$py -c 'import json,sys; j=json.load(open(sys.argv[1])); assert "greedy" in j["restricted_by"], j["restricted_by"]' \
	"$tmp/pg.json" || fail "partition greedy is not labelled a heuristic"
check shard step_time "$tmp/default.json"
"$bin" pipeline "$tmp/g.onnx" --layout layouts/cluster-2x8.lua --train --json >"$tmp/pp.json" &&
	check pipeline step_time "$tmp/pp.json" || fail pipeline
"$bin" shard "$tmp/g.onnx" --layout layouts/cluster-2x8.lua --train --batch 4 --pipeline auto \
	--json >"$tmp/dtp.json" && check "dp x tp x pp" best/step_time "$tmp/dtp.json" || fail "dp x tp x pp"
$py -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["optimal"] is False and j["bound"] is not None and "operator_level_label" in j, j' \
	"$tmp/dtp.json" || fail "dp x tp x pp label"
"$bin" map models/googlenet.onnx --layout layouts/hetero.lua --json >"$tmp/map.json" &&
	check map serial_time_per_input "$tmp/map.json" || fail map
"$bin" fuse models/googlenet.onnx --json >"$tmp/fuse.json" &&
	check fuse time_after "$tmp/fuse.json" || fail fuse

[ $fails -eq 0 ] && echo "plan_labels: ok"
exit $((fails > 0))
