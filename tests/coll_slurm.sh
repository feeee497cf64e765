#!/usr/bin/env bash
# coll_slurm.sh - the emu collectives under a real Slurm (CTest test coll_slurm, label fleet):
# scripts/slurm-ci.sh brings up a single-node Slurm, then `srun -n4 coll_rank` (tests/coll_rank.c)
#   1. with KBENCH_RENDEZVOUS unset (one node: the default directory, keyed by the job step):
#      every op, dtype and size verified on every rank, each identified through Slurm;
#   2. the same through the TCP rendezvous on this node and TCP between every pair;
#   3. rank 2 corrupting its contribution (KBENCH_EMU_CORRUPT=1 KBENCH_FAULT_RANKS=2): srun
#      exits 6 and every rank names rank 2, only rank 2;
#   4. rank 1 slowed x20 (KBENCH_EMU_SLOWDOWN=20 KBENCH_FAULT_RANKS=1): everything verified,
#      and at the largest all_reduce every rank sees rank 1 as the busiest;
# and the daemons are stopped. Exit 77 (CTest: skipped) only where Slurm cannot run here.
set -uo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
rank_bin="${KBENCH_COLL_RANK:-$src/build/coll_rank}"
work="$(mktemp -d /tmp/kb_coll_slurm_XXXXXX)"
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

lines() { grep -c "^rank " "$1"; }   # size lines of all ranks

export TMPDIR="$work"
srun -n4 --kill-on-bad-exit=0 "$rank_bin" > "$work/plain.log" 2>&1
check "shared memory, default rendezvous: srun exit" 0 "$?"
check "shared memory: 4 ranks x 63 sizes" 252 "$(lines "$work/plain.log")"
check "shared memory: all through Slurm" 252 "$(grep -c 'launcher slurm' "$work/plain.log")"
check "shared memory: nothing wrong" 0 "$(grep '^rank ' "$work/plain.log" | grep -vc 'wrong 0 ')"
check "the rendezvous directory was removed" 0 "$(ls -d "$work"/kbench-rdv-* 2>/dev/null | wc -l)"

port=$((20000 + RANDOM % 20000))
KBENCH_RENDEZVOUS="tcp:$(hostname):$port" srun -n4 --kill-on-bad-exit=0 "$rank_bin" --sockets > "$work/tcp.log" 2>&1
check "tcp rendezvous, sockets: srun exit" 0 "$?"
check "tcp rendezvous, sockets: nothing wrong" 252 "$(grep '^rank ' "$work/tcp.log" | grep -c 'wrong 0 ')"

KBENCH_EMU_CORRUPT=1 KBENCH_FAULT_RANKS=2 srun -n4 --kill-on-bad-exit=0 "$rank_bin" > "$work/corrupt.log" 2>&1
check "corrupt rank 2: srun exit (incorrect)" 6 "$?"
named="$(grep '^rank ' "$work/corrupt.log" | grep -v 'wrong 0 ' | grep -o 'suspects [^ ]*' | sort -u | tr '\n' ' ')"
check "corrupt rank 2: every wrong size names rank 2 only" "suspects 2 " "$named"

KBENCH_EMU_SLOWDOWN=20 KBENCH_FAULT_RANKS=1 srun -n4 --kill-on-bad-exit=0 "$rank_bin" > "$work/slow.log" 2>&1
check "slow rank 1: srun exit" 0 "$?"
check "slow rank 1: every rank sees rank 1 the busiest at the largest all_reduce" "busiest 1 " \
  "$(grep '^rank .* all_reduce fp32 sum count 65537 ' "$work/slow.log" | grep -o 'busiest [0-9]*' | sort -u | tr '\n' ' ')"
[ $fail -eq 0 ] || { echo "logs:"; tail -n 5 "$work"/*.log; }
exit $fail
