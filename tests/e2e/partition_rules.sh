#!/usr/bin/env bash
# partition_rules.sh — issue 36 item 2 through `partbench run`: the
# heuristics (greedy, pack, local, rl) under Lua rules end within 1% of
# exact and break none. Fixed cases from the issue: ResNet-50 (generated,
# tests/data/gen_resnet50.py) on manycore-16 with group boundaries only
# after Add nodes (exact 2.830 ms; greedy, local and rl stopped at 2.886 ms,
# +2.0%), and the classifier pin of scripts/pin_cores.lua alone (Gemm in a
# group holding core 7) on resnet18 (exact 1.2002 ms; every heuristic ended
# at 1.2775 ms, +6.4%). The figures compared are each
# plan's own max(t) against exact's, read from the same run.
# Usage: partition_rules.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=${1:?usage: partition_rules.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_partition_rules.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

/usr/bin/python3 tests/data/gen_resnet50.py "$tmp/resnet50.onnx" || fail "gen_resnet50.py"

# One line per method: NAME max(t)[ms] broken-rules
cat >"$tmp/methods.lua" <<'LUA'
for _, m in ipairs{"exact", "greedy", "pack", "local", "rl"} do
  pb.cmd("partition --method " .. m .. " --episodes 40 --seed 1")
  local p = pb.plan()
  print(string.format("method %s %.9f %d", m, p.metrics.max_time * 1e3, p.metrics.rule_violations))
end
LUA
cat >"$tmp/after_add.lua" <<'LUA'
pb.rule{ name = "after_add", cut = "forbid", match = function(op) return op.op ~= "Add" end }
LUA
cat >"$tmp/pins.lua" <<'LUA'
pb.rule{ name = "classifier_mid", core = 7, match = function(op) return op.op == "Gemm" end }
LUA

check() { # check LABEL MODEL RULES.lua: every heuristic within 1% of exact, none broken
	local label=$1 model=$2 rules=$3
	cat "$rules" "$tmp/methods.lua" >"$tmp/run.lua"
	if ! "$bin" run "$tmp/run.lua" "$model" --layout layouts/manycore-16.lua >"$tmp/out" 2>"$tmp/err"; then
		fail "$label: exit $?: $(head -3 "$tmp/err")"
		return
	fi
	local ex
	ex=$(awk '$1 == "method" && $2 == "exact" { print $3 }' "$tmp/out")
	[ -n "$ex" ] || { fail "$label: no exact line: $(cat "$tmp/out")"; return; }
	for m in greedy pack local rl; do
		read -r t broken <<<"$(awk -v m="$m" '$1 == "method" && $2 == m { print $3, $4 }' "$tmp/out")"
		[ -n "${t:-}" ] || { fail "$label: no line for $m"; continue; }
		[ "$broken" = 0 ] || fail "$label: $m breaks $broken rules"
		awk -v t="$t" -v e="$ex" 'BEGIN { exit !(t <= e * 1.01 && t >= e * (1 - 1e-9)) }' ||
			fail "$label: $m max(t) $t ms, exact $ex ms (more than 1% above, or below exact)"
	done
	echo "$label: exact $ex ms; $(awk '$1 == "method" && $2 != "exact" { printf "%s %s ms, ", $2, $3 }' "$tmp/out")"
}

check "resnet50 cut after Add" "$tmp/resnet50.onnx" "$tmp/after_add.lua"
check "resnet18 Gemm pinned to core 7" models/resnet18.onnx "$tmp/pins.lua"

if [ "$fails" -gt 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "partition_rules: ok"
