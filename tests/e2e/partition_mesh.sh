#!/usr/bin/env bash
# partition on a routed mesh (docs/mesh.md): --json gives each group's
# mesh_cores (one connected region, every core used once), the loaded links
# between neighbours, max_time >= lower_bound and snake >= lower_bound; the
# plan saved with -o and pb.plan() carry the placement; --place without a
# routed mesh and a half-routed mesh are clear errors.
set -u
bin=${1:?usage: partition_mesh.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_mesh.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3

for m in exact greedy local; do
	for l in manycore-16-mesh manycore-64-mesh; do
		"$bin" partition models/squeezenet1_1.onnx --layout layouts/$l.lua -m $m --json \
			-o "$tmp/plan.json" >"$tmp/$m.json" 2>"$tmp/err" || fail "$m on $l: $(cat "$tmp/err")"
		$py - "$tmp/$m.json" "$tmp/plan.json" <<'PY' || fail "$m on $l: placed plan invalid"
import json, sys
j = json.load(open(sys.argv[1]))
plan = json.load(open(sys.argv[2]))
mesh = j["mesh"]
R, C = mesh["rows"], mesh["cols"]
seen = set()
for g in j["groups"]:
    cells = [tuple(c) for c in g["mesh_cores"]]
    assert len(cells) == g["cores"], (len(cells), g["cores"])
    assert not seen & set(cells)
    seen |= set(cells)
    todo, reach = [cells[0]], {cells[0]}
    while todo:
        r, c = todo.pop()
        for n in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if n in cells and n not in reach:
                reach.add(n)
                todo.append(n)
    assert reach == set(cells), "group not connected"
assert seen == {(r, c) for r in range(R) for c in range(C)}
for l in j["links"]:
    (a, b), (c, d) = l["from"], l["to"]
    assert abs(a - c) + abs(b - d) == 1 and l["bytes"] > 0
    assert abs(l["time"] - l["bytes"] / (mesh["link_gbs"] * 1e9)) <= 1e-12
assert j["optimum"] is None and j["lower_bound"] > 0
assert j["max_time"] >= j["lower_bound"] * (1 - 1e-12)
assert j["snake"] >= j["lower_bound"] * (1 - 1e-12)
assert plan["detail"]["mesh"]["placement"] == mesh["placement"]
# the label speaks for the placed problem: exact's 1-D proof only bounds it
assert "placed after a 1-D solve" in j["restricted_by"], j["restricted_by"]
assert abs(j["bound"] - j["lower_bound"]) <= 1e-12 * j["lower_bound"]
assert j["optimal"] == (j["max_time"] <= j["lower_bound"] * (1 + 1e-9)), (j["optimal"], j["max_time"])
PY
	done
done

# Lua sees the placement
cat >"$tmp/p.lua" <<'LUA'
pb.cmd("partition -m greedy")
local m = pb.plan().detail.mesh
assert(#m.placement == 16 and m.rows == 4, "no placement in pb.plan()")
print("ok")
LUA
"$bin" run "$tmp/p.lua" models/squeezenet1_1.onnx --layout layouts/manycore-16-mesh.lua \
	>"$tmp/out" 2>&1 || fail "lua: $(cat "$tmp/out")"

# --place needs a routed mesh: usage error naming the layout
"$bin" partition models/squeezenet1_1.onnx --layout layouts/manycore-16.lua --place local \
	>/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "--place on a 1-D layout: exit code"
grep -q "manycore-16.lua" "$tmp/err" || fail "--place: message: $(cat "$tmp/err")"
"$bin" partition models/squeezenet1_1.onnx --layout layouts/manycore-16-mesh.lua --place nope \
	>/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "--place nope: exit code"

# a half-routed mesh: input error naming the file and the field
sed 's/link_gbs = 64, hop_ns = 1.0,/link_gbs = 64,/' layouts/manycore-16-mesh.lua >"$tmp/half.lua"
"$bin" partition models/squeezenet1_1.onnx --layout "$tmp/half.lua" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "half mesh: exit code ($(cat "$tmp/err"))"
grep -q "half.lua.*hop_ns" "$tmp/err" || fail "half mesh: message: $(cat "$tmp/err")"

# rl on a routed mesh (issue 41): the shipped agents, its plan placed by its
# placement actions, shown beside the routing-free bound and the snake of
# the 1-D optimum; its own 1-D figures marked routing-free (text and --json)
"$bin" partition models/squeezenet1_1.onnx --layout layouts/manycore-16-mesh.lua -m rl \
	--episodes 20 --place-episodes 50 --json >"$tmp/rl.json" 2>"$tmp/err" || fail "rl: $(cat "$tmp/err")"
$py - "$tmp/rl.json" <<'PY' || fail "rl on a mesh: json"
import json, sys
j = json.load(open(sys.argv[1]))
p = j["mesh"]["place"]
assert p["method"] == "rl" and p["rl"]["episodes"] == 50, p
assert p["rl"]["agent"].endswith("agents/manycore-16-mesh.place.ckpt"), p["rl"]
assert j["rl"]["agent"].endswith("agents/manycore-16-mesh.ckpt"), j["rl"]
assert j["rl"]["model"] == "1-D (routing-free)" and j["rl"]["placed_max_time"] == j["max_time"]
assert j["lower_bound"] <= j["max_time"] and j["snake"] >= j["lower_bound"], j
assert j["optimum"] is None and j["bound"] == j["lower_bound"], j
PY
"$bin" partition models/squeezenet1_1.onnx --layout layouts/manycore-16-mesh.lua -m rl \
	--episodes 20 --place-episodes 50 >"$tmp/rl.txt" 2>"$tmp/err" || fail "rl text: $(cat "$tmp/err")"
for want in "routing-free lower bound" "snake of the 1-D optimum" "placement: rl (the agent" \
	"rl: its 1-D partition, routing-free"; do
	grep -qF "$want" "$tmp/rl.txt" || fail "rl text: no '$want': $(cat "$tmp/rl.txt")"
done

# train --place-output: a placement agent that partition --place rl loads;
# refused on a layout without a routed mesh, and as a partition agent
"$bin" train models/squeezenet1_1.onnx --layout layouts/manycore-16-mesh.lua --episodes 5 \
	--no-reference -o "$tmp/a.ckpt" --place-output "$tmp/p.ckpt" --place-episodes 40 \
	>"$tmp/out" 2>&1 || fail "train --place-output: $(cat "$tmp/out")"
grep -q "placement agent: models/squeezenet1_1.onnx: snake" "$tmp/out" || fail "train: $(cat "$tmp/out")"
"$bin" partition models/squeezenet1_1.onnx --layout layouts/manycore-16-mesh.lua -m greedy \
	--place rl --place-agent "$tmp/p.ckpt" --place-episodes 10 --json >"$tmp/p.json" \
	2>"$tmp/err" || fail "--place-agent: $(cat "$tmp/err")"
grep -q "p.ckpt" "$tmp/p.json" || fail "--place-agent: not named in the report"
"$bin" partition models/squeezenet1_1.onnx --layout layouts/manycore-16-mesh.lua -m rl \
	--agent "$tmp/p.ckpt" --episodes 2 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "placement agent as partition agent: exit code"
grep -q "a placement agent" "$tmp/err" || fail "placement agent as partition agent: $(cat "$tmp/err")"
"$bin" train models/squeezenet1_1.onnx --layout layouts/manycore-16.lua --episodes 2 \
	--no-reference -o "$tmp/b.ckpt" --place-output "$tmp/q.ckpt" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "train --place-output without a routed mesh: exit code"
grep -q "routed mesh" "$tmp/err" || fail "train --place-output: $(cat "$tmp/err")"

if [ $fails -eq 0 ]; then echo "partition mesh: 1 passed, 0 failed"; else echo "partition mesh: 0 passed, 1 failed"; fi
exit $fails
