#!/usr/bin/env bash
# tune_strategies.sh [REPEATS] [OUT_DIR] - every search strategy replayed on every landscape
# of bench/landscapes (brute-force Kernel Tuner caches measured on real GPUs, and kbench's
# own emulator sweeps; README.md there says where each comes from) and compared as
# Willemsen et al. 2024 do: `kbench tune --replay ... --strategy all --budgets 1,2,3,5,10`.
# Writes OUT_DIR (default build/bench)/tune_strategies.html (curves, tables, the JSON) and
# prints the markdown table of bench/tune_table.py: the default strategy against random
# sampling and the best other strategy (the default's median with a 95% bootstrap interval;
# worse than random sampling only when the whole interval is). REPEATS seeds per strategy (default 20). JOBS=N
# runs N reports at once (one per landscape, merged by tune_table.py; the figures are the
# same, every run being seeded): about 25 CPU minutes in all. STRATEGIES="bayes random ..."
# runs those strategies only, one JSON report per (landscape, strategy), which tune_table.py
# joins per space (every strategy being seeded, one changed strategy can be rerun alone
# beside the others' reports of an earlier run: KEEP=1 keeps OUT_DIR's reports).
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
if [ -n "${STRATEGIES:-}" ]; then
  [ -n "${KEEP:-}" ] || rm -f "$out"/tune_strategies.*.*.json
  for st in $STRATEGIES; do for f in $(ls -S "$tmp"/*.json); do echo "$st $f"; done; done |
    xargs -P "$jobs" -L 1 sh -c "\"$kb\" tune --replay \"\$1\" --strategy \"\$0\" --budgets 1,2,3,5,10 --repeats $repeats \
      --format json --out \"$out/tune_strategies.\$(basename \"\$1\" .json).\$0.json\" 2>> \"$out/tune_strategies.log\""
  reports=("$out"/tune_strategies.*.*.json)
elif [ "$jobs" -gt 1 ]; then
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
if [ -n "${STRATEGIES:-}" ]; then   # each strategy without and with the prior, joined
  for st in $STRATEGIES; do
    case "$st" in brute|random) continue;; esac
    for p in none estimate; do
      "$kb" tune --replay "$tmp"/emu_*.records.jsonl --strategy "$st" --prior "$p" --budgets 1,2,3,5,10,15 \
            --repeats "$repeats" --format json --out "$out/tune_prior.$st.$p.json" 2>> "$out/tune_strategies.log"
    done
  done
  echo
  python3 bench/tune_table.py --prior "$out"/tune_prior.*.json
  exit 0
fi
"$kb" tune --replay "$tmp"/emu_*.records.jsonl --strategy all --prior estimate --budgets 1,2,3,5,10,15 \
      --repeats "$repeats" --format html --out "$out/tune_prior.html" 2>> "$out/tune_strategies.log"
echo
python3 bench/tune_table.py --prior "$out/tune_prior.html"
