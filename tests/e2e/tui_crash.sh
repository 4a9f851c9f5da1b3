#!/usr/bin/env bash
# tui_crash.sh — a crash inside a job leaves a recovery session (issue 17.2,
# tui/recover.c): for each of SIGSEGV, SIGBUS, SIGFPE and SIGABRT the
# workbench (resnet18 x manycore-16, a private tmux server) makes an unsaved
# plan, then a job crashes on its coroutine (PB_TEST_CRASH=SIG:WORD, read only
# by tui/jobs.c for this test); the process must die of that signal, say so on
# stderr, and leave partbench-session.json.recover in its directory: the
# session before the crashing command (model, layout and the unsaved plan),
# valid JSON, no temporary file beside it. After the SEGV run the next start on
# the model offers the recovery and 'r' restores the plan; a crash with nothing
# unsaved writes no recovery session.
# Usage: tui_crash.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: tui_crash.sh PARTBENCH}")
root=$(pwd)
model=$root/models/resnet18.onnx
layout=$root/layouts/manycore-16.lua
# the tmux helpers (tm, fail, screen, wait_for, keys, cmd) of the other
# workbench tests; this test starts a fresh tmux server per run
. "$root/tests/e2e/lib/tui_tmux.sh" crash
runs=0
sock=pbcrash-$$-$runs
cleanup() {
	for i in $(seq 0 "$runs"); do tmux -L "pbcrash-$$-$i" kill-server 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
limit=30
[ -n "${PB_SANITIZED:-}" ] && limit=120

# start DIR ENV...: the workbench in DIR; its exit status and stderr land in DIR
start() {
	local dir=$1
	shift
	tm kill-server 2>/dev/null
	rm -f "$dir/exit" "$dir/stderr"
	runs=$((runs + 1))
	sock=pbcrash-$$-$runs # a fresh server each time
	tm -f /dev/null new-session -d -s "$sess" -x 120 -y 40 -c "$dir" \
		"env LANG=C.UTF-8 $* '$bin' '$model' --layout '$layout' 2>'$dir/stderr'; echo PB_EXIT=\$? >'$dir/exit'; sleep 600"
	wait_for 'resnet18.onnx: [0-9]+ nodes'
}
exit_of() { # waits for DIR/exit, prints the status
	local end=$((SECONDS + limit))
	while [ ! -s "$1/exit" ] && [ $SECONDS -lt $end ]; do sleep 0.05; done
	[ -s "$1/exit" ] || fail "the workbench did not exit after the crash"
	sed 's/PB_EXIT=//' "$1/exit"
}

n=0
for sig in SEGV BUS FPE ABRT; do
	n=$((n + 1))
	dir=$tmp/$sig
	mkdir -p "$dir"
	start "$dir" "PB_TEST_CRASH=$sig:fuse"
	cmd 'partition --method greedy'
	wait_for 'plan partition/greedy'
	cmd 'fuse'
	status=$(exit_of "$dir")
	want=$((128 + $(kill -l "$sig")))
	[ "$status" = "$want" ] || fail "$sig: exit status $status, expected $want (death by the signal): $(cat "$dir/stderr")"
	grep -q "crashed inside a job (signal $(kill -l "$sig"))" "$dir/stderr" ||
		fail "$sig: no crash message on stderr: $(cat "$dir/stderr")"
	rec=$dir/partbench-session.json.recover
	[ -s "$rec" ] || fail "$sig: no recovery session written ($(ls "$dir"))"
	grep -q "written to $rec\|written to partbench-session.json.recover" "$dir/stderr" ||
		fail "$sig: stderr does not name the recovery file: $(cat "$dir/stderr")"
	ls "$dir" | grep -q 'crash-tmp' && fail "$sig: the temporary file stayed beside the recovery"
	/usr/bin/python3 - "$rec" "$model" "$layout" <<'EOF' || fail "$sig: bad recovery session"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["format"] == "partbench-session", j.get("format")
assert j["model"] == sys.argv[2], j["model"]
assert j["layout"] == sys.argv[3], j["layout"]
assert j["plan"] and j["plan"]["method"] == "greedy", j["plan"]
EOF
	echo "ok: $sig inside a job: exit $status, recovery session written"
done

# the next start on the model offers it; r restores the unsaved plan
dir=$tmp/SEGV
start "$dir"
wait_for 'recovery session partbench-session.json.recover \(written'
keys r
wait_for 'restored the recovery session'
wait_for 'plan partition/greedy'
[ -e "$dir/partbench-session.json.recover" ] && fail "the restored recovery file stayed"
cmd 'q!'
status=$(exit_of "$dir")
[ "$status" = 0 ] || fail "q! after the restore: exit $status: $(cat "$dir/stderr")"
echo "ok: the next start offered the recovery and restored the plan"

# nothing unsaved: the crash writes nothing
dir=$tmp/clean
mkdir -p "$dir"
start "$dir" "PB_TEST_CRASH=SEGV:fuse"
cmd 'fuse'
status=$(exit_of "$dir")
[ "$status" = 139 ] || fail "clean: exit status $status"
grep -q "nothing unsaved to recover" "$dir/stderr" || fail "clean: stderr: $(cat "$dir/stderr")"
[ -e "$dir/partbench-session.json.recover" ] && fail "clean: a recovery session without unsaved work"
echo "ok: a crash with nothing unsaved writes no recovery session"
echo "PASS"
