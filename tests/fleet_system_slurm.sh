#!/usr/bin/env bash
# fleet_system_slurm.sh - `kbench accept --system generic --backend emu` under a real Slurm (CTest
# test fleet_system_slurm, label fleet; issue 27's "Done when"): scripts/slurm-ci.sh brings up a
# single-node Slurm, then
#   1. srun -n4 kbench accept --system generic --backend emu: the six collectives across the four
#      ranks (the default rendezvous, shared memory), every result verified on every rank, the
#      all_reduce busbw per size in each verdict, every rank PASS; kbench fleet exits 0;
#   2. the same with rank 1 slowed x1000 (KBENCH_EMU_SLOWDOWN) and rank 2 corrupting its
#      contribution (KBENCH_EMU_CORRUPT), each set for its task alone: srun exits 6 (rank 2's
#      "incorrect"), and kbench fleet flags exactly ranks 1 (coll_busy: a node outlier, its peers
#      waited for it) and 2 (collectives: named by every rank), exit 6;
# and the daemons are stopped. Exit 77 (CTest: skipped) only where Slurm cannot run here.
set -uo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
kbench="${KBENCH_BIN:-$src/build/kbench}"
work="$(mktemp -d /tmp/kb_fleet_system_XXXXXX)"
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
export TMPDIR="$work"   # the default rendezvous directory (one node)

check() {   # check WHAT WANT GOT
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: want $2, got $3"; fail=1; fi
}

# What fleet.json and the verdicts say, one answer per question.
ask() {   # ask DIR QUESTION
  python3 - "$1" "$2" <<'EOF'
import glob, json, sys
d, q = sys.argv[1], sys.argv[2]
if q.startswith("verdict-"):
    vs = [json.load(open(p)) for p in sorted(glob.glob(d + "/*.verdict.json"))]
    if q == "verdict-sizes":   # all_reduce sizes with a busbw, per rank
        print(" ".join(str(len([s for s in v["system"]["all_reduce"] if s["busbw_gbs"] > 0])) for v in vs))
    elif q == "verdict-coll":  # the collectives test's status per rank
        print(" ".join(next(t["status"] for t in v["tests"] if t["name"] == "collectives") for v in vs))
    elif q == "verdict-records":   # verified records per rank: every result checked (wrong counted)
        n = []
        for v in vs:
            lines = [json.loads(l) for l in open(v["system"]["coll_records"])]
            n.append(str(sum(1 for r in lines if r["schema"] == "kbench-coll" and "wrong_all" in r)))
        print(" ".join(n))
    sys.exit(0)
f = json.load(open(d + "/fleet.json"))
if q == "failing":
    bad = sorted(g["identity"]["rank"] for g in f["gpus"] if any(t["status"] == "FAIL" for t in g["tests"]))
    print(" ".join(map(str, bad)) or "none")
else:   # the failing tests of rank q
    g = next(g for g in f["gpus"] if g["identity"]["rank"] == int(q))
    print(" ".join(t["name"] for t in g["tests"] if t["status"] == "FAIL") or "none")
EOF
}

run() {   # run NAME: srun -n4 kbench accept --system generic --backend emu (faults from $FAULTS)
  local dir="$work/$1"
  mkdir -p "$dir"
  srun -n4 --kill-on-bad-exit=0 sh -c 'case "$SLURM_PROCID" in
      1) [ -n "${SLOW:-}" ] && export KBENCH_EMU_SLOWDOWN="$SLOW" ;;
      2) [ -n "${CORRUPT:-}" ] && export KBENCH_EMU_CORRUPT=1 ;;
    esac; exec "$0" "$@"' "$kbench" accept --system generic --backend emu --out-dir "$dir" > "$dir.log" 2>&1
}

run clean
check "clean: srun exit" 0 "$?"
check "clean: four verdicts" 4 "$(ls "$work"/clean/r0000[0-3]-*.verdict.json 2>/dev/null | wc -l)"
check "clean: all_reduce busbw at 5 sizes on every rank" "5 5 5 5" "$(ask "$work/clean" verdict-sizes)"
check "clean: 40 verified results per rank" "40 40 40 40" "$(ask "$work/clean" verdict-records)"
check "clean: collectives PASS everywhere" "PASS PASS PASS PASS" "$(ask "$work/clean" verdict-coll)"
check "clean: identified through Slurm" 4 "$(grep -ho '"launcher": "slurm"' "$work"/clean/*.verdict.json | wc -l)"
"$kbench" fleet "$work/clean" --quiet > "$work/clean.fleet.log" 2>&1
check "clean: kbench fleet exit" 0 "$?"
check "clean: no rank flagged" none "$(ask "$work/clean" failing)"
check "the rendezvous directory was removed" 0 "$(ls -d "$work"/kbench-rdv-* 2>/dev/null | wc -l)"

SLOW=1000 CORRUPT=1 run faults
check "faults: srun exit (rank 2 incorrect)" 6 "$?"
check "faults: collectives FAIL on rank 2 only" "PASS PASS FAIL PASS" "$(ask "$work/faults" verdict-coll)"
check "faults: every rank still has busbw per size" "5 5 5 5" "$(ask "$work/faults" verdict-sizes)"
"$kbench" fleet "$work/faults" --quiet > "$work/faults.fleet.log" 2>&1
check "faults: kbench fleet exit" 6 "$?"
check "faults: exactly the slowed and the corrupting rank flagged" "1 2" "$(ask "$work/faults" failing)"
check "faults: rank 1 flagged for its busy time" coll_busy "$(ask "$work/faults" 1)"
check "faults: rank 2 flagged for its contribution" collectives "$(ask "$work/faults" 2)"
[ $fail -eq 0 ] || { echo "logs:"; tail -n 30 "$work"/*.log; }
exit $fail
