#!/usr/bin/env bash
# extract: plans leave as ONNX parts that onnx's checker accepts and that ONNX
# Runtime (tests/ort, onnxruntime-node, installed by `make test`'s deps step)
# runs as a chain giving the whole model's outputs (relative difference
# <= 1e-4 on random inputs). Real weights (squeezenet1_1-weights), and
# structure-only models given random weights by tests/ort/fill_weights.py:
# inline (googlenet, bert_base_like) and in an external file (resnet18, so
# the parts reach the weights through a link in DIR). Many-core plans with a
# skip connection crossing several parts, a pipeline plan, map plans.
set -u
bin=${1:?usage: extract_ort.sh PARTBENCH}
root=$PWD
tmp=$(mktemp -d /tmp/pb_extract.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3
run=$root/tests/ort/run_parts.js
if [ ! -d "$root/tests/ort/node_modules/onnxruntime-node" ]; then
	echo "FAIL: tests/ort/node_modules is missing: run 'make deps' (npm ci --ignore-scripts in tests/ort)"
	exit 1
fi

# checker MODEL_DIR: every part passes onnx.checker (by path: external data checked too)
checker() {
	$py - "$1" <<'PY'
import glob, json, os, sys
import onnx
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
for p in m["parts"]:
    f = os.path.join(d, p["file"])
    onnx.checker.check_model(f)
    mp = onnx.load(f, load_external_data=False)
    names_in = [i.name for i in mp.graph.input]
    names_out = [o.name for o in mp.graph.output]
    assert names_in == [t["name"] for t in p["inputs"]], (f, names_in)
    assert names_out == [t["name"] for t in p["outputs"]], (f, names_out)
    assert mp.ir_version == m["ir_version"], f
    assert [(o.domain, o.version) for o in mp.opset_import] == \
        [(o["domain"], o["version"]) for o in m["opsets"]], f
PY
}

# extract_check NAME MODEL PLAN: extract, checker, ORT chain vs whole model
extract_check() {
	local name=$1 model=$2 plan=$3
	"$bin" extract "$model" --plan "$plan" -o "$tmp/$name" >"$tmp/$name.out" 2>"$tmp/err" ||
		{ fail "$name: extract: $(cat "$tmp/err")"; return; }
	checker "$tmp/$name" 2>"$tmp/err" || fail "$name: onnx checker: $(tail -3 "$tmp/err")"
	node "$run" check "$model" "$tmp/$name" >"$tmp/$name.ort" 2>"$tmp/err" ||
		fail "$name: ORT chain differs: $(cat "$tmp/$name.ort" "$tmp/err")"
	echo "$name: $(head -1 "$tmp/$name.out") | $(cat "$tmp/$name.ort")"
}

# --- real weights: squeezenet1_1-weights on 16 cores
"$bin" partition models/squeezenet1_1-weights.onnx --layout layouts/manycore-16.lua \
	-o "$tmp/sq.json" >/dev/null || fail "partition squeezenet"
extract_check squeeze models/squeezenet1_1-weights.onnx "$tmp/sq.json"
grep -q "weights inline" "$tmp/squeeze.out" || fail "squeezenet: weights not inline: $(cat "$tmp/squeeze.out")"

# --- resnet18 with random weights in an external file, 16 cores
mkdir -p "$tmp/w"
$py tests/ort/fill_weights.py models/resnet18.onnx "$tmp/w/r18.onnx" --external r18.bin ||
	fail "fill_weights resnet18"
"$bin" partition "$tmp/w/r18.onnx" --layout layouts/manycore-16.lua -o "$tmp/r18.json" >/dev/null ||
	fail "partition resnet18"
extract_check r18 "$tmp/w/r18.onnx" "$tmp/r18.json"
grep -q "weights linked" "$tmp/r18.out" || fail "resnet18: weights not linked: $(cat "$tmp/r18.out")"
[ "$(stat -c %i "$tmp/r18/r18.bin")" = "$(stat -c %i "$tmp/w/r18.bin")" ] ||
	fail "resnet18: r18.bin in DIR is not the source's weights file"
# a skip connection crosses several parts: one tensor goes to >= 2 later parts,
# and a part receives a tensor from a part that is not its predecessor
$py - "$tmp/r18/manifest.json" <<'PY' || fail "resnet18: no tensor skips over a part"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["kind"] == "partition" and len(m["parts"]) >= 4, len(m["parts"])
multi = [t for t in m["tensors"] if len([x for x in t["to"] if x != "model"]) >= 2]
skip = [(p["index"], i["from"]) for p in m["parts"] for i in p["inputs"]
        if i["from"] != "model" and i["from"] < p["index"] - 1]
assert multi and skip, (multi, skip)
for p in m["parts"]:
    assert "cores" in p["place"] and p["predicted_time"] > 0, p["place"]
for t in m["tensors"]:
    assert t["bytes"] > 0
PY

# --- symbolic batch: the source's value_info (dim_param N) is kept on the cut
# tensors; without value_info partbench's shapes leave the dim unknown (never
# a made-up size); both run in ORT with batch 2 and the same 16-core plan
$py - "$tmp/w/r18.onnx" "$tmp/w/sym.onnx" "$tmp/w/sym_novi.onnx" <<'PY' || fail "make symbolic models"
import sys
import onnx
m = onnx.load(sys.argv[1])
for vi in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
    d = vi.type.tensor_type.shape.dim[0]
    d.ClearField("dim_value"); d.dim_param = "N"
onnx.save(m, sys.argv[2])
del m.graph.value_info[:]
onnx.save(m, sys.argv[3])
PY
for v in sym sym_novi; do
	"$bin" extract "$tmp/w/$v.onnx" --plan "$tmp/r18.json" -o "$tmp/$v" >/dev/null 2>"$tmp/err" ||
		fail "$v: extract: $(cat "$tmp/err")"
	checker "$tmp/$v" 2>"$tmp/err" || fail "$v: onnx checker: $(tail -3 "$tmp/err")"
	node "$run" check "$tmp/w/$v.onnx" "$tmp/$v" --dim N=2 >"$tmp/$v.ort" 2>"$tmp/err" ||
		fail "$v: ORT chain differs: $(cat "$tmp/$v.ort" "$tmp/err")"
	grep -q '"shape":\[2,1000\]' "$tmp/$v.ort" || fail "$v: not run with batch 2: $(cat "$tmp/$v.ort")"
done
$py - "$tmp/sym" "$tmp/sym_novi" <<'PY' || fail "symbolic dims not kept"
import glob, os, sys
import onnx
model_io = {"input.1", "191"}
for d, want in ((sys.argv[1], "N"), (sys.argv[2], "")):
    cuts = 0
    for f in sorted(glob.glob(os.path.join(d, "part*.onnx"))):
        g = onnx.load(f).graph
        for vi in list(g.input) + list(g.output):
            d0 = vi.type.tensor_type.shape.dim[0]
            w = "N" if vi.name in model_io else want
            assert d0.dim_param == w and not d0.HasField("dim_value"), (f, vi.name, d0)
            cuts += vi.name not in model_io
    assert cuts > 6, cuts
PY

# --- googlenet, random inline weights: pipeline (4 stages) and map plans
$py tests/ort/fill_weights.py models/googlenet.onnx "$tmp/w/gn.onnx" || fail "fill_weights googlenet"
"$bin" pipeline "$tmp/w/gn.onnx" --layout layouts/cluster-4x8.lua --stages 4 \
	-o "$tmp/gp.json" >/dev/null || fail "pipeline googlenet"
extract_check gpipe "$tmp/w/gn.onnx" "$tmp/gp.json"
$py - "$tmp/gpipe/manifest.json" <<'PY' || fail "googlenet pipeline: manifest"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["kind"] == "pipeline" and len(m["parts"]) == 4
assert [p["place"]["stage"] for p in m["parts"]] == [0, 1, 2, 3]
assert all(len(p["place"]["devices"]) >= 1 for p in m["parts"])
PY
"$bin" map "$tmp/w/gn.onnx" --layout layouts/hetero.lua --priority -o "$tmp/gm.json" >/dev/null ||
	fail "map googlenet"
extract_check gmap "$tmp/w/gn.onnx" "$tmp/gm.json"

# --- bert_base_like (Shape/Reshape math, int64 token input): map plan, many regions
$py tests/ort/fill_weights.py models/bert_base_like.onnx "$tmp/w/bert.onnx" || fail "fill_weights bert"
"$bin" map "$tmp/w/bert.onnx" --layout layouts/hetero.lua --priority -o "$tmp/bm.json" >/dev/null ||
	fail "map bert"
extract_check bmap "$tmp/w/bert.onnx" "$tmp/bm.json"
$py - "$tmp/bmap/manifest.json" <<'PY' || fail "bert map: backends"
import json, sys
m = json.load(open(sys.argv[1]))
b = {p["place"]["backend"] for p in m["parts"]}
assert len(b) >= 2 and len(m["parts"]) > 10, (b, len(m["parts"]))
PY

# --- bad input: clear error, exit 2, no folder (nor temporary) left behind
expect_bad() { # NAME PATTERN CMD...
	local name=$1 pat=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ $rc -eq 2 ] || fail "$name: exit $rc, expected 2 ($(cat "$tmp/err"))"
	grep -q -- "$pat" "$tmp/err" || fail "$name: message lacks '$pat': $(cat "$tmp/err")"
}
expect_bad "plan of another model" "a plan of another model" \
	"$bin" extract "$tmp/w/gn.onnx" --plan "$tmp/r18.json" -o "$tmp/bad1"
[ ! -e "$tmp/bad1" ] || fail "plan of another model: folder written"
# same node count, other names
$py - "$tmp/r18.json" "$tmp/renamed.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["node_names"][3] = "not_in_the_model"
json.dump(p, open(sys.argv[2], "w"))
PY
expect_bad "renamed node" "not_in_the_model" \
	"$bin" extract "$tmp/w/r18.onnx" --plan "$tmp/renamed.json" -o "$tmp/bad2"
$py - "$tmp/r18.json" "$tmp/shard.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["kind"] = "shard"
json.dump(p, open(sys.argv[2], "w"))
PY
expect_bad "shard plan" "a shard plan has no parts" \
	"$bin" extract "$tmp/w/r18.onnx" --plan "$tmp/shard.json" -o "$tmp/bad4"
expect_bad "missing weights" "resnet18.weights is missing" \
	"$bin" extract models/resnet18.onnx --plan "$tmp/r18.json" -o "$tmp/bad5"
[ ! -e "$tmp/bad5" ] || fail "missing weights: folder written"
ls -d "$tmp"/*.pb-tmp-* >/dev/null 2>&1 && fail "a temporary folder was left behind"
# structure only: allowed with the flag, the parts keep the references
"$bin" extract models/resnet18.onnx --plan "$tmp/r18.json" -o "$tmp/so" --structure-only \
	>"$tmp/out" 2>"$tmp/err" || fail "structure-only: $(cat "$tmp/err")"
grep -q "weights absent" "$tmp/out" || fail "structure-only: $(cat "$tmp/out")"
# non-empty folder: refused, then replaced with --force
expect_bad "non-empty folder" "not empty (--force" \
	"$bin" extract "$tmp/w/r18.onnx" --plan "$tmp/r18.json" -o "$tmp/so"
grep -q '"weights": "absent"' "$tmp/so/manifest.json" || fail "refused extract changed the folder"
"$bin" extract "$tmp/w/r18.onnx" --plan "$tmp/r18.json" -o "$tmp/so" --force >/dev/null 2>"$tmp/err" ||
	fail "--force: $(cat "$tmp/err")"
grep -q '"weights": "linked"' "$tmp/so/manifest.json" || fail "--force did not replace the folder"
ls -d "$tmp"/so.pb-* >/dev/null 2>&1 && fail "--force left a folder behind"
# --force never removes a folder holding the model
expect_bad "force over the model" "holds the model" \
	"$bin" extract "$tmp/w/r18.onnx" --plan "$tmp/r18.json" -o "$tmp/w" --force
[ -s "$tmp/w/r18.onnx" ] || fail "--force removed the model's folder"
# an empty folder is fine
mkdir "$tmp/empty"
"$bin" extract "$tmp/w/r18.onnx" --plan "$tmp/r18.json" -o "$tmp/empty" >/dev/null 2>"$tmp/err" ||
	fail "empty folder: $(cat "$tmp/err")"
"$bin" extract --help | grep -q -- "--structure-only" || fail "extract --help"

if [ $fails -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "extract_ort: ok"
