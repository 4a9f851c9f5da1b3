#!/usr/bin/env bash
# bench_shard_labels.sh — restricted vs unrestricted shard search (issue 35):
# per model --shrink (the default until 2026-12-07: followers share their
# producer's variables, repeated layers tied), the default (no shrinking,
# layers tied) and --layers off (the problem as posed, no restriction), each with its step time, label (optimal, bound, gap,
# restricted_by), CPU time (user + sys of the process and its workers) and
# wall time. --jobs 1 so that CPU time is the search's alone.
# usage: bench/bench_shard_labels.sh [BUILD_DIR] [LAYOUT] [EXTRA OPTIONS...]
set -uo pipefail
B=${1:-build}
L=${2:-layouts/cluster-2x8.lua}
shift 2 2>/dev/null || shift $#
EXTRA=("$@")
T=$(mktemp -d /tmp/pb_labels_XXXX)
trap 'rm -rf "$T"' EXIT
echo "== $(date -u '+%F %T UTC'), $(nproc) cores, $(uname -m), layout $L, options: ${EXTRA[*]:-none}"
"$B/partbench" gen gpt --layers 12 -o "$T/gpt12.onnx" >/dev/null
"$B/partbench" gen gpt --layers 24 --hidden 1024 --heads 16 -o "$T/gpt24.onnx" >/dev/null
"$B/partbench" gen gpt --layers 4 --hidden 256 --heads 4 --seq 128 --vocab 1000 -o "$T/gpt4s.onnx" >/dev/null
MODELS=(models/resnet18.onnx models/squeezenet1_1.onnx models/mobilenet_v2.onnx
        models/googlenet.onnx models/densenet121.onnx models/bert_base_like.onnx models/swin_t.onnx
        "$T/gpt4s.onnx" "$T/gpt12.onnx" "$T/gpt24.onnx")
printf '%-22s %-22s %12s %8s %8s %8s  %-8s %s\n' model search step_ms cpu_s wall_s gap_pct optimal restricted_by
for m in "${MODELS[@]}"; do
  for mode in shrink default layers-off; do
    case $mode in
      shrink) opts=(--shrink) ;;
      default) opts=() ;;
      layers-off) opts=(--layers off) ;;
    esac
    out="$T/out.json"
    /usr/bin/time -f "%U %S %e" -o "$T/time" timeout 600 "$B/partbench" shard "$m" --layout "$L" \
      --jobs 1 --json "${opts[@]}" "${EXTRA[@]}" >"$out" 2>"$T/err"
    rc=$?
    read -r u s e <"$T/time" 2>/dev/null || { u=0; s=0; e=0; }
    python3 - "$out" "$(basename "$m")" "$mode" "$u" "$s" "$e" "$rc" <<'PY'
import json, sys
out, model, mode, u, s, e, rc = sys.argv[1:]
try:
    j = json.load(open(out))
except Exception:
    print(f"{model:22s} {mode:22s} {'failed rc=' + rc:>12s}")
    sys.exit()
gap = j.get('gap')
print(f"{model:22s} {mode:22s} {j['step_time']*1e3:12.4f} {float(u)+float(s):8.2f} {float(e):8.2f} "
      f"{'-' if gap is None else '%.3f' % (gap*100):>8s}  {str(j['optimal']).lower():8s} "
      f"{','.join(j['restricted_by']) or '-'}")
PY
  done
done
