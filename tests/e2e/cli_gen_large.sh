#!/usr/bin/env bash
# gen gpt of a deep model within a fixed address space: the generator's
# memory grows linearly with the layers. Before, every appended node copied
# the node list into a new array kept until the end (O(n^2) memory): 1000
# layers took 4.3 GB, 2000 layers 17 GB, 4000 were killed; 3000 layers now
# take about 72 MB. The model written is then opened (87,005 operators).
# Under ASan (PB_SANITIZED) the address-space cap cannot be used: the model
# is generated without it.
set -u
bin=${1:?usage: cli_gen_large.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_gen_large.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

gen() {
	"$bin" gen gpt --layers 3000 --hidden 256 --heads 4 --seq 64 --vocab 1000 -o "$tmp/g.onnx" \
		>"$tmp/out" 2>&1
}
if [ -n "${PB_SANITIZED:-}" ]; then
	gen || fail "gen gpt --layers 3000: $(cat "$tmp/out")"
else
	(ulimit -v 1000000 && gen) || fail "gen gpt --layers 3000 in 1 GB of address space: $(cat "$tmp/out")"
fi
grep -q "3000 layers" "$tmp/out" || fail "gen gpt: $(cat "$tmp/out")"
"$bin" info "$tmp/g.onnx" --json >"$tmp/info.json" 2>"$tmp/err" || fail "info: $(cat "$tmp/err")"
/usr/bin/python3 - "$tmp/info.json" <<'PY' || fail "info of the generated model"
import json, sys
d = json.load(open(sys.argv[1]))
n = len(d["nodes"])
assert n == 87005, "%d nodes" % n
PY
[ $fails -eq 0 ] && echo "cli_gen_large: ok"
exit $fails
