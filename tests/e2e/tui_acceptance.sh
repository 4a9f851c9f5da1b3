#!/usr/bin/env bash
# tui_acceptance.sh — the issue 17 items of docs/tui-acceptance.md that no
# other tmux test covers, driven as a user would in an interactive shell in
# tmux (bash -i, so that Ctrl-Z and fg work):
# - context hints in the status line: no plan (E:exact P:pack I:milp), on a
#   plan group (</>:move m:merge), a solver attached (s/S:step), the pager
#   (q closes);
# - the title shows unsaved state ([+] unsaved) and drops it after :w;
# - step -n N advances N units for rl (episodes) and exact (bisection
#   checks): the objective pane counts N steps; an unknown bound shows "—";
# - undo names the change; undo back to no plan says the plan is removed;
#   output written before the undo is dimmed (ESC[2m), the groups pane
#   follows the plan;
# - Ctrl-C with nothing running asks whether to quit, c cancels;
# - Ctrl-Z suspends to the shell ("Stopped"), fg restores the screen; the
#   same during a job, which goes on after fg and is still cancelled by Ctrl-C;
# - :q! quits without asking despite unsaved changes;
# - SIGHUP (the terminal closing) writes a recovery session beside the
#   session and ends with status 129, and the next start offers it; r
#   restores the plan;
# - a session naming its model and layout relative to its own folder loads
#   from another directory, by --session and by :load;
# - open or load replacing the model says which plan is closed with it, and
#   whether it was unsaved.
# Usage: tui_acceptance.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_acceptance.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" accept
mkdir -p "$tmp/a/models" "$tmp/b"
cp "$root/models/resnet18.onnx" "$tmp/a/models/"
cp "$root/layouts/manycore-16.lua" "$tmp/a/"
# an interactive shell, so that job control (Ctrl-Z, fg) works
tm -f /dev/null new-session -d -s "$sess" -x 150 -y 45 -c "$tmp/a" \
	"env -i HOME='$tmp' HISTFILE=/dev/null TERM=screen PATH=/usr/bin:/bin LANG=C.UTF-8 PS1='SH[\$?]\$ ' bash --norc -i"
wait_for '^SH\[0\]\$'
run() { # run ARGS...: starts the workbench from the shell (on a clear screen,
	# so that the prompt after it is the only empty one; nothing after it on the
	# line, so that Ctrl-Z stops the workbench and no other command runs)
	keys -l "clear; '$bin' $*"
	keys Enter
}
exited() { # exited REGEX: the shell's prompt with that exit status
	wait_for "^SH\\[$1\\]\\$ *\$"
}

# ---- hints, title, step -n N, unknown bound
run models/resnet18.onnx --layout manycore-16.lua
wait_for 'resnet18.onnx: 65 nodes'
wait_for '[0-9]+ boxes, dot'
grep -q '^ E:exact P:pack I:milp ?:help |' "$tmp/screen" ||
	fail "no plan: the hints do not name the solvers"
head -1 "$tmp/screen" | grep -q 'unsaved' && fail "the title says unsaved before any change"
keys E
wait_for 'plan partition/exact'
wait_for '^ \[\+\] unsaved'
wait_for '</>:move m:merge v:split u:undo'
keys R
wait_for 'partition/rl attached'
wait_for 's/S:step T:train u:undo'
cmd 'step -n 7'
wait_for 'objective \(partition/rl, 7 steps\)'
wait_for 'partition/rl: .*7 episodes'
# one unit per kind: the objective pane's times are in ms / us as the tables
wait_for 'last [0-9.]+ [mu]s +best [0-9.]+ [mu]s'
cmd 'partition --method exact --start'
wait_for 'partition/exact attached'
cmd 'step -n 3'
wait_for 'objective \(partition/exact, 3 steps\)'
cmd 'partition --method local --start'
wait_for 'partition/local attached'
cmd 'step -n 2'
wait_for 'bound —'
# the pager's own hint
keys '?'
wait_for 'help \(q closes\).*q closes'
keys q
wait_for 'local attached'
# ---- undo: named, dimmed old output, back to no plan said
keys u
wait_for 'undo: partition/local .*-> partition/'
keys G
wait_for 'plan partition/greedy'
keys u
wait_for 'undo: partition/greedy \([0-9]+ groups, max_time [^)]*\) -> partition/'
grep -q 'Groups (partition, greedy)' "$tmp/screen" && fail "the groups pane kept the undone plan"
grep -qE '^ \[\+\] unsaved \| plan partition/greedy' "$tmp/screen" && fail "the title kept the undone plan"
tm capture-pane -e -p -t "$sess" >"$tmp/screen.e"
grep -a "max storage" "$tmp/screen.e" | grep -qa $'\e\\[[0-9;]*2m' ||
	grep -a -B1 "max storage" "$tmp/screen.e" | grep -qa $'\e\\[[0-9;]*2m' ||
	fail "the report of the undone plan is not dimmed"
for i in 1 2 3 4 5 6 7 8; do keys u; done
wait_for "the plan is removed \('redo' brings it back\)"
wait_for 'no plan yet'
keys C-r
wait_for 'redo: no plan -> partition/'
# ---- Ctrl-C with nothing running asks; Ctrl-Z and fg
keys C-c
wait_for 'unsaved changes: s save to partbench-session.json and quit, d discard and quit, c cancel'
keys c
wait_for '^ \[\+\] unsaved'
keys C-z
wait_for 'Stopped +.*partbench'
exited '[1-9][0-9]*'
keys -l fg
keys Enter
wait_for '^ \[\+\] unsaved \| plan partition/'
wait_for '[0-9]+ boxes, dot'
# Ctrl-Z during a job: the job goes on after fg, Ctrl-C still cancels it
keys R
wait_for 'partition/rl attached'
cmd 'repeat 100000 step'
wait_for "repeat 100000 step +[0-9.]+ [mµ]?s .*Esc/Ctrl-C cancel"
keys C-z
wait_for 'Stopped +.*partbench'
exited '[1-9][0-9]*'
keys -l fg
keys Enter
wait_for "repeat 100000 step +[0-9.]+ [mµ]?s .*Esc/Ctrl-C cancel"
keys C-c
wait_for "cancelled 'repeat 100000 step' after"
# ---- :w and the title; :q! quits without asking
cmd 'w s.json'
wait_for 'session saved to s.json'
wait_for '^ plan partition/'
keys E
wait_for '^ \[\+\] unsaved'
cmd 'q!'
exited 0
# ---- SIGHUP writes a recovery session; the next start offers it
run --session s.json
wait_for 'session loaded from'
keys P
wait_for 'plan partition/pack'
wait_for '^ \[\+\] unsaved'
pid=$(pgrep -f "^$bin --session s.json" | head -1)
[ -n "$pid" ] || fail "no workbench process"
kill -HUP "$pid"
exited 129 # died of the signal (128 + 1), after writing the recovery
[ -s "$tmp/a/s.json.recover" ] || fail "SIGHUP wrote no s.json.recover"
grep -q '"method": "pack"' "$tmp/a/s.json.recover" || fail "the recovery lacks the pack plan"
run --session s.json
wait_for 'recovery session s.json.recover \(written .*\): r restore, d delete it'
keys r
wait_for 'restored the recovery session'
wait_for 'plan partition/pack'
cmd 'wq'
exited 0
# ---- a session with paths relative to itself, from another directory
sed -i "s#\"$tmp/a/models/resnet18.onnx\"#\"models/resnet18.onnx\"#; s#\"$tmp/a/manycore-16.lua\"#\"manycore-16.lua\"#" \
	"$tmp/a/s.json"
grep -q '"model": "models/resnet18.onnx"' "$tmp/a/s.json" || fail "could not make the model path relative"
keys -l "cd '$tmp/b'"
keys Enter
run --session ../a/s.json
wait_for 'session loaded from .*a/s.json'
wait_for 'plan partition/pack, [0-9]+ groups'
wait_for 'manycore chip16'
cmd 'open models/none.onnx'
wait_for 'models/none.onnx'
cmd "load $tmp/a/s.json"
wait_for 'closed the plan partition/pack \([0-9]+ groups\) of resnet18.onnx with its model$'
wait_for 'session loaded from'
wait_for 'plan partition/pack'
# ---- nothing removed without a message: open drops the unsaved plan
keys G
wait_for 'plan partition/greedy'
cmd "open $root/models/squeezenet1_1.onnx"
wait_for 'closed the plan partition/greedy \([0-9]+ groups\) of resnet18.onnx with its model \(it was not saved\)'
wait_for 'squeezenet1_1.onnx: [0-9]+ nodes'
keys q
wait_for 'unsaved changes'
keys d
exited 0
echo "ok: tui_acceptance"
