#!/usr/bin/env python3
"""records_to_kt.py RECORDS FILTER OUT [RECORDS_OUT] - one problem of kbench records (a
`kbench tune --strategy brute` sweep) as a Kernel Tuner cache, and optionally the records
reduced to the fields `kbench tune --replay` reads (for --prior estimate).

FILTER: a text the records' case ids must contain (one problem, e.g. "gemm/" plus
"layout=nt" and "fp16/16x64x64": give them comma-separated, all must match). The cache's
tune_params_keys are the variant and every upper-case (tile) param the records hold
("-" where a param does not apply to a variant); `time` is the median in ms, or
InvalidConfig for a skipped configuration (refused before it ran), CompilationFailedConfig
or RuntimeFailedConfig for a failed one; compile_time is compile_ms and benchmark_time
wall_ms - compile_ms [ms]. A re-measured case counts once (its first record). OUT and
RECORDS_OUT ending in .gz are gzip-compressed."""
import gzip
import json
import sys

KEEP = ("schema_version", "run_id", "case_id", "family", "variant", "dtype", "dims", "params", "pad", "launch",
        "check_shape", "device", "status", "compile_ms", "wall_ms")


def opener(path, mode):
    return gzip.open(path, mode, encoding="utf-8") if path.endswith(".gz") else open(path, mode, encoding="utf-8")


def main():
    src, flt, dst = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
    recs, seen = [], set()
    with opener(src, "rt") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            cid = r.get("case_id", "")
            if all(t in cid for t in flt) and cid not in seen:
                seen.add(cid)
                recs.append(r)
    keys = ["variant"]
    for r in recs:
        for k, v in r["params"].items():
            if (k[:1].isupper() or k == "algo") and not isinstance(v, str) and k not in keys:
                keys.append(k)
    values = {k: [] for k in keys}
    cache = {}
    for r in recs:
        row = {"variant": r["variant"]}
        for k in keys[1:]:
            row[k] = r["params"].get(k, "-")
        for k in keys:
            if row[k] not in values[k]:
                values[k].append(row[k])
        st = r["status"]
        if st == "ok":
            t = round(r["timing"]["median_us"] / 1000.0, 9)
        elif st == "skipped":
            t = "InvalidConfig"
        elif st == "compile_error":
            t = "CompilationFailedConfig"
        else:
            t = "RuntimeFailedConfig"
        row["time"] = t
        comp = float(r.get("compile_ms") or 0.0)
        row["compile_time"] = round(comp, 3)
        row["verification_time"] = 0
        row["benchmark_time"] = round(max(float(r.get("wall_ms") or 0.0) - comp, 0.0), 3)
        cache[",".join(str(row[k]) for k in keys)] = row
    first = recs[0]
    doc = {"schema_version": "1.0.0", "device_name": first["device"]["name"],
           "kernel_name": "kbench " + first["case_id"].split("/")[0] + " " + ",".join(flt) + " (emulator: CPU timings)",
           "problem_size": list(first["dims"].values()), "tune_params_keys": keys, "tune_params": values,
           "objective": "time", "cache": cache}
    with opener(dst, "wt") as f:
        f.write(json.dumps(doc, separators=(",", ":")) + "\n")
    if len(sys.argv) > 4:
        with opener(sys.argv[4], "wt") as f:
            for r in recs:
                o = {k: r[k] for k in KEEP if k in r}
                o["timing"] = {k: r["timing"][k] for k in ("clock", "median_us", "noise") if r.get("timing") and k in r["timing"]} if r.get("timing") else None
                f.write(json.dumps(o, separators=(",", ":")) + "\n")
    print(f"{dst}: {len(cache)} configurations, {len(keys)} axes", file=sys.stderr)


if __name__ == "__main__":
    main()
