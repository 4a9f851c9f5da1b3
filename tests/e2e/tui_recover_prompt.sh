#!/usr/bin/env bash
# tui_recover_prompt.sh — the start-up offer of a recovery session does not
# stop the screen (docs/tui.md, "Jobs"): while "recovery session ...: r
# restore, d delete it, Esc leave it" waited for its key, the canvas said
# "laying out..." and nothing else was drawn. Now the question sits on the
# bottom row while the graph is laid out and drawn.
# Usage: tui_recover_prompt.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_recover_prompt.sh PARTBENCH}")
root=$(pwd)
. "$(dirname "$0")/lib/tui_tmux.sh" recover

start() {
	tm -f /dev/null new-session -d -s "$sess" -x 120 -y 40 -c "$tmp" \
		"env LANG=C.UTF-8 '$bin' '$root/models/resnet18.onnx' --layout '$root/layouts/manycore-16.lua'; echo PB_EXIT=\$?; sleep 600"
}
# an unsaved plan, then SIGTERM: the recovery session is written
start
wait_for 'resnet18.onnx: [0-9]+ nodes'
keys G
wait_for 'plan partition/greedy'
pane=$(tm display -p -t "$sess" '#{pane_pid}')
pid=$(pgrep -P "$pane" partbench)
[ -n "$pid" ] || fail "no partbench process under the pane"
kill -TERM "$pid"
wait_for 'PB_EXIT=[1-9]'
[ -e "$tmp/partbench-session.json.recover" ] || fail "no recovery session was written"
tm kill-session -t "$sess"
# the next start asks, and meanwhile lays the graph out and draws it
start
wait_for 'recovery session partbench-session.json.recover \(written .*\): r restore'
wait_for 'boxes, dot [0-9.]+ s'
wait_for '│Conv conv1 *│'
grep -q 'laying out' "$tmp/screen" && fail "the canvas still says 'laying out...'"
grep -q 'when partbench was killed): r restore' "$tmp/screen" || fail "the question left the screen unanswered"
# navigation is the normal mode's: not taken while the question waits
keys Escape
wait_for 'E:exact P:pack'
[ -e "$tmp/partbench-session.json.recover" ] || fail "Esc removed the recovery session"
keys q
wait_for 'PB_EXIT=0'
echo "tui_recover_prompt: all checks passed"
