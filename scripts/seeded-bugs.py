#!/usr/bin/env python3
"""Seeded kernel bugs: each mutation of tests/seeded_bugs/mutations.json is applied to a
copy of kernels/, and the family's check suite (tests/suites/<suite>.yaml, filtered) is run
on the emulator with a random schedule and the race and init checks. A mutation is caught
when kbench exits 1 with a case that ran and failed (wrong, fault, timeout, launch or input
error). A mutation whose module does not compile (a compile error: kernel warnings are errors
on the emulator) proves nothing about the checks and is an error. Exit 0 when every mutation
is caught, 1 when one escaped, 2 when one no longer applies (kernels/ changed: update the
list) or does not compile.
A mutation may name an "arch" (sm_90a for gemm/wgmma): the suite then runs with --arch.
The run stops at the first case that fails (--max-fail 1): one is proof enough.

usage: scripts/seeded-bugs.py [--kbench PATH] [--only NAME ...] [--list] [-j N]
-j N runs N mutations at a time (each in its own copy of kernels/, one compile cache).
Standard library only."""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def apply(kernels, m):
    path = os.path.join(kernels, m["file"])
    with open(path) as f:
        text = f.read()
    for find, repl in m["edits"]:
        n = text.count(find)
        if n != 1:
            return "edit %r occurs %d times in %s (must be once)" % (find[:60], n, m["file"])
        text = text.replace(find, repl)
    with open(path, "w") as f:
        f.write(text)
    return None


def first_failure(records):
    """(status, "id: status reason") of the first case that ran and failed, else of the first
    that did not compile, else (None, None)."""
    compile_error = (None, None)
    with open(records) as f:
        for line in f:
            r = json.loads(line)
            if r.get("status") in ("ok", "skipped"):
                continue
            got = r.get("status"), "%s: %s %s" % (r.get("case_id"), r.get("status"), (r.get("reason") or "")[:160])
            if got[0] != "compile_error":
                return got
            compile_error = compile_error if compile_error[0] else got
    return compile_error


def run_one(kbench, m, work, cache):
    work = os.path.join(work, m["name"])
    os.makedirs(work, exist_ok=True)
    kernels = os.path.join(work, "kernels")
    shutil.rmtree(kernels, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "kernels"), kernels)
    err = apply(kernels, m)
    if err:
        return "stale", err
    out = os.path.join(work, m["name"] + ".jsonl")
    argv = [kbench, "run", os.path.join(ROOT, "tests", "suites", m["suite"] + ".yaml"), "--backend", "emu",
            "--emu-schedule", "random:1", "--emu-check", "race,init", "--quiet", "--out", out,
            "--min-samples", "1", "--max-samples", "1", "--timeout", "0.01", "--max-fail", "1"]
    for f in m.get("filter", []):
        argv += ["--filter", f]
    if m.get("arch"):
        argv += ["--arch", m["arch"]]
    env = dict(os.environ, KBENCH_KERNELS_DIR=kernels, KBENCH_CACHE_DIR=cache)
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode == 1 and os.path.exists(out):
        status, why = first_failure(out)
        if status == "compile_error":
            return "error", "the mutation does not compile: " + why
        if why:
            return "caught", why
    if p.returncode in (0, 1):
        return "escaped", "every case passed"
    return "error", "kbench exited %d: %s" % (p.returncode, p.stdout.strip().splitlines()[-1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kbench", default=os.path.join(ROOT, "build", "kbench"))
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    a = ap.parse_args()
    with open(os.path.join(ROOT, "tests", "seeded_bugs", "mutations.json")) as f:
        muts = json.load(f)["mutations"]
    if a.only:
        muts = [m for m in muts if m["name"] in a.only]
    if a.list or not muts:
        for m in muts:
            print("%-32s %s" % (m["name"], m["why"]))
        return 0 if muts else 2
    results = {}
    with tempfile.TemporaryDirectory(prefix="kbench-seeded-") as work:
        cache = os.path.join(work, "cache")

        def one(m):
            t0 = time.time()
            verdict, detail = run_one(a.kbench, m, work, cache)
            return m, verdict, detail, time.time() - t0

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            for m, verdict, detail, secs in pool.map(one, muts):
                results[verdict] = results.get(verdict, 0) + 1
                print("%-8s %-32s %5.1f s  %s" % (verdict, m["name"], secs, detail), flush=True)
    print("%d mutations: %s" % (len(muts), ", ".join("%d %s" % (n, v) for v, n in sorted(results.items()))))
    if results.get("stale") or results.get("error"):
        return 2
    return 1 if results.get("escaped") else 0


if __name__ == "__main__":
    sys.exit(main())
