#!/usr/bin/env bash
# bench_rl_pool.sh — the RL benchmark's seed log and its pooled verdicts
# (bench/bench_partition_rl.c, bench/rl_pool.py): a short real run writes one
# line of 8 fields per agent and seed; the run gap counts the first episode's
# held plan (a fresh agent's start; a loaded agent's start for its rollout's
# share, then the rollout's plan), the old run gap does not; rl_pool.py's
# verdict agrees with the bench's own table and with the run gaps
# recomputed here, and gives the old run gap's verdicts too; "better" on a
# lower final ratio, else on a lower run gap, "worse" otherwise; a seed
# logged twice and a malformed line are errors naming the file and line;
# --frozen (a network that never learns) logs and pools under its own label.
# Usage: bench_rl_pool.sh PATH/TO/partbench (from the repo root)
set -u
# the timeouts only guard against hangs: x10 under the sanitizers (issue 40.7)
hang=1
[ -n "${PB_SANITIZED:-}" ] && hang=10
bin=${1:?usage: bench_rl_pool.sh PARTBENCH}
bench=$(dirname "$bin")/bench_partition_rl
pool="python3 bench/rl_pool.py"
tmp=$(mktemp -d /tmp/pb_rl_pool.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# A short real run: 8 episodes, 3 seeds, fresh and shipped on resnet18 x 16 cores.
timeout $((300 * hang)) "$bench" --seed-log "$tmp/run.log" 8 3 0 layouts/manycore-16.lua \
	models/resnet18.onnx >"$tmp/table.md" 2>"$tmp/err" || fail "bench: exit $?: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/run.log")" = 6 ] || fail "seed log: $(wc -l <"$tmp/run.log") lines, expected 6"
awk 'NF != 8 || $5 < 1 || $7 < 0 || $8 < 0 { bad = 1 } END { exit bad }' "$tmp/run.log" ||
	fail "seed log lines: $(cat "$tmp/run.log")"
# One episode: the run gap is the primal gap (x - opt) / x held during it.
# A fresh agent holds the equal start, whose max(t) and optimum partbench
# gives; the shipped agent's rollout beat that start, so it holds less.
timeout $((300 * hang)) "$bench" --seed-log "$tmp/one.log" 1 2 0 layouts/manycore-16.lua \
	models/resnet18.onnx >/dev/null 2>"$tmp/err" || fail "bench, 1 episode: exit $?: $(cat "$tmp/err")"
start=$("$bin" partition models/resnet18.onnx --layout layouts/manycore-16.lua --method equal \
	--json | python3 -c 'import json, sys; d = json.load(sys.stdin); print(1 - d["optimum"] / d["max_time"])')
awk -v s="$start" '
	$3 == "fresh" && ($7 - s > 1e-6 || s - $7 > 1e-6) { print "fresh seed " $4 ": held " $7 ", start " s; bad = 1 }
	$3 == "shipped" && !($7 < s - 1e-3 && $7 >= 0) { print "shipped seed " $4 ": held " $7 ", start " s; bad = 1 }
	END { exit bad || NR != 4 }' "$tmp/one.log" >"$tmp/held" || fail "first episode's held gap: $(cat "$tmp/held" "$tmp/one.log")"
$pool "$tmp/run.log" >"$tmp/pool.md" || fail "rl_pool on the run's log: exit $?"
# The verdict from the gaps recomputed here (run gap is field 7).
want=$(awk '{ r[$3] += $5; g[$3] += $7 }
	END { rs = sprintf("%.0f", r["shipped"] / 3 * 1e4); rf = sprintf("%.0f", r["fresh"] / 3 * 1e4)
	      if (rs != rf) print (rs < rf ? "better" : "worse")
	      else print (g["shipped"] < g["fresh"] ? "better (run gap)" : "worse (run gap)") }' "$tmp/run.log")
grep -q "| chip16 | resnet18.onnx | shipped | 3 |.*| $want | .* | .* |$" "$tmp/pool.md" ||
	fail "rl_pool verdict, expected '$want': $(cat "$tmp/pool.md")"
grep -q "^| resnet18.onnx | chip16 |.*| $want; run gap" "$tmp/table.md" ||
	fail "bench table verdict, expected '$want': $(tail -1 "$tmp/table.md")"

# --frozen: the fresh network with learning rate 0, its own label, pooled against fresh.
timeout $((300 * hang)) "$bench" --frozen --seed-log "$tmp/run.log" 8 3 0 layouts/manycore-16.lua \
	models/resnet18.onnx >"$tmp/frozen.md" 2>"$tmp/err" || fail "bench --frozen: exit $?: $(cat "$tmp/err")"
grep -q "fresh column is a frozen network" "$tmp/frozen.md" || fail "--frozen table: $(head -1 "$tmp/frozen.md")"
[ "$(grep -c " frozen " "$tmp/run.log")" = 3 ] || fail "--frozen seed log: $(cat "$tmp/run.log")"
$pool "$tmp/run.log" >"$tmp/frozen_pool.md" || fail "rl_pool with frozen runs: exit $?"
grep -q "| chip16 | resnet18.onnx | frozen | 3 |" "$tmp/frozen_pool.md" || fail "rl_pool: no frozen row"

# Crafted logs: the rule itself.
cat >"$tmp/a.log" <<'EOF'
chip16 m.onnx fresh 1 1.000000 5 0.0020
chip16 m.onnx fresh 2 1.000000 9 0.0030
chip16 m.onnx shipped 1 1.000000 9 0.0040
chip16 m.onnx shipped 2 1.000000 2 0.0070
chip16 n.onnx fresh 1 1.010000 5 0.0200
chip16 n.onnx shipped 1 1.000000 900 0.0300
EOF
$pool "$tmp/a.log" >"$tmp/a.md" || fail "rl_pool on a crafted log"
# m: equal ratios, sooner final best but a larger run gap: worse; diff +0.3% +- 0.1.
grep -q "| m.onnx | shipped | 2 |.*| worse (run gap) | +0.3000% ± 0.1000 |" "$tmp/a.md" ||
	fail "equal ratios, larger run gap: $(grep m.onnx "$tmp/a.md")"
# n: a lower final ratio wins whatever its run gap.
grep -q "| n.onnx | shipped | 1 |.*| better |" "$tmp/a.md" || fail "lower ratio: $(grep n.onnx "$tmp/a.md")"
grep -q "shipped better than fresh on 1 of 2 rows" "$tmp/a.md" || fail "count: $(tail -1 "$tmp/a.md")"
grep -q "old run gap" "$tmp/a.md" && fail "7-field logs have no old run gap: $(cat "$tmp/a.md")"
# 8 fields: the old run gap's verdict beside the run gap's.
cat >"$tmp/o.log" <<'EOF'
chip16 m.onnx fresh 1 1.000000 5 0.0500 0.0020
chip16 m.onnx fresh 2 1.000000 9 0.0500 0.0030
chip16 m.onnx shipped 1 1.000000 9 0.0100 0.0040
chip16 m.onnx shipped 2 1.000000 2 0.0100 0.0070
EOF
$pool "$tmp/o.log" >"$tmp/o.md" || fail "rl_pool on an 8-field log"
grep -q "| m.onnx | shipped | 2 |.*| better (run gap) | -4.0000% ± 0.0000 | worse (run gap), +0.3000% ± 0.1000 |" \
	"$tmp/o.md" || fail "8-field verdicts: $(cat "$tmp/o.md")"
grep -q "shipped better than fresh on 0 of 1 rows under the old run gap" "$tmp/o.md" ||
	fail "old count: $(tail -1 "$tmp/o.md")"

printf 'chip16 m.onnx fresh 1 1.000000 5 0.0020\n' >"$tmp/b.log"
$pool "$tmp/a.log" "$tmp/b.log" >/dev/null 2>"$tmp/b.err" && fail "a seed logged twice was accepted"
grep -q "b.log:1: seed 1 of fresh" "$tmp/b.err" || fail "duplicate seed message: $(cat "$tmp/b.err")"
printf 'chip16 m.onnx fresh 1 1.000000 5\n' >"$tmp/c.log"
$pool "$tmp/c.log" >/dev/null 2>"$tmp/c.err" && fail "a 6-field line was accepted"
grep -q "c.log:1: expected 7 or 8 fields" "$tmp/c.err" || fail "short line message: $(cat "$tmp/c.err")"

[ "$fails" = 0 ] && echo "PASS: bench_rl_pool"
[ "$fails" = 0 ]
