#!/usr/bin/env bash
# A cancelled partition on a routed mesh stops its placement too
# (docs/mesh.md, "Cancelling"): a script's pb.cmd runs the RL agent with a
# budget far beyond the script's CPU-time limit, so the limit cancels it;
# the plan it saved (-o) is the snake placement of the agent's best, priced
# by the routed model, after one evaluation, and says it was stopped. Before,
# the placement's local search ran to its local optimum after the cancel
# (squeezenet1_1 on grayskull-120: 3,996 evaluations; mobilenet_v2: 22,209,
# 494 ms CPU after the key). Counts, not times: the limit only decides when
# the cancel comes.
set -u
bin=${1:?usage: mesh_cancel.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_mcancel.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3

# the script is over its limit once pb.cmd returns: it ends there (exit 2);
# the local search (--place local), then the agent's placement actions (rl)
for place in local rl; do
rm -f "$tmp/plan.json"
cat >"$tmp/c.lua" <<LUA
pb.cmd("partition -m rl --agent none --place $place --place-agent none --seconds 100000 -o $tmp/plan.json")
LUA
"$bin" run "$tmp/c.lua" models/squeezenet1_1.onnx --layout layouts/grayskull-120.lua \
	--allow-write "$tmp" --max-seconds 3 >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "$place: run: exit code: $(cat "$tmp/out")"
grep -q "time limit of 3 s exceeded: cancelled" "$tmp/out" || fail "$place: run: $(cat "$tmp/out")"
[ -s "$tmp/plan.json" ] || fail "$place: no plan saved by the cancelled run"
$py - "$tmp/plan.json" "$place" <<'PY' || fail "$place: the placement went on after the cancel"
import json, sys
m = json.load(open(sys.argv[1]))["detail"]["mesh"]
p = m["place"]
assert p["method"] == sys.argv[2], p
if sys.argv[2] == "rl":
    assert p["rl"]["episodes"] == 0 and p["rl"]["stopped"] is True, p
# asked before the first move: the start's evaluation only
assert p["stopped"] is True and p["evals"] == 1 and p["moves"] == 0, p
assert p["local_optimum"] is False, p
# a valid placement: every core once, 120 cores on 10 x 12
pl = m["placement"]
assert len(pl) == m["rows"] * m["cols"] == 120, len(pl)
assert sorted(set(pl)) == list(range(len(m["group_cores"]))), set(pl)
PY
done

if [ $fails -eq 0 ]; then echo "mesh cancel: 1 passed, 0 failed"; else echo "mesh cancel: 0 passed, 1 failed"; fi
exit $fails
