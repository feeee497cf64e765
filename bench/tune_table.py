#!/usr/bin/env python3
"""tune_table.py [--default NAME | --prior] REPORT... - the strategy comparison of `kbench tune
--replay ... --strategy all` (its JSON, or the HTML page that embeds it; several reports
are merged - reports of the same space, one strategy each, joined - the aggregate score
recomputed as the mean of the spaces' scores) as a markdown
table: per space and budget, the default strategy, random sampling (its exact median) and
the best other strategy (median best / optimum, runs within 5% of the optimum), then
whether the default met the bar of issue 25 (never worse than random sampling's median
from 1% to 10%; within 5% of the optimum in at least half the seeds at 3%), where its mean
best is worse than random sampling's exact expectation (the methodology's score at that
budget below 0), and the aggregate scores. NAME: the strategy to judge (default: the best by aggregate score).
--prior: a report run with --prior estimate as a table of the evaluations each strategy
needed to come within 5% of the optimum, without and with the estimate.
Noise: the default's median over a few seeds is a sample median. Its 95% percentile
bootstrap interval (the runs' `run_ratios` resampled BOOT times, a fixed seed per point)
is printed beside it; a point is "worse" (significantly) when the whole interval lies
above random sampling's exact median, and "worse in the point estimate" when the median
alone does. Both lists are printed. Random sampling needs no interval: its median is
exact (order statistics of sampling without replacement, tune/replay.c). A report made
before `run_ratios` has no interval: its points are judged by the median alone."""
import json
import random
import re
import sys

BOOT = 4000     # bootstrap resamples per point
LEVEL = 0.95    # two-sided coverage of the interval


def load(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="kbench-tune-report">\s*(.*?)\s*</script>', text, re.S)
    return json.loads(m.group(1) if m else text)


def row_of(point, name):
    for r in point["strategies"]:
        if r["strategy"] == name:
            return r
    return None


def ratio(x):
    return "none" if x is None else f"{x:.3f}"


def median(v):
    """The median of sorted v as kbench computes it (report.c: linear between the two
    middle values; a failed run, inf, is the largest and is not interpolated with)."""
    h = (len(v) - 1) / 2
    i = int(h)
    if i + 1 >= len(v) or v[i + 1] == float("inf"):
        return v[i]
    return v[i] + (h - i) * (v[i + 1] - v[i])


def median_ci(runs, key):
    """The percentile bootstrap interval (LEVEL) of the median of runs (best / optimum per
    seed, None for a run that found nothing), BOOT resamples from a seed fixed by key.
    None when the report holds no runs (made before run_ratios)."""
    if not runs:
        return None
    v = [float("inf") if x is None else x for x in runs]
    rng = random.Random(key)   # a str seed is hashed with SHA-512: the same in every run
    meds = sorted(median(sorted(rng.choice(v) for _ in v)) for _ in range(BOOT))
    lo = meds[int((1 - LEVEL) / 2 * BOOT)]
    hi = meds[min(BOOT - 1, int((1 + LEVEL) / 2 * BOOT))]
    return lo, hi


def interval(ci):
    return "" if ci is None else f" [{ratio(ci[0]) if ci[0] != float('inf') else 'none'}, " \
                                 f"{ratio(ci[1]) if ci[1] != float('inf') else 'none'}]"


def other(r):
    return "none" if r is None else f'{r["strategy"]} {ratio(r["median_ratio"])} ({r["runs_within_5pct"]}/{r["runs"]})'


def merge(paths):
    """The spaces of every report; reports of the same space (one strategy each, run
    apart) are joined into one, their rows side by side at each budget."""
    docs = [load(p) for p in paths]
    spaces, by_key = [], {}
    for sp in (sp for d in docs for sp in d["spaces"]):
        key = (sp["problem"], sp["device"], sp["space"])
        if key not in by_key:
            by_key[key] = sp
            spaces.append(sp)
            continue
        have = by_key[key]
        for p, q in zip(have["points"], sp["points"]):
            assert abs(p["budget_pct"] - q["budget_pct"]) < 1e-9, "reports with different budgets"
            names = {r["strategy"] for r in p["strategies"]}
            p["strategies"] += [r for r in q["strategies"] if r["strategy"] not in names]
        for k in ("score", "evaluations_to_5pct"):
            have[k].update({n: v for n, v in sp[k].items() if n not in have[k]})
    names = sorted({n for sp in spaces for n in sp["score"]})
    agg = {n: sum(sp["score"][n] for sp in spaces if n in sp["score"]) / len(spaces)
           for n in names if all(n in sp["score"] for sp in spaces)}
    best = max((n for n in agg if n != "brute"), key=lambda n: agg[n])
    return {"spaces": spaces, "aggregate_score": agg, "best_by_aggregate_score": best}


def prior_table(doc):
    """Evaluations to within 5% of the optimum, each strategy without and with the prior."""
    print("| space | strategy | evaluations to 5% (median) | with --prior estimate | runs reaching 5% without / with |")
    print("|---|---|---|---|---|")
    for sp in doc["spaces"]:
        name = f'{sp["problem"][:48]} ({sp["space"]})'
        e = sp["evaluations_to_5pct"]
        for k, v in e.items():
            if "+" in k or k + "+estimate" not in e:
                continue
            w = e[k + "+estimate"]
            fmt = lambda x: "beyond the budget" if x["median"] is None else f'{x["median"]:.1f}'
            print(f'| {name} | {k} | {fmt(v)} | {fmt(w)} | {v["reached"]}/{v["runs"]} / {w["reached"]}/{w["runs"]} |')
            name = ""


def main():
    args = sys.argv[1:]
    if args[:1] == ["--prior"]:
        prior_table(merge(args[1:]))
        return
    default = None
    if args[:1] == ["--default"]:
        default, args = args[1], args[2:]
    doc = merge(args)
    default = default or doc["best_by_aggregate_score"]
    print(f"| space | budget | {default}: median [{LEVEL:.0%} interval] (runs within 5%) "
          f"| random sampling: exact median / its runs | best other | |")
    print("|---|---|---|---|---|---|")
    worse, worse_point, worse_runs, worse_mean, half, spaces = [], [], [], [], 0, 0
    last = ""
    for sp in doc["spaces"]:
        name = f'{sp["problem"][:40]} {sp["device"][:28]} ({sp["space"]})'
        half_here = None
        for p in sp["points"]:
            d = row_of(p, default)
            others = [r for r in p["strategies"] if r["strategy"] not in (default, "brute", "random")]
            best = min(others, key=lambda r: (r["median_ratio"] if r["median_ratio"] is not None else 1e300,
                                              -r["runs_within_5pct"])) if others else None
            rnd = p["random_median_ratio"]
            runs = row_of(p, "random")
            flag = []
            ci = median_ci(d.get("run_ratios"), f'{sp["problem"]}|{sp["device"]}|{sp["space"]}|{p["budget_pct"]:.6g}')
            above = lambda x: x is None or x == float("inf") or (rnd is not None and x > rnd * (1 + 1e-9))
            if above(d["median_ratio"]) and (ci is None or above(ci[0])):
                flag.append("worse than the exact median" + ("" if ci is None else " (significant)"))
                worse.append((name or last, p["budget_pct"]))
            elif above(d["median_ratio"]):
                flag.append("worse than the exact median in the point estimate, not significant")
                worse_point.append((name or last, p["budget_pct"]))
            if runs and (d["median_ratio"] is None or d["median_ratio"] > runs["median_ratio"] * (1 + 1e-9)):
                flag.append("worse than random's runs")
                worse_runs.append((name or last, p["budget_pct"]))
            if d["score"] < 0:   # its mean best against random sampling's exact expectation
                flag.append("mean worse than random's expectation")
                worse_mean.append((name or last, p["budget_pct"]))
            if abs(p["budget_pct"] - 3) < 0.5:
                half_here = 2 * d["runs_within_5pct"] >= d["runs"]
            print(f'| {name} | {p["budget_pct"]:.3g}% | {ratio(d["median_ratio"])}{interval(ci)} ({d["runs_within_5pct"]}/{d["runs"]}) '
                  f'| {ratio(rnd)} / {ratio(runs["median_ratio"] if runs else None)} | {other(best)} | {"; ".join(flag)} |')
            last = name or last
            name = ""
        spaces += 1
        half += bool(half_here)
    print()
    where = lambda w: (": " + "; ".join(f"{n.strip()} at {b:.3g}%" for n, b in w)) if w else ""
    print(f"{default}: median worse than random sampling's exact median at {len(worse)} (space, budget) points"
          f" with its whole {LEVEL:.0%} interval above it" + where(worse)
          + f"; in the point estimate only (the interval reaching random's median) at {len(worse_point)}"
          + where(worse_point) + f"; worse than the median of random sampling's own runs (the same seeds) at "
          f"{len(worse_runs)}" + where(worse_runs)
          + f"; mean best worse than random sampling's exact expectation at {len(worse_mean)}" + where(worse_mean)
          + f"; within 5% of the optimum in at least half the seeds at 3% on {half} of {spaces} spaces")
    print("aggregate score: " + ", ".join(f"{k} {v:.3f}" for k, v in
                                          sorted(doc["aggregate_score"].items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
