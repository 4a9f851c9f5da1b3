#!/usr/bin/env bash
# cli_fifo_paths.sh — a FIFO at every path a command or a file can name: the
# command fails at once with an error naming the path and saying it is a FIFO
# (exit 2, bad input), never waiting for a writer or a reader (each run is
# under `timeout`; 124 means it hung, as every read did before the one door,
# util/file_door.h). Also paths found inside files: a session's model and
# layout, a plan given to export/extract, an ONNX model's external weights. And `train --log` aimed at the model
# (or a hard link to it) is refused, the model intact (issue 39).
# Usage: cli_fifo_paths.sh PATH/TO/partbench   (run from the repository root)
set -u
# the timeouts only guard against hangs: x10 under the sanitizers (issue 40.7)
hang=1
[ -n "${PB_SANITIZED:-}" ] && hang=10
bin=${1:?usage: cli_fifo_paths.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_fifo_paths.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

L=layouts/manycore-16.lua
M=models/tiny_branches.dot
for f in f.onnx f.dot f f.json f.lua f.ckpt f.log f.jsonl f.svg; do mkfifo "$tmp/$f"; done
cp "$M" "$tmp/m.dot"
printf '{"format": "partbench-session", "version": 1, "model": "%s"}\n' "$tmp/f.onnx" >"$tmp/s_model.json"
printf '{"format": "partbench-session", "version": 1, "model": "%s", "layout": "%s"}\n' \
	"$M" "$tmp/f.lua" >"$tmp/s_layout.json"
printf 'print("hi")\n' >"$tmp/ok.lua"

# fifo WANT_RC PATH_SHOWN -- CMD...: exits WANT_RC in time, the message names
# the FIFO path and says FIFO
fifo() {
	local want=$1 shown=$2
	shift 3
	timeout $((30 * hang)) "$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" = 124 ]; then
		fail "hung (killed after $((30 * hang)) s): $*"
	elif [ "$got" != "$want" ]; then
		fail "exit $got, expected $want: $*: $(head -c 300 "$tmp/err")"
	elif ! grep -q -- "$shown" "$tmp/err" || ! grep -qi "FIFO" "$tmp/err"; then
		fail "message does not name $shown as a FIFO: $*: $(head -c 300 "$tmp/err")"
	fi
}

fifo 2 "$tmp/f.onnx" -- "$bin" info "$tmp/f.onnx"
fifo 2 "$tmp/f.dot" -- "$bin" info "$tmp/f.dot"
fifo 2 "$tmp/f" -- "$bin" info "$tmp/f"
fifo 2 "$tmp/f.json" -- "$bin" convert "$tmp/f.json" -o "$tmp/x.json"
fifo 2 "$tmp/f.lua" -- "$bin" partition "$M" --layout "$tmp/f.lua"
fifo 2 "$tmp/f.json" -- "$bin" load "$tmp/f.json"
fifo 2 "$tmp/f.onnx" -- "$bin" load "$tmp/s_model.json"
fifo 2 "$tmp/f.lua" -- "$bin" load "$tmp/s_layout.json"
fifo 2 "$tmp/f.json" -- "$bin" export "$M" --plan "$tmp/f.json" -o "$tmp/x.svg"
fifo 2 "$tmp/f.json" -- "$bin" extract "$M" --plan "$tmp/f.json" "$tmp/parts"
fifo 2 "$tmp/f.jsonl" -- "$bin" plot training "$tmp/f.jsonl" -o "$tmp/x.svg"
fifo 2 "$tmp/f.json" -- "$bin" layout "$L" --calibrate "$tmp/f.json" --model "$M"
fifo 2 "$tmp/f.lua" -- "$bin" run "$tmp/f.lua"
fifo 2 "$tmp/f.lua" -- "$bin" run "$tmp/ok.lua" "$M" --layout "$tmp/f.lua"
fifo 2 "$tmp/f.ckpt" -- "$bin" partition "$M" --layout "$L" --method rl --agent "$tmp/f.ckpt" --episodes 1
fifo 2 "$tmp/f.log" -- "$bin" partition "$M" --layout "$L" --costs "$tmp/f.log"
fifo 2 "$tmp/f.json" -- "$bin" partition "$M" --layout "$L" --costs "$tmp/f.json"
fifo 2 "$tmp/f.log" -- "$bin" tune --op gemm --shape 8,8,8 --trials 1 --log "$tmp/f.log"
# writes: a FIFO with no reader
fifo 2 "$tmp/f.log" -- "$bin" train "$M" --layout "$L" -o "$tmp/a.ckpt" --log "$tmp/f.log" --episodes 1
fifo 2 "$tmp/f.svg" -- "$bin" export "$M" -o "$tmp/f.svg"
fifo 2 "$tmp/f.json" -- "$bin" partition "$M" --layout "$L" -o "$tmp/f.json"

# the same reads from a script: refused before the FIFO is touched
script() { # script NAME LUA: runs it; must fail in time with a refusal
	printf '%s\n' "$2" >"$tmp/$1.lua"
	timeout $((30 * hang)) "$bin" run "$tmp/$1.lua" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" = 124 ]; then
		fail "script $1 hung"
	elif [ "$got" = 0 ]; then
		fail "script $1 succeeded: $(head -c 300 "$tmp/out")"
	elif ! grep -qE "scripts read only|FIFO" "$tmp/err"; then
		fail "script $1: no refusal: $(head -c 300 "$tmp/err")"
	fi
}
script s1 "pb.cmd('load $tmp/s_model.json')"
script s2 "pb.cmd('load $tmp/s_layout.json')"
script s3 "pb.cmd('layout $L --calibrate $tmp/f.json --model $M')"
script s4 "pb.cmd('run $tmp/ok.lua $M --layout $tmp/f.lua')"
script s5 "pb.cmd('open $tmp/f')"

# External weights named inside an ONNX model (TensorProto external_data
# `location`, read by extract): through the door too (issue 39). A generated
# GPT names weights.absent beside it. A FIFO there was taken for a missing
# file (and skipped as absent under --structure-only, exit 0); a link there
# leaving the model's folder was linked into the parts (or copied).
mkdir "$tmp/g"
timeout 120 "$bin" gen gpt --layers 2 --hidden 64 --heads 2 --seq 8 --vocab 100 -o "$tmp/g/g.onnx" \
	>/dev/null 2>"$tmp/err" || fail "gen gpt: $(head -c 300 "$tmp/err")"
timeout 120 "$bin" partition "$tmp/g/g.onnx" --layout "$L" --method greedy -o "$tmp/g.json" \
	>/dev/null 2>"$tmp/err" || fail "partition gpt: $(head -c 300 "$tmp/err")"
mkfifo "$tmp/g/weights.absent"
for so in "" --structure-only; do
	fifo 2 "$tmp/g/weights.absent" -- "$bin" extract "$tmp/g/g.onnx" --plan "$tmp/g.json" "$tmp/gp1" $so
	grep -q "the weights file is a FIFO" "$tmp/err" || fail "extract $so: $(head -c 300 "$tmp/err")"
done
rm "$tmp/g/weights.absent"
printf 'secret\n' >"$tmp/outside.bin"
ln -s "$tmp/outside.bin" "$tmp/g/weights.absent"
timeout 120 "$bin" extract "$tmp/g/g.onnx" --plan "$tmp/g.json" "$tmp/gp3" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] || fail "extract with weights outside the model's folder: exit $rc, expected 2"
grep -q "outside the model's folder" "$tmp/err" || fail "weights outside: $(head -c 300 "$tmp/err")"
[ -e "$tmp/gp3" ] && fail "extract wrote parts whose weights are outside the model's folder"

# train --log aimed at the model: refused (exit 1, like every writer aimed at
# the model), the model intact, also through a hard link and a symbolic link
ln "$tmp/m.dot" "$tmp/hard.dot"
ln -s "$tmp/m.dot" "$tmp/soft.dot"
for target in m.dot hard.dot soft.dot; do
	timeout $((60 * hang)) "$bin" train "$tmp/m.dot" --layout "$L" -o "$tmp/a.ckpt" --log "$tmp/$target" \
		--episodes 2 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 1 ] || fail "train --log $target: exit $rc, expected 1: $(head -c 300 "$tmp/err")"
	grep -q "refusing to write the training log" "$tmp/err" ||
		fail "train --log $target: $(head -c 300 "$tmp/err")"
	cmp -s "$M" "$tmp/m.dot" || fail "train --log $target changed the model"
done
# a log elsewhere is still written
timeout $((120 * hang)) "$bin" train "$tmp/m.dot" --layout "$L" -o "$tmp/a.ckpt" --log "$tmp/train.log" \
	--episodes 2 >"$tmp/out" 2>"$tmp/err" || fail "train --log train.log: $(head -c 300 "$tmp/err")"
[ -s "$tmp/train.log" ] || fail "train --log train.log wrote nothing"

[ "$fails" = 0 ] && echo "cli_fifo_paths: ok"
exit $((fails > 0))
