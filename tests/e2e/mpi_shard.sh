#!/usr/bin/env bash
# mpi_shard.sh — `mpirun -np 3 partbench shard ...` solves the grouping
# schemes across the ranks and prints what the serial run prints: the text
# report, the --json report and the -o plan equal the serial ones byte for
# byte once the wall-clock solve times (the "solve" column, solve_seconds,
# the incumbents' "at") are masked — they differ between two serial runs too.
# Skips (exit 77) where partbench was built without MPI or mpirun is absent.
# Usage: mpi_shard.sh PATH/TO/partbench (from the repo root)
set -u
# the timeouts only guard against hangs: x10 under the sanitizers (issue 40.7)
hang=1
[ -n "${PB_SANITIZED:-}" ] && hang=10
bin=${1:?usage: mpi_shard.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_mpi_shard.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
if ! grep -q PB_HAVE_MPI "$(dirname "$bin")/compile_commands.json" 2>/dev/null; then
	OMPI_COMM_WORLD_SIZE=2 "$bin" shard models/resnet18.onnx --layout layouts/cluster-2x8.lua \
		>"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && grep -q "built without Open MPI" "$tmp/err" || fail "no-MPI build: $(cat "$tmp/err")"
	[ "$fails" = 0 ] || exit 1
	echo "SKIP: partbench was built without MPI"
	exit 77
fi
command -v mpirun >/dev/null || { echo "SKIP: mpirun not found (openmpi-bin)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mask_text() { sed -E 's/ +[0-9.]+s$//' "$1"; }
mask_json() {
	python3 - "$1" <<'PY'
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("solve_seconds", "at")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
print(json.dumps(strip(json.load(open(sys.argv[1]))), indent=1, sort_keys=True))
PY
}
for args in "models/resnet18.onnx --layout layouts/cluster-2x8.lua --opt-level 2" \
	"models/bert_base_like.onnx --layout layouts/cluster-2x8.lua"; do
	# shellcheck disable=SC2086
	"$bin" shard $args --jobs 1 -o "$tmp/p1.json" >"$tmp/t1" 2>"$tmp/e1" || fail "serial: $args"
	# shellcheck disable=SC2086
	timeout $((600 * hang)) mpirun --oversubscribe -np 3 "$bin" shard $args -o "$tmp/p3.json" >"$tmp/t3" 2>"$tmp/e3" ||
		fail "mpirun -np 3: $args: $(tail -3 "$tmp/e3")"
	[ "$(grep -cE "^[* ] [0-9x]+ +[0-9]+\\(" "$tmp/t1")" -ge 3 ] || fail "fewer than 3 schemes: $args"
	cmp -s <(mask_text "$tmp/t1") <(mask_text "$tmp/t3") ||
		fail "text report differs: $args: $(diff <(mask_text "$tmp/t1") <(mask_text "$tmp/t3") | head -5)"
	cmp -s <(mask_json "$tmp/p1.json") <(mask_json "$tmp/p3.json") || fail "plan differs: $args"
	# shellcheck disable=SC2086
	"$bin" shard $args --jobs 1 --json >"$tmp/j1" 2>/dev/null
	# shellcheck disable=SC2086
	timeout $((600 * hang)) mpirun --oversubscribe -np 3 "$bin" shard $args --json >"$tmp/j3" 2>/dev/null
	cmp -s <(mask_json "$tmp/j1") <(mask_json "$tmp/j3") || fail "--json differs: $args"
	[ "$(python3 -c "import json; print(len(json.load(open('$tmp/j3'))['schemes']))")" -ge 2 ] ||
		fail "--json under mpirun lacks schemes"
done
# --pipeline auto: the data x tensor x pipeline configurations (units of (pp, m)) are
# spread over the ranks too, and the operator-level schemes in waves whose
# rows are cut by the waves before (shard_scheme_waves.sh): the table and
# the JSON equal the serial ones with 3 ranks and with 2 (each wave of two
# schemes then one per rank).
"$bin" gen gpt --layers 6 --hidden 256 --heads 4 --seq 64 --vocab 4000 -o "$tmp/g6.onnx" >/dev/null ||
	fail "gen gpt"
dargs="$tmp/g6.onnx --layout layouts/cluster-2x8.lua --train --batch 16 --pipeline auto"
# shellcheck disable=SC2086
"$bin" shard $dargs --jobs 1 >"$tmp/d1" 2>"$tmp/e1" || fail "serial dtp: $(tail -3 "$tmp/e1")"
# shellcheck disable=SC2086
timeout $((600 * hang)) mpirun --oversubscribe -np 3 "$bin" shard $dargs >"$tmp/d3" 2>"$tmp/e3" ||
	fail "mpirun -np 3 dtp: $(tail -3 "$tmp/e3")"
grep -q "data x tensor x pipeline" "$tmp/d1" || fail "serial dtp: no configuration table"
cmp -s <(mask_text "$tmp/d1") <(mask_text "$tmp/d3") ||
	fail "dtp text differs: $(diff <(mask_text "$tmp/d1") <(mask_text "$tmp/d3") | head -5)"
# shellcheck disable=SC2086
"$bin" shard $dargs --jobs 1 --json >"$tmp/dj1" 2>/dev/null
# shellcheck disable=SC2086
timeout $((600 * hang)) mpirun --oversubscribe -np 3 "$bin" shard $dargs --json >"$tmp/dj3" 2>/dev/null
cmp -s <(mask_json "$tmp/dj1") <(mask_json "$tmp/dj3") || fail "dtp --json differs"
# shellcheck disable=SC2086
timeout $((600 * hang)) mpirun --oversubscribe -np 2 "$bin" shard $dargs --json >"$tmp/dj2" 2>/dev/null
cmp -s <(mask_json "$tmp/dj1") <(mask_json "$tmp/dj2") || fail "dtp --json differs (2 ranks)"
grep -q '"pruned: cannot beat' "$tmp/dj2" || fail "dtp --json (2 ranks): no operator-level scheme cut"
[ "$(python3 -c "import json; print(len(json.load(open('$tmp/dj3'))['configurations']))")" -ge 15 ] ||
	fail "dtp --json under mpirun lacks configurations"
if [ "$fails" != 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "mpi shard e2e: ok"
