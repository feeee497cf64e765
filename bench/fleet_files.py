#!/usr/bin/env python3
"""fleet_files.py N DIR [--world W] [--per-host G] - write N synthetic rank verdict files
(schema kbench-accept 1, as `kbench accept --out-dir DIR` writes them) into DIR, for timing
`kbench fleet DIR` on a large fleet (a benchmark, not a timed test: README "What kbench
refuses" and docs/acceptance.md quote its figures).

Ranks 0..N-1 of one Slurm job step (world size W, default N), G GPUs per host (default 8),
every GPU an H100 that passes, with a little spread in its measured values (seeded, so the
files are the same on every run). A world size above N leaves ranks missing: the summary
lists them as ranges."""
import argparse
import json
import os
import random

TESTS = [("correctness", "", None), ("memory_bandwidth", "GB/s", 2900.0), ("gemm_fp32", "TFLOPS", None),
         ("gemm_tf32", "TFLOPS", None), ("gemm_fp16", "TFLOPS", 700.0), ("gemm_bf16", "TFLOPS", 700.0),
         ("gemm_int8", "TOPS", None), ("gemm_fp8", "TFLOPS", None), ("launch_latency", "us", 4.0),
         ("clocks", "", None), ("ecc", "", None), ("row_remap", "", None), ("pcie_link", "", None)]


def verdict(rank, world, per_host, rng):
    host = "node%05d" % (rank // per_host)
    tests = []
    for name, unit, value in TESTS:
        measured = value is not None
        tests.append({"name": name, "status": "PASS" if measured or name == "correctness" else "SKIP",
                      "unit": unit, "value": value * rng.uniform(0.98, 1.02) if measured else None,
                      "clock": "gpu" if measured else "", "comparison": "", "threshold": None,
                      "reference": None, "fraction": None, "source": "", "reason": "meets" if measured else "",
                      "case": ""})
    return {"schema": "kbench-accept", "schema_version": 1, "time": "2026-01-01T00:00:00Z",
            "kbench_version": "0", "backend": "cuda",
            "identity": {"launcher": "slurm", "rank": rank, "local_rank": rank % per_host, "node_id": rank // per_host,
                         "world_size": world, "job_id": "4242", "step_id": "0", "host": host,
                         "cuda_visible_devices": ""},
            "gpu": {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-%08d" % rank, "pci_bus_id": "", "serial": None,
                    "nvml_pci_bus_id": None, "sm": 90, "sm_count": 132, "emulator": False},
            "spec": {"name": "h100-sxm", "sku": "H100 SXM", "file": "h100-sxm.yaml", "matched_by": "name"},
            "gpu_thresholds_applied": True, "note": "GPU thresholds applied", "records": "records.jsonl",
            "check_records": [], "verdict": "PASS", "exit_code": 0, "tests": tests}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int)
    ap.add_argument("dir")
    ap.add_argument("--world", type=int, default=0)
    ap.add_argument("--per-host", type=int, default=8)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    rng = random.Random(1)
    for rank in range(a.n):
        with open(os.path.join(a.dir, "r%07d.verdict.json" % rank), "w") as f:
            json.dump(verdict(rank, a.world or a.n, a.per_host, rng), f)


if __name__ == "__main__":
    main()
