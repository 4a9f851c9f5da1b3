#!/usr/bin/env bash
# cli_basics.sh — the batch CLI's contract: exit codes (0 ok, 1 usage, 2 bad
# input, with the message naming the file), `--help` for every command that
# `partbench --help` lists, and the convert round trip through the CLI.
# Usage: cli_basics.sh PATH/TO/partbench   (run from the repository root)
set -u
bin=${1:?usage: cli_basics.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_cli_basics.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect CODE DESCRIPTION -- CMD...: runs CMD, checks its exit code; keeps
# stdout in $tmp/out and stderr in $tmp/err.
expect() {
	local want=$1 what=$2
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" != "$want" ]; then
		fail "$what: exit $got, expected $want: $*"
		sed 's/^/    /' "$tmp/err" | head -5
	fi
}

# ---- top-level help and version
expect 0 "--help" -- "$bin" --help
grep -q "Usage:" "$tmp/out" || fail "--help does not print Usage:"
commands=$(awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}' "$tmp/out")
[ -n "$commands" ] || fail "--help lists no commands"
echo "$commands" | grep -qx convert || fail "--help does not list convert"
expect 0 "--version" -- "$bin" --version

# ---- every listed command answers --help with exit 0 and a Usage: line
for c in $commands; do
	expect 0 "$c --help" -- "$bin" "$c" --help
	grep -q "Usage:" "$tmp/out" || fail "$c --help does not print Usage:"
done

# ---- usage errors: exit 1
expect 1 "unknown option" -- "$bin" convert models/tiny_branches.dot --no-such-option -o "$tmp/x.json"
grep -q -- "--no-such-option" "$tmp/err" || fail "unknown option not named: $(cat "$tmp/err")"
expect 1 "convert without -o" -- "$bin" convert models/tiny_branches.dot
expect 1 "convert without a model" -- "$bin" convert -o "$tmp/x.json"
expect 1 "info with two models" -- "$bin" info models/tiny_branches.dot models/resnet18.onnx
grep -q "unexpected argument 'models/resnet18.onnx'" "$tmp/err" || fail "extra argument not named: $(cat "$tmp/err")"
expect 1 "convert with an extra argument" -- "$bin" convert models/tiny_branches.dot out.json
expect 1 "info --json --csv" -- "$bin" info models/tiny_branches.dot --json --csv
expect 1 "--input of the wrong rank" -- "$bin" info models/resnet18.onnx --input input.1=1,3
grep -q "rank 4" "$tmp/err" || fail "wrong --input rank not explained: $(cat "$tmp/err")"
expect 1 "--input dim overflow" -- "$bin" info models/resnet18.onnx --input input.1=1,3,99999999999999999999,1
expect 1 "--top not a number" -- "$bin" info models/resnet18.onnx --top x
printf '{"format": "partbench-plan", "assignment": [0]}\n' >"$tmp/orphan.plan.json"
expect 1 "plan --load with no model open (was a segfault)" -- "$bin" plan --load "$tmp/orphan.plan.json"
grep -q "no model is open" "$tmp/err" || fail "plan --load without a model not explained: $(cat "$tmp/err")"

expect 2 "--input with channels the weights do not take" -- "$bin" info models/resnet18.onnx --input input.1=1,6,224,224
grep -q "models/resnet18.onnx: node '/conv1/Conv' (Conv): input 'input.1' has 6 channels" "$tmp/err" ||
	fail "channel mismatch not explained: $(cat "$tmp/err")"

# ---- an input without any shape: the hint shows what --input wants
printf '{"nodes": [{"name": "a", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}], "inputs": ["x"]}\n' >"$tmp/noshape.json"
expect 0 "info of an input without shape" -- "$bin" info "$tmp/noshape.json"
grep -q -- "rerun with --input x=D1,D2,\.\.\. " "$tmp/out" || fail "hint for a rank-less input: $(cat "$tmp/out")"

# ---- CSV quoting: names with commas and quotes stay one field
printf 'digraph { "a,\\"b" [op=Conv macs=5]; }\n' >"$tmp/q.dot"
expect 0 "csv of odd names" -- "$bin" info --csv "$tmp/q.dot"
python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); assert r[1][1]=="a,\"b" and r[1][4]=="5", r' "$tmp/out" ||
	fail "info --csv does not quote names: $(cat "$tmp/out")"

# ---- bad input: exit 2 with the file named
printf 'digraph { a -> b; c -> ; }\n' >"$tmp/broken.dot"
expect 2 "syntax error in DOT" -- "$bin" convert "$tmp/broken.dot" -o "$tmp/x.json"
grep -q "$tmp/broken.dot" "$tmp/err" || fail "broken.dot not named: $(cat "$tmp/err")"
printf '{"nodes": [ {"name": "a",, } ]}\n' >"$tmp/broken.json"
expect 2 "malformed JSON" -- "$bin" info "$tmp/broken.json"
grep -q "$tmp/broken.json:1:" "$tmp/err" || fail "broken.json line not named: $(cat "$tmp/err")"
head -c 300 models/tiny_branches.dot | tr 'a-z{}' 'A-Z()' >"$tmp/corrupt.gv"
expect 2 "corrupt .gv" -- "$bin" info "$tmp/corrupt.gv"
grep -q "$tmp/corrupt.gv" "$tmp/err" || fail "corrupt.gv not named: $(cat "$tmp/err")"
head -c 3000 models/squeezenet1_1.onnx >"$tmp/corrupt.onnx"
expect 2 "corrupt ONNX" -- "$bin" info "$tmp/corrupt.onnx"
grep -q "$tmp/corrupt.onnx" "$tmp/err" || fail "corrupt.onnx not named: $(cat "$tmp/err")"
expect 2 "missing file" -- "$bin" convert "$tmp/none.dot" -o "$tmp/x.json"
grep -q "$tmp/none.dot" "$tmp/err" || fail "missing file not named"
expect 2 "unwritable output" -- "$bin" convert models/tiny_branches.dot -o "$tmp/no/dir/x.json"
grep -q "$tmp/no/dir/x.json" "$tmp/err" || fail "output path not named"

# ---- convert round trip through the CLI: DOT -> JSON -> JSON is stable, and
# the JSON graph reports the same table as the original
expect 0 "convert dot" -- "$bin" convert models/tiny_branches.dot -o "$tmp/a.json"
[ -s "$tmp/a.json" ] || fail "convert wrote nothing"
expect 0 "convert json" -- "$bin" convert "$tmp/a.json" -o "$tmp/b.json"
# the files differ only in the "source"/"source_format" fields
diff <(grep -v '"source' "$tmp/a.json") <(grep -v '"source' "$tmp/b.json") >/dev/null ||
	fail "JSON -> JSON conversion is not stable"
"$bin" info --csv models/tiny_branches.dot >"$tmp/info_dot.csv" 2>/dev/null
"$bin" info --csv "$tmp/a.json" >"$tmp/info_json.csv" 2>/dev/null
cmp -s "$tmp/info_dot.csv" "$tmp/info_json.csv" || fail "info differs between .dot and its JSON"
[ "$(wc -l <"$tmp/info_dot.csv")" -eq 10 ] || fail "info --csv of tiny_branches: expected 10 lines"
ls "$tmp"/*.tmp >/dev/null 2>&1 && fail "a temporary file was left behind"

# ONNX models convert too (two small ones here; test_convert round-trips all)
for m in models/squeezenet1_1.onnx models/resnet18.onnx; do
	"$bin" convert "$m" -o "$tmp/m.json" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc = 0 ] || { fail "convert $m: exit $rc: $(cat "$tmp/err")"; continue; }
	"$bin" info --json "$m" 2>/dev/null | grep -v '"model"\|"format"' >"$tmp/i1"
	"$bin" info --json "$tmp/m.json" 2>/dev/null | grep -v '"model"\|"format"' >"$tmp/i2"
	cmp -s "$tmp/i1" "$tmp/i2" || fail "info --json differs between $m and its JSON"
done

# ---- a model that fits no partition of a chip: warned, --json fits=false, --require-fit exits 2
expect 0 "partition over memory" -- "$bin" partition models/densenet121.onnx --layout layouts/manycore-tight.lua --json
grep -q '"fits": false' "$tmp/out" || fail "over-memory plan without fits=false"
grep -q "warning: the plan of models/densenet121.onnx does not fit layouts/manycore-tight.lua: .*no partition that fits" "$tmp/err" ||
	fail "no over-memory warning: $(cat "$tmp/err")"
expect 2 "partition --require-fit over memory" -- "$bin" partition models/densenet121.onnx --layout layouts/manycore-tight.lua --require-fit -o "$tmp/over.json"
[ -s "$tmp/over.json" ] || fail "--require-fit did not save the plan"
expect 0 "partition --require-fit that fits" -- "$bin" partition models/resnet18.onnx --layout layouts/manycore-tight.lua --require-fit --json
grep -q '"fits": true' "$tmp/out" || fail "fitting plan without fits=true"
[ -s "$tmp/err" ] && fail "a fitting plan warned: $(cat "$tmp/err")"

# ---- shard/pipeline on devices too small for the model: warned, --require-fit exits 2
sed 's/device_memory_gb = 40,/device_memory_gb = 0.001,/' layouts/cluster-1x8.lua >"$tmp/tiny.lua"
for c in shard pipeline; do
	expect 0 "$c over memory" -- "$bin" $c models/resnet18.onnx --layout "$tmp/tiny.lua"
	grep -q "warning: the best $c plan of models/resnet18.onnx does not fit $tmp/tiny.lua" "$tmp/err" ||
		fail "$c: no over-memory warning: $(cat "$tmp/err")"
	expect 2 "$c --require-fit over memory" -- "$bin" $c models/resnet18.onnx --layout "$tmp/tiny.lua" --require-fit
	expect 0 "$c --require-fit that fits" -- "$bin" $c models/resnet18.onnx --layout layouts/cluster-1x8.lua --require-fit
	grep -q "does not fit" "$tmp/err" && fail "$c: a fitting plan warned: $(cat "$tmp/err")"
done

# ---- fuse: a rule for an op no node has (a typo) is warned about; a real op is not
expect 0 "fuse --nonfusable typo" -- "$bin" fuse models/googlenet.onnx --nonfusable Maxpool --nonfusable MaxPool
grep -q "warning: --nonfusable Maxpool: no node of models/googlenet.onnx has op 'Maxpool'" "$tmp/err" ||
	fail "no warning for an absent op: $(cat "$tmp/err")"
grep -q "op 'MaxPool'" "$tmp/err" && fail "warned about an op the graph has"

# ---- files written (issue 23.5): the open model is never overwritten, an
# empty -o is named, a dangling link is refused, a link planted at the old
# FILE.tmp name is not followed, a dead process's temporary is removed, and
# shard --emit-lp / --emit-tasks go through the same writer
cp models/resnet18.onnx "$tmp/m.onnx"
expect 1 "convert onto its own model" -- "$bin" convert "$tmp/m.onnx" -o "$tmp/m.onnx"
grep -q "is the open model .*refusing to overwrite it" "$tmp/err" || fail "no open-model refusal: $(cat "$tmp/err")"
cmp -s models/resnet18.onnx "$tmp/m.onnx" || fail "convert -o MODEL changed the model"
ln -s m.onnx "$tmp/m-link.json"
expect 1 "convert onto a link to its model" -- "$bin" convert "$tmp/m.onnx" -o "$tmp/m-link.json"
cmp -s models/resnet18.onnx "$tmp/m.onnx" || fail "convert -o LINK changed the model"
expect 1 "export -o ''" -- "$bin" export models/resnet18.onnx -o ""
grep -qx "partbench: the output path is empty" "$tmp/err" || fail "-o '': $(cat "$tmp/err")"
expect 1 "unknown command" -- "$bin" nosuchcmd
grep -qx "partbench: unknown command 'nosuchcmd' (see partbench --help)" "$tmp/err" ||
	fail "unknown command: $(cat "$tmp/err")"
expect 1 "missing model" -- "$bin" "$tmp/nosuch.onnx"
grep -q "nosuch.onnx: no such file (and no command of that name" "$tmp/err" ||
	fail "missing model: $(cat "$tmp/err")"
ln -s nowhere.json "$tmp/dangling.json"
expect 2 "convert onto a dangling link" -- "$bin" convert models/resnet18.onnx -o "$tmp/dangling.json"
grep -q "dangling.json: is a symbolic link to a missing file" "$tmp/err" || fail "dangling: $(cat "$tmp/err")"
[ -L "$tmp/dangling.json" ] && [ ! -e "$tmp/nowhere.json" ] || fail "a dangling link was followed or replaced"
echo precious >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/out.json.tmp"
ln -s "$tmp/victim" "$tmp/m.lp.tmp"
sh -c 'exit 0' &
dead=$!
wait $dead
echo half >"$tmp/.out.json.pb-$dead-0123456789abcdef.tmp"
expect 0 "convert with a planted FILE.tmp link" -- "$bin" convert models/resnet18.onnx -o "$tmp/out.json"
[ "$(cat "$tmp/victim")" = precious ] || fail "the planted out.json.tmp link was followed"
[ -e "$tmp/.out.json.pb-$dead-0123456789abcdef.tmp" ] && fail "a dead process's temporary was left"
ls -a "$tmp" | grep -q '\.pb-.*\.tmp$' && fail "temporaries left: $(ls -a "$tmp")"
expect 0 "shard --emit-lp" -- "$bin" shard models/resnet18.onnx --layout layouts/cluster-1x8.lua --emit-lp "$tmp/m.lp"
grep -q "^Minimize" "$tmp/m.lp" || fail "--emit-lp wrote no LP"
[ "$(cat "$tmp/victim")" = precious ] || fail "--emit-lp followed a planted link"
expect 2 "shard --emit-lp onto a dangling link" -- "$bin" shard models/resnet18.onnx --layout layouts/cluster-1x8.lua --emit-lp "$tmp/dangling.json"
expect 2 "shard --emit-tasks onto a file" -- "$bin" shard models/resnet18.onnx --layout layouts/cluster-1x8.lua --emit-tasks "$tmp/victim"
grep -q "exists and is not a directory" "$tmp/err" || fail "--emit-tasks FILE: $(cat "$tmp/err")"

# ---- plan files name what is wrong (issue 23.7)
printf '{"format": "partbench-plan"}\n' >"$tmp/noassign.json"
expect 2 "plan without assignment" -- "$bin" export models/resnet18.onnx --plan "$tmp/noassign.json" -o "$tmp/p.svg"
grep -q "field 'assignment' is missing" "$tmp/err" || fail "no assignment: $(cat "$tmp/err")"
printf '{"assignment": []}\n' >"$tmp/noformat.json"
expect 2 "plan without format" -- "$bin" export models/resnet18.onnx --plan "$tmp/noformat.json" -o "$tmp/p.svg"
grep -q "field 'format' is missing" "$tmp/err" || fail "no format: $(cat "$tmp/err")"
expect 1 "export -o the plan it reads" -- "$bin" export models/resnet18.onnx --plan "$tmp/noassign.json" -o "$tmp/noassign.json"
grep -q "is the plan file being read" "$tmp/err" || fail "export -o PLAN: $(cat "$tmp/err")"
grep -q '"partbench-plan"' "$tmp/noassign.json" || fail "export -o PLAN overwrote the plan"

if [ $fails -gt 0 ]; then
	echo "cli_basics: $fails failure(s)"
	exit 1
fi
echo "cli_basics: ok ($(echo $commands | wc -w) commands checked)"
