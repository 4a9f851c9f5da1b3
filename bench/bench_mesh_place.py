#!/usr/bin/env python3
"""bench_mesh_place.py — placement methods for the same layer groups on a 4x4
routed mesh (docs/mesh.md): snake, local search, and the placement MILP
(--place milp, a time limit), for the layer groups of one partition method.

Per model: max(t) of each placement, the MILP's status (proved optimal for
the layer groups, or best found with its bound and gap), and the CPU time
(user + sys of the partbench process, including the method and the 1-D
reference solve that every --place runs). Prints a Markdown table.

--link-gbs X runs on a copy of the layout whose links carry X GB/s (64 in
manycore-16-mesh.lua), so that routing weighs more in max(t).

usage: bench/bench_mesh_place.py PARTBENCH MODEL... [--method M] [--place-time S] [--link-gbs X]
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
    method, secs, lay, gbs = "exact", "60", "layouts/manycore-16-mesh.lua", None
    for opt in ("--method", "--place-time", "--link-gbs"):
        if opt in args:
            i = args.index(opt)
            if opt == "--method":
                method = args[i + 1]
            elif opt == "--place-time":
                secs = args[i + 1]
            else:
                gbs = args[i + 1]
            del args[i:i + 2]
    pb, models = args[0], args[1:]
    what = lay
    if gbs is not None:
        text = re.sub(r"link_gbs = [0-9.e+]+", f"link_gbs = {float(gbs)}", open(lay).read())
        fd, lay = tempfile.mkstemp(suffix=".lua")
        os.write(fd, text.encode())
        os.close(fd)
        what += f" with link_gbs = {float(gbs)}"
    print(f"layer groups of `-m {method}`, {what}; MILP limit {secs} s (wall); "
          "CPU s = user + sys")
    print()
    print("| model | groups | snake max(t) | local max(t) | MILP max(t) | MILP status | MILP bound "
          "| MILP gap | CPU s snake / local / milp |")
    print("|---|---|---|---|---|---|---|---|---|")
    for model in models:
        res = {}
        for place in ("snake", "local", "milp"):
            extra = ["--place-time", secs] if place == "milp" else []
            res[place] = run(pb, model, lay, method, place, extra)
        if any(r[0] is None for r in res.values()):
            errs = "; ".join(f"{k}: {v[2]}" for k, v in res.items() if v[0] is None)
            print(f"| {model} | error: {errs} ||||||||")
            continue
        j = res["milp"][0]
        p = j["mesh"]["place"]
        us = lambda x: f"{x * 1e6:.3f} us"
        status = "optimal (proved)" if p.get("exact") else "best found (time limit)"
        bound = us(p["bound"]) if p.get("bound") is not None else "none"
        gap = f"{100 * p['gap']:.3f}%" if p.get("gap") is not None else "-"
        print(f"| {model} | {len(j['groups'])} | {us(res['snake'][0]['max_time'])} "
              f"| {us(res['local'][0]['max_time'])} | {us(j['max_time'])} | {status} | {bound} "
              f"| {gap} | {res['snake'][1]:.2f} / {res['local'][1]:.2f} / {res['milp'][1]:.2f} |")
        sys.stdout.flush()
    if gbs is not None:
        os.unlink(lay)


if __name__ == "__main__":
    main()
