#!/usr/bin/env bash
# lua_rules.sh — issue 18 parts 2 and 4 through `partbench run`: the rule
# examples in scripts/ change the plans of every method they claim to, the
# report names the rules, bad rules fail with exit 2 and a clear message, and
# `partition --json` reports the layout's objective beside max_time.
# Usage: lua_rules.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=${1:?usage: lua_rules.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_lua_rules.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { # run OUTFILE ARGS...: partbench ARGS, stdout to OUTFILE, must exit 0
	local out=$1
	shift
	if ! "$bin" "$@" >"$out" 2>"$tmp/err"; then
		fail "exit $?: $*"
		sed 's/^/    /' "$tmp/err" | head -5
	fi
}

# ---- cut rules: every method's boundaries change and follow an Add only.
run "$tmp/cut" run scripts/cut_rules.lua models/resnet18.onnx --layout layouts/manycore-16.lua
for m in exact milp greedy pack local rl; do
	line=$(grep "^cut_rules: $m " "$tmp/cut")
	[ -n "$line" ] || fail "cut_rules.lua printed nothing for $m"
	case "$line" in *"changed true, after a non-Add 0,"*) ;; *) fail "cut_rules $m: $line" ;; esac
done
grep -q "^rules: blocks_whole (cut=forbid, [0-9]* nodes); all obeyed" "$tmp/cut" ||
	fail "the report does not name the rule: $(cat "$tmp/cut")"

# ---- core pins: nothing broken, exact and milp agree and the pin moves the Gemm.
run "$tmp/pin" run scripts/pin_cores.lua models/resnet18.onnx --layout layouts/manycore-16.lua
for m in exact milp greedy pack local rl; do
	grep -q "^pin_cores: $m .*broken 0," "$tmp/pin" || fail "pin_cores $m: $(grep "^pin_cores: $m " "$tmp/pin")"
done
ex=$(sed -n 's/^pin_cores: exact Gemm on cores \([0-9-]*\) (without the pin \([0-9-]*\)).*max(t) \([0-9.]*\) ms.*/\1 \2 \3/p' "$tmp/pin")
mi=$(sed -n 's/^pin_cores: milp Gemm on cores \([0-9-]*\) (without the pin \([0-9-]*\)).*max(t) \([0-9.]*\) ms.*/\1 \2 \3/p' "$tmp/pin")
read -r with without t <<<"$ex"
[ -n "${with:-}" ] && [ "$with" != "$without" ] || fail "the pin did not move the Gemm's group: $ex"
lo=${with%-*} hi=${with#*-}
[ "${lo:-99}" -le 7 ] && [ "${hi:-0}" -ge 7 ] || fail "exact: Gemm on cores $with, pinned to core 7"
[ "${t:-x}" = "$(echo "$mi" | cut -d' ' -f3)" ] || fail "exact and milp differ under the pin: $ex / $mi"

# ---- fusion veto: both partbench's fusion and the XLA-style baseline obey it.
run "$tmp/fuse" run scripts/no_fuse_relu.lua models/googlenet.onnx
read -r o0 o1 x0 x1 < <(sed -n 's/^no_fuse_relu: partbench fuses \([0-9]*\) -> \([0-9]*\) nodes, XLA-style baseline \([0-9]*\) -> \([0-9]*\) nodes$/\1 \2 \3 \4/p' "$tmp/fuse")
[ "${o0:-0}" -gt 0 ] && [ "${x0:-0}" -gt 0 ] || fail "nothing fused without the rule: $(cat "$tmp/fuse")"
[ "${o1:-x}" = 0 ] && [ "${x1:-x}" = 0 ] || fail "a fusion ignores fusable=false: $(cat "$tmp/fuse")"

# ---- backend pins: the mapping moves every Conv to the FPGA.
run "$tmp/be" run scripts/backend_pins.lua models/resnet18.onnx --layout layouts/hetero.lua
read -r b0 b1 nconv < <(sed -n 's/^backend_pins: Conv nodes on the FPGA \([0-9]*\) -> \([0-9]*\) (of \([0-9]*\))$/\1 \2 \3/p' "$tmp/be")
[ -n "${nconv:-}" ] && [ "$b1" = "$nconv" ] && [ "$b0" -lt "$b1" ] || fail "backend_pins: $(cat "$tmp/be")"

# ---- pipeline split: a stage pin and a forbidden stage boundary.
run "$tmp/st" run scripts/stage_rules.lua models/bert_base_like.onnx --layout layouts/cluster-1x8.lua
grep -q "^stage_rules: /head/MatMul in stage 3 -> 0; 0 earlier nodes past stage 0$" "$tmp/st" ||
	fail "stage pin: $(cat "$tmp/st")"
read -r s1 s2 t1 t2 < <(sed -n 's/^stage_rules: boundary before node [0-9]* forbidden: stages of nodes [0-9]*, [0-9]*: \([0-9-]*\), \([0-9-]*\) -> \([0-9-]*\), \([0-9-]*\)$/\1 \2 \3 \4/p' "$tmp/st")
[ -n "${t2:-}" ] && [ "$s1" != "$s2" ] && [ "$t1" = "$t2" ] || fail "forbidden stage boundary: $(cat "$tmp/st")"

# ---- --json: objective beside max_time; the weighted objective differs.
run "$tmp/j" partition models/resnet18.onnx --layout layouts/manycore-16.lua --json
python3 - "$tmp/j" <<'PY' || fail "partition --json: objective missing or not max_time"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["objective_mode"] == "max_time" and j["objective"] == j["max_time"], j
PY
sed 's/mode = "max_time",    -- or "weighted"/mode = "weighted",/; s/storage = 0.1/storage = 2.0/' \
	layouts/manycore-16.lua >"$tmp/weighted.lua"
grep -q 'mode = "weighted"' "$tmp/weighted.lua" || fail "could not make a weighted layout"
run "$tmp/w" partition models/resnet18.onnx --layout "$tmp/weighted.lua" --json
run "$tmp/wm" partition models/resnet18.onnx --layout "$tmp/weighted.lua" --method milp --json
python3 - "$tmp/j" "$tmp/w" "$tmp/wm" <<'PY' || fail "weighted objective"
import json, sys
t, w, wm = (json.load(open(p)) for p in sys.argv[1:4])
assert w["objective_mode"] == "weighted", w
# reward = -objective + b: b = 0 here
assert abs(w["reward"] + w["objective"]) < 1e-9 * abs(w["objective"]), w
assert w["arranged_core"] != t["arranged_core"], "same plan as max(t)"
assert w["max_time"] > t["max_time"], (w["max_time"], t["max_time"])
assert abs(wm["objective"] - w["objective"]) <= 1e-9 * w["objective"], (wm["objective"], w["objective"])
PY

# ---- bad rules: exit 2, a message naming the problem.
expect_error() { # expect_error CODE NEEDLE
	printf '%s\n' "$1" >"$tmp/bad.lua"
	"$bin" run "$tmp/bad.lua" models/resnet18.onnx --layout layouts/manycore-16.lua >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 2 ] || fail "exit $rc, expected 2 for: $1"
	grep -q -- "$2" "$tmp/err" || fail "no '$2' in: $(cat "$tmp/err")"
}
expect_error 'pb.rule{ name = "x", cut = "sometimes", match = function(op) return true end }' "'cut' must be \"forbid\""
expect_error 'pb.rule{ name = "x", core = -1, match = function(op) return true end }' "'core' must be a core number"
expect_error 'pb.rule{ name = "far", core = 99, match = function(op) return op.id == 3 end }
pb.cmd("partition --method greedy")' "rule 'far': core 99 does not exist in layout layouts/manycore-16.lua"
expect_error 'pb.rule{ name = "late", stage = 9, match = function(op) return op.op == "Relu" end }
pb.cmd("pipeline --layout layouts/cluster-1x8.lua --stages 4")' "rule 'late': pins node '/relu/Relu' to stage 9, the pipeline has 4 stages"
expect_error 'pb.rule{ name = "a", cut = "force", match = function(op) return true end }
pb.cmd("partition --method exact")' "no partition of the 49 layers" # 65 nodes less 16 weight-copy Identity nodes

echo "lua_rules: $fails failure(s)"
[ "$fails" = 0 ]
