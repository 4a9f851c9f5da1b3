#!/usr/bin/env bash
# partition_heur_weighted.sh — issue 36 item 2 on a real model: mobilenet_v2 x
# manycore-16 with reward.mode = "weighted" (weights compute 1, storage 0.1,
# routing 1, the layout's): greedy, pack and local end within 1% of exact's
# optimum (the label DP, proven here). Before the cap
# repair (chain/cap_search.c) all three stopped at three groups, +2.34% (their
# routing terms all near the largest, so no single move lowered the sum);
# exact has five.
# Usage: partition_heur_weighted.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=$(realpath "${1:?usage: partition_heur_weighted.sh PARTBENCH}")
tmp=$(mktemp -d /tmp/pb_hweighted.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
sed 's/mode = "max_time",.*/mode = "weighted",/' layouts/manycore-16.lua >"$tmp/w16.lua"
grep -q 'mode = "weighted"' "$tmp/w16.lua" || fail "could not make a weighted manycore-16"
"$bin" partition models/mobilenet_v2.onnx --layout "$tmp/w16.lua" --method exact --json \
	>"$tmp/exact.json" || fail "exact on mobilenet_v2"
for m in greedy pack local; do
	"$bin" partition models/mobilenet_v2.onnx --layout "$tmp/w16.lua" --method "$m" \
		--no-reference --json >"$tmp/$m.json" || fail "$m on mobilenet_v2"
	python3 - "$tmp/exact.json" "$tmp/$m.json" "$m" <<'PY' || fail "$m not within 1% of exact"
import json, sys
e, h, m = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
opt, got = e["objective"], h["objective"]
print("%s: %.6f, exact %.6f (%+.2f%%)" % (m, got, opt, 100 * (got / opt - 1)))
assert e["optimal"] is True, "exact did not prove its plan"
assert got <= opt * 1.01, "more than 1% above exact"
assert got >= opt * (1 - 1e-9), "below the proven optimum"
PY
done
echo PASS
