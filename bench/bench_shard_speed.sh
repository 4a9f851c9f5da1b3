#!/usr/bin/env bash
# bench_shard_speed.sh — the four speed goals of issue 21 part 7, one run
# each, serial commands, nice'd, each stopped after 600 s:
#  a. bert_base_like, cluster-2x8, --max-axes 3 (inference)
#  b. bert_base_like, cluster-2x8, --train --batch 8
#  c. GPT 48 layers, hidden 2048, cluster-8x8 (64 devices), --train --batch 64
#  d. GPT-3-shaped (96 layers, hidden 12288, fp16), cluster-128x8 (1,024
#     devices), --train --batch 1536
#  e. c with --pipeline auto (the whole data x tensor x pipeline search)
#  f. d with --pipeline auto, the stage MILPs to a 0.1% gap and at most 200
#     branch-and-bound nodes (F_STAGE, default "--stage-gap 0.001
#     --stage-nodes 200"; F_STAGE= for every stage MILP proven optimal)
# Prints wall and CPU seconds (user + sys, workers included), the best scheme
# and the largest MILP (e, f: the best configuration and the search's
# counters). JOBS (default: the binary's default) sets --jobs; ONLY="a c"
# runs some of them; a-d run by default, e and f with PIPE=1 or ONLY.
# usage: bench/bench_shard_speed.sh [PARTBENCH]
set -euo pipefail
P=${1:-build/partbench}
T=$(mktemp -d /tmp/pb_shspeed.XXXXXX)
trap 'rm -rf "$T"' EXIT
J=()
[ -n "${JOBS:-}" ] && J=(--jobs "$JOBS")
echo "== $(date -u '+%F %T UTC'), $(nproc) cores, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg), $P ${J[*]}"
run() { # label, then the shard arguments
  local label=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$T/time" timeout 600 nice -n 10 "$P" shard "$@" "${J[@]}" --json \
    >"$T/out.json" 2>"$T/err" || echo "$label: stopped after 600 s (timeout) or failed"
  read -r wall user sys <"$T/time" || true
  python3 - "$T/out.json" "$label" "$wall" "$user" "$sys" <<'PY'
import json, sys
f, label, wall, user, sys_ = sys.argv[1:6]
try:
    d = json.load(open(f))
except Exception:
    print("%s: no result" % label); sys.exit(0)
cols = max(r["milp"]["cols"] for r in d["schemes"] if r.get("milp"))
b = d.get("best", {})
print("%s: %s s wall, %.2f s CPU; best %s step %.6g s, %d schemes, largest MILP %d columns, fits %s, optimal %s, dp %s tp %s" % (
    label, wall, float(user) + float(sys_), d["scheme"], d["step_time"], len(d["schemes"]), cols,
    d["feasible"], d["optimal"], b.get("dp"), b.get("tp")))
if "dtp_search" in d:
    s = d["dtp_search"]
    print("   best configuration: dp %s tp %s pp %s m %s %s, step %.6g s, fits %s; %d configurations, %d stage MILPs, %d cache answers, %d pruned" % (
        b["dp"], b["tp"], b["pp"], b["microbatches"], b["schedule"], b["step_time"], b["fits"],
        s["configurations"], s["stage_milps"], s["stage_cache_hits"], s.get("pruned", 0)))
    print("   stage MILPs: gap %s, node limit %s; %s rows not proven; best proven %s" % (
        s.get("stage_gap", 0), s.get("stage_node_limit", 0), s.get("unproven", 0),
        b.get("stages_proven")))
PY
}
want() {
  if [ -n "${ONLY:-}" ]; then [[ " $ONLY " == *" $1 "* ]]; return; fi
  case $1 in e|f) [ -n "${PIPE:-}" ] ;; *) true ;; esac
}
want a && run "a. bert 2x8 --max-axes 3" models/bert_base_like.onnx --layout layouts/cluster-2x8.lua --max-axes 3
want b && run "b. bert 2x8 --train --batch 8" models/bert_base_like.onnx --layout layouts/cluster-2x8.lua --train --batch 8
if want c || want e; then
  "$P" gen gpt --layers 48 --hidden 2048 --heads 16 --seq 2048 --vocab 50257 -o "$T/gpt48.onnx" >/dev/null
  want c && run "c. gpt48 8x8 --train --batch 64" "$T/gpt48.onnx" --layout layouts/cluster-8x8.lua --train --batch 64
  want e && run "e. gpt48 8x8 --train --batch 64 --pipeline auto" "$T/gpt48.onnx" --layout layouts/cluster-8x8.lua \
    --train --batch 64 --pipeline auto
fi
if want d || want f; then
  "$P" gen gpt --layers 96 --hidden 12288 --heads 96 --seq 2048 --vocab 51200 --fp16 -o "$T/gpt3.onnx" >/dev/null
  want d && run "d. gpt3 128x8 --train --batch 1536" "$T/gpt3.onnx" --layout layouts/cluster-128x8.lua --train --batch 1536
  FS=${F_STAGE-"--stage-gap 0.001 --stage-nodes 200"}
  # shellcheck disable=SC2086
  want f && run "f. gpt3 128x8 --train --batch 1536 --pipeline auto $FS" \
    "$T/gpt3.onnx" --layout layouts/cluster-128x8.lua --train --batch 1536 --pipeline auto $FS
fi
true
