#!/usr/bin/env bash
# batch_guard.sh — `shard --batch B` / `pipeline --batch B` reload the model at
# batch B; when the command then fails (or is cancelled), the session goes back
# to the model's batch and the plan it had, instead of keeping the model at B
# with no plan.
# Usage: batch_guard.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=${1:?usage: batch_guard.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_batch_guard.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$bin" gen gpt --layers 2 --hidden 128 --heads 4 --seq 32 --vocab 1000 -o "$tmp/g.onnx" >/dev/null ||
	fail "gen gpt"
cat >"$tmp/guard.lua" <<'LUA'
pb.cmd("shard --batch 2 --scheme 2x8")
local macs, kind, t = pb.graph().macs, pb.plan().kind, pb.plan().metrics.step_time
for _, line in ipairs({"shard --batch 8 --scheme 3x3", "pipeline --batch 8 --stages 99"}) do
	local ok, msg = pcall(pb.cmd, line)
	assert(not ok, line .. " should fail")
	assert(pb.graph().macs == macs, line .. ": the model stays at batch 2, macs " .. pb.graph().macs .. " vs " .. macs)
	assert(pb.plan() and pb.plan().kind == kind and pb.plan().metrics.step_time == t, line .. ": the plan is kept")
end
pb.cmd("shard --batch 4 --scheme 2x8")
assert(pb.graph().macs > macs * 1.5, "a successful --batch 4 reloads the model")
print("ok")
LUA
out=$("$bin" run "$tmp/guard.lua" "$tmp/g.onnx" --layout layouts/cluster-2x8.lua 2>&1) || fail "$out"
[ "$(printf '%s\n' "$out" | tail -1)" = ok ] || fail "$out"
echo "batch_guard: ok"
