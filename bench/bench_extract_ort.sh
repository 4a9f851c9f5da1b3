#!/usr/bin/env bash
# bench_extract_ort.sh — how far is the many-core time model from ONNX
# Runtime on this CPU? For resnet18 and googlenet (random weights,
# tests/ort/fill_weights.py):
#   1. ORT profile of the whole model, one thread, graph optimisation basic;
#   2. layout --calibrate: mac_rate fitted to it, per op type measured vs
#      predicted (layout's rate) vs fitted;
#   3. 4 contiguous single-core parts balancing the predicted per-node times
#      (a linear-partition DP here: the many-core partitioner would give all
#      4 cores to one group, its model dividing a group's MACs by its cores),
#      once with the model's times (MACs / fitted rate) and once with the
#      profile's per-node times (what --costs PROFILE uses);
#   4. extract, and time every part in ORT (one thread, basic, median of N
#      runs): predicted (sum of the part's per-node times) vs measured.
# Usage: bench/bench_extract_ort.sh [PARTBENCH] [RUNS]   (needs make deps)
set -eu
bin=${1:-build/partbench}
runs=${2:-20}
root=$PWD
tmp=$(mktemp -d /tmp/pb_bench_extract.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
run="node $root/tests/ort/run_parts.js"

for name in resnet18 googlenet; do
	m=$tmp/$name.onnx
	$py tests/ort/fill_weights.py models/$name.onnx "$m"
	$run profile "$m" "$tmp/$name.prof.json" --runs "$runs" --opt basic >/dev/null
	"$bin" layout layouts/manycore-16.lua --calibrate "$tmp/$name.prof.json" --model "$m" \
		>"$tmp/$name.cal.txt"
	"$bin" layout layouts/manycore-16.lua --calibrate "$tmp/$name.prof.json" --model "$m" \
		--json >"$tmp/$name.cal.json"
	rate=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['mac_rate_fit'])" "$tmp/$name.cal.json")
	echo "== $name: layout --calibrate (manycore-16's mac_rate 1e11 vs fitted)"
	cat "$tmp/$name.cal.txt"
	"$bin" info "$m" --json >"$tmp/$name.info.json"
	"$bin" partition "$m" --layout layouts/manycore-16.lua -o "$tmp/$name.template.json" >/dev/null 2>&1
	for costs in model profile; do
		# 4 contiguous single-core parts balancing the predicted per-node times:
		# model = MACs / fitted rate, profile = the profile's time of each node
		$py - "$tmp/$name.info.json" "$tmp/$name.prof.json" "$rate" $costs \
			"$tmp/$name.template.json" "$tmp/$name.$costs.plan.json" <<'PY'
import json, sys
info, prof, rate, costs, tpl, out = sys.argv[1:]
nodes = json.load(open(info))["nodes"]
ev = json.load(open(prof))
runs = sum(1 for e in ev if e.get("cat") == "Session" and e.get("name") == "model_run")
meas = {}
for e in ev:
    n = e.get("name", "")
    if e.get("cat") == "Node" and n.endswith("_kernel_time"):
        meas[n[:-12]] = meas.get(n[:-12], 0) + e["dur"] * 1e-6 / runs
t = [(nd["macs"] / float(rate)) if costs == "model" else meas.get(nd["name"], nd["macs"] / float(rate))
     for nd in nodes]
n, P = len(t), 4
pre = [0]
for x in t: pre.append(pre[-1] + x)
# linear partition DP: minimise the largest part
INF = float("inf")
best = [[INF] * (n + 1) for _ in range(P + 1)]; cut = [[0] * (n + 1) for _ in range(P + 1)]
best[0][0] = 0
for k in range(1, P + 1):
    for j in range(1, n + 1):
        for i in range(k - 1, j):
            v = max(best[k - 1][i], pre[j] - pre[i])
            if v < best[k][j]: best[k][j], cut[k][j] = v, i
bounds, j = [], n
for k in range(P, 0, -1):
    i = cut[k][j]; bounds.append((i, j)); j = i
bounds.reverse()
plan = json.load(open(tpl))
plan["method"] = "bench-4-parts-" + costs
plan["assignment"] = [k for k, (i, j) in enumerate(bounds) for _ in range(i, j)]
plan["groups"] = [{"label": f"core {k}", "first_unit": k, "n_units": 1, "first_node": i,
                   "last_node": j - 1, "time": pre[j] - pre[i], "compute": pre[j] - pre[i],
                   "routing": 0.0, "storage": 0.0, "macs": sum(nd["macs"] for nd in nodes[i:j]),
                   "bottleneck": False, "over_memory": False} for k, (i, j) in enumerate(bounds)]
plan["metrics"] = {"max_time": max(g["time"] for g in plan["groups"])}
json.dump(plan, open(out, "w"))
PY
		rm -rf "$tmp/$name.$costs.parts"
		"$bin" extract "$m" --plan "$tmp/$name.$costs.plan.json" -o "$tmp/$name.$costs.parts" >/dev/null
		$run time "$m" "$tmp/$name.$costs.parts" --runs "$runs" --opt basic >"$tmp/$name.$costs.time.json"
		echo "== $name: 4 parts balanced on the $costs's per-node times (fitted mac_rate $rate)"
		$py - "$tmp/$name.$costs.time.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
print(f"{'part':<8} {'place':<10} {'predicted':>11} {'measured':>11} {'error':>8}")
for p in t["parts"]:
    e = (p["predicted"] - p["measured"]) / p["measured"]
    print(f"{p['file'][:-5]:<8} {p['label']:<10} {p['predicted']*1e3:>8.3f} ms {p['measured']*1e3:>8.3f} ms {100*e:>+7.1f}%")
pm = max(p["predicted"] for p in t["parts"]); mm = max(p["measured"] for p in t["parts"])
print(f"slowest part: predicted {pm*1e3:.3f} ms, measured {mm*1e3:.3f} ms ({100*(pm-mm)/mm:+.1f}%); "
      f"sum of parts {sum(p['measured'] for p in t['parts'])*1e3:.3f} ms, whole model {t['whole']*1e3:.3f} ms")
PY
	done
done
