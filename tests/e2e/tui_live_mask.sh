#!/usr/bin/env bash
# tui_live_mask.sh — a plan stepped live under a restricting Lua action mask
# obeys it (issue 37.5; tui_live_rules.sh only shows that the mask is
# consulted). resnet18 on manycore-16: the exact optimum (`E`) puts a group
# boundary after layer 24 (the cut the mask will forbid, so the mask
# restricts). Without the mask, `R` and 20 live steps reach a plan with that
# cut too (the agent's search finds it); with a mask that forbids every
# action whose next state has a boundary after layer 24 (looked up with
# pb.partition_apply), `R` and the same 20 steps end on a plan without it,
# read through Lua (the plan's arranged_core). The agent's restarts are plain
# under a mask (rl_reinforce.c), so every state it reaches came by allowed
# actions from a start the mask allows.
# Usage: tui_live_mask.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_live_mask.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" livemask
cat >"$tmp/mask.lua" <<'LUA'
local function has_cut(ac, at)
  local c = 0
  for i = 1, #ac - 1 do
    c = c + ac[i]
    if ac[i] > 0 and c == at then return true end
  end
  return false
end
pb.heuristic{ name = "no_cut_24", kind = "action_mask", fn = function(s)
  local forbid = {}
  for k = 0, s.n_actions - 1 do
    local nx = pb.partition_apply(s.arranged_core, k)
    if nx and has_cut(nx, 24) then forbid[k] = false end
  end
  return forbid
end }
LUA
# the plan's boundary after layer 24, as "cut24 true|false" and its cores
check='lua local ac = pb.plan().detail.arranged_core; local c, f = 0, false; for i = 1, #ac - 1 do c = c + ac[i]; if ac[i] > 0 and c == 24 then f = true end end; return pb.plan().method .. " cut24 " .. tostring(f) .. " [" .. table.concat(ac, ",") .. "]"'

tm -f /dev/null new-session -d -s "$sess" -x 160 -y 45 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$root/models/resnet18.onnx' --layout '$root/layouts/manycore-16.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for 'resnet18.onnx: [0-9]+ nodes'
wait_for '[0-9]+ boxes'

keys E
wait_for 'plan partition/exact'
cmd "$check"
wait_for '^exact cut24 true '

# without the mask the live agent finds the cut
keys R
wait_for 'partition/rl attached'
cmd 'repeat 20 step'
wait_for 'partition/rl: max\(t\) .*, 20 episodes' $((limit * 6))
wait_for 'plan partition/rl'
cmd "$check"
wait_for '^rl cut24 true '

# under the mask it never makes it
cmd "source $tmp/mask.lua"
sleep 0.5
cmd 'scripts'
wait_for 'no_cut_24'
keys R
wait_for 'partition/rl attached under action_mask'
cmd 'repeat 20 step'
# the 20th episode's line below the attach line (the unmasked run's is above)
end=$((SECONDS + limit * 6))
until screen && sed -n '/attached under action_mask/,$p' "$tmp/screen" |
	grep -qE 'partition/rl: max\(t\) .*, 20 episodes'; do
	[ $SECONDS -lt $end ] || fail "the masked run did not reach 20 episodes"
	sleep 0.1
done
wait_for 'plan partition/rl'
cmd "$check"
wait_for '^rl cut24 (true|false) '
screen
grep -qE '^rl cut24 false ' "$tmp/screen" ||
	fail "the plan stepped under the mask has the forbidden cut: $(grep -E '^rl cut24' "$tmp/screen" | tail -1)"

screen; grep -E "^(exact|rl) cut24" "$tmp/screen"
cmd 'q!'
wait_for 'PB_EXIT=0'
echo "ok: tui_live_mask"
