#!/usr/bin/env bash
# bench_scale_out.sh — wall time of `tune MODEL --all` and `shard` on 1 rank
# (plain partbench) and on 2 MPI ranks (mpirun -np 2), alternating, in one
# invocation; then the speed-up estimated for N machines from the measured
# per-shape tuning times (the coordinator's order: biggest FLOP share first,
# each shape to the first free rank). docs/scale-out.md quotes the results.
# Usage: bench/bench_scale_out.sh [BUILD_DIR] [REPEATS] [TRIALS]
#   (run from the repository root; Open MPI and an MPI build needed)
set -eu
build=${1:-build}
reps=${2:-2}
trials=${3:-16}
bin=$build/partbench
out=$(mktemp -d /tmp/pb_bench_scale.XXXXXX)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
model=models/resnet18.onnx
shard_args="models/bert_base_like.onnx --layout layouts/cluster-2x8.lua"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
wall() { # prints the wall seconds of "$@"
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || echo "failed: $*" >&2
	t1=$(date +%s.%N)
	python3 -c "print(f'{$t1 - $t0:.2f}')"
}
printf '| run | what | 1 rank (s) | 2 ranks (s) | speed-up | load before |\n|---|---|---|---|---|---|\n'
for r in $(seq "$reps"); do
	load=$(cut -d' ' -f1 /proc/loadavg)
	rm -f "$out/t1.jsonl" "$out/t2.jsonl"
	t1=$(wall nice -n 10 "$bin" tune $model --all --trials "$trials" --reps 1 --log "$out/t1.jsonl")
	t2=$(wall nice -n 10 mpirun --oversubscribe -np 2 "$bin" tune $model --all --trials "$trials" --reps 1 --log "$out/t2.jsonl")
	printf '| %d | tune resnet18 --all --trials %d | %s | %s | %s | %s |\n' "$r" "$trials" "$t1" "$t2" \
		"$(python3 -c "print(f'{$t1 / $t2:.2f}')")" "$load"
	cp "$out/t1.jsonl" "$out/t1.r$r.jsonl"
	load=$(cut -d' ' -f1 /proc/loadavg)
	# shellcheck disable=SC2086
	s1=$(wall nice -n 10 "$bin" shard $shard_args --jobs 1)
	# shellcheck disable=SC2086
	s2=$(wall nice -n 10 mpirun --oversubscribe -np 2 "$bin" shard $shard_args)
	printf '| %d | shard bert_base_like cluster-2x8 (4 schemes) | %s | %s | %s | %s |\n' "$r" "$s1" "$s2" \
		"$(python3 -c "print(f'{$s1 / $s2:.2f}')")" "$load"
done
echo
echo "Estimate from the per-shape tuning times of the 1-rank run(s) (tune_seconds of the summary lines):"
python3 - "$out"/t1.r*.jsonl <<'PY'
import json, sys, heapq
for path in sys.argv[1:]:
    s = [json.loads(l) for l in open(path)]
    s = [l for l in s if l["method"] == "shape"]
    s.sort(key=lambda l: -l["share"])          # the coordinator's order
    t = [l["tune_seconds"] for l in s]
    total = sum(t)
    row = []
    for n in (1, 2, 4, 8, 12, 16):
        free = [0.0] * n
        for x in t:
            f = heapq.heappop(free)
            heapq.heappush(free, f + x)
        row.append(f"N={n}: {total / max(free):.2f}x")
    print(f"{path.rsplit('/', 1)[-1]}: {len(t)} shapes, {total:.1f} s in all, longest {max(t):.1f} s; " + ", ".join(row))
PY
rm -rf "$out"
