#!/usr/bin/env python3
"""bench_mesh.py — placed plans on routed meshes (docs/mesh.md).

For each model and mesh layout and each partition method: the method's plan
placed by the local search (partition --place local, the default), beside the
routing-free lower bound (the 1-D exact optimum) and the snake placement of
the 1-D optimum. Prints a Markdown table for bench/RESULTS.md.

usage: bench/bench_mesh.py PARTBENCH MODEL... [--layouts L1,L2]
"""
import json
import subprocess
import sys
import time

METHODS = [("exact", []), ("greedy", []), ("equal", []), ("pack", []), ("local", []),
           ("milp", ["--time-limit", "5"]), ("rl", ["--episodes", "300", "--agent", "none"])]


def main():
    args = sys.argv[1:]
    layouts = ["layouts/manycore-16-mesh.lua", "layouts/manycore-64-mesh.lua"]
    if "--layouts" in args:
        i = args.index("--layouts")
        layouts = args[i + 1].split(",")
        del args[i:i + 2]
    pb, models = args[0], args[1:]
    print("| model | mesh | method | max(t) placed | snake of 1-D opt | bound (1-D opt) | gap to bound "
          "| network share | most loaded link | solve s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for model in models:
        for lay in layouts:
            for m, extra in METHODS:
                t0 = time.monotonic()
                r = subprocess.run([pb, "partition", model, "--layout", lay, "-m", m, "--json"] + extra,
                                   capture_output=True, text=True)
                dt = time.monotonic() - t0
                if r.returncode != 0:
                    print(f"| {model} | {lay} | {m} | error: {r.stderr.strip()[:80]} |||||||")
                    continue
                j = json.loads(r.stdout)
                me = j["mesh"]
                hot = me["most_loaded_link"]
                hl = (f"({hot['from'][0]},{hot['from'][1]})->({hot['to'][0]},{hot['to'][1]}) "
                      f"{hot['bytes'] / 1e6:.2f} MB" if hot else "-")
                name = model.split("/")[-1].replace(".onnx", "")
                print(f"| {name} | {me['rows']}x{me['cols']} | {m} | {j['max_time'] * 1e3:.4f} ms "
                      f"| {j['snake'] * 1e3:.4f} ms | {j['lower_bound'] * 1e3:.4f} ms "
                      f"| {100 * me['gap_to_lower_bound']:.2f}% | {100 * me['link_share']:.1f}% "
                      f"| {hl} | {dt:.2f} |", flush=True)


if __name__ == "__main__":
    main()
