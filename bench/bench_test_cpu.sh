#!/usr/bin/env bash
# bench_test_cpu.sh — CPU seconds (user + sys of the whole process tree) of
# every registered test, one ctest run per test, two at a time. On the
# shared 2-core machine wall time says more about the other users than about
# the test; CPU time does not (issue 40.7). Prints one line per test,
# "NAME USER SYS WALL ok|FAIL", then the top 25 by CPU and the total.
# usage: bench/bench_test_cpu.sh BUILD_DIR [NAMES_FILE]   (NAMES_FILE: one
# test name a line, in the order to run; default: all, ctest's order)
set -u
b=$(cd "${1:?usage: bench_test_cpu.sh BUILD_DIR [NAMES_FILE]}" && pwd)
tmp=$(mktemp -d /tmp/pb_testcpu.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${2:-}" ]; then cp "$2" "$tmp/names"; else
	(cd "$b" && ctest -N) | sed -n 's/^ *Test *#[0-9]*: //p' >"$tmp/names"
fi
run() {
	local n=$1 st=ok
	(cd "$B" && /usr/bin/time -o "$T/$n.time" -f "%U %S %e" ctest -R "^$n\$" >"$T/$n.log" 2>&1) ||
		st=FAIL
	echo "$n $(tail -n 1 "$T/$n.time") $st" >>"$T/all"
}
export -f run
export B=$b T=$tmp
: >"$tmp/all"
xargs -P2 -I{} bash -c 'run {}' <"$tmp/names"
cat "$tmp/all"
echo "top 25 by CPU (user + sys, s):"
awk '{printf "%s %.2f %s\n", $1, $2 + $3, $5}' "$tmp/all" | sort -k2 -n -r | head -n 25
awk '{c += $2 + $3} END {printf "total CPU %.1f s over %d tests\n", c, NR}' "$tmp/all"
