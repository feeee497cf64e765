#!/usr/bin/env bash
# fleet_slurm.sh - the fleet flow under a real Slurm (CTest test fleet_slurm, label fleet):
# scripts/slurm-ci.sh brings up a single-node Slurm with four fake GPUs, then
#   1. srun -n4 --gpus-per-task=1 kbench accept --backend emu with rank 2 slowed x1000
#      (KBENCH_FAULT_RANKS=2 KBENCH_EMU_SLOWDOWN=1000): every rank passes on its own (the
#      emulator judges no performance), `kbench fleet` flags exactly rank 2: exit 5;
#   2. the same with rank 1 corrupted (KBENCH_EMU_CORRUPT=1): srun exits 6 (the highest
#      code of its tasks), `kbench fleet` flags exactly rank 1: exit 6;
# and the daemons are stopped. Exit 77 (CTest: skipped) only where Slurm cannot run here.
set -uo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
kbench="${KBENCH_BIN:-$src/build/kbench}"
work="$(mktemp -d /tmp/kb_fleet_slurm_XXXXXX)"
fail=0

cleanup() {
  "$src/scripts/slurm-ci.sh" stop "$work/slurm-ci"
  rm -rf "$work"
}
trap cleanup EXIT

out="$("$src/scripts/slurm-ci.sh" start "$work/slurm-ci")"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "FAIL: slurm-ci.sh start exited $rc"; exit 1; }
eval "$out"    # export SLURM_CONF=...

check() {   # check WHAT WANT GOT
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: want $2, got $3"; fail=1; fi
}

# The ranks whose tests include a FAIL in fleet.json, space-separated.
failing_ranks() {
  python3 - "$1/fleet.json" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))
bad = sorted(g["identity"]["rank"] for g in f["gpus"] if any(t["status"] == "FAIL" for t in g["tests"]))
print(" ".join(map(str, bad)) or "none")
EOF
}

run_case() {   # run_case NAME HOOK BAD_RANK WANT_SRUN WANT_FLEET
  local name="$1" hook="$2" bad="$3" dir="$work/$1"
  mkdir -p "$dir"
  env "$hook" KBENCH_FAULT_RANKS="$bad" srun -n4 --gpus-per-task=1 --kill-on-bad-exit=0 \
      "$kbench" accept --backend emu --threads 1 --out-dir "$dir" > "$dir.log" 2>&1
  check "$name: srun exit code (highest of the ranks)" "$4" "$?"
  check "$name: four rank verdicts" 4 "$(ls "$dir"/r0000[0-3]-*.verdict.json 2>/dev/null | wc -l)"
  "$kbench" fleet "$dir" --quiet > "$dir.fleet.log" 2>&1
  check "$name: kbench fleet exit code" "$5" "$?"
  check "$name: failing ranks" "$bad" "$(failing_ranks "$dir")"
  # each rank had its own GPU from srun
  check "$name: ranks identified through Slurm" 4 "$(grep -ho '"launcher": "slurm"' "$dir"/*.verdict.json | wc -l)"
  check "$name: a GPU of its own per task (CUDA_VISIBLE_DEVICES)" 4 \
      "$(grep -ho '"cuda_visible_devices": "[^"]*"' "$dir"/*.verdict.json | sort -u | wc -l)"
}

run_case slow KBENCH_EMU_SLOWDOWN=1000 2 0 5
run_case corrupt KBENCH_EMU_CORRUPT=1 1 6 6
[ $fail -eq 0 ] || { echo "logs:"; tail -n 20 "$work"/*.log; }
exit $fail
