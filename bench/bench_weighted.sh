#!/usr/bin/env bash
# bench_weighted.sh — the weighted objective: exact (label DP) vs milp
# (chain_milp_weighted.c) on each MODEL x manycore-16 and manycore-64 with
# reward.mode = "weighted" (docs/partition.md). Prints one row per pair: CPU
# seconds (user+sys) and objective of each, whether exact finished, proved or
# gave up, milp's status, bound and gap.
# Usage (repository root): bench/bench_weighted.sh PARTBENCH EXACT_WALL_LIMIT_S MODEL...
set -u
bin=${1:?usage: bench_weighted.sh PARTBENCH EXACT_WALL_LIMIT_S MODEL...}
elim=${2:?}
shift 2
tmp=$(mktemp -d /tmp/pb_bw.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for n in 16 64; do
	sed 's/mode = "max_time",.*/mode = "weighted",/' "layouts/manycore-$n.lua" >"$tmp/w$n.lua"
done
echo "| model | cores | exact CPU s | exact objective | milp CPU s | milp objective | milp status, bound, gap |"
echo "|---|---|---|---|---|---|---|"
for f in "$@"; do
	for n in 16 64; do
		rm -f "$tmp/e.json" "$tmp/m.json"
		/usr/bin/time -f "%U %S" -o "$tmp/et" timeout "$elim" "$bin" partition "$f" \
			--layout "$tmp/w$n.lua" --method exact --json >"$tmp/e.json" 2>/dev/null
		/usr/bin/time -f "%U %S" -o "$tmp/mt" timeout 300 "$bin" partition "$f" \
			--layout "$tmp/w$n.lua" --method milp --time-limit 60 --json >"$tmp/m.json" 2>/dev/null
		python3 - "$f" "$n" "$tmp" <<'PY'
import json, os, sys
f, n, t = sys.argv[1:4]
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None
def cpu(p):
    try:
        u, s = open(p).read().split()[-2:]
        return "%.2f" % (float(u) + float(s))
    except Exception:
        return "?"
e, m = load(t + "/e.json"), load(t + "/m.json")
if e is None:
    eo = "no answer (stopped at the wall limit)"
elif "exact_note" in e:
    eo = "%.6f (DP gave up: best found)" % e["objective"]
else:
    eo = "%.6f (optimal)" % e["objective"]
if m is None:
    mo, ms = "no answer", ""
else:
    mm = m["milp"]
    mo = "%.6f" % m["objective"]
    ms = "%s, %.6f, %.2f%%" % (mm["status"], mm["bound"], 100 * mm["gap"])
print("| %s | %s | %s | %s | %s | %s | %s |" % (os.path.basename(f), n, cpu(t + "/et"), eo, cpu(t + "/mt"), mo, ms))
PY
	done
done
