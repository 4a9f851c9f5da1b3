#!/usr/bin/env bash
# bench_dtp.sh — the data x tensor x pipeline search (`shard --pipeline auto`,
# issue 21.2) on a structure-only GPT decoder from `partbench gen gpt`: wall
# and CPU time of the whole search, the stage MILPs solved and answered by the
# cache, the best configuration and the best of each stage count.
# Serial (--jobs 1), nice'd, one run.
# usage: bench/bench_dtp.sh [BUILD_DIR] [LAYERS] [LAYOUT] [BATCH]
set -euo pipefail
B=${1:-build}
L=${2:-48}
LAY=${3:-layouts/cluster-8x8.lua}
BATCH=${4:-64}
P="$B/partbench"
T=$(mktemp -d /tmp/pb_dtp.XXXXXX)
trap 'rm -rf "$T"' EXIT
echo "== $(date -u '+%F %T UTC'), $(nproc) cores, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$P" gen gpt --layers "$L" --hidden 2048 --heads 16 --seq 2048 --vocab 50257 -o "$T/gpt.onnx"
/usr/bin/time -f "wall %e s, cpu %U s user + %S s sys" nice -n 10 "$P" shard "$T/gpt.onnx" \
	--layout "$LAY" --train --batch "$BATCH" --pipeline auto --jobs 1 --json >"$T/out.json" 2>"$T/err" ||
	{ tail -3 "$T/err"; exit 1; }
tail -1 "$T/err"
python3 - "$T/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["dtp_search"]
print("configurations %d, stage MILPs %d, answered by the cache %d" % (
    s["configurations"], s["stage_milps"], s["stage_cache_hits"]))
def row(c):
    if c.get("step_time") is None:
        return "dp %d tp %d pp %d m %d %s: error %s" % (c["dp"], c["tp"], c["pp"], c["microbatches"],
                                                       c["schedule"], c.get("error"))
    return "dp %d tp %d pp %d m %d %s (%s): %.3f ms, %.2f GB, fits %s%s" % (
        c["dp"], c["tp"], c["pp"], c["microbatches"], c["schedule"], c["scheme"],
        c["step_time"] * 1e3, c["memory"] / 1e9, c["fits"],
        ", layers per stage %d-%d" % (c["min_layers"], c["max_layers"]) if c.get("layer_split") else "")
print("best:", row(d["best"]))
for pp in sorted({c["pp"] for c in d["configurations"]}):
    ok = [c for c in d["configurations"] if c["pp"] == pp and c.get("step_time") is not None]
    fit = [c for c in ok if c["fits"]] or ok
    if fit:
        print("  pp %2d best:" % pp, row(min(fit, key=lambda c: c["step_time"])))
PY
