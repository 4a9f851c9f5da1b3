#!/usr/bin/env bash
# plot timeline of the pipeline `shard --pipeline auto` (and --pp P) keeps:
# its 1F1B schedule is the one its step time counts, (slowest group + p2p)
# per slot, backward = 2 x forward when training, so the chart's makespan is
# the step time without the once-per-step gradient all-reduces. Before, the
# plan had no schedule and the chart synthesized one from the chunk times as
# if they were forward times (backward 2x on top): bert_base_like, 2x8,
# --batch 8 --train drew a 5.44 ms makespan for a 2.895 ms step. An
# interleaved plan is refused, saying why (its chunks were drawn as stages).
# `plot load` of an interleaved plan gives the slowest device group's time,
# not the tallest chunk's.
set -u
bin=${1:?usage: export_timeline_dtp.sh PARTBENCH}
tmp=$(mktemp -d /tmp/pb_tl_dtp.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=/usr/bin/python3

"$bin" shard models/bert_base_like.onnx --layout layouts/cluster-2x8.lua --batch 8 --train \
	--pp 8 --microbatches 8 --schedule 1f1b -j 1 -o "$tmp/p.json" >/dev/null 2>"$tmp/err" ||
	fail "shard --pp 8: $(cat "$tmp/err")"
"$bin" plot timeline "$tmp/p.json" -o "$tmp/t.svg" >/dev/null 2>"$tmp/err" ||
	fail "plot timeline: $(cat "$tmp/err")"
$py - "$tmp/p.json" "$tmp/t.svg" <<'PY' || fail "the timeline's makespan is not the plan's"
import json, re, sys
p = json.load(open(sys.argv[1])); svg = open(sys.argv[2]).read()
d = p["detail"]
want = d["step_time"] - d["grad_exposed"]
m = re.search(r"makespan ([0-9.]+) (ms|us|s)\b", svg)
assert m, "no makespan in the subtitle"
got = float(m.group(1)) * {"ms": 1e-3, "us": 1e-6, "s": 1}[m.group(2)]
assert abs(got - want) <= 0.01 * want, (got, want)
assert "synthesized" not in svg, "synthesized from the chunk times"
assert "8 stages" in svg and "8 micro-batches" in svg
PY

"$bin" shard models/bert_base_like.onnx --layout layouts/cluster-2x8.lua --batch 8 --train \
	--pp 2 --microbatches 4 --schedule interleaved:2 -j 1 -o "$tmp/i.json" >/dev/null 2>"$tmp/err" ||
	fail "shard interleaved: $(cat "$tmp/err")"
"$bin" plot timeline "$tmp/i.json" -o "$tmp/i.svg" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "interleaved timeline: exit $rc, want 2"
grep -q "interleaved:2" "$tmp/out" && grep -q "i.json" "$tmp/out" ||
	fail "interleaved timeline: the message does not name the file and the schedule: $(cat "$tmp/out")"
[ ! -e "$tmp/i.svg" ] || fail "interleaved timeline: an SVG was written"

# plot load of the interleaved plan: its bars are model chunks, V on each
# device group; the subtitle's max(t) is the slowest device group's (the
# plan's slowest_group, what the step time counts), not the tallest chunk's
"$bin" plot load "$tmp/i.json" -o "$tmp/l.svg" >/dev/null 2>"$tmp/err" || fail "plot load: $(cat "$tmp/err")"
$py - "$tmp/i.json" "$tmp/l.svg" <<'PY' || fail "plot load of an interleaved plan: max(t) is not the slowest group's"
import json, re, sys
p = json.load(open(sys.argv[1])); svg = open(sys.argv[2]).read()
want = p["detail"]["slowest_group"]
m = re.search(r"max\(t\) ([0-9.]+) (ms|us|s) per device group \(2 chunks each\)", svg)
assert m, re.findall(r"max\(t\)[^<]*", svg)
got = float(m.group(1)) * {"ms": 1e-3, "us": 1e-6, "s": 1}[m.group(2)]
assert abs(got - want) <= 0.01 * want, (got, want)
PY

[ $fails -eq 0 ] && echo "export timeline dtp: ok"
exit $fails
