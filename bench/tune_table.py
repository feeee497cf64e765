#!/usr/bin/env python3
"""tune_table.py [--default NAME | --prior] REPORT... - the strategy comparison of `kbench tune
--replay ... --strategy all` (its JSON, or the HTML page that embeds it; several reports
are merged, the aggregate score recomputed as the mean of the spaces' scores) as a markdown
table: per space and budget, the default strategy, random sampling (its exact median) and
the best other strategy (median best / optimum, runs within 5% of the optimum), then
whether the default met the bar of issue 25 (never worse than random sampling's median
from 1% to 10%; within 5% of the optimum in at least half the seeds at 3%) and the
aggregate scores. NAME: the strategy to judge (default: the best by aggregate score).
--prior: a report run with --prior estimate as a table of the evaluations each strategy
needed to come within 5% of the optimum, without and with the estimate."""
import json
import re
import sys


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


def merge(paths):
    docs = [load(p) for p in paths]
    spaces = [sp for d in docs for sp in d["spaces"]]
    names = list(spaces[0]["score"].keys())
    agg = {n: sum(sp["score"][n] for sp in spaces) / len(spaces) for n in names}
    best = max((n for n in names if n != "brute"), key=lambda n: agg[n])
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
    print(f"| space | budget | {default} | random sampling: exact median / its runs | best other | |")
    print("|---|---|---|---|---|---|")
    worse, worse_runs, half, spaces = [], [], 0, 0
    last = ""
    for sp in doc["spaces"]:
        name = f'{sp["problem"][:40]} {sp["device"][:28]} ({sp["space"]})'
        half_here = None
        for p in sp["points"]:
            d = row_of(p, default)
            others = [r for r in p["strategies"] if r["strategy"] not in (default, "brute", "random")]
            best = min(others, key=lambda r: (r["median_ratio"] if r["median_ratio"] is not None else 1e300,
                                              -r["runs_within_5pct"]))
            rnd = p["random_median_ratio"]
            runs = row_of(p, "random")
            flag = []
            if d["median_ratio"] is None or (rnd is not None and d["median_ratio"] > rnd * (1 + 1e-9)):
                flag.append("worse than the exact median")
                worse.append((name or last, p["budget_pct"]))
            if runs and (d["median_ratio"] is None or d["median_ratio"] > runs["median_ratio"] * (1 + 1e-9)):
                flag.append("worse than random's runs")
                worse_runs.append((name or last, p["budget_pct"]))
            if abs(p["budget_pct"] - 3) < 0.5:
                half_here = 2 * d["runs_within_5pct"] >= d["runs"]
            print(f'| {name} | {p["budget_pct"]:.3g}% | {ratio(d["median_ratio"])} ({d["runs_within_5pct"]}/{d["runs"]}) '
                  f'| {ratio(rnd)} / {ratio(runs["median_ratio"] if runs else None)} | {best["strategy"]} '
                  f'{ratio(best["median_ratio"])} ({best["runs_within_5pct"]}/{best["runs"]}) | {"; ".join(flag)} |')
            last = name or last
            name = ""
        spaces += 1
        half += bool(half_here)
    print()
    where = lambda w: (": " + "; ".join(f"{n.strip()} at {b:.3g}%" for n, b in w)) if w else ""
    print(f"{default}: median worse than random sampling's exact median at {len(worse)} (space, budget) points"
          + where(worse) + f"; worse than the median of random sampling's own runs (the same seeds) at "
          f"{len(worse_runs)}" + where(worse_runs)
          + f"; within 5% of the optimum in at least half the seeds at 3% on {half} of {spaces} spaces")
    print("aggregate score: " + ", ".join(f"{k} {v:.3f}" for k, v in
                                          sorted(doc["aggregate_score"].items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
