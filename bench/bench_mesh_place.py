#!/usr/bin/env python3
"""bench_mesh_place.py — placement methods for the same layer groups on a
routed mesh (docs/mesh.md): snake, local search, the agent's placement
actions (--place rl, the layout's shipped agents/STEM.place.ckpt or
--agent FILE) and the placement MILP (--place milp, a time limit; refused
on 8x8), for the layer groups of one partition method.

Per model: max(t) of each placement, the MILP's status (proved optimal for
the layer groups, or best found with its bound and gap), and the CPU time
(user + sys of the partbench process, including the method and the 1-D
reference solve that every --place runs). Prints a Markdown table.

--link-gbs X runs on a copy of the layout whose links carry X GB/s (64 in
manycore-16-mesh.lua), so that routing weighs more in max(t).

--layout L picks the layout (default layouts/manycore-16-mesh.lua).

usage: bench/bench_mesh_place.py PARTBENCH MODEL... [--method M] [--place-time S] [--link-gbs X]
       [--layout L] [--agent FILE]
"""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(pb, model, lay, method, place, extra):
    c0 = cpu()
    r = subprocess.run([pb, "partition", model, "--layout", lay, "-m", method, "--place", place,
                        "--json"] + extra, capture_output=True, text=True)
    dt = cpu() - c0
    if r.returncode != 0:
        return None, dt, r.stderr.strip()[:100]
    return json.loads(r.stdout), dt, ""


def main():
    args = sys.argv[1:]
    method, secs, lay, gbs, agent = "exact", "60", "layouts/manycore-16-mesh.lua", None, None
    for opt in ("--method", "--place-time", "--link-gbs", "--layout", "--agent"):
        if opt in args:
            i = args.index(opt)
            if opt == "--method":
                method = args[i + 1]
            elif opt == "--place-time":
                secs = args[i + 1]
            elif opt == "--layout":
                lay = args[i + 1]
            elif opt == "--agent":
                agent = args[i + 1]
            else:
                gbs = args[i + 1]
            del args[i:i + 2]
    if agent is None:
        stem = os.path.splitext(os.path.basename(lay))[0]
        agent = os.path.join(os.path.dirname(lay), "..", "agents", stem + ".place.ckpt")
    pb, models = args[0], args[1:]
    what = lay
    if gbs is not None:
        text = re.sub(r"link_gbs = [0-9.e+]+", f"link_gbs = {float(gbs)}", open(lay).read())
        fd, lay = tempfile.mkstemp(suffix=".lua")
        os.write(fd, text.encode())
        os.close(fd)
        what += f" with link_gbs = {float(gbs)}"
    print(f"layer groups of `-m {method}`, {what}; rl: agent {agent}; MILP limit {secs} s "
          "(wall); CPU s = user + sys; rl vs MILP: the agent's max(t) over the MILP's "
          "proved optimum - 1")
    print()
    print("| model | groups | snake max(t) | local max(t) | rl max(t) | MILP max(t) | MILP status "
          "| MILP bound | MILP gap | rl vs MILP | CPU s snake / local / rl / milp |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for model in models:
        res = {}
        for place in ("snake", "local", "rl", "milp"):
            extra = (["--place-time", secs] if place == "milp" else
                     ["--place-agent", agent] if place == "rl" else [])
            res[place] = run(pb, model, lay, method, place, extra)
        if any(r[0] is None for k, r in res.items() if k != "milp"):
            errs = "; ".join(f"{k}: {v[2]}" for k, v in res.items() if v[0] is None)
            print(f"| {model} | error: {errs} ||||||||||")
            continue
        us = lambda x: f"{x * 1e6:.3f} us"
        j = res["milp"][0]
        rl = res["rl"][0]["max_time"]
        if j is None:
            mt, status, bound, gap, vs = "-", "refused: " + res["milp"][2][:60], "-", "-", "-"
        else:
            p = j["mesh"]["place"]
            mt = us(j["max_time"])
            status = "optimal (proved)" if p.get("exact") else "best found (time limit)"
            bound = us(p["bound"]) if p.get("bound") is not None else "none"
            gap = f"{100 * p['gap']:.3f}%" if p.get("gap") is not None else "-"
            vs = f"{100 * (rl / j['max_time'] - 1):+.3f}%" if p.get("exact") else "-"
        groups = len(res["snake"][0]["groups"])
        print(f"| {model} | {groups} | {us(res['snake'][0]['max_time'])} "
              f"| {us(res['local'][0]['max_time'])} | {us(rl)} | {mt} | {status} | {bound} "
              f"| {gap} | {vs} | {res['snake'][1]:.2f} / {res['local'][1]:.2f} / "
              f"{res['rl'][1]:.2f} / {res['milp'][1]:.2f} |")
        sys.stdout.flush()
    if gbs is not None:
        os.unlink(lay)


if __name__ == "__main__":
    main()
