#!/usr/bin/env python3
"""rl_pool.py — pool bench_partition_rl seed logs and give every row's verdict.

    python3 bench/rl_pool.py LOG [LOG...]

A seed log (bench_partition_rl --seed-log FILE) has one line per run and
seed: "layout model agent seed ratio final-best-episode run-gap
old-run-gap" (before the thirteenth run of bench/RESULTS.md, without the
last field). Runs of
one table split over processes (--only) or over seeds (--first-seed) pool
here. For every (layout, model) and agent (shipped, loo, and frozen:
bench_partition_rl --frozen, a fresh network that never learns) it prints, over
the seeds that agent and the fresh agent both ran (paired: a seed gives the
same run), the mean final ratio to the optimum (and the worst), the mean
episode at which the final best was reached, the mean run gap (the mean
over the run's episodes of the held plan's max(t) / optimum - 1, in %: the
first episode holds the start, or a loaded agent's rollout plan once its
rollout's share of the episode has passed), and the
verdict of bench_partition_rl: "better" when the mean final ratio is lower
to 4 digits, or, equal to 4 digits, when the mean run gap is lower; with
the paired difference of the run gaps and its standard error. A seed that
appears twice for one agent and row is an error (two runs were mixed).
When every line has the old run gap (the mean of best-so-far / optimum - 1
after each episode, which left out the first episode's held plan), the
verdicts under it are printed too, so both rules can be read side by side.
"""
import math
import sys
from collections import defaultdict


def load(paths):
    runs = defaultdict(dict)  # (layout, model, agent) -> seed -> (ratio, ep, gap[, old gap])
    for path in paths:
        try:
            lines = open(path).read().splitlines()
        except OSError as e:
            sys.exit(f"rl_pool: {path}: {e.strerror}")
        for no, line in enumerate(lines, 1):
            f = line.split()
            if not f:
                continue
            if len(f) not in (7, 8):
                sys.exit(f"rl_pool: {path}:{no}: expected 7 or 8 fields (layout model agent "
                         f"seed ratio final-best-episode run-gap [old-run-gap]), got {len(f)}")
            try:
                seed, ratio, ep = int(f[3]), float(f[4]), int(f[5])
                gaps = tuple(float(x) for x in f[6:])
            except ValueError:
                sys.exit(f"rl_pool: {path}:{no}: not a number in {line!r}")
            key = (f[0], f[1], f[2])
            if seed in runs[key]:
                sys.exit(f"rl_pool: {path}:{no}: seed {seed} of {f[2]} on {f[0]} {f[1]} "
                         "is already in a log")
            runs[key][seed] = (ratio, ep) + gaps
    return runs


def compare(a, f, g=2):
    """Verdict of agent runs a against fresh runs f (dicts seed -> run) on
    run gap field g (2: the run gap, 3: the old one)."""
    seeds = sorted(set(a) & set(f))
    n = len(seeds)
    mean = lambda d, i: sum(d[s][i] for s in seeds) / n
    ra, rf = round(mean(a, 0) * 1e4), round(mean(f, 0) * 1e4)
    diffs = [a[s][g] - f[s][g] for s in seeds]
    d = sum(diffs) / n
    se = math.sqrt(sum((x - d) ** 2 for x in diffs) / (n - 1) / n) if n > 1 else float("nan")
    if ra != rf:
        v = "better" if ra < rf else "worse"
    elif d != 0:
        v = "better (run gap)" if d < 0 else "worse (run gap)"
    else:
        v = "tie"
    return n, v, d, se


def cell(d, seeds):
    n = len(seeds)
    ratio = sum(d[s][0] for s in seeds) / n
    worst = max(d[s][0] for s in seeds)
    ep = sum(d[s][1] for s in seeds) / n
    gap = sum(d[s][2] for s in seeds) / n
    return f"{ratio:.4f} ({worst:.4f}) @ {ep:.0f}; {100 * gap:.4f}%"


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 1
    runs = load(argv[1:])
    rows = sorted({(k[0], k[1]) for k in runs})
    counts = defaultdict(lambda: [0, 0, 0])
    has_old = all(len(r) == 4 for d in runs.values() for r in d.values())
    print("| layout | model | agent | seeds | fresh: ratio (worst) @ final-best ep; run gap "
          "| agent: ratio (worst) @ ep; run gap | verdict | run gap diff ± se |"
          + (" old run gap: verdict, diff ± se |" if has_old else ""))
    print("|---|---|---|---|---|---|---|---|" + ("---|" if has_old else ""))
    for lay, model in rows:
        fresh = runs.get((lay, model, "fresh"))
        for agent in ("shipped", "loo", "frozen"):
            mine = runs.get((lay, model, agent))
            if not fresh or not mine or not set(fresh) & set(mine):
                continue
            n, v, d, se = compare(mine, fresh)
            seeds = sorted(set(mine) & set(fresh))
            old = ""
            if has_old:
                _, v1, d1, se1 = compare(mine, fresh, 3)
                old = f" {v1}, {100 * d1:+.4f}% ± {100 * se1:.4f} |"
                counts[agent][2] += v1.startswith("better")
            print(f"| {lay} | {model} | {agent} | {n} | {cell(fresh, seeds)} | "
                  f"{cell(mine, seeds)} | {v} | {100 * d:+.4f}% ± {100 * se:.4f} |{old}")
            counts[agent][0] += v.startswith("better")
            counts[agent][1] += 1
    for agent, (b, t, old) in counts.items():
        print(f"\n{agent} better than fresh on {b} of {t} rows")
        if has_old:
            print(f"{agent} better than fresh on {old} of {t} rows under the old run gap")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
