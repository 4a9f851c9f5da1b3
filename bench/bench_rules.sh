#!/usr/bin/env bash
# bench_rules.sh — issue 36 item 2: the heuristics (greedy, pack, local, rl)
# under Lua rules and the weighted objective against exact (the label DP),
# on every bundled model x manycore-16 and -64. Rule sets:
#   blocks   group boundaries only after Add or Concat nodes (cut = forbid)
#   sparse   boundaries only after every 7th layer (cut = forbid)
#   pins     the last layer in a group holding core n/2, the first in one
#            holding core n/4 (core = K)
#   weighted no rule; reward.mode = "weighted", weights {1, 2, 1}
# Prints one row per (model, layout, rules): exact's objective (max(t) in s,
# or the weighted sum, no unit) and each heuristic's relative to it (+x.xx%),
# its broken rules, and the CPU seconds (user+sys) of its own `partbench run`
# (model load included; the heuristics run with --no-reference).
# Usage: bench/bench_rules.sh [PARTBENCH] [MODELS...]   (from the repository root;
# PB_BENCH_RULES="blocks pins" picks rule sets, default all four)
set -u
bin=${1:-build/partbench}
shift || true
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(models/*.onnx)
tmp=$(mktemp -d /tmp/pb_bench_rules.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for l in 16 64; do
	sed 's/mode = "max_time"/mode = "weighted"/; s/storage = 0.1/storage = 2.0/' \
		layouts/manycore-$l.lua >"$tmp/weighted-$l.lua"
done
for m in exact greedy pack local rl; do
	ref="--no-reference"
	[ "$m" = exact ] && ref=""
	cat >"$tmp/$m.lua" <<LUA
pb.cmd("partition --method $m --episodes 40 --seed 1 $ref")
local p = pb.plan()
print(string.format("%.9g %d", p.metrics.objective or p.metrics.max_time, p.metrics.rule_violations or 0))
LUA
done
cat >"$tmp/blocks.lua" <<'LUA'
pb.rule{ name = "blocks", cut = "forbid", match = function(op) return op.op ~= "Add" and op.op ~= "Concat" end }
LUA
cat >"$tmp/sparse.lua" <<'LUA'
local every = {}
for i, id in ipairs(pb.layers()) do every[id] = i % 7 == 0 end
pb.rule{ name = "sparse", cut = "forbid", match = function(op) return not every[op.id] end }
LUA
cat >"$tmp/pins.lua" <<'LUA'
local L, n = pb.layers(), pb.layout().cores
pb.rule{ name = "last_mid", core = n // 2, match = function(op) return op.id == L[#L] end }
pb.rule{ name = "first_q", core = n // 4, match = function(op) return op.id == L[1] end }
LUA
: >"$tmp/none.lua"
printf "%-16s %-12s %-9s %-12s %s\n" model layout rules exact "method: objective vs exact (broken rules) CPU s"
for r in ${PB_BENCH_RULES:-blocks sparse pins weighted}; do
	for model in "${models[@]}"; do
		for l in 16 64; do
			lay=layouts/manycore-$l.lua
			rules=$tmp/$r.lua
			[ "$r" = weighted ] && lay=$tmp/weighted-$l.lua && rules=$tmp/none.lua
			row="" ex=""
			for m in exact greedy pack local rl; do
				cat "$rules" "$tmp/$m.lua" >"$tmp/run.lua"
				out=$( { /usr/bin/time -f "cpu %U %S" "$bin" run "$tmp/run.lua" "$model" --layout "$lay" 2>&1; } | tr '\n' ' ')
				cpu=$(sed -n 's/.*cpu \([0-9.]*\) \([0-9.]*\).*/\1 \2/p' <<<"$out" | awk '{ printf "%.2f", $1 + $2 }')
				read -r obj broken _ <<<"$out"
				if [ "$m" = exact ]; then
					ex=$obj
					row=$(printf "%-12s exact %ss" "$obj" "$cpu")
				else
					rel=$(awk -v o="$obj" -v e="$ex" 'BEGIN { if (o + 0 == o && e > 0) printf "%+.2f%%", 100 * (o / e - 1); else print "error" }')
					row="$row | $m $rel ($broken) ${cpu}s"
				fi
			done
			printf "%-16s %-12s %-9s %s\n" "$(basename "$model" .onnx)" "manycore-$l" "$r" "$row"
		done
	done
done
