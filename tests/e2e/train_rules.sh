#!/usr/bin/env bash
# train_rules.sh — `train` obeys the Lua cut rules (pb.rule{cut=...}) as
# `partition --method rl` does: the agent masks the actions that would break
# them, its start falls back to greedy (which cuts only where they allow)
# when the chosen start breaks them, and the plan names the rule.
# Usage: train_rules.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=${1:?usage: train_rules.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_train_rules.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >"$tmp/train_rules.lua" <<LUA
-- boundaries after a node that is not an Add, and all boundaries; layer i
-- (0-based, as arranged_core counts) is node pb.layers()[i + 1]: resnet18's
-- 16 weight copies are no layers (it read node i, which passed only while
-- every boundary was one the two numberings agree on)
local L = pb.layers()
local function cuts()
  local layer, bad, n = 0, 0, 0
  local ac = pb.plan().detail.arranged_core
  for i, k in ipairs(ac) do
    layer = layer + k
    if k > 0 and i < #ac then
      n = n + 1
      if pb.node(L[layer]).op ~= "Add" then bad = bad + 1 end
    end
  end
  return bad, n
end
pb.rule{ name = "blocks_whole", cut = "forbid", match = function(op) return op.op ~= "Add" end }
for _, init in ipairs({"greedy", "equal"}) do
  pb.cmd("train --episodes 60 --seed 1 --init " .. init .. " -o $tmp/a.ckpt")
  local bad, n = cuts()
  local rules = pb.plan().detail.rules
  print(string.format("train_rules: init %s, %d of %d boundaries after a non-Add, rules %d",
                      init, bad, n, rules and #rules or 0))
end
LUA
if ! "$bin" run "$tmp/train_rules.lua" models/resnet18.onnx --layout layouts/manycore-16.lua \
	--allow-write "$tmp" >"$tmp/out" 2>"$tmp/err"; then
	fail "run train_rules.lua: $(head -5 "$tmp/err")"
fi
for init in greedy equal; do
	line=$(grep "^train_rules: init $init," "$tmp/out")
	[ -n "$line" ] || fail "no line for --init $init: $(cat "$tmp/out")"
	case "$line" in
	*", 0 of "*" boundaries after a non-Add, rules 1") ;;
	*) fail "train breaks the cut rule or does not name it: $line" ;;
	esac
	case "$line" in *", 0 of 0 boundaries"*) fail "no boundary at all, nothing checked: $line" ;; esac
done

[ "$fails" -eq 0 ] || exit 1
echo "train_rules: ok"
