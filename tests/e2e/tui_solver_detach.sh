#!/usr/bin/env bash
# tui_solver_detach.sh — a plan the stepping solver did not install detaches
# it (issue 37.4). resnet18 on manycore-16: `R` attaches the RL agent (the
# status line offers s/S:step); `E` replaces its plan by the exact one: the
# output says the agent was detached, `s` says no solver runs and why, and
# the title stays partition/exact (before, `s` stepped the agent on and the
# title went back to partition/rl with the agent's worse plan). `R` again,
# then a hand edit ('>'): detached by partition/manual, no s/S:step offered.
# Usage: tui_solver_detach.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_solver_detach.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" detach

tm -f /dev/null new-session -d -s "$sess" -x 160 -y 45 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$root/models/resnet18.onnx' --layout '$root/layouts/manycore-16.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for 'resnet18.onnx: [0-9]+ nodes'
wait_for '[0-9]+ boxes'

keys R
wait_for 'partition/rl attached'
wait_for '^ s/S:step'
keys E
wait_for 'plan partition/exact'
wait_for 'partition/rl detached: its plan was replaced by partition/exact'
keys s
wait_for "step: no solver is running \(partition/rl detached"
grep -q 'plan partition/exact' "$tmp/screen" || fail "'s' changed the plan after the agent was detached"
grep -q '^ s/S:step' "$tmp/screen" && fail "the status line offers s/S:step with no solver attached"

keys R
wait_for 'plan partition/rl'
wait_for '^ s/S:step'
cmd 'boundary 1 1'
wait_for 'plan partition/manual'
wait_for 'partition/rl detached: its plan was replaced by partition/manual \(a hand edit\)'
grep -q '^ s/S:step' "$tmp/screen" && fail "the status line offers s/S:step for a manual plan"
keys s
wait_for "step: no solver is running \(partition/rl detached"
grep -q 'plan partition/manual' "$tmp/screen" || fail "'s' replaced the manual plan"

cmd 'q!'
wait_for 'PB_EXIT=0'
echo "ok: tui_solver_detach"
