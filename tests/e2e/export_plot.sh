#!/usr/bin/env bash
# export and plot from the command line, as a reviewer would use them: a
# plan from each planner (partition, shard, pipeline, fuse, map) exported to
# SVG with its clusters and legend; every plot kind from real outputs (train
# --log, tune --log, partition and pipeline plans); bad inputs give a clear
# error naming the file and exit 2 (1 for usage), and never leave a
# half-written SVG.
set -u
bin=${1:?usage: export_plot.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_export.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
wellformed() { xmllint --noout --nonet "$1" 2>"$tmp/xml" || fail "$1 is not well-formed XML: $(head -3 "$tmp/xml")"; }
xcount() { xmllint --nonet --xpath "count($2)" "$1" 2>/dev/null; }
clusters="//*[local-name()='g'][@class='cluster']"

# Plans from every planner, exported with the colouring that fits them.
"$bin" partition models/resnet18.onnx --layout layouts/manycore-16.lua -o "$tmp/part.json" >/dev/null ||
	fail "partition"
"$bin" shard models/resnet18.onnx --layout layouts/cluster-1x8.lua -o "$tmp/shard.json" >/dev/null 2>&1 ||
	fail "shard"
"$bin" pipeline models/resnet18.onnx --layout layouts/cluster-1x8.lua --stages 4 --batch 32 --train \
	-o "$tmp/pipe.json" >/dev/null || fail "pipeline"
"$bin" fuse models/googlenet.onnx -o "$tmp/fused.json" --plan "$tmp/fuse.json" >/dev/null 2>&1 ||
	fail "fuse --plan"
"$bin" map models/googlenet.onnx --layout layouts/hetero.lua -o "$tmp/map.json" >/dev/null 2>&1 ||
	fail "map"
for spec in part:group:resnet18 shard:group:resnet18 pipe:stage:resnet18 fuse:fusion:googlenet map:backend:googlenet; do
	IFS=: read -r plan mode model <<<"$spec"
	[ -s "$tmp/$plan.json" ] || { fail "$plan: no plan written"; continue; }
	"$bin" export models/$model.onnx --plan "$tmp/$plan.json" --color-by "$mode" -o "$tmp/$plan.svg" \
		>"$tmp/out" 2>&1 || { fail "export $plan: $(cat "$tmp/out")"; continue; }
	wellformed "$tmp/$plan.svg"
	groups=$(/usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['groups']))" "$tmp/$plan.json")
	n=$(xcount "$tmp/$plan.svg" "$clusters")
	# One cluster per plan group, plus the legend.
	[ "$n" = "$((groups + 1))" ] || fail "export $plan: $n clusters for $groups groups"
	grep -q "legend" "$tmp/$plan.svg" || fail "export $plan: no legend"
done

# Without a plan: MACs colouring, no group clusters (the legend only).
"$bin" export models/resnet18.onnx -o "$tmp/macs.svg" >/dev/null || fail "export without a plan"
wellformed "$tmp/macs.svg"
[ "$(xcount "$tmp/macs.svg" "$clusters")" = 1 ] || fail "export without a plan: clusters"

# The large model: collapsed, and well within the 10 s goal (bench/ holds the timings).
"$bin" partition models/swin_t.onnx --layout layouts/manycore-16.lua -o "$tmp/swin.json" >/dev/null ||
	fail "partition swin_t"
"$bin" export models/swin_t.onnx --plan "$tmp/swin.json" -o "$tmp/swin.svg" >"$tmp/out" ||
	fail "export swin_t"
grep -q "collapsed to" "$tmp/out" || fail "swin_t was not collapsed: $(cat "$tmp/out")"
wellformed "$tmp/swin.svg"

# Plots from real outputs.
"$bin" train models/resnet18.onnx --layout layouts/manycore-16.lua --episodes 30 -o "$tmp/a.ckpt" \
	--log "$tmp/train.jsonl" >/dev/null || fail "train --log"
[ "$(wc -l <"$tmp/train.jsonl")" -eq 30 ] || fail "train --log: not one line per episode"
"$bin" tune --op gemm --shape 64,64,64 --trials 6 --reps 1 --log "$tmp/tune.jsonl" >/dev/null 2>&1 ||
	fail "tune --log"
for p in "training $tmp/train.jsonl" "tune $tmp/tune.jsonl" "load $tmp/part.json" "timeline $tmp/pipe.json"; do
	set -- $p
	"$bin" plot "$1" "$2" -o "$tmp/plot-$1.svg" >"$tmp/out" 2>&1 || { fail "plot $1: $(cat "$tmp/out")"; continue; }
	wellformed "$tmp/plot-$1.svg"
done

# Bad inputs.
expect() { # CODE WORD -- command...
	local code=$1 word=$2
	shift 3
	"$@" >/dev/null 2>"$tmp/err"
	local rc=$?
	[ $rc -eq "$code" ] || fail "$*: exit $rc, expected $code ($(cat "$tmp/err"))"
	grep -q -- "$word" "$tmp/err" || fail "$*: message does not name '$word': $(cat "$tmp/err")"
}
echo '{"format": "partbench-plan", "groups": [' >"$tmp/broken.json"
expect 2 broken.json -- "$bin" export models/resnet18.onnx --plan "$tmp/broken.json" -o "$tmp/x.svg"
expect 2 part.json -- "$bin" export models/googlenet.onnx --plan "$tmp/part.json" -o "$tmp/x.svg"
# a plan file that is not there: "missing.json: cannot open the plan: No such file ...", not "missing.json:-1:-1: ..."
expect 2 "missing.json: cannot open the plan" -- "$bin" export models/resnet18.onnx --plan "$tmp/missing.json" -o "$tmp/x.svg"
expect 2 "missing.json: cannot open the plan" -- "$bin" plot load "$tmp/missing.json" -o "$tmp/x.svg"
expect 1 "color-by" -- "$bin" export models/resnet18.onnx --color-by rainbow -o "$tmp/x.svg"
expect 1 "-o" -- "$bin" export models/resnet18.onnx
expect 1 "no model given" -- "$bin" export "$tmp/review.svg"
# A last argument FILE.svg is the output when -o is not given (the workbench's ':export out.svg').
"$bin" export models/resnet18.onnx "$tmp/pos.svg" >/dev/null || fail "export MODEL OUT.svg"
wellformed "$tmp/pos.svg"
"$bin" plot load "$tmp/part.json" "$tmp/pos-load.svg" >/dev/null || fail "plot load PLAN OUT.svg"
wellformed "$tmp/pos-load.svg"
expect 2 "$tmp/nodir" -- "$bin" export models/resnet18.onnx -o "$tmp/nodir/x.svg"
[ -e "$tmp/x.svg" ] && fail "a failed export left $tmp/x.svg behind"
printf '{"episode": 1, "reward": -1}\n{"episode": 2, "reward": \n' >"$tmp/bad.jsonl"
expect 2 "bad.jsonl" -- "$bin" plot training "$tmp/bad.jsonl" -o "$tmp/x.svg"
expect 2 "part.json" -- "$bin" plot timeline "$tmp/part.json" -o "$tmp/x.svg"
expect 1 "pie" -- "$bin" plot pie "$tmp/part.json" -o "$tmp/x.svg"
expect 2 "train.log" -- "$bin" train models/resnet18.onnx --layout layouts/manycore-16.lua --episodes 2 \
	-o "$tmp/b.ckpt" --log "$tmp/nodir/train.log"

"$bin" export --help | grep -q "show-constants" || fail "export --help"
"$bin" plot --help | grep -q "schedule" || fail "plot --help"

[ $fails -eq 0 ] && echo "export_plot: all passed"
exit $((fails > 0))
