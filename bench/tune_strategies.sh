#!/usr/bin/env bash
# tune_strategies.sh [REPEATS] [OUT_DIR] - every search strategy replayed on every landscape
# of bench/landscapes (brute-force Kernel Tuner caches measured on real GPUs, and kbench's
# own emulator sweeps; README.md there says where each comes from) and compared as
# Willemsen et al. 2024 do: `kbench tune --replay ... --strategy all --budgets 1,2,3,5,10`.
# Writes OUT_DIR (default build/bench)/tune_strategies.html (curves, tables, the JSON) and prints the markdown
# table of bench/tune_table.py (the default vs random sampling vs the best other strategy).
# REPEATS seeds per strategy (default 20). About 20 minutes on 2 idle cores.
set -euo pipefail
cd "$(dirname "$0")/.."
kb="${KBENCH:-build/kbench}"
repeats="${1:-20}"
out="${2:-build/bench}"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in bench/landscapes/*.json.gz; do
  gunzip -c "$f" > "$tmp/$(basename "$f" .gz)"
done
start=$SECONDS
"$kb" tune --replay "$tmp"/*.json --strategy all --budgets 1,2,3,5,10 --repeats "$repeats" \
      --format html --out "$out/tune_strategies.html" 2> "$out/tune_strategies.log"
echo "tune_strategies: $(ls "$tmp"/*.json | wc -l) spaces, $repeats seeds, $((SECONDS - start)) s"
python3 bench/tune_table.py "$out/tune_strategies.html" "${DEFAULT_STRATEGY:-$("$kb" tune --help | sed -n 's/.*(default \([a-z]*\);.*/\1/p' | head -1)}"
