#!/usr/bin/env bash
# mpi_tune.sh — `tune MODEL --all` across Open MPI ranks (docs/scale-out.md):
# mpirun --oversubscribe -np 3 spreads the 5 kernel shapes of
# tests/data/tiny_convs.onnx (they tune in milliseconds) over the ranks and rank 0 merges one log (every shape exactly once, --times reads
# it); a rank killed with SIGKILL mid-shape loses only that shape, which
# rank 0 lists as missing, and --resume completes it. Where partbench was
# built without MPI: the clear refusal under a job of several ranks, then
# skip (exit 77). Usage: mpi_tune.sh PATH/TO/partbench (from the repo root)
set -u
# the timeouts only guard against hangs: x10 under the sanitizers (issue 40.7)
hang=1
[ -n "${PB_SANITIZED:-}" ] && hang=10
bin=${1:?usage: mpi_tune.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_mpi_tune.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
model=tests/data/tiny_convs.onnx

if ! grep -q PB_HAVE_MPI "$(dirname "$bin")/compile_commands.json" 2>/dev/null; then
	OMPI_COMM_WORLD_SIZE=3 "$bin" tune $model --all --log "$tmp/x.jsonl" >"$tmp/out" 2>"$tmp/err"
	[ $? = 1 ] && grep -q "built without Open MPI" "$tmp/err" || fail "no-MPI build: $(cat "$tmp/err")"
	[ -e "$tmp/x.jsonl" ] && fail "no-MPI build wrote a log"
	[ "$fails" = 0 ] || exit 1
	echo "SKIP: partbench was built without MPI (install libopenmpi-dev openmpi-bin: make deps)"
	exit 77
fi
if ! command -v mpirun >/dev/null; then
	echo "SKIP: mpirun not found (openmpi-bin)"
	exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi() { timeout $((300 * hang)) mpirun --oversubscribe "$@"; }

# one log, every shape exactly once, measurements from every rank
mpi -np 3 "$bin" tune $model --all --trials 4 --reps 1 --log "$tmp/m.jsonl" --json >"$tmp/out" 2>"$tmp/err" ||
	fail "mpirun -np 3 tune --all: exit $?: $(tail -3 "$tmp/err")"
python3 - "$tmp/m.jsonl" "$tmp/out" <<'PY' || fail "merged log"
import json, sys, collections
lines = [json.loads(l) for l in open(sys.argv[1])]
rep = json.load(open(sys.argv[2]))
assert rep["ranks"] == 3 and rep["tuned"] == 5 and rep["missing"] == [], rep
summ = [l for l in lines if l["method"] == "shape"]
keys = {s["key"] for s in rep["shapes"]}
c = collections.Counter(l["key"] for l in summ)
assert set(c) == keys and all(v == 1 for v in c.values()), c
m = collections.Counter(l["key"] for l in lines if l["method"] != "shape")
assert set(m) == keys and all(v == 4 for v in m.values()), m
assert len({l["rank"] for l in summ}) >= 2, "the shapes were not spread over the ranks"
assert sorted(n for l in summ for n in l["nodes"]) == sorted(set(n for l in summ for n in l["nodes"]))
PY
"$bin" tune $model --times --log "$tmp/m.jsonl" --json >"$tmp/times" 2>&1 || fail "--times on the merged log"
python3 -c "import json,sys; d=json.load(open('$tmp/times')); assert d['measured_nodes']==d['tunable_nodes']==8, d" ||
	fail "--times does not find every node in the merged log"

# a rank dies mid-shape: it is listed missing, the others finish, --resume completes it
# (a shape lasts seconds: 300 measurements). Also under the sanitizers: the
# survivors skip MPI_Finalize after a dead rank (pb_ranks_abandon), where they
# used to wait for it for ever (observed 2026-11-25, ASan build, Open MPI 4.1.4).
log=$tmp/k.jsonl
kt=300
timeout $((300 * hang)) mpirun --oversubscribe --enable-recovery -np 3 "$bin" tune $model --all --trials $kt --reps 1 \
	--rank-timeout $((20 * hang)) --log "$log" >"$tmp/kout" 2>"$tmp/kerr" &
runner=$!
for _ in $(seq 600); do
	[ -s "$log" ] && [ "$(wc -l <"$log")" -ge 3 ] && break
	sleep 0.05
done
victim=
for p in $(pgrep -P "$(pgrep -P "$runner" -x mpirun)"); do
	tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 && victim=$p
done
[ -n "$victim" ] || fail "rank 1 not found"
grep -q '"rank":1,' "$log" && echo "note: rank 1 had finished a shape before the kill"
kill -9 "$victim" 2>/dev/null
krc=0
wait $runner || krc=$?
[ "$krc" != 124 ] || fail "the surviving ranks did not exit after the dead rank (MPI_Finalize)"
grep -q "^missing: conv2d" "$tmp/kout" || fail "rank 0 did not list the killed rank's shape: $(tail -5 "$tmp/kout")"
grep -q "stopped answering" "$tmp/kout" || fail "missing shape without the reason"
grep -q "ranks: 3 (1 died)" "$tmp/kout" || fail "dead rank not counted: $(grep ranks: "$tmp/kout")"
grep -q "with --resume" "$tmp/kerr" || fail "no --resume hint on stderr"
n_missing=$(grep -c "^missing: " "$tmp/kout")
[ "$n_missing" = 1 ] || fail "$n_missing shapes missing, expected only the one in flight"
mpi -np 2 "$bin" tune $model --all --trials $kt --reps 1 --log "$log" --resume --json >"$tmp/out" 2>"$tmp/err" ||
	fail "--resume after the dead rank: exit $?: $(tail -3 "$tmp/err")"
python3 - "$log" "$tmp/out" "$kt" <<'PY' || fail "resumed log"
import json, sys, collections
lines = [json.loads(l) for l in open(sys.argv[1])]
rep = json.load(open(sys.argv[2]))
assert rep["tuned"] == 1 and rep["logged"] == 4 and rep["missing"] == [], rep
summ = {l["key"]: l for l in lines if l["method"] == "shape"}
c = collections.Counter(l["key"] for l in lines if l["method"] == "shape")
assert len(c) == 5 and all(v == 1 for v in c.values()), c
m = collections.Counter(l["key"] for l in lines if l["method"] != "shape")
# every shape has exactly its budget of measurements (600 or all its legal
# configurations): the dead rank's were kept and counted by --resume
assert all(m[k] == summ[k]["measurements"] == int(sys.argv[3]) for k in summ), (m, summ)
resumed = [s for s in rep["shapes"] if s["state"] == "tuned"][0]
assert resumed["rank"] in (0, 1), resumed
PY

if [ "$fails" != 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "mpi tune e2e: ok"
