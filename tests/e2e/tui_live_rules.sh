#!/usr/bin/env bash
# tui_live_rules.sh — live stepping under the session's Lua heuristics and
# rules (issue 37.5). resnet18 on manycore-16 with a script holding an
# action_mask that fails on its first call (so a step that consults it says
# so) and a `cut = "force"` rule after node 30 (inside a group of the free
# optimum, which runs nodes 24-35 in one group). Before, `R` and `I` were
# refused ("--start cannot be combined with Lua action_mask ...").
# `R`: the agent attaches under the mask and the rule, and its first step
# fails with the mask's message (the mask runs live). `I`: the MILP attaches
# (the mask is unused by it), steps to its proof, and its plan cuts after
# node 30 with no broken rule.
# Usage: tui_live_rules.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_live_rules.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" liverules
cat >"$tmp/live.lua" <<'LUA'
pb.heuristic{ name = "live_mask", kind = "action_mask", fn = function(s)
  error("live_mask consulted at " .. s.n_cores .. " cores")
end }
pb.rule{ name = "cut_after_30", cut = "force", match = function(op) return op.id == 30 end }
LUA

tm -f /dev/null new-session -d -s "$sess" -x 160 -y 45 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$root/models/resnet18.onnx' --layout '$root/layouts/manycore-16.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for 'resnet18.onnx: [0-9]+ nodes'
wait_for '[0-9]+ boxes'
cmd "source $tmp/live.lua"
sleep 0.5
cmd 'scripts'
wait_for 'cut_after_30'

keys R
wait_for 'partition/rl attached under action_mask, cut/core rules'
keys s
wait_for 'live_mask consulted at 16 cores'

keys I
wait_for 'partition/milp attached under action_mask \(unused by this method\), cut/core rules'
cmd 'repeat 500 step'
wait_for 'partition/milp: .*\(done\)' $((limit * 6))
wait_for 'plan partition/milp'
cmd 'lua local p = pb.plan(); return "cut " .. tostring(p.assignment[31] ~= p.assignment[32]) .. " broken " .. (p.metrics.rule_violations or 0)'
wait_for '^cut true broken 0(\.0)?$'

cmd 'q!'
wait_for 'PB_EXIT=0'
echo "ok: tui_live_rules"
