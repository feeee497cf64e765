#!/usr/bin/env python3
"""The counts the docs quote match what the code reports (CTest: doc_counts):

- README.md "`llm.yaml`: N cases": the count `kbench list suites/llm.yaml` reports;
- README.md "N kinds of kernel bug", docs/architecture.md "N seeded bugs": the mutations
  of tests/seeded_bugs/mutations.json, which scripts/seeded-bugs.py applies;
- docs/acceptance.md's cases of the kernel check suites: the sum of `kbench list` over
  tests/suites/kernels_<family>.yaml (what accept --check-suites runs).

A count may be written in digits or words ("twenty-one"). A quote that is no longer found
is an error too, so rewording a sentence cannot turn the check off silently.
Exit 0 when every quote agrees, 1 naming file:line, the quoted and the actual count.

usage: scripts/check-counts.py [--kbench PATH]
Standard library only."""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
         "fifteen sixteen seventeen eighteen nineteen").split()
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER = r"(\d[\d,]*|(?:%s)(?:-(?:%s))?|%s)" % ("|".join(TENS), "|".join(UNITS[1:10]), "|".join(UNITS))


def number(text):
    """12, 1,238, 'seventeen', 'twenty-one' -> int."""
    t = text.lower().replace(",", "")
    if t.isdigit():
        return int(t)
    if t in UNITS:
        return UNITS.index(t)
    tens, _, unit = t.partition("-")
    return 10 * (TENS.index(tens) + 2) + (UNITS.index(unit) if unit else 0)


def listed(kbench, suite):
    """The case count `kbench list SUITE` reports on its summary line."""
    p = subprocess.run([kbench, "list", suite], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       cwd=ROOT)
    m = re.search(r"^(\d+) cases", p.stderr, re.M)
    if p.returncode != 0 or not m:
        sys.exit("check-counts: kbench list %s exited %d: %s" % (suite, p.returncode, p.stderr.strip()))
    return int(m.group(1))


def check(path, pattern, actual, what):
    """Every match of pattern (its group 1 a count) in path must say actual; at least one must
    be there. Returns the problems."""
    problems, found = [], 0
    text = open(os.path.join(ROOT, path)).read()
    for m in re.finditer(pattern, text, re.S):
        found += 1
        line = text.count("\n", 0, m.start(1)) + 1
        if number(m.group(1)) != actual:
            problems.append("%s:%d: says %s %s, the code reports %d" % (path, line, m.group(1), what, actual))
    if not found:
        problems.append("%s: no count of %s found (pattern %s): the check would pass for nothing" %
                        (path, what, pattern))
    return problems


def main():
    assert [number(w) for w in ("seventeen", "twenty-one", "1,238", "40")] == [17, 21, 1238, 40]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kbench", default=os.path.join(ROOT, "build", "kbench"))
    a = ap.parse_args()
    with open(os.path.join(ROOT, "tests", "seeded_bugs", "mutations.json")) as f:
        bugs = len(json.load(f)["mutations"])
    llm = listed(a.kbench, "suites/llm.yaml")
    families = [s for s in sorted(glob.glob(os.path.join(ROOT, "tests", "suites", "kernels_*.yaml")))
                if "_" not in os.path.basename(s)[len("kernels_"):-len(".yaml")]]
    checks = sum(listed(a.kbench, s) for s in families)
    problems = []
    problems += check("README.md", r"`llm\.yaml`: %s\s+cases" % NUMBER, llm, "cases in llm.yaml")
    problems += check("README.md", r"\b%s\s+kinds\s+of\s+kernel\s+bug" % NUMBER, bugs, "seeded bugs")
    problems += check("docs/architecture.md", r"\b%s\s+seeded\s+bugs" % NUMBER, bugs, "seeded bugs")
    problems += check("docs/acceptance.md", r"kernels_<family>\.yaml`[^:]*:\s*%s\s+cases" % NUMBER, checks,
                      "cases in the kernel check suites")
    for p in problems:
        print(p)
    print("check-counts: llm.yaml %d cases, %d seeded bugs, %d cases in %d kernel check suites: %d problems" %
          (llm, bugs, checks, len(families), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
