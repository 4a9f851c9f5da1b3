#!/usr/bin/env bash
# mpi_recovery.sh — under `mpirun --enable-recovery` (docs/scale-out.md), a
# rank killed with SIGKILL never hangs the others: rank 0 of `train` and of
# `shard` waits in a collective (MPI_Iallreduce / MPI_Iallgather polled by
# util/ranks.c) at most PB_RANK_TIMEOUT seconds for the dead rank, then says
# so and exits non-zero (before issue 39 it spun for ever: 146 s / 195 s and
# counting). Issue 39: train saves the agent as of the last step every rank
# took; `tune --all` (its own --rank-timeout) keeps the shapes done and exits
# non-zero; a rank killed inside MPI_Init no longer keeps rank 0 there.
# The kill happens once rank 1 has started MPI (its shared-memory segment is
# mapped); `timeout 300` (x10 sanitized) only guards against the hang being back.
# Skips (exit 77) where partbench was built without MPI or mpirun is absent.
# Usage: mpi_recovery.sh PATH/TO/partbench (from the repo root)
set -u
# the timeouts only guard against hangs: x10 under the sanitizers (issue 40.7)
hang=1
[ -n "${PB_SANITIZED:-}" ] && hang=10
bin=${1:?usage: mpi_recovery.sh PARTBENCH}
if ! grep -q PB_HAVE_MPI "$(dirname "$bin")/compile_commands.json" 2>/dev/null; then
	echo "SKIP: partbench was built without MPI"
	exit 77
fi
command -v mpirun >/dev/null || { echo "SKIP: mpirun not found (openmpi-bin)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d /tmp/pb_mpi_recovery.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# kill_rank1 NAME DELAY READY CMD...: runs CMD on 2 ranks, SIGKILLs rank 1
# DELAY seconds after it has started MPI and the file READY (- for none) has
# a line, and checks rank 0 ends by itself, non-zero, naming the timeout
kill_rank1() {
	local name=$1 delay=$2 ready=$3
	shift 3
	rm -f "$tmp/rc.0" "$tmp/rc.1"
	timeout $((300 * hang)) mpirun --oversubscribe --enable-recovery -x PB_RANK_TIMEOUT=5 -np 2 \
		bash -c '"$@"; echo $? >"'"$tmp"'/rc.$OMPI_COMM_WORLD_RANK"' _ "$bin" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err" &
	local runner=$! victim=
	for _ in $(seq 3000); do # up to 300 s
		for p in $(pgrep -x partbench); do
			{ tr '\0' '\n' <"/proc/$p/environ" | grep -qx OMPI_COMM_WORLD_RANK=1 &&
				grep -q "$tmp" "/proc/$p/cmdline" &&
				grep -q "vader_segment\|sm_segment" "/proc/$p/maps" && victim=$p; } 2>/dev/null
		done
		[ -n "$victim" ] && { [ "$ready" = - ] || [ -s "$ready" ]; } && break
		[ -n "$victim" ] && victim=
		kill -0 "$runner" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$victim" ] || { fail "$name: rank 1 never started MPI"; wait "$runner"; return; }
	sleep "$delay"
	kill -9 "$victim"
	local rc=0
	wait "$runner" || rc=$?
	[ "$rc" != 124 ] || fail "$name: rank 0 still ran after rank 1 died (killed by timeout $((300 * hang)))"
	local r0
	r0=$(cat "$tmp/rc.0" 2>/dev/null)
	[ -n "$r0" ] && [ "$r0" != 0 ] || fail "$name: rank 0 exit '$r0', expected non-zero"
	grep -q "another rank did not arrive within 5 s" "$tmp/$name.err" ||
		fail "$name: no message about the dead rank: $(tail -3 "$tmp/$name.err")"
}
# the training log's first line: an episode, and its gradient sum, is done
# (a kill inside MPI_Init is the last case below)
kill_rank1 train 1 "$tmp/t.log" train models/googlenet.onnx --layout layouts/manycore-16.lua \
	--episodes 1000000 -o "$tmp/a.ckpt" --log "$tmp/t.log"
# what was done is saved: the agent as of the last step every rank took
# (main wrote nothing), and it loads
grep -q "episodes was saved to $tmp/a.ckpt" "$tmp/train.err" ||
	fail "train: the message does not say the agent was saved: $(tail -3 "$tmp/train.err")"
[ -s "$tmp/a.ckpt" ] || fail "train saved no checkpoint after a rank died"
timeout $((300 * hang)) "$bin" partition models/googlenet.onnx --layout layouts/manycore-16.lua --method rl \
	--agent "$tmp/a.ckpt" --episodes 1 >/dev/null 2>"$tmp/load.err" ||
	fail "the saved agent does not load: $(tail -3 "$tmp/load.err")"
# rank 1 dies 1.5 s into its share of the schemes (about 5 s of a 6 s run
# here, 10x that under the sanitizers, which also slow MPI_Init: 5 s there);
# rank 0 finishes its share, then waits for it
delay=1.5
[ "${PB_SANITIZED:-}" = 1 ] && delay=5
kill_rank1 shard "$delay" - shard models/bert_base_like.onnx --layout layouts/cluster-8x8.lua --train \
	--jobs 1 -o "$tmp/shard.json"
[ -e "$tmp/shard.json" ] && fail "shard wrote a plan after a rank died"

# tune --all: the dead rank's shape is missing, the others' are in the log,
# exit non-zero (its own --rank-timeout, as in mpi_tune.sh)
# (mpirun --enable-recovery exits 0 whatever rank 0 returns: its own code is
# read from rc.0)
# (rank 0 then tunes the other 4 shapes alone: 300 trials each take about
# 110 s under the sanitizers, 431 s in all; 30 there)
trials=300
[ -n "${PB_SANITIZED:-}" ] && trials=30
rm -f "$tmp/k.jsonl" "$tmp/rc.0" "$tmp/rc.1"
timeout $((300 * hang)) mpirun --oversubscribe --enable-recovery -np 2 \
	bash -c '"$@"; echo $? >"'"$tmp"'/rc.$OMPI_COMM_WORLD_RANK"' _ "$bin" tune tests/data/tiny_convs.onnx \
	--all --trials $trials --reps 1 --rank-timeout 5 --log "$tmp/k.jsonl" >"$tmp/tune.out" 2>"$tmp/tune.err" &
runner=$!
for _ in $(seq 3000); do
	[ -s "$tmp/k.jsonl" ] && break
	kill -0 "$runner" 2>/dev/null || break
	sleep 0.1
done
victim=
for p in $(pgrep -x partbench); do
	{ tr '\0' '\n' <"/proc/$p/environ" | grep -qx OMPI_COMM_WORLD_RANK=1 &&
		grep -q "$tmp" "/proc/$p/cmdline" && victim=$p; } 2>/dev/null
done
[ -n "$victim" ] && kill -9 "$victim"
rc=0
wait "$runner" || rc=$?
if [ -z "$victim" ]; then
	fail "tune: rank 1 not found"
else
	[ "$rc" != 124 ] || fail "tune: rank 0 still ran after rank 1 died"
	r0=$(cat "$tmp/rc.0" 2>/dev/null)
	[ -n "$r0" ] && [ "$r0" != 0 ] || fail "tune: rank 0 exit '$r0' after a rank died, expected non-zero"
	grep -q "stopped answering\|missing" "$tmp/tune.out" "$tmp/tune.err" ||
		fail "tune: the dead rank's shape is not reported: $(tail -3 "$tmp/tune.err")"
	[ -s "$tmp/k.jsonl" ] || fail "tune: the log of the shapes done was not kept"
fi

# a rank that dies inside MPI_Init (killed the moment it exists): the others
# leave MPI_Init within PB_MPI_INIT_TIMEOUT (5 s; unset, the rank timeout but
# at least 60 s, which this test waited until issue 40.7), exit non-zero
# (main: rank 0 waited in MPI_Init for ever under --enable-recovery)
# (each rank's stderr goes straight to a file: with another MPI job
# running, mpirun's forwarding once lost rank 0's message, 'ORTE_ERROR_LOG:
# Out of resource in show_help.c')
rm -f "$tmp/rc.0" "$tmp/rc.1" "$tmp/init.err.0"
timeout $((300 * hang)) mpirun --oversubscribe --enable-recovery -x PB_RANK_TIMEOUT=5 \
	-x PB_MPI_INIT_TIMEOUT=5 -np 2 \
	bash -c '"$@" 2>"'"$tmp"'/init.err.$OMPI_COMM_WORLD_RANK"; echo $? >"'"$tmp"'/rc.$OMPI_COMM_WORLD_RANK"' \
	_ "$bin" train models/tiny_branches.dot \
	--layout layouts/manycore-16.lua --episodes 5 -o "$tmp/i.ckpt" >"$tmp/init.out" 2>"$tmp/init.err" &
runner=$!
victim=
for _ in $(seq 30000); do
	for p in $(pgrep -x partbench); do
		{ tr '\0' '\n' <"/proc/$p/environ" | grep -qx OMPI_COMM_WORLD_RANK=1 &&
			grep -q "$tmp/i.ckpt" "/proc/$p/cmdline" && victim=$p; } 2>/dev/null
	done
	[ -n "$victim" ] && break
	kill -0 "$runner" 2>/dev/null || break
	sleep 0.01
done
[ -n "$victim" ] && kill -9 "$victim"
rc=0
wait "$runner" || rc=$?
if [ -z "$victim" ]; then
	echo "note: rank 1 finished before it could be killed"
else
	[ "$rc" != 124 ] || fail "init: rank 0 still ran after rank 1 died while starting"
	r0=$(cat "$tmp/rc.0" 2>/dev/null)
	[ -n "$r0" ] && [ "$r0" != 0 ] || fail "init: rank 0 exit '$r0', expected non-zero"
	# partbench's own stop (exit 2) names the cause (killed a moment later,
	# after MPI_Init: the collective's timeout). Once, with another MPI job
	# running, rank 0 ended non-zero with no output at all (not reproduced
	# in 5 runs since; mpirun's doing?): noted, the hang is what is tested
	if [ "$r0" = 2 ]; then
		grep -q "MPI_Init did not complete within 5 s\|did not arrive within 5 s" "$tmp/init.err.0" ||
			fail "init: rank 0 exit 2 without a message about the dead rank: $(tail -3 "$tmp/init.err.0")"
	else
		echo "note: init: rank 0 exit $r0: $(tail -3 "$tmp/init.err.0" "$tmp/init.err")"
	fi
fi

# a PB_MPI_INIT_TIMEOUT that is not a positive number of seconds: every rank
# stops before MPI_Init, exit 2, naming the variable and the value
rm -f "$tmp/rc.0" "$tmp/rc.1" "$tmp/bad.err.0"
timeout $((300 * hang)) mpirun --oversubscribe -x PB_MPI_INIT_TIMEOUT=soon -np 2 \
	bash -c '"$@" 2>"'"$tmp"'/bad.err.$OMPI_COMM_WORLD_RANK"; echo $? >"'"$tmp"'/rc.$OMPI_COMM_WORLD_RANK"' \
	_ "$bin" train models/tiny_branches.dot --layout layouts/manycore-16.lua --episodes 5 \
	-o "$tmp/b.ckpt" >/dev/null 2>&1
r0=$(cat "$tmp/rc.0" 2>/dev/null)
[ "$r0" = 2 ] || fail "bad PB_MPI_INIT_TIMEOUT: rank 0 exit '$r0', expected 2"
grep -q "PB_MPI_INIT_TIMEOUT must be a number of seconds above 0 and at most 1e9, not 'soon'" "$tmp/bad.err.0" ||
	fail "bad PB_MPI_INIT_TIMEOUT: message: $(tail -3 "$tmp/bad.err.0")"

[ "$fails" = 0 ] && echo "mpi_recovery: ok"
exit $((fails > 0))
