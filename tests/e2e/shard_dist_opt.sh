#!/usr/bin/env bash
# The distributed optimizer as a search dimension (issue 38 item 3;
# docs/shard.md "Distributed optimizer"): `shard --dist-opt on|off|auto`.
# Mixed-precision Adam keeps 12 bytes of state per parameter (an fp32 master
# copy and two fp32 moments; Rajbhandari et al. 2020, ZeRO, section 3.1);
# Megatron-LM's --use-distributed-optimizer (ZeRO-1) divides it over the
# data-parallel replicas and reduce-scatters the gradients and all-gathers
# the weights in place of the all-reduce: the same volume.
# On a 2-layer GPT (h 256, seq 128, vocab 1000, fp16) over the 8 A100s of
# one node of layouts/cluster-a100.lua, dp 8, batch 32, 4 micro-batches of
# accumulation (pure data parallelism: every weight replicated 8 times), by
# hand:
#   parameter values P = 1,868,800 (as tests/e2e/shard_accumulate.sh counts
#     them) + 1: the attention scale, a scalar fp16 initializer the memory
#     model holds as a parameter too (docs/shard.md);
#   state saved per device = 12 B x P x (1 - 1/8);
#   gradient collectives: 36 tensors of P values over the ring, 5 us each +
#     2 (n-1)/n x 2 P B / 246 GB/s (n = 8): a reduce-scatter and an
#     all-gather move (n-1)/n each, the same as the all-reduce, on or off.
# On a 30 MB device (27 MB usable) the pure data-parallel plan takes 32.6 MB
# without the distributed optimizer: auto turns it on (and is faster than
# off, whose plan must shard weights to fit); on 80 GB auto leaves it off.
set -u
bin=${1:?usage: shard_dist_opt.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_distopt_e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3

sed 's/^local nodes = .*/local nodes = 1/' layouts/cluster-a100.lua >"$tmp/a100.lua"
sed 's/device_memory_gb = 80,.*/device_memory_gb = 0.03,/' "$tmp/a100.lua" >"$tmp/small.lua"
grep -q 'device_memory_gb = 0.03,' "$tmp/small.lua" || fail "layout edit"
"$bin" gen gpt --layers 2 --hidden 256 --heads 4 --seq 128 --vocab 1000 --fp16 \
	-o "$tmp/g.onnx" >/dev/null || fail "gen gpt"
run() {
	local lay=$1
	shift
	"$bin" shard "$tmp/g.onnx" --layout "$tmp/$lay.lua" --train --jobs 1 --json --batch 32 \
		--dp 8 --tp 1 --pp 1 --microbatches 4 "$@"
}
for lay in a100 small; do
	for d in on off auto; do
		run $lay --dist-opt $d >"$tmp/$lay-$d.json" 2>"$tmp/err" ||
			fail "$lay --dist-opt $d: $(cat "$tmp/err")"
	done
done
run a100 >"$tmp/default.json" 2>"$tmp/err" || fail "default: $(cat "$tmp/err")"
$py - "$tmp" <<'PY' || fail "distributed optimizer figures"
import json, sys
d = sys.argv[1]
J = {(l, m): json.load(open("%s/%s-%s.json" % (d, l, m)))["best"]
     for l in ("a100", "small") for m in ("on", "off", "auto")}
default = json.load(open(d + "/default.json"))["best"]
h, L, V, s = 256, 2, 1000, 128
per_layer = 4 * h + 4 * (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h)
P = V * h + s * h + L * per_layer + 2 * h
assert P == 1868800, P
saved = 12 * (P + 1) * (1 - 1 / 8)
G = 36 * 5e-6 + 2 * 7 / 8 * 2 * P / 246e9
on, off, auto = J["a100", "on"], J["a100", "off"], J["a100", "auto"]
for k, b in J.items():
    print(k, {x: b[x] for x in ("dp", "tp", "step_time", "grad_sync", "memory", "fits",
                                "dist_opt", "memory_dist_opt_on", "memory_dist_opt_off")})
# 80 GB: the same pure data-parallel plan in every mode
for b in (on, off, auto, J["small", "on"]):
    assert (b["dp"], b["tp"], b["microbatches"]) == (8, 1, 4), b
    assert abs(b["grad_sync"] - G) <= 1e-8 * G, (b["grad_sync"], G)
    assert abs(b["step_time"] - on["step_time"]) <= 1e-12, (b["step_time"], on["step_time"])
print("hand: saved %.1f B, reported %.1f B" % (saved, on["memory_dist_opt_off"] - on["memory_dist_opt_on"]))
assert abs(on["memory_dist_opt_off"] - on["memory_dist_opt_on"] - saved) <= 1e-6 * saved
assert on["dist_opt"] is True and on["memory"] == on["memory_dist_opt_on"], on
assert off["dist_opt"] is False and off["memory"] == off["memory_dist_opt_off"], off
assert off["memory_dist_opt_on"] == off["memory_dist_opt_off"] == on["memory_dist_opt_off"], off
# auto on 80 GB: fits without it, so off, the same memory as off
assert auto["dist_opt"] is False and auto["memory"] == on["memory_dist_opt_off"], auto
assert auto["memory_dist_opt_on"] == on["memory_dist_opt_on"], auto
assert default["dist_opt"] == auto["dist_opt"] and default["memory"] == auto["memory"], default
# 27 MB usable: the pure data-parallel plan fits only with it
son, soff, sauto = J["small", "on"], J["small", "off"], J["small", "auto"]
limit = 0.9 * 0.03e9
assert son["memory_dist_opt_on"] <= limit < son["memory_dist_opt_off"], son
assert sauto["dist_opt"] is True and sauto["memory"] == son["memory"], sauto
assert sauto["step_time"] == son["step_time"] and sauto["fits"], sauto
assert soff["dist_opt"] is False and soff["fits"] and soff["memory"] <= limit, soff
assert soff["step_time"] > son["step_time"], (soff["step_time"], son["step_time"])
PY

# the text report says which and the memory with and without
"$bin" shard "$tmp/g.onnx" --layout "$tmp/small.lua" --train --jobs 1 --batch 32 --dp 8 --tp 1 \
	--pp 1 --microbatches 4 >"$tmp/out" 2>&1 || fail "text: $(cat "$tmp/out")"
grep -q "distributed optimizer: on: 13.0 MB per device with it, 32.6 MB without" \
	"$tmp/out" || fail "text report: $(tail -4 "$tmp/out")"

# bad values: usage errors (exit 1) naming the option
"$bin" shard "$tmp/g.onnx" --layout "$tmp/a100.lua" --train --dist-opt maybe >"$tmp/out" 2>&1
rc=$?
[ $rc = 1 ] || fail "--dist-opt maybe: exit $rc, want 1"
grep -q -- "--dist-opt must be on, off or auto, got 'maybe'" "$tmp/out" || fail "$(cat "$tmp/out")"
"$bin" shard "$tmp/g.onnx" --layout "$tmp/a100.lua" --train --zero 1 --dist-opt off >"$tmp/out" 2>&1
rc=$?
[ $rc = 1 ] || fail "--zero 1 --dist-opt off: exit $rc, want 1"

[ $fails = 0 ] && echo "shard_dist_opt: all passed"
exit $fails
