#!/usr/bin/env bash
# bench_weighted_heur.sh — the weighted objective: the heuristics (greedy, pack,
# local, rl with --episodes 40 --seed 1) against milp's proven optimum on each
# MODEL x manycore-16 and manycore-64 with reward.mode = "weighted" (the layouts
# of bench_weighted.sh: weights compute 1, storage 0.1, routing 1). One row per
# pair: milp's CPU seconds (user+sys), objective and status; each heuristic's
# objective as its gap to milp's (+x.xx%) and its CPU seconds. The gap is to the
# optimum only where milp says optimal, else to its best found.
# Usage (repository root): bench/bench_weighted_heur.sh PARTBENCH MODEL...
set -u
bin=${1:?usage: bench_weighted_heur.sh PARTBENCH MODEL...}
shift
tmp=$(mktemp -d /tmp/pb_bwh.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for n in 16 64; do
	sed 's/mode = "max_time",.*/mode = "weighted",/' "layouts/manycore-$n.lua" >"$tmp/w$n.lua"
done
echo "| model | cores | milp CPU s | milp objective (status) | greedy | pack | local | rl (40 episodes) |"
echo "|---|---|---|---|---|---|---|---|"
for f in "$@"; do
	for n in 16 64; do
		for m in milp greedy pack local rl; do
			extra="--no-reference"
			[ "$m" = milp ] && extra="--time-limit 60"
			[ "$m" = rl ] && extra="--no-reference --episodes 40 --seed 1"
			rm -f "$tmp/$m.json"
			# shellcheck disable=SC2086
			/usr/bin/time -f "%U %S" -o "$tmp/$m.t" timeout 300 "$bin" partition "$f" \
				--layout "$tmp/w$n.lua" --method "$m" $extra --json >"$tmp/$m.json" 2>/dev/null
		done
		python3 - "$f" "$n" "$tmp" <<'PY'
import json, os, sys
f, n, t = sys.argv[1:4]
def load(m):
    try:
        return json.load(open("%s/%s.json" % (t, m)))
    except Exception:
        return None
def cpu(m):
    try:
        u, s = open("%s/%s.t" % (t, m)).read().split()[-2:]
        return float(u) + float(s)
    except Exception:
        return float("nan")
M = load("milp")
if M is None:
    print("| %s | %s | %.2f | no answer | | | | |" % (os.path.basename(f), n, cpu("milp")))
    sys.exit(0)
ref = M["objective"]
st = M["milp"]["status"]
if st != "optimal":
    st = "%s: best found, bound %.6f, gap %.2f%%" % (st, M["milp"]["bound"], 100 * M["milp"]["gap"])
cells = []
for m in ("greedy", "pack", "local", "rl"):
    h = load(m)
    if h is None:
        cells.append("no answer (%.2f s)" % cpu(m))
    else:
        cells.append("%+.2f%% (%.2f s)" % (100 * (h["objective"] / ref - 1), cpu(m)))
print("| %s | %s | %.2f | %.6f (%s) | %s |" % (os.path.basename(f), n, cpu("milp"), ref, st, " | ".join(cells)))
PY
	done
done
