#!/usr/bin/env bash
# cli_partition_layers.sh — `partition` counts layers, not nodes: the weight
# copies of a torchvision-style export (an Identity per weight) and its
# flatten's shape arithmetic go with the layer that consumes them
# (docs/partition.md, "Layers"). tests/data/identity_resnet.onnx (37 nodes)
# and identity_resnet_plain.onnx (the same network without the copies, 23
# nodes) must get the same plan from every method: the same arranged_core
# over 16 layers, the same group rows in the table and in --json. A plan
# saved before the rule (arranged_core over the 37 nodes) still loads and
# evaluates. Before the rule the export's first group read "layers 0-15"
# (14 weight copies, the stem Conv and its Relu) and `equal` split 37 nodes.
# Usage: cli_partition_layers.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=${1:?usage: cli_partition_layers.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ident=tests/data/identity_resnet.onnx
plain=tests/data/identity_resnet_plain.onnx
py=/usr/bin/python3

for lay in manycore-16 manycore-64; do
	for m in exact equal greedy pack local milp; do
		for x in ident plain; do
			eval model=\$$x
			"$bin" partition "$model" --layout layouts/$lay.lua --method $m --json \
				>"$tmp/$x.json" 2>"$tmp/err" || fail "$m $lay $x: $(cat "$tmp/err")"
		done
		$py - "$tmp/ident.json" "$tmp/plain.json" <<'PY' || fail "$m on $lay: the export's plan is not the plain model's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
rows = lambda j: [(g["first_core"], g["cores"], g["first_layer"], g["last_layer"]) for g in j["groups"]]
ok = a["arranged_core"] == b["arranged_core"] and rows(a) == rows(b)
ok &= sum(a["arranged_core"]) == 16 and a["layers"] == 16 and a["folded_constants"] == 21
ok &= abs(a["max_time"] - b["max_time"]) <= 1e-12 * b["max_time"]
if not ok:
    print(a["arranged_core"], b["arranged_core"], rows(a), rows(b))
sys.exit(0 if ok else 1)
PY
	done
done

# the table: the same rows; the first group holds the stem Conv and Relu
"$bin" partition $ident --layout layouts/manycore-16.lua --method exact >"$tmp/t1" || fail "table"
"$bin" partition $plain --layout layouts/manycore-16.lua --method exact >"$tmp/t2" || fail "table"
diff <(sed -n '2,/^max(t)/p' "$tmp/t1") <(sed -n '2,/^max(t)/p' "$tmp/t2") >/dev/null ||
	fail "group tables differ: $(cat "$tmp/t1")"
grep -q '^0 .* 0-1  ' "$tmp/t1" || fail "group 0 is not layers 0-1: $(cat "$tmp/t1")"
grep -q '^layers: 16 (21 load-time constants of the 37 nodes go with the layer that consumes them)$' \
	"$tmp/t1" || fail "no layers line: $(cat "$tmp/t1")"

# a plan and a session saved before the rule load and evaluate to the same max(t)
cat >"$tmp/old.lua" <<'LUA'
for _, f in ipairs{"tests/data/identity_resnet.session-v1.json", "tests/data/identity_resnet.plan-v1.json"} do
  if f:find("session") then pb.cmd("load " .. f) else pb.cmd("plan --load " .. f) end
  local saved = pb.plan().metrics.max_time
  local out = pb.cmd("evaluate --json")
  local t = tonumber(out:match('"max_time": ([0-9.e-]+)'))
  local n = 0
  for _, k in ipairs(pb.plan().detail.arranged_core) do n = n + k end
  print(string.format("old %s: %d layers, max(t) %.9g s, saved %.9g s", f, n, t, saved))
end
LUA
"$bin" run "$tmp/old.lua" $ident --layout layouts/manycore-16.lua >"$tmp/old" 2>"$tmp/err" ||
	fail "old plans: $(cat "$tmp/err")"
[ "$(grep -c '^old .*: 16 layers, max(t) 7.12704e-06 s, saved 7.12704e-06 s$' "$tmp/old")" = 2 ] ||
	fail "old plans: $(cat "$tmp/old")"

echo "partition layers: $fails failure(s)"
[ "$fails" = 0 ]
