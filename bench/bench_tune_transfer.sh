#!/bin/bash
# bench/bench_tune_transfer.sh BUILD OUTDIR [SEEDS] — issue 42.5: measurements
# the tuner needs to reach 95% of a shape's best with and without the cost
# model's warm start from other shapes (tune/transfer.h).
# 1. a source log: gemm:128,768,768 and gemm:64,3136,256 tuned (48 trials each);
# 2. for each target shape and seed: tune --trials 64 --log COPY-OF-SOURCE,
#    once as is (transfer) and once with --no-transfer, same seed;
# 3. per run, the target's measurements in log order give the best-so-far
#    trace; reported: the first measurement reaching 95% of the best either
#    run of that (shape, seed) found, and each run's best.
set -eu
B=${1:?build dir}; OUT=${2:?out dir}; SEEDS=${3:-1 2}
PB="nice -n 10 $B/partbench"
mkdir -p "$OUT"
SRC=$OUT/source.jsonl
if [ ! -s "$SRC" ]; then
	$PB tune --op gemm --shape 128,768,768 --trials 48 --seed 7 --log "$SRC" >/dev/null 2>&1
	$PB tune --op gemm --shape 64,3136,256 --trials 48 --seed 7 --log "$SRC" >/dev/null 2>&1
fi
echo "shape seed | transfer: first >=95% best | no transfer: first >=95% best | reference best"
for shape in 128,3072,768 256,196,1024 96,1024,512; do
	for seed in $SEEDS; do
		for mode in on off; do
			cp "$SRC" "$OUT/$shape.$seed.$mode.jsonl"
			flag=""; [ $mode = off ] && flag=--no-transfer
			$PB tune --op gemm --shape $shape --trials 64 --seed $seed $flag \
				--log "$OUT/$shape.$seed.$mode.jsonl" >/dev/null 2>&1
		done
		python3 - "$OUT" "$shape" "$seed" <<'PY'
import json, sys
out, shape, seed = sys.argv[1:]
key = "gemm:" + shape
tr = {}
for mode in ("on", "off"):
    g = [json.loads(l)["gflops"] for l in open(f"{out}/{shape}.{seed}.{mode}.jsonl")
         if json.loads(l).get("key") == key]
    tr[mode] = g
ref = max(max(tr["on"]), max(tr["off"]))
def first(g):
    b = 0
    for i, x in enumerate(g):
        b = max(b, x)
        if b >= 0.95 * ref:
            return i + 1
    return None
print(f"{key} {seed} | {first(tr['on'])} (best {max(tr['on']):.1f}) | "
      f"{first(tr['off'])} (best {max(tr['off']):.1f}) | {ref:.1f} GFLOP/s")
PY
	done
done
