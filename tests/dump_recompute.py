#!/usr/bin/env python3
"""dump_recompute.py KBENCH - run tests/suites/dump_families.yaml on the emulator with
`--dump` (one case per family, awkward sizes, padding, alpha/beta, fp8 scales), then recompute
every case from its dump alone with numpy (Debian's python3-numpy) and compare with the dumped
reference; also check that the kernel's output passed and that the record's `constants` equal the
dump's constants.json. Exit 0 when every family recomputes, 1 otherwise, 77 (CTest: skipped)
without numpy."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("python3-numpy is not installed: skipped")
    sys.exit(77)

SUITE = "tests/suites/dump_families.yaml"


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def gemm(d, rec, k):
    a, b = d["a"].astype(np.float64), d["b"].astype(np.float64)
    out = k["alpha"] * a @ b
    if k["beta"] != 0:
        out += k["beta"] * d["c"]
    per_tensor = (rec.get("params") or {}).get("scale", "tensor") == "tensor"
    if rec["dtype"].startswith("fp8") and per_tensor:   # a and b are q x scale: q must be the format's values
        q = d["a"] / k["scale_a"]
        assert np.abs(q).max() <= 448 and k["scale_a"] != 1, "fp8 operand not scaled into range"
    return out[d["rows"].astype(int)], d["ref"]


def attention(d, rec, k):
    q, kk, v = (d[n].astype(np.float64) for n in ("q", "k", "v"))
    if rec["variant"] == "decode":   # Q [b, h, q_len, d] against K, V [b, h / group, s, d]
        kk, v = (np.repeat(x, int(k["group"]), axis=1) for x in (kk, v))
    s = q @ np.swapaxes(kk, -1, -2) * k["scale"]
    if k["causal"]:   # aligned bottom-right: query row i of m sees keys j <= n - m + i
        m, n = s.shape[-2], s.shape[-1]
        s = np.where(np.tril(np.ones((m, n), bool), k=n - m), s, -np.inf)
    o = softmax(s) @ v
    return o.reshape(-1, o.shape[-1])[d["rows"].astype(int)], d["ref"]


def softmax_case(d, rec, k):
    cols = rec["dims"]["cols"]
    return softmax(d["x"][:, :cols].astype(np.float64)), d["ref"][:, :cols]


def embedding(d, rec, k):
    dim = rec["dims"]["dim"]
    return d["table"][d["ids"].astype(int)][:, :dim], d["ref"][:, :dim]


def layernorm(d, rec, k):
    cols = rec["dims"]["cols"]
    x = d["x"][:, :cols].astype(np.float64)
    if rec["params"]["kind"] == "rmsnorm":
        y = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + k["eps"]) * d["gamma"]
    else:
        mu = x.mean(axis=1, keepdims=True)
        y = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True) + k["eps"]) * d["gamma"] + d["beta"]
    return y, d["ref"][:, :cols]


def gelu(d, rec, k):
    x = d["x"].astype(np.float64)
    assert rec["params"]["form"] == "tanh"
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), d["ref"]


FAMILIES = {"gemm": gemm, "attention": attention, "softmax": softmax_case, "embedding": embedding,
            "layernorm": layernorm, "gelu": gelu}


def check_case(rec, folder):
    d = {f[:-4]: np.load(os.path.join(folder, f)) for f in os.listdir(folder) if f.endswith(".npy")}
    kpath = os.path.join(folder, "constants.json")
    k = json.load(open(kpath)) if os.path.exists(kpath) else {}
    if (rec.get("constants") or {}) != k:
        return "record constants %s != dump %s" % (rec.get("constants"), k)
    got, want = FAMILIES[rec["family"]](d, rec, k)
    scale = max(1e-30, float(np.abs(want).max()))
    err = float(np.abs(got - want).max()) / scale
    # the reference is the double result rounded to fp32: a relative 1e-6 covers that rounding
    if not err <= 1e-5:
        return "recomputed differs from ref by %.3g (relative to its largest value)" % err
    if rec["status"] != "ok":
        return "status %s" % rec["status"]
    return None


def main():
    kbench = sys.argv[1] if len(sys.argv) > 1 else "build/kbench"
    with tempfile.TemporaryDirectory() as tmp:
        records = os.path.join(tmp, "run.jsonl")
        dump = os.path.join(tmp, "dump")
        subprocess.run([kbench, "run", SUITE, "--backend", "emu", "--out", records, "--dump", dump, "--filter", "/",
                        "--quiet"], check=True)
        recs = [json.loads(l) for l in open(records)]
        seen, failed = set(), 0
        for rec in recs:
            folder = os.path.join(dump, rec["case_id"].replace("/", "__"))
            problem = check_case(rec, folder)
            seen.add(rec["family"])
            print("%s %s%s" % ("FAIL" if problem else "ok  ", rec["case_id"], ": " + problem if problem else ""))
            failed |= problem is not None
        missing = set(FAMILIES) - seen
        if missing:
            print("FAIL: no case of %s in %s" % (", ".join(sorted(missing)), SUITE))
            failed = 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
