#!/usr/bin/env bash
# cli_edge_inputs.sh — the smaller findings of issue 39, each through the CLI
# as a user meets it (each check fails on the code before the fix):
#   a zero-size spatial input (--input input.1=1,3,0,0) is refused naming the
#   first Conv (exit 2; was accepted, every cost 0);
#   `--agent none` (a fresh agent) is a word, not a path, in scripts too;
#   a layout whose kind is no layout kind is bad input (exit 2, was 1);
#   extract --force keeps the replaced folder's permission bits, and a new
#   folder gets 0777 less the umask (both were 0700, mkdtemp's);
#   a tuning log that cannot be written (a full disk, here a file-size limit
#   of 0) fails naming the log and leaves no empty log behind.
# Usage: cli_edge_inputs.sh PATH/TO/partbench   (run from the repository root)
set -u
# the timeouts only guard against hangs: x10 under the sanitizers (issue 40.7)
hang=1
[ -n "${PB_SANITIZED:-}" ] && hang=10
bin=${1:?usage: cli_edge_inputs.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_edge_inputs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
L=layouts/manycore-16.lua
M=models/tiny_branches.dot

# ---- zero-size input dims
timeout $((60 * hang)) "$bin" info models/resnet18.onnx --input input.1=1,3,0,0 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] || fail "--input 1,3,0,0: exit $rc, expected 2"
grep -q "node '/conv1/Conv' (Conv): spatial axis 0: .* does not fit the input of 0" "$tmp/err" ||
	fail "--input 1,3,0,0: $(head -c 300 "$tmp/err")"
# a batch of 0 is no window's business: still loads
timeout $((60 * hang)) "$bin" info models/resnet18.onnx --input input.1=0,3,224,224 >/dev/null 2>"$tmp/err" ||
	fail "--input 0,3,224,224 refused: $(head -c 300 "$tmp/err")"

# ---- --agent none from a script
printf 'pb.cmd("partition %s --layout %s --method rl --agent none --episodes 2")\n' "$M" "$L" >"$tmp/agent.lua"
timeout $((120 * hang)) "$bin" run "$tmp/agent.lua" >"$tmp/out" 2>"$tmp/err" ||
	fail "--agent none in a script: $(head -c 300 "$tmp/err")"
# a file named 'none.txt' is still refused
printf 'pb.cmd("partition %s --layout %s --method rl --agent %s/none.txt")\n' "$M" "$L" "$tmp" >"$tmp/agent2.lua"
echo secret >"$tmp/none.txt"
timeout $((60 * hang)) "$bin" run "$tmp/agent2.lua" >"$tmp/out" 2>"$tmp/err" && fail "--agent none.txt read by a script"
grep -q "scripts read only" "$tmp/err" || fail "--agent none.txt: $(head -c 300 "$tmp/err")"

# ---- a layout of no known kind
for spec in "manycore-16.lua partition" "cluster-2x8.lua shard" "hetero.lua map"; do
	set -- $spec
	sed 's/kind = "[a-z]*"/kind = "zzz"/' "layouts/$1" >"$tmp/k_$1"
	timeout $((60 * hang)) "$bin" "$2" "$M" --layout "$tmp/k_$1" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 2 ] || fail "$2 with kind zzz: exit $rc, expected 2: $(head -c 200 "$tmp/err")"
	grep -q "field 'kind' = \"zzz\" is no layout kind" "$tmp/err" ||
		fail "$2 with kind zzz: $(head -c 300 "$tmp/err")"
done

# ---- extract folder modes
S=models/squeezenet1_1.onnx
timeout $((120 * hang)) "$bin" partition "$S" --layout "$L" --method greedy -o "$tmp/p.json" >/dev/null 2>&1 ||
	fail "partition for extract"
mkdir -m 0750 "$tmp/parts"
touch "$tmp/parts/old"
timeout $((120 * hang)) "$bin" extract "$S" --plan "$tmp/p.json" "$tmp/parts" --force --structure-only \
	>/dev/null 2>"$tmp/err" || fail "extract --force: $(head -c 300 "$tmp/err")"
[ "$(stat -c %a "$tmp/parts")" = 750 ] || fail "extract --force: mode $(stat -c %a "$tmp/parts"), expected 750"
[ -e "$tmp/parts/old" ] && fail "extract --force kept the old folder's file"
(
	umask 022
	timeout $((120 * hang)) "$bin" extract "$S" --plan "$tmp/p.json" "$tmp/new" --structure-only >/dev/null 2>&1
)
[ "$(stat -c %a "$tmp/new" 2>/dev/null)" = 755 ] ||
	fail "extract into a new folder under umask 022: mode $(stat -c %a "$tmp/new" 2>/dev/null), expected 755"

# ---- a tuning log on a full disk (RLIMIT_FSIZE 0: every write fails, EFBIG)
# stderr goes through a pipe (a file could not be written under the limit)
msg=$(timeout $((120 * hang)) bash -c 'trap "" XFSZ; ulimit -f 0; exec "$@"' _ "$bin" tune --op gemm \
	--shape 8,8,8 --trials 2 --log "$tmp/t.log" 2>&1 >/dev/null | cat; exit "${PIPESTATUS[0]}")
rc=$?
[ "$rc" = 2 ] || fail "tune --log on a full disk: exit $rc, expected 2: $msg"
grep -q "t.log: write failed" <<<"$msg" || fail "tune --log on a full disk: $msg"
[ -e "$tmp/t.log" ] && fail "tune --log on a full disk left a log of $(stat -c %s "$tmp/t.log") bytes"

[ "$fails" = 0 ] && echo "cli_edge_inputs: ok"
exit $((fails > 0))
