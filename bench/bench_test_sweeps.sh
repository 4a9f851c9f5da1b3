#!/usr/bin/env bash
# bench_test_sweeps.sh — the unit tests' whole sweeps, shrunk in `make test` to
# the cases that still fail on the bugs they guard (issue 40.7): each test
# below runs its full sweep when PB_TEST_SWEEP is set. Prints each test's
# result and CPU seconds (user + sys).
# usage: bench/bench_test_sweeps.sh BUILD_DIR   (from the repository root)
set -u
b=${1:?usage: bench_test_sweeps.sh BUILD_DIR}
rc=0
for t in test_shard_bound; do
	if PB_TEST_SWEEP=1 /usr/bin/time -o /tmp/pb_sweep_$$.time -f "%U %S" "$b/$t" >/dev/null 2>&1; then
		st=ok
	else
		st=FAIL rc=1
	fi
	echo "$t $st $(awk '{printf "%.2f s CPU", $1 + $2}' /tmp/pb_sweep_$$.time)"
	rm -f /tmp/pb_sweep_$$.time
done
exit $rc
