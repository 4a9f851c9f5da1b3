#!/usr/bin/env bash
# shard_scheme_waves.sh — `shard --pipeline auto` solves the operator-level
# schemes in waves of two (docs/shard.md "The operator-level schemes in
# waves"): a scheme of a later wave gets the best fitting step of the waves
# before as its MILP cutoff and is a pruned row when it cannot beat it.
# The reference is the same model with `--pipeline off`, which solves every
# scheme to the end: the schemes not pruned have the same step times, every
# pruned one's real step is at or above the cutoff its message names, that
# cutoff is the best fitting step of the rows before its wave, the best
# operator-level plan is the same, and the pp = 1 rows of the configurations
# say pruned (counted in dtp_search.pruned). The forked workers (--jobs 2)
# give the serial table. Before, every scheme was solved (on Table 1's row 4
# one scheme's proof took 250 s for a step 68% above the best).
# Usage: shard_scheme_waves.sh PATH/TO/partbench (from the repo root)
set -u
bin=${1:?usage: shard_scheme_waves.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_scheme_waves.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$bin" gen gpt --layers 6 --hidden 256 --heads 4 --seq 64 --vocab 4000 -o "$tmp/g6.onnx" \
	>/dev/null || fail "gen gpt"
args="$tmp/g6.onnx --layout layouts/cluster-2x8.lua --train --batch 16"
# shellcheck disable=SC2086
"$bin" shard $args --pipeline off --jobs 1 --json >"$tmp/off.json" 2>"$tmp/err" ||
	fail "pipeline off: $(tail -2 "$tmp/err")"
# shellcheck disable=SC2086
"$bin" shard $args --pipeline auto --jobs 1 --json >"$tmp/auto1.json" 2>"$tmp/err" ||
	fail "pipeline auto -j 1: $(tail -2 "$tmp/err")"
# shellcheck disable=SC2086
"$bin" shard $args --pipeline auto --jobs 2 --json >"$tmp/auto2.json" 2>"$tmp/err" ||
	fail "pipeline auto -j 2: $(tail -2 "$tmp/err")"
python3 - "$tmp/off.json" "$tmp/auto1.json" "$tmp/auto2.json" <<'PY' || fail "waves"
import json, re, sys
off, auto, auto2 = (json.load(open(f)) for f in sys.argv[1:4])
so, sa = off["schemes"], auto["schemes"]
ok = True
def bad(msg):
    global ok
    ok = False
    print("  " + msg)
if [s["scheme"] for s in so] != [s["scheme"] for s in sa]:
    bad("schemes differ: %s vs %s" % ([s["scheme"] for s in so], [s["scheme"] for s in sa]))
pruned = 0
for i, (a, b) in enumerate(zip(so, sa)):
    m = re.match(r"pruned: cannot beat ([0-9.eE+-]+) s of a plan that fits", b.get("error") or "")
    if m:
        pruned += 1
        cut = float(m.group(1))
        before = [s["step_time"] for s in so[: i // 2 * 2] if s.get("feasible")]
        if i < 2 or not before or abs(cut - min(before)) > 1e-5 * cut:
            bad("%s: cutoff %g is not the best fitting step before its wave (%s)"
                % (b["scheme"], cut, before))
        if not a["step_time"] >= cut * (1 - 1e-5):
            bad("%s pruned at %g but its step is %g" % (b["scheme"], cut, a["step_time"]))
    elif a.get("step_time") != b.get("step_time"):
        bad("%s: step %s, with every scheme solved %s"
            % (b["scheme"], b.get("step_time"), a.get("step_time")))
if pruned < 1:
    bad("no scheme pruned")
best_op = min(s["step_time"] for s in so if s.get("feasible"))
kept = [s["step_time"] for s in sa if s.get("feasible")]
if not kept or min(kept) != best_op:
    bad("best operator-level step %s, with every scheme %s" % (kept and min(kept), best_op))
rows = [c for c in auto["configurations"]
        if c["pp"] == 1 and c["microbatches"] == 1 and c.get("pruned")]
if len(rows) < pruned:
    bad("%d pp 1 rows pruned for %d schemes" % (len(rows), pruned))
if auto["dtp_search"]["pruned"] < pruned:
    bad("dtp_search.pruned %s < %d" % (auto["dtp_search"]["pruned"], pruned))
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("solve_seconds", "at")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
if strip(auto) != strip(auto2):
    bad("--jobs 2 differs from --jobs 1")
print("pruned schemes: %d of %d" % (pruned, len(sa)))
sys.exit(0 if ok else 1)
PY
if [ "$fails" != 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "shard scheme waves e2e: ok"
