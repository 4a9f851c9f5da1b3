#!/bin/bash
# bench_map_fuse_scaling.sh — wall time of `map` and `fuse` (layouts/hetero.lua)
# on structure-only GPTs of growing depth, for one or two partbench binaries
# (e.g. a build of an older commit and the current one), interleaved so both
# see the same machine load. The text report is timed; then both binaries'
# --json plans (timing fields and dag_checks removed) are compared. Usage:
#   bench/bench_map_fuse_scaling.sh [OLD_BIN] NEW_BIN [LAYERS...]
# default layers: 300 1000 3000. Prints one row per (command, layers).
set -euo pipefail
if [ $# -lt 1 ]; then echo "usage: $0 [OLD_BIN] NEW_BIN [LAYERS...]" >&2; exit 2; fi
OLD=""; NEW=$1; shift
if [ $# -ge 1 ] && [ -x "$1" ]; then OLD=$NEW; NEW=$1; shift; fi
LAYERS=${*:-300 1000 3000}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
strip() { /usr/bin/python3 -c '
import json,sys
def s(x):
    if isinstance(x,dict): return {k:s(v) for k,v in x.items() if "second" not in k and k != "dag_checks"}
    if isinstance(x,list): return [s(v) for v in x]
    return x
print(json.dumps(s(json.load(sys.stdin)),sort_keys=True))'; }
wall() { local t0 t1; t0=$(date +%s.%N); "$@" > "$tmp/out.json"; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
printf "%-5s %6s %9s %9s %7s %s\n" cmd layers old_s new_s ratio same_plan
for L in $LAYERS; do
	"$NEW" gen gpt --layers "$L" --hidden 256 --heads 4 --seq 64 --vocab 1000 -o "$tmp/g.onnx" >/dev/null
	for cmd in map fuse; do
		args=("$cmd" "$tmp/g.onnx" --layout layouts/hetero.lua)
		# timed: the text report (as a user runs it); compared: the --json plan
		tn=$(wall timeout 600 "$NEW" "${args[@]}")
		timeout 600 "$NEW" "${args[@]}" --json | strip > "$tmp/new.json"
		if [ -n "$OLD" ]; then
			to=$(wall timeout 600 "$OLD" "${args[@]}")
			timeout 600 "$OLD" "${args[@]}" --json | strip > "$tmp/old.json"
			same=$(cmp -s "$tmp/old.json" "$tmp/new.json" && echo yes || echo NO)
			printf "%-5s %6d %9.2f %9.2f %7.1f %s\n" "$cmd" "$L" "$to" "$tn" "$(echo "$to / $tn" | bc -l)" "$same"
		else
			printf "%-5s %6d %9s %9.2f %7s %s\n" "$cmd" "$L" - "$tn" - -
		fi
	done
done
