#!/usr/bin/env bash
# bench_shard.sh — strategy search on bert_base_like.onnx over a 2x8 cluster:
# MILP size before/after shrinking and solve time per scheme (bench_shard),
# the CLI end to end for scheme 2x8, and glpsol / cbc on the LP it emits, all
# in the same run. usage: bench/bench_shard.sh [BUILD_DIR]
set -euo pipefail
B=${1:-build}
M=models/bert_base_like.onnx
L=layouts/cluster-2x8.lua
LP=$(mktemp /tmp/pb_shard_XXXX.lp)
trap 'rm -f "$LP" "$LP.out"' EXIT
echo "== $(date -u '+%F %T UTC'), $(nproc) cores, $(uname -m)"
for lvl in 0 2 3; do
  echo "== bench_shard level $lvl (all schemes with <= 2 axes)"
  nice "$B/bench_shard" "$M" "$L" --level "$lvl"
done
echo "== partbench shard, whole table (4 schemes), --jobs 1 and default (all CPUs), 3 runs"
for i in 1 2 3; do
  /usr/bin/time -f "jobs 1: %e s wall, %U s CPU" nice "$B/partbench" shard "$M" --layout "$L" --jobs 1 >/dev/null
  /usr/bin/time -f "jobs $(nproc): %e s wall, %U s CPU" nice "$B/partbench" shard "$M" --layout "$L" >/dev/null
done
echo "== partbench shard --scheme 2x8 --emit-lp (end to end, 3 runs)"
for i in 1 2 3; do
  /usr/bin/time -f "partbench: %e s wall, %M KB max RSS" \
    "$B/partbench" shard "$M" --layout "$L" --scheme 2x8 --emit-lp "$LP" --json >"$LP.json"
  grep -m1 '"step_time"' "$LP.json"
done
rm -f "$LP.json"
echo "== glpsol --lp (same LP)"
/usr/bin/time -f "glpsol: %e s wall" glpsol --lp "$LP" -o "$LP.out" >/dev/null
grep Objective "$LP.out"
echo "== cbc (same LP)"
/usr/bin/time -f "cbc: %e s wall" cbc -import "$LP" -solve -quit 2>&1 | grep -E "Objective value|Result|^cbc:"
