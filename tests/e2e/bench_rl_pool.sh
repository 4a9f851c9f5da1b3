#!/usr/bin/env bash
# bench_rl_pool.sh — the RL benchmark's seed log and its pooled verdicts
# (bench/bench_partition_rl.c, bench/rl_pool.py): a short real run writes one
# line of 7 fields per agent and seed; rl_pool.py's verdict agrees with the
# bench's own table and with the run gaps recomputed here; "better" on a
# lower final ratio, else on a lower run gap, "worse" otherwise; a seed
# logged twice and a malformed line are errors naming the file and line;
# --frozen (a network that never learns) logs and pools under its own label.
# Usage: bench_rl_pool.sh PATH/TO/partbench (from the repo root)
set -u
bin=${1:?usage: bench_rl_pool.sh PARTBENCH}
bench=$(dirname "$bin")/bench_partition_rl
pool="python3 bench/rl_pool.py"
tmp=$(mktemp -d /tmp/pb_rl_pool.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# A short real run: 8 episodes, 3 seeds, fresh and shipped on resnet18 x 16 cores.
timeout 300 "$bench" --seed-log "$tmp/run.log" 8 3 0 layouts/manycore-16.lua \
	models/resnet18.onnx >"$tmp/table.md" 2>"$tmp/err" || fail "bench: exit $?: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/run.log")" = 6 ] || fail "seed log: $(wc -l <"$tmp/run.log") lines, expected 6"
awk 'NF != 7 || $5 < 1 || $7 < 0 { bad = 1 } END { exit bad }' "$tmp/run.log" ||
	fail "seed log lines: $(cat "$tmp/run.log")"
$pool "$tmp/run.log" >"$tmp/pool.md" || fail "rl_pool on the run's log: exit $?"
# The verdict from the gaps recomputed here (run gap is field 7).
want=$(awk '{ r[$3] += $5; g[$3] += $7 }
	END { rs = sprintf("%.0f", r["shipped"] / 3 * 1e4); rf = sprintf("%.0f", r["fresh"] / 3 * 1e4)
	      if (rs != rf) print (rs < rf ? "better" : "worse")
	      else print (g["shipped"] < g["fresh"] ? "better (run gap)" : "worse (run gap)") }' "$tmp/run.log")
grep -q "| chip16 | resnet18.onnx | shipped | 3 |.*| $want |" "$tmp/pool.md" ||
	fail "rl_pool verdict, expected '$want': $(cat "$tmp/pool.md")"
grep -q "^| resnet18.onnx | chip16 |.*| $want; run gap" "$tmp/table.md" ||
	fail "bench table verdict, expected '$want': $(tail -1 "$tmp/table.md")"

# --frozen: the fresh network with learning rate 0, its own label, pooled against fresh.
timeout 300 "$bench" --frozen --seed-log "$tmp/run.log" 8 3 0 layouts/manycore-16.lua \
	models/resnet18.onnx >"$tmp/frozen.md" 2>"$tmp/err" || fail "bench --frozen: exit $?: $(cat "$tmp/err")"
grep -q "fresh column is a frozen network" "$tmp/frozen.md" || fail "--frozen table: $(head -1 "$tmp/frozen.md")"
[ "$(grep -c " frozen " "$tmp/run.log")" = 3 ] || fail "--frozen seed log: $(cat "$tmp/run.log")"
$pool "$tmp/run.log" | grep -q "| chip16 | resnet18.onnx | frozen | 3 |" || fail "rl_pool: no frozen row"

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

printf 'chip16 m.onnx fresh 1 1.000000 5 0.0020\n' >"$tmp/b.log"
$pool "$tmp/a.log" "$tmp/b.log" >/dev/null 2>"$tmp/b.err" && fail "a seed logged twice was accepted"
grep -q "b.log:1: seed 1 of fresh" "$tmp/b.err" || fail "duplicate seed message: $(cat "$tmp/b.err")"
printf 'chip16 m.onnx fresh 1 1.000000 5\n' >"$tmp/c.log"
$pool "$tmp/c.log" >/dev/null 2>"$tmp/c.err" && fail "a 6-field line was accepted"
grep -q "c.log:1: expected 7 fields" "$tmp/c.err" || fail "short line message: $(cat "$tmp/c.err")"

[ "$fails" = 0 ] && echo "PASS: bench_rl_pool"
[ "$fails" = 0 ]
