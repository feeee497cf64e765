#!/usr/bin/env python3
"""strip.py IN OUT - a Kernel Tuner cache file reduced to what replay reads.

Keeps the header (device_name, kernel_name, problem_size, tune_params_keys, tune_params,
objective) and, per cache entry, the parameter values, "time" (ms, 6 significant digits,
or its error string) and the five time keys of Willemsen et al.'s methodology
(compile_time, verification_time, benchmark_time, framework_time, strategy_time; ms, 4
significant digits). Drops the per-repeat "times" (benchmark_time is their sum already),
observers (GFLOP/s, GB/s) and timestamps. Nothing is added or changed otherwise: the
result is still a Kernel Tuner cache file. OUT ending in .gz is gzip-compressed.
"""
import gzip
import json
import sys

HEADER = ("schema_version", "device_name", "kernel_name", "problem_size", "tune_params_keys", "tune_params",
          "objective")
TIMES = ("compile_time", "verification_time", "benchmark_time", "framework_time", "strategy_time")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # Kernel Tuner was still appending: close it
        return json.loads(text.rstrip().rstrip(",") + "}}")


def sig(x, digits):
    return float(f"{x:.{digits}g}") if isinstance(x, (int, float)) and not isinstance(x, bool) else x


def main():
    src, dst = sys.argv[1], sys.argv[2]
    d = load(src)
    keys = d["tune_params_keys"]
    out = {k: d[k] for k in HEADER if k in d}
    cache = {}
    for key, e in d["cache"].items():
        r = {k: e[k] for k in keys}
        r["time"] = sig(e["time"], 6)
        for t in TIMES:
            if t in e:
                r[t] = sig(e[t], 4)
        cache[key] = r
    out["cache"] = cache
    text = json.dumps(out, separators=(",", ":"))
    opener = gzip.open if dst.endswith(".gz") else open
    with opener(dst, "wt", encoding="utf-8") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
