#!/usr/bin/env python3
"""make_runs.py - writes the recorded runs the report, store and compare tests read.

TEST DATA, NOT MEASUREMENTS. The "TEST-GPU" runs are invented numbers for a device
that does not exist, written in the record format of harness/results/record.h (schema 1), so
that every report path (roofline, precision comparison, failures, compare) has input
on a machine without a GPU. The emulator run imitates what `kbench run` writes with
--backend emu (CPU times, no derived block, as records written before it existed).

Run from the repository root: python3 tests/data/make_runs.py  (deterministic output)
"""
import json
import math
import random
import re

# Ceilings of the fictitious TEST-GPU (clock-based, as for a GPU not in data/peaks.json).
PEAK_TFLOPS = {"fp32": 60.0, "tf32": 480.0, "fp16": 960.0, "bf16": 960.0,
               "int8": 1920.0, "fp8e4m3": 1920.0, "fp8e5m2": 1920.0}
PEAK_GBPS = 3000.0
SIZE = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "int8": 1, "fp8e4m3": 1, "fp8e5m2": 1}

GPU_DEV = {"name": "TEST-GPU", "uuid": "GPU-00000000-test-0000-0000-000000000000",
           "pci_bus_id": "00000000:01:00.0", "sm": 90, "emulator": False}
EMU_DEV = {"name": "kbench emulator (sm_90)", "uuid": "emu", "pci_bus_id": "", "sm": 90,
           "emulator": True}


def quantile(xs, q):
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def timing(rng, median, n, clock, spread=0.01):
    xs = [round(median * (1 + rng.gauss(0, spread)), 4) for _ in range(n)]
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    med = quantile(xs, 0.5)
    return {"clock": clock, "samples": n, "median_us": med, "mean_us": mean,
            "min_us": min(xs), "max_us": max(xs), "p10_us": quantile(xs, 0.1),
            "p90_us": quantile(xs, 0.9), "cv": sd / mean,
            "noise": 1.2533 * sd / math.sqrt(n) / med, "timed_out": False, "samples_us": xs}


def derived(work, median_us, dtype, clock, gpu):
    flops, nbytes = work["flops"], work["bytes_read"] + work["bytes_written"]
    d = {"clock": clock, "tflops": flops / median_us / 1e6, "gbps": nbytes / median_us / 1e3,
         "ai": flops / nbytes if nbytes else 0.0, "bound": None, "roof_tflops": None,
         "pct_roof": None, "peak_tflops": None, "peak_gbps": None, "peak_source": None}
    if flops == 0:
        d["bound"] = "memory"
    if gpu:
        peak = PEAK_TFLOPS[dtype]
        slope = d["ai"] * PEAK_GBPS / 1e3
        if flops > 0 and slope >= peak:
            d.update(bound="compute", roof_tflops=peak, pct_roof=100 * d["tflops"] / peak)
        else:
            d.update(bound="memory", roof_tflops=slope, pct_roof=100 * d["gbps"] / PEAK_GBPS)
        d.update(peak_tflops=peak, peak_gbps=PEAK_GBPS, peak_source="clock")
    return d


def record(run_id, when, case_id, family, variant, dtype, dims, params, dev, backend,
           status="ok", error="ok", reason=None, verify=None, tim=None, work=None,
           der=None, log=None, launch="eager", resources=None):
    return {"schema_version": 1, "run_id": run_id, "time": when, "case_id": case_id,
            "family": family, "variant": variant, "dtype": dtype, "dims": dims,
            "params": params, "pad": 0, "launch": launch, "seed": 1234,
            "check_shape": dev["emulator"], "backend": backend, "device": dev,
            "status": status, "error": error, "reason": reason, "verify": verify,
            "resources": resources, "timing": tim, "work": work, "derived": der,
            "compile_ms": 0.0, "wall_ms": 120.5, "compile_log": log}


def verify(n, max_abs, max_rel, atol, rtol, n_bad=0, got=None, want=None):
    return {"n": n, "n_bad": n_bad, "first_bad": 17 if n_bad else -1, "max_abs_err": max_abs,
            "max_rel_err": max_rel, "atol": atol, "rtol": rtol,
            # the worst element against its own bound, taken here as atol (|want| ~ 0)
            "max_err_ratio": max_abs / atol if math.isfinite(max_abs) else None,
            "got_at_bad": got if n_bad else None, "want_at_bad": want if n_bad else None}


def gemm_work(m, n, k, dt):
    s = SIZE[dt]
    out = 4 if dt == "int8" else s      # int8 GEMM writes int32
    return {"flops": 2.0 * m * n * k, "bytes_read": float((m * k + k * n) * s),
            "bytes_written": float(m * n * out), "bytes_moved": float((m * k + k * n) * s + m * n * out)}


def ew_work(n, dt, flops_per):
    s = SIZE[dt]
    return {"flops": float(flops_per * n), "bytes_read": float(n * s), "bytes_written": float(n * s),
            "bytes_moved": float(2 * n * s)}


# Errors against the double reference, by dtype, for a K=4096 GEMM (roughly u*sqrt(K)).
GEMM_ERR = {"fp32": 2e-5, "tf32": 6e-3, "fp16": 1.1e-2, "bf16": 8.5e-2, "int8": 0.0,
            "fp8e4m3": 0.9, "fp8e5m2": 1.7}
# TEST-GPU medians [us] for 4096^3 (fictitious)
GEMM_US = {"fp32": 2600.0, "tf32": 420.0, "fp16": 190.0, "bf16": 192.0, "int8": 105.0,
           "fp8e4m3": 98.0, "fp8e5m2": 99.0}


def gpu_run(run_id, when, seed, slow=None, fast=None, drop=None, extra=None):
    rng = random.Random(seed)
    slow, fast, drop = slow or {}, fast or {}, drop or set()
    recs = []

    def ok(case_id, family, variant, dt, dims, params, work, us, err, n_check, launch="eager"):
        us = us * slow.get(case_id, 1.0) * fast.get(case_id, 1.0)
        t = timing(rng, us, 25, "gpu")
        v = verify(n_check, err, err * 4, 1e-3, 1e-2)
        res = {"registers": 128, "spill_store_bytes": 0, "spill_load_bytes": 0,
               "stack_bytes": 0, "static_shmem_bytes": 0, "max_threads": 256}
        recs.append(record(run_id, when, case_id, family, variant, dt, dims, params, GPU_DEV, "cuda",
                           verify=v, tim=t, work=work, der=derived(work, t["median_us"], dt, "gpu", True),
                           launch=launch, resources=res))

    for dt in ["fp32", "tf32", "fp16", "bf16", "int8", "fp8e4m3", "fp8e5m2"]:
        cid = "gemm/wmma(BM=128,BN=128,BK=32)/%s/4096x4096x4096/pad0/eager" % dt
        ok(cid, "gemm", "wmma", dt, {"m": 4096, "n": 4096, "k": 4096}, {"BM": 128, "BN": 128, "BK": 32},
           gemm_work(4096, 4096, 4096, dt), GEMM_US[dt], GEMM_ERR[dt], 4096 * 4096)
    # a slower variant of the same shape: the precision table keeps the best per dtype
    ok("gemm/naive/fp16/4096x4096x4096/pad0/eager", "gemm", "naive", "fp16",
       {"m": 4096, "n": 4096, "k": 4096}, {}, gemm_work(4096, 4096, 4096, "fp16"), 5200.0, 1.1e-2, 4096 * 4096)
    for dt, us in [("fp16", 2900.0), ("bf16", 2950.0)]:
        cid = "attention/fused(BQ=64,BK=64)/%s/1x16x2048x128/pad0/eager" % dt
        b, h, s, d = 1, 16, 2048, 128
        work = {"flops": 4.0 * b * h * s * s * d, "bytes_read": 3.0 * b * h * s * d * 2,
                "bytes_written": 1.0 * b * h * s * d * 2, "bytes_moved": 4.0 * b * h * s * d * 2}
        ok(cid, "attention", "fused", dt, {"b": b, "h": h, "s": s, "d": d}, {"BQ": 64, "BK": 64}, work,
           us / 10, 2e-3 if dt == "fp16" else 9e-3, b * h * s * d)
    for dt, us in [("fp32", 50.0), ("bf16", 27.0)]:
        ok("gelu/vec(VEC=4,form=tanh)/%s/16777216/pad0/graph" % dt, "gelu", "vec", dt, {"n": 16777216},
           {"VEC": 4, "form": "tanh"}, ew_work(16777216, dt, 8), us * 2, 1e-6, 16777216, "graph")
    emb = {"flops": 0.0, "bytes_read": 32768.0 * 4 + 32768.0 * 4096 * 2, "bytes_written": 32768.0 * 4096 * 2,
           "bytes_moved": 32768.0 * 4 + 2 * 32768.0 * 4096 * 2}
    ok("embedding/gather/bf16/32768x4096/pad0/eager", "embedding", "gather", "bf16", {"tokens": 32768, "dim": 4096},
       {}, emb, 210.0, 0.0, 32768 * 4096)
    if extra:
        ok(*extra)

    # failures, each with its reason
    def fail(case_id, family, variant, dt, dims, status, error, reason, **kw):
        recs.append(record(run_id, when, case_id, family, variant, dt, dims, {}, GPU_DEV, "cuda",
                           status=status, error=error, reason=reason, **kw))
    fail("gemm/mma(BM=256,BN=256,BK=64)/fp16/4096x4096x4096/pad0/eager", "gemm", "mma", "fp16",
         {"m": 4096, "n": 4096, "k": 4096}, "compile_error", "compile_error",
         "NVRTC: 2 errors",
         log="gemm.cu(88): error: identifier \"KB_TILE<BM & BN>\" is undefined\n\x01 ptxas: 'too many' <resources>\n")
    fail("gemm/wmma(BM=64,BN=64,BK=16)/bf16/4096x4096x4096/pad3/eager", "gemm", "wmma", "bf16",
         {"m": 4096, "n": 4096, "k": 4096}, "wrong", "ok", "37 of 16777216 elements outside tolerance",
         verify=verify(16777216, float("1e30"), 1.0, 1e-3, 1e-2, n_bad=37, got="nan", want=0.25))
    fail("softmax/online(block=256)/fp16/4096x32000/pad0/eager", "softmax", "online", "fp16",
         {"rows": 4096, "cols": 32000}, "fault", "fault", "CUDA_ERROR_ILLEGAL_ADDRESS: \"an illegal memory access was encountered\"")
    fail("layernorm/welford/bf16/8192x8192/pad0/eager", "layernorm", "welford", "bf16",
         {"rows": 8192, "cols": 8192}, "timeout", "timeout", "case exceeded 15 s")
    fail("gemm/wmma(BM=256,BN=128,BK=64)/fp32/4096x4096x4096/pad0/eager", "gemm", "wmma", "fp32",
         {"m": 4096, "n": 4096, "k": 4096}, "launch_error", "launch_error",
         "too many resources requested for launch (shared memory 245760 > 232448 bytes)")
    fail("gemm/wmma(BM=128,BN=128,BK=32)/fp8e4m3/4095x4096x4096/pad0/eager", "gemm", "wmma", "fp8e4m3",
         {"m": 4095, "n": 4096, "k": 4096}, "skipped", "ok", "m must be a multiple of BM=128 for fp8")
    return [r for r in recs if r["case_id"] not in drop]


def emu_run():
    rng = random.Random(7)
    run_id, when = "test-emu-20260101T000000Z-1", "2026-01-01T00:00:00Z"
    recs = []
    for variant, dt, us in [("naive", "fp32", 900.0), ("naive", "bf16", 950.0), ("vec", "fp32", 400.0)]:
        params = {"form": "erf"} if variant == "naive" else {"VEC": 4, "form": "erf"}
        pstr = "(form=erf)" if variant == "naive" else "(VEC=4,form=erf)"
        cid = "gelu/%s%s/%s/65537/pad0/eager" % (variant, pstr, dt)
        t = timing(rng, us, 12, "cpu", 0.05)
        recs.append(record(run_id, when, cid, "gelu", variant, dt, {"n": 65537}, params, EMU_DEV, "emu",
                           verify=verify(65537, 3e-7 if dt == "fp32" else 3e-3, 1e-6, 1e-5, 1e-2), tim=t,
                           work=ew_work(65537, dt, 8)))
    for dt, us in [("fp32", 52000.0), ("fp16", 61000.0)]:
        cid = "gemm/wmma(BM=64,BN=64,BK=16)/%s/128x128x128/pad0/eager" % dt
        t = timing(rng, us, 5, "cpu", 0.05)
        w = gemm_work(128, 128, 128, dt)
        recs.append(record(run_id, when, cid, "gemm", "wmma", dt, {"m": 128, "n": 128, "k": 128},
                           {"BM": 64, "BN": 64, "BK": 16}, EMU_DEV, "emu",
                           verify=verify(16384, 1e-6 if dt == "fp32" else 2e-3, 1e-5, 1e-3, 1e-2), tim=t,
                           work=w, der=derived(w, t["median_us"], dt, "cpu", False)))
    recs.append(record(run_id, when, "gelu/vec(VEC=8,form=erf)/fp16/65537/pad1/eager", "gelu", "vec", "fp16",
                       {"n": 65537}, {"VEC": 8, "form": "erf"}, EMU_DEV, "emu", status="wrong",
                       reason="1 of 65537 elements outside tolerance (NaN: read before write?)",
                       verify=verify(65537, float("nan"), float("nan"), 1e-3, 1e-2, n_bad=1, got="nan", want=0.5)))
    recs.append(record(run_id, when, "gelu/vec(VEC=8,form=tanh)/fp32/65537/pad3/eager", "gelu", "vec", "fp32",
                       {"n": 65537}, {"VEC": 8, "form": "tanh"}, EMU_DEV, "emu", status="skipped",
                       reason="pad 3 breaks the 32-byte alignment VEC=8 fp32 needs"))
    return recs


def write(path, recs):
    with open(path, "w") as f:
        for r in recs:
            # JSON has no NaN: the recorder writes null (and "nan" for got/want_at_bad)
            text = json.dumps(r, separators=(",", ":"), allow_nan=True)
            text = re.sub(r'(?<=[:,\[])NaN(?=[,}\]])', "null", text)
            f.write(text + "\n")


if __name__ == "__main__":
    base = "tests/data/"
    write(base + "run_emu.jsonl", emu_run())
    A = "test-gpu-a-20260102T000000Z-1"
    B = "test-gpu-b-20260103T000000Z-1"
    write(base + "run_gpu.jsonl", gpu_run(A, "2026-01-02T00:00:00Z", 11))
    # run B: bf16 GEMM 10% slower (a regression), int8 GEMM 10% faster, gelu fp32 missing,
    # one new case; everything else the same distribution with fresh noise
    write(base + "run_gpu_b.jsonl", gpu_run(
        B, "2026-01-03T00:00:00Z", 12,
        slow={"gemm/wmma(BM=128,BN=128,BK=32)/bf16/4096x4096x4096/pad0/eager": 1.10},
        fast={"gemm/wmma(BM=128,BN=128,BK=32)/int8/4096x4096x4096/pad0/eager": 0.90},
        drop={"gelu/vec(VEC=4,form=tanh)/fp32/16777216/pad0/graph"},
        extra=("gemm/wmma(BM=128,BN=256,BK=32)/fp16/4096x4096x4096/pad0/eager", "gemm", "wmma", "fp16",
               {"m": 4096, "n": 4096, "k": 4096}, {"BM": 128, "BN": 256, "BK": 32},
               gemm_work(4096, 4096, 4096, "fp16"), 185.0, 1.1e-2, 4096 * 4096)))
