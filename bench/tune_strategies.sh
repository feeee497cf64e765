#!/usr/bin/env bash
# tune_strategies.sh [REPEATS] [OUT_DIR] - every search strategy replayed on every landscape
# of bench/landscapes (brute-force Kernel Tuner caches measured on real GPUs, and kbench's
# own emulator sweeps; README.md there says where each comes from) and compared as
# Willemsen et al. 2024 do: `kbench tune --replay ... --strategy all --budgets 1,2,3,5,10`.
# Writes OUT_DIR (default build/bench)/tune_strategies.html (curves, tables, the JSON) and
# prints the markdown table of bench/tune_table.py: the default strategy against random
# sampling and the best other strategy. REPEATS seeds per strategy (default 20). JOBS=N
# runs N reports at once (one per landscape, merged by tune_table.py; the figures are the
# same, every run being seeded): about 25 CPU minutes in all.
set -euo pipefail
cd "$(dirname "$0")/.."
kb="$(realpath "${KBENCH:-build/kbench}")"
repeats="${1:-20}"
out="${2:-build/bench}"
jobs="${JOBS:-1}"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in bench/landscapes/*.json.gz; do
  case "$f" in *.records.jsonl.gz) continue;; esac
  gunzip -c "$f" > "$tmp/$(basename "$f" .gz)"
done
start=$SECONDS
args=(--strategy all --budgets 1,2,3,5,10 --repeats "$repeats" --format html)
if [ "$jobs" -gt 1 ]; then
  rm -f "$out"/tune_strategies.*.html
  ls -S "$tmp"/*.json | xargs -P "$jobs" -I{} sh -c \
    "\"$kb\" tune --replay {} ${args[*]} --out \"$out/tune_strategies.\$(basename {} .json).html\" 2>> \"$out/tune_strategies.log\""
  reports=("$out"/tune_strategies.*.html)
else
  "$kb" tune --replay "$tmp"/*.json "${args[@]}" --out "$out/tune_strategies.html" 2> "$out/tune_strategies.log"
  reports=("$out/tune_strategies.html")
fi
echo "tune_strategies: $(ls "$tmp"/*.json | wc -l) spaces, $repeats seeds, $((SECONDS - start)) s"
default="${DEFAULT_STRATEGY:-$("$kb" tune --help | sed -n 's/.*(default \([a-z]*\);.*/\1/p' | head -1)}"
python3 bench/tune_table.py --default "$default" "${reports[@]}"
# What the static estimate is worth as a prior: kbench's own emulator GEMM sweeps (the
# records: the estimate needs kbench's cases), every strategy with and without it.
for f in bench/landscapes/emu_*.records.jsonl.gz; do
  gunzip -c "$f" > "$tmp/$(basename "$f" .gz)"
done
"$kb" tune --replay "$tmp"/emu_*.records.jsonl --strategy all --prior estimate --budgets 1,2,3,5,10,15 \
      --repeats "$repeats" --format html --out "$out/tune_prior.html" 2>> "$out/tune_strategies.log"
echo
python3 bench/tune_table.py --prior "$out/tune_prior.html"
