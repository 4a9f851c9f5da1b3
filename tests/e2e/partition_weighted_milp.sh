#!/usr/bin/env bash
# partition_weighted_milp.sh — the milp method under the weighted objective
# (docs/partition.md, "Rules and the objective"; chain_milp_weighted.c):
# 1. squeezenet1_1 x manycore-16 with reward.mode = "weighted": milp proves the
#    optimum within a 20 s limit and equals exact (before: the whole GLPK MILP stopped
#    at the limit, status time_limit, best found 0.5877, gap 65.6%);
# 2. bert_base_like x the same layout: exact's label DP gives up (past --max-labels) and
#    says milp is the reference and does not call its own plan optimal; milp proves an
#    optimum no worse than exact's plan;
# 3. a workbench running the weighted milp as a job exits promptly on SIGTERM (it
#    reads the flag between slices; before, the unsliced label DP and whole MILP held
#    the loop for minutes).
# Usage: partition_weighted_milp.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: partition_weighted_milp.sh PARTBENCH}")
root=$(pwd)
tmp=$(mktemp -d /tmp/pb_wmilp.XXXXXX)
sock=pbwmilp-$$
sess=pb
tm() { tmux -L "$sock" "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
limit=30
[ -n "${PB_SANITIZED:-}" ] && limit=120

for n in 16 64; do
	sed 's/mode = "max_time",.*/mode = "weighted",/' "layouts/manycore-$n.lua" >"$tmp/w$n.lua"
	grep -q 'mode = "weighted"' "$tmp/w$n.lua" || fail "could not make a weighted manycore-$n"
done

# ---- 1. squeezenet1_1: milp proves exact's optimum within the limit
"$bin" partition models/squeezenet1_1.onnx --layout "$tmp/w16.lua" --method exact --json \
	>"$tmp/e.json" || fail "exact on squeezenet1_1"
timeout -k 5 $((limit * 3)) "$bin" partition models/squeezenet1_1.onnx --layout "$tmp/w16.lua" \
	--method milp --time-limit 20 --json >"$tmp/m.json" || fail "milp on squeezenet1_1"
python3 - "$tmp/e.json" "$tmp/m.json" <<'PY' || fail "squeezenet1_1: milp != exact or not proven"
import json, sys
e, m = (json.load(open(p)) for p in sys.argv[1:3])
assert e["objective_mode"] == "weighted" and e["optimal"], e
assert m["milp"]["status"] == "optimal", m["milp"]
assert m["milp"]["unit"] == "none" and m["milp"]["bound"] == m["milp"]["incumbent"], m["milp"]
assert abs(m["objective"] - e["objective"]) <= 1e-9 * e["objective"], (m["objective"], e["objective"])
PY

# ---- 2. bert_base_like: the DP gives up, milp is the reference and proves it
# (--max-labels 20000: the DP gives up at once; at its default 4,000,000 labels it
# took 24 s CPU here and about 15 minutes under the sanitizers to give up)
"$bin" partition models/bert_base_like.onnx --layout "$tmp/w16.lua" --method exact --json \
	--max-labels 20000 >"$tmp/be.json" 2>/dev/null || fail "exact on bert_base_like"
timeout -k 5 $((limit * 3)) "$bin" partition models/bert_base_like.onnx --layout "$tmp/w16.lua" \
	--method milp --time-limit 20 --json >"$tmp/bm.json" || fail "milp on bert_base_like"
python3 - "$tmp/be.json" "$tmp/bm.json" <<'PY' || fail "bert_base_like: milp not proven or worse than exact"
import json, sys
e, m = (json.load(open(p)) for p in sys.argv[1:3])
assert m["milp"]["status"] == "optimal", m["milp"]
assert m["objective"] <= e["objective"] * (1 + 1e-9), (m["objective"], e["objective"])
# the DP gave up: it names its limit and milp as the reference
assert "milp is the reference" in e.get("exact_note", ""), e
assert "limit of 20000 labels" in e["exact_note"], e["exact_note"]
# and does not call its plan optimal (before: optimal, gap 0 against itself)
assert e["optimal"] is False and e.get("optimum") is None, e
assert "label DP gave up" in e["restricted_by"], e["restricted_by"]
PY

# ---- 3. SIGTERM to a workbench running the weighted milp
screen() { tm capture-pane -p -t "$sess" >"$tmp/screen" 2>/dev/null; }
wait_for() {
	local end=$((SECONDS + ${2:-$limit}))
	while [ $SECONDS -lt $end ]; do
		screen && grep -qE -- "$1" "$tmp/screen" && return 0
		sleep 0.05
	done
	echo "---- screen ----"
	cat "$tmp/screen"
	fail "timed out waiting for /$1/"
}
keys() { tm send-keys -t "$sess" "$@"; }
tm -f /dev/null new-session -d -s "$sess" -x 120 -y 40 -c "$tmp" \
	"env LANG=C.UTF-8 '$bin' '$root/models/bert_base_like.onnx' --layout '$tmp/w64.lua'; echo PB_EXIT=\$?; sleep 600"
wait_for 'bert_base_like.onnx: [0-9]+ nodes'
keys :
wait_for '^:'
keys -l "partition --method milp"
keys Enter
wait_for 'partition --method milp'
pane=$(tm display -p -t "$sess" '#{pane_pid}')
pid=$(pgrep -P "$pane" partbench)
[ -n "$pid" ] || fail "no partbench process under the pane"
kill -TERM "$pid"
wait_for 'PB_EXIT=[0-9]+' "$limit"
grep -q "SIGTERM" "$tmp/screen" || fail "no SIGTERM message: $(cat "$tmp/screen")"
echo "PASS"
